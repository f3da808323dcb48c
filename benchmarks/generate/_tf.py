"""Pieces of a TF1 training graph shared by the TF kinds (dense, const, feed, queue): the tf.data
input pipeline, variables, the forward and backward layer units, the loss, ``versions``.

A common module: it imports ``_text`` and ``_stamp`` only, never a kind module.
"""

from __future__ import annotations

import math
import random
import struct
from typing import Dict, Optional, Sequence, Tuple

from ._stamp import Tmpl, float_bytes, slot_values, split_tokens
from ._text import (Fields, av_b, av_func, av_i, av_list_s, av_list_shape, av_list_type, av_s, av_shape,
                    av_tensor, av_type, cescape, f32, q, render, tf_node)

TF_PRODUCER = 1286

# --------------------------------------------------------------------------------------------
# TF graph pieces (dense and const share the loss / backward builders)
# --------------------------------------------------------------------------------------------

L = "layer_@@K@@"
LP = "layer_@@P@@"
GL = "gradients/layer_@@K@@"
HMCD = "_has_manual_control_dependencies"
XENT_GRAD_MUL = "gradients/sparse_softmax_cross_entropy_loss/xentropy/xentropy_grad/mul"


def _exp_type() -> Fields:
    def tensor(t: str) -> Fields:
        return [("type_id", "TFT_TENSOR"), ("args", [("type_id", t)])]

    return [("experimental_type", [
        ("type_id", "TFT_PRODUCT"),
        ("args", [("type_id", "TFT_DATASET"),
                  ("args", [("type_id", "TFT_PRODUCT"),
                            ("args", tensor("TFT_FLOAT")),
                            ("args", tensor("TFT_INT64"))])]),
    ])]


def scalar_const(name: str, dtype: str, valfield: str, val: str, cls: Optional[str] = None,
                  inputs: Sequence[str] = ()) -> Fields:
    attrs = {"dtype": av_type(dtype), "value": av_tensor(dtype, [], [(valfield, val)])}
    if cls:
        attrs["_class"] = av_list_s(["loc:@" + cls])
    return tf_node(name, "Const", inputs, attrs)


def input_pipeline(rng: random.Random, feat: int, batch: int) -> Tuple[Fields, Fields]:
    """Nodes of the tf.data pipeline and the matching library function (node_defs)."""
    rows = 64
    comp0 = av_tensor("DT_FLOAT", [rows, feat],
                      [("tensor_content", '"' + cescape(float_bytes(rng, rows * feat, 0.5, 0.0)) + '"')])
    labels = struct.pack("<%dq" % rows, *[rng.randrange(10) for _ in range(rows)])
    comp1 = av_tensor("DT_INT64", [rows], [("tensor_content", '"' + cescape(labels) + '"')])
    elem_shapes = av_list_shape([[feat], []])
    batch_shapes = av_list_shape([[batch, feat], [batch]])
    types = av_list_type(["DT_FLOAT", "DT_INT64"])
    fn = "_make_dataset_%011x" % rng.getrandbits(44)

    def pipeline(lib: bool) -> Fields:
        def o(n: str, port: str) -> str:
            return n + ":" + port + ":0" if lib else n

        out: Fields = []
        out += tf_node("normalize_element/component_0", "Const", (), {"dtype": av_type("DT_FLOAT"), "value": comp0})
        out += tf_node("normalize_element/component_1", "Const", (), {"dtype": av_type("DT_INT64"), "value": comp1})
        out += tf_node("TensorSliceDataset", "TensorSliceDataset",
                       [o("normalize_element/component_0", "output"), o("normalize_element/component_1", "output")],
                       {"Toutput_types": types, "is_files": av_b(False), "metadata": av_s(""),
                        "output_shapes": elem_shapes, "replicate_on_split": av_b(False)}, _exp_type())
        out += scalar_const("count", "DT_INT64", "int64_val", "-1")
        out += tf_node("RepeatDataset", "RepeatDataset", [o("TensorSliceDataset", "handle"), o("count", "output")],
                       {"metadata": av_s(""), "output_shapes": elem_shapes, "output_types": types}, _exp_type())
        out += scalar_const("batch_size", "DT_INT64", "int64_val", str(batch))
        out += scalar_const("drop_remainder", "DT_BOOL", "bool_val", "true")
        out += tf_node("BatchDatasetV2", "BatchDatasetV2",
                       [o("RepeatDataset", "handle"), o("batch_size", "output"), o("drop_remainder", "output")],
                       {"metadata": av_s(""), "output_shapes": batch_shapes, "output_types": types,
                        "parallel_copy": av_b(False)}, _exp_type())
        return out

    nodes = pipeline(False)
    cls = av_list_s(["loc:@BatchDatasetV2"])
    nodes += tf_node("OneShotIterator", "OneShotIterator", (),
                     {"_class": cls, "container": av_s(""), "dataset_factory": av_func(fn),
                      "output_shapes": batch_shapes, "output_types": types, "shared_name": av_s("")})
    nodes += tf_node("IteratorToStringHandle", "IteratorToStringHandle", ["OneShotIterator"], {"_class": cls})
    nodes += tf_node("IteratorGetNext", "IteratorGetNext", ["OneShotIterator"],
                     {"_class": cls, "output_shapes": batch_shapes, "output_types": types})
    node_defs = [("node_def", n[1]) for n in pipeline(True)]
    func = [("signature", [("name", q(fn)),
                           ("output_arg", [("name", q("batchdatasetv2")), ("type", "DT_VARIANT")]),
                           ("description", q("Factory function for a dataset.")),
                           ("is_stateful", "true")])]
    func += node_defs
    func += [("ret", [("key", q("batchdatasetv2")), ("value", q("BatchDatasetV2:handle:0"))])]
    func += [("attr", [("key", q("_disable_call_shape_inference")), ("value", av_b(True))])]
    library = [("library", [("function", func)])]
    return nodes, library


def _var_handle(name: str, dtype: str, dims: Sequence[int]) -> Fields:
    return tf_node(name, "VarHandleOp", (), {
        "_class": av_list_s(["loc:@" + name]), "allowed_devices": [("list", [])], "container": av_s(""),
        "debug_name": av_s(name + "/"), "dtype": av_type(dtype), "shape": av_shape(dims),
        "shared_name": av_s(name)})


def _var_tail(name: str, init: str, dtype: str) -> Fields:
    out = tf_node(name + "/IsInitialized/VarIsInitializedOp", "VarIsInitializedOp", [name])
    out += tf_node(name + "/Assign", "AssignVariableOp", [name, init],
                   {"dtype": av_type(dtype), "validate_shape": av_b(False)})
    out += tf_node(name + "/Read/ReadVariableOp", "ReadVariableOp", [name], {"dtype": av_type(dtype)})
    return out


def global_step() -> Fields:
    gs = "global_step"
    out = tf_node(gs + "/Initializer/zeros", "Const", (), {
        "_class": av_list_s(["loc:@" + gs]), "dtype": av_type("DT_INT64"),
        "value": av_tensor("DT_INT64", [], [("int64_val", "0")])})
    out += _var_handle(gs, "DT_INT64", [])
    out += _var_tail(gs, gs + "/Initializer/zeros", "DT_INT64")
    return out


def _matmul_attrs(ga: bool, gb: bool, ta: bool, tb: bool, manual: bool) -> Dict[str, Fields]:
    a = {"T": av_type("DT_FLOAT"), "grad_a": av_b(ga), "grad_b": av_b(gb),
         "transpose_a": av_b(ta), "transpose_b": av_b(tb)}
    if manual:
        a[HMCD] = av_b(True)
    return a


def fwd_compute(prev: str, kernel_in: str, bias_in: str, has_relu: bool) -> Fields:
    out = tf_node(L + "/MatMul", "MatMul", [prev, kernel_in], _matmul_attrs(False, False, False, False, False))
    if bias_in == L + "/BiasAdd/ReadVariableOp":
        out = tf_node(L + "/MatMul/ReadVariableOp", "ReadVariableOp", [L + "/kernel"],
                      {"dtype": av_type("DT_FLOAT")}) + out
        out += tf_node(bias_in, "ReadVariableOp", [L + "/bias"], {"dtype": av_type("DT_FLOAT")})
    out += tf_node(L + "/BiasAdd", "BiasAdd", [L + "/MatMul", bias_in],
                   {"T": av_type("DT_FLOAT"), "data_format": av_s("NHWC")})
    if has_relu:
        out += tf_node(L + "/Relu", "Relu", [L + "/BiasAdd"], {"T": av_type("DT_FLOAT")})
    return out


def dense_fwd_unit(is_first: bool, has_relu: bool, in_w: int, out_w: int, input_name: str) -> str:
    k = L + "/kernel"
    b = L + "/bias"
    ru = k + "/Initializer/random_uniform"
    cls = {"_class": av_list_s(["loc:@" + k])}
    limit = math.sqrt(6.0 / (in_w + out_w))
    out = tf_node(ru + "/shape", "Const", (), dict(cls, dtype=av_type("DT_INT32"), value=av_tensor(
        "DT_INT32", [2], [("tensor_content", '"' + cescape(struct.pack("<ii", in_w, out_w)) + '"')])))
    out += scalar_const(ru + "/min", "DT_FLOAT", "float_val", f32(-limit), k)
    out += scalar_const(ru + "/max", "DT_FLOAT", "float_val", f32(limit), k)
    out += tf_node(ru + "/RandomUniform", "RandomUniform", [ru + "/shape"],
                   dict(cls, T=av_type("DT_INT32"), dtype=av_type("DT_FLOAT"), seed=av_i(0), seed2=av_i(0)))
    out += tf_node(ru + "/sub", "Sub", [ru + "/max", ru + "/min"], dict(cls, T=av_type("DT_FLOAT")))
    out += tf_node(ru + "/mul", "Mul", [ru + "/RandomUniform", ru + "/sub"], dict(cls, T=av_type("DT_FLOAT")))
    out += tf_node(ru, "AddV2", [ru + "/mul", ru + "/min"], dict(cls, T=av_type("DT_FLOAT")))
    out += _var_handle(k, "DT_FLOAT", [in_w, out_w])
    out += _var_tail(k, ru, "DT_FLOAT")
    out += tf_node(b + "/Initializer/zeros", "Const", (), {
        "_class": av_list_s(["loc:@" + b]), "dtype": av_type("DT_FLOAT"),
        "value": av_tensor("DT_FLOAT", [out_w], [("float_val", f32(0.0))])})
    out += _var_handle(b, "DT_FLOAT", [out_w])
    out += _var_tail(b, b + "/Initializer/zeros", "DT_FLOAT")
    prev = input_name if is_first else LP + "/Relu"
    out += fwd_compute(prev, L + "/MatMul/ReadVariableOp", L + "/BiasAdd/ReadVariableOp", has_relu)
    return render(out)


def _tuple(scope: str, a: str, b: str) -> Fields:
    """group_deps NoOp plus the two control_dependency Identity nodes of a gradient tuple."""
    gd = scope + "/tuple/group_deps"
    deps = sorted(["^" + a, "^" + b])
    out = tf_node(gd, "NoOp", deps, {HMCD: av_b(True)})
    out += tf_node(scope + "/tuple/control_dependency", "Identity", [a, "^" + gd],
                   {"T": av_type("DT_FLOAT"), "_class": av_list_s(["loc:@" + a])})
    out += tf_node(scope + "/tuple/control_dependency_1", "Identity", [b, "^" + gd],
                   {"T": av_type("DT_FLOAT"), "_class": av_list_s(["loc:@" + b])})
    return out


def bwd_unit(is_first: bool, is_last: bool, input_name: str, kernel_read: str) -> str:
    upstream = XENT_GRAD_MUL if is_last else "gradients/layer_@@N@@/MatMul_grad/tuple/control_dependency"
    out: Fields = []
    if not is_last:
        out += tf_node(GL + "/Relu_grad/ReluGrad", "ReluGrad", [upstream, L + "/Relu"],
                       {"T": av_type("DT_FLOAT"), HMCD: av_b(True)})
        g = GL + "/Relu_grad/ReluGrad"
    else:
        g = upstream
    bag = GL + "/BiasAdd_grad/BiasAddGrad"
    out += tf_node(bag, "BiasAddGrad", [g], {"T": av_type("DT_FLOAT"), HMCD: av_b(True),
                                              "data_format": av_s("NHWC")})
    # tuple(grad_in, bias_grad): group_deps inputs are sorted, identity order is fixed
    gd = GL + "/BiasAdd_grad/tuple/group_deps"
    out += tf_node(gd, "NoOp", sorted(["^" + bag, "^" + g]), {HMCD: av_b(True)})
    cd = GL + "/BiasAdd_grad/tuple/control_dependency"
    out += tf_node(cd, "Identity", [g, "^" + gd], {"T": av_type("DT_FLOAT"), "_class": av_list_s(["loc:@" + g])})
    out += tf_node(cd + "_1", "Identity", [bag, "^" + gd],
                   {"T": av_type("DT_FLOAT"), "_class": av_list_s(["loc:@" + bag])})
    mg = GL + "/MatMul_grad"
    prev = input_name if is_first else LP + "/Relu"
    out += tf_node(mg + "/MatMul", "MatMul", [cd, kernel_read], _matmul_attrs(True, False, False, True, True))
    out += tf_node(mg + "/MatMul_1", "MatMul", [prev, cd], _matmul_attrs(False, True, True, False, True))
    out += _tuple(mg, mg + "/MatMul", mg + "/MatMul_1")
    return render(out)


def loss_and_grad_head(logits: str, labels: str, batch: int) -> str:
    s = "sparse_softmax_cross_entropy_loss"
    g = "gradients/" + s
    f = "DT_FLOAT"
    i32 = "DT_INT32"
    out = scalar_const(s + "/Const", f, "float_val", f32(1.0))
    out += tf_node(s + "/xentropy/xentropy", "SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                   {"T": av_type(f), "Tlabels": av_type("DT_INT64")})
    out += tf_node(s + "/Mul", "Mul", [s + "/xentropy/xentropy", s + "/Const"], {"T": av_type(f)})
    out += tf_node(s + "/Const_1", "Const", (), {"dtype": av_type(i32), "value": av_tensor(
        i32, [1], [("int_val", "0")])})
    out += tf_node(s + "/Sum", "Sum", [s + "/Mul", s + "/Const_1"],
                   {"T": av_type(f), "Tidx": av_type(i32), "keep_dims": av_b(False)})
    out += scalar_const(s + "/num_present", f, "float_val", f32(float(batch)))
    out += tf_node(s + "/value", "DivNoNan", [s + "/Sum", s + "/num_present"], {"T": av_type(f)})
    out += tf_node("gradients/Shape", "Const", (), {"dtype": av_type(i32), "value": av_tensor(i32, [0], [])})
    out += scalar_const("gradients/grad_ys_0/Const", f, "float_val", f32(1.0))
    out += tf_node("gradients/grad_ys_0", "Fill", ["gradients/Shape", "gradients/grad_ys_0/Const"],
                   {"T": av_type(f), "index_type": av_type(i32)})
    out += tf_node(g + "/value_grad/div_no_nan", "DivNoNan", ["gradients/grad_ys_0", s + "/num_present"],
                   {"T": av_type(f)})
    out += tf_node(g + "/Sum_grad/Reshape/shape", "Const", (), {"dtype": av_type(i32), "value": av_tensor(
        i32, [1], [("int_val", "1")])})
    out += tf_node(g + "/Sum_grad/Reshape", "Reshape", [g + "/value_grad/div_no_nan", g + "/Sum_grad/Reshape/shape"],
                   {"T": av_type(f), "Tshape": av_type(i32)})
    out += tf_node(g + "/Sum_grad/Const", "Const", (), {"dtype": av_type(i32), "value": av_tensor(
        i32, [1], [("int_val", str(batch))])})
    out += tf_node(g + "/Sum_grad/Tile", "Tile", [g + "/Sum_grad/Reshape", g + "/Sum_grad/Const"],
                   {"T": av_type(f), "Tmultiples": av_type(i32)})
    out += tf_node(g + "/Mul_grad/Mul", "Mul", [g + "/Sum_grad/Tile", s + "/Const"], {"T": av_type(f)})
    out += tf_node("gradients/zeros_like", "ZerosLike", [s + "/xentropy/xentropy:1"], {"T": av_type(f)})
    out += scalar_const(g + "/xentropy/xentropy_grad/ExpandDims/dim", i32, "int_val", "-1")
    out += tf_node(g + "/xentropy/xentropy_grad/ExpandDims", "ExpandDims",
                   [g + "/Mul_grad/Mul", g + "/xentropy/xentropy_grad/ExpandDims/dim"],
                   {"T": av_type(f), "Tdim": av_type(i32)})
    out += tf_node(XENT_GRAD_MUL, "Mul", [g + "/xentropy/xentropy_grad/ExpandDims", s + "/xentropy/xentropy:1"],
                   {"T": av_type(f), HMCD: av_b(True)})
    return render(out)


def versions_text() -> str:
    return render([("versions", [("producer", str(TF_PRODUCER))])])


class Repeated:
    """A node with a repeated section (one or more), e.g. a NoOp with one control input per
    layer: parts[0] + rep[0]*N + parts[1] + rep[1]*N + ... + parts[-1]."""

    def __init__(self, node: Fields, markers: Sequence[str], reps: Sequence[Fields],
                 rep_indent: Sequence[int]) -> None:
        parts = split_tokens(render(node), markers)
        self.parts = [Tmpl(p) for p in parts]
        self.reps = [Tmpl(render(r, ind)) for r, ind in zip(reps, rep_indent)]



def layer_vals(k: int) -> Dict[bytes, bytes]:
    """The slot values of layer ``k``: itself, its neighbours, and two save/restore indices."""
    return slot_values(k=k, p=k - 1, n=k + 1, ia=2 * k + 1, ib=2 * k + 2)
