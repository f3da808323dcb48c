"""Deterministic, streaming generator of large GraphDef / GE-dump text files.

Usage::

    python -m benchmarks.gen_graph dense --size 1GB --seed 0 -o /tmp/pbtxt-scan-bench/dense.pbtxt
    python -m benchmarks.gen_graph const --size 200MB --json
    python -m benchmarks.gen_graph ge    --size 1GB

or from Python::

    from benchmarks.gen_graph import generate
    meta = generate("dense", "/tmp/x.pbtxt", 50 << 20, seed=0)

Kinds
-----
``dense``  node-dense TF1-style training graph (like ``tf.io.write_graph`` of an MLP trained
           with SGD): input pipeline, global_step, N layer units (variables, initializers,
           MatMul/BiasAdd/Relu), loss, ``gradients/`` scope in reverse layer order, optimizer
           updates, ``init``, ``save/...``, ``library``, ``versions``.
``const``  frozen / const-heavy graph: placeholders, then one huge ``Const`` per layer whose
           ``tensor_content`` is a single line of tens of MB, then a short forward/backward part.
``binary`` the ``dense`` nodes as a binary GraphDef (wire format, ``.pb``): ``gen_binary.py``.
``ge``     an Ascend GE ``ge_proto_*_Build.txt`` dump (``ge.proto.ModelDef`` as written by the
           C++ ``TextFormat::Print``) with weights as ``Const`` ops holding ``t { desc data }``,
           fused ops with ``_datadump_original_op_names``, a root graph and one subgraph.

Layout follows the protobuf text printers exactly (2-space indent, ``}`` alone on a line, map
entries sorted by key, CEscape octal escaping, float32 values printed as the repr of the
double, e.g. ``0.10000000149011612``).  The file is written in chunks through a buffered
binary file: node text is rendered once per *variant* into a ``%``-format template and then
stamped with the layer number (``bytes % dict``), so generation runs at hundreds of MB/s.

Same kind + size + seed => byte-identical output.  Standard library only; Python >= 3.8.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import struct
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

__all__ = ["KINDS", "generate", "parse_size", "cescape", "default_output_path"]

KINDS = ("dense", "const", "ge", "feed", "queue")  # feed, queue: benchmarks/gen_fed.py
GENERATORS = KINDS + ("binary",)  # binary: benchmarks/gen_binary.py (not yet in run.py's default kinds)

TF_PRODUCER = 1286
DEFAULT_CONST_LINE = 50 * 1000 * 1000  # escaped characters per big Const line
_BUF = 8 << 20

# --------------------------------------------------------------------------------------------
# escaping and scalar formatting (protobuf text_format / absl::CEscape)
# --------------------------------------------------------------------------------------------


def _make_escape_table() -> Dict[int, str]:
    table = {}  # type: Dict[int, str]
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    for b in range(256):
        if b in named:
            table[b] = named[b]
        elif b < 0x20 or b >= 0x7F:
            table[b] = "\\%03o" % b
    return table


_ESC_TABLE = _make_escape_table()


def cescape(data: bytes) -> str:
    """Escape bytes exactly like protobuf's CEscape (octal for bytes < 0x20, 0x7f, >= 0x80)."""
    return data.decode("latin-1").translate(_ESC_TABLE)


def q(s: str) -> str:
    """Quoted, escaped string literal."""
    return '"' + cescape(s.encode("utf-8")) + '"'


def f32(x: float) -> str:
    """A float32 value as ``MessageToString(float_format='')`` prints it (repr of the double)."""
    return repr(struct.unpack("<f", struct.pack("<f", x))[0])


# --------------------------------------------------------------------------------------------
# generic message rendering: a message is a list of (field, value); value is a preformatted
# scalar string or a nested list (sub-message).
# --------------------------------------------------------------------------------------------

Fields = List[Tuple[str, Any]]


def _render(fields: Fields, indent: int, out: List[str]) -> None:
    pad = " " * indent
    for name, val in fields:
        if isinstance(val, list):
            out.append(pad + name + " {")
            _render(val, indent + 2, out)
            out.append(pad + "}")
        else:
            out.append(pad + name + ": " + val)


def render(fields: Fields, indent: int = 0) -> str:
    out = []  # type: List[str]
    _render(fields, indent, out)
    return "\n".join(out) + "\n"


# ---- TF AttrValue helpers ----------------------------------------------------------------


def av_type(t: str) -> Fields:
    return [("type", t)]


def av_b(v: bool) -> Fields:
    return [("b", "true" if v else "false")]


def av_s(s: str) -> Fields:
    return [("s", q(s))]


def av_i(i: int) -> Fields:
    return [("i", str(i))]


def av_list_s(xs: Sequence[str]) -> Fields:
    return [("list", [("s", q(x)) for x in xs])]


def av_list_type(ts: Sequence[str]) -> Fields:
    return [("list", [("type", t) for t in ts])]


def shape_msg(dims: Sequence[int]) -> Fields:
    # proto3: a zero size is the default and is not printed (``dim {`` + ``}``)
    return [("dim", [("size", str(d))] if d != 0 else []) for d in dims]


def av_shape(dims: Sequence[int]) -> Fields:
    return [("shape", shape_msg(dims))]


def av_list_shape(shapes: Sequence[Sequence[int]]) -> Fields:
    return [("list", [("shape", shape_msg(d)) for d in shapes])]


def av_tensor(dtype: str, dims: Sequence[int], vals: Fields) -> Fields:
    return [("tensor", [("dtype", dtype), ("tensor_shape", shape_msg(dims))] + list(vals))]


def av_func(name: str) -> Fields:
    return [("func", [("name", q(name))])]


def _attrs(attrs: Optional[Dict[str, Fields]]) -> Fields:
    out = []  # type: Fields
    for k in sorted(attrs or {}):
        out.append(("attr", [("key", q(k)), ("value", attrs[k])]))  # type: ignore[index]
    return out


def tf_node(name: str, op: str, inputs: Sequence[str] = (), attrs: Optional[Dict[str, Fields]] = None,
            extra: Fields = ()) -> Fields:  # type: ignore[assignment]
    f = [("name", q(name)), ("op", q(op))]  # type: Fields
    f += [("input", q(i)) for i in inputs]
    f += _attrs(attrs)
    f += list(extra)
    return [("node", f)]


def nodes_text(*node_lists: Fields) -> str:
    flat = []  # type: Fields
    for n in node_lists:
        flat += n
    return render(flat, 0)


# --------------------------------------------------------------------------------------------
# templates
# --------------------------------------------------------------------------------------------

# slot tokens; a fixed set, so random escaped payloads cannot be mistaken for one
_TOKEN_RE = re.compile(r"@@(K|P|N|M|IA|IB|I[0-9]|LOGITS)@@")


class Tmpl:
    """A text chunk with ``@@SLOT@@`` tokens, compiled to a ``bytes % dict`` format."""

    __slots__ = ("text", "fmt", "raw", "nlines", "nnodes", "base_len", "counts", "nops")

    def __init__(self, text: str, opener: str = "node {\n") -> None:
        self.text = text
        self.nlines = text.count("\n")
        if opener == "node {\n":
            self.nnodes = text.count("\nnode {\n") + (1 if text.startswith("node {\n") else 0)
        else:
            self.nnodes = text.count("\n" + opener) + (1 if text.startswith(opener) else 0)
        self.nops = self.nnodes
        counts = {}  # type: Dict[str, int]
        for m in _TOKEN_RE.finditer(text):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
        self.counts = [(k.lower().encode("ascii"), c) for k, c in sorted(counts.items())]
        self.base_len = len(text) - sum(len(k) * c for k, c in counts.items()) - 4 * sum(counts.values())
        if counts:
            fmt = _TOKEN_RE.sub(lambda m: "%(" + m.group(1).lower() + ")s", text.replace("%", "%%"))
            self.fmt = fmt.encode("ascii")  # type: Optional[bytes]
            self.raw = None  # type: Optional[bytes]
        else:
            self.fmt = None
            self.raw = text.encode("ascii")

    def stamp(self, vals: Optional[Dict[bytes, bytes]]) -> bytes:
        if self.fmt is None:
            return self.raw  # type: ignore[return-value]
        return self.fmt % vals  # type: ignore[operator]

    def size(self, vals: Optional[Dict[bytes, bytes]]) -> int:
        n = self.base_len
        for k, c in self.counts:
            n += c * len(vals[k])  # type: ignore[index]
        return n

    def line_of(self, needle: str) -> int:
        """0-based line offset (within this template) of the opener line of the block whose
        ``name:`` line is ``needle`` (exact line content, tokens included)."""
        idx = self.text.find(needle)
        if idx < 0:
            raise KeyError(needle)
        return self.text.count("\n", 0, idx) - 1


def split_tokens(text: str, markers: Sequence[str]) -> List[str]:
    """Split text at each marker.  A marker that is the whole value of its line (``input: "@@REP@@"``,
    ``type: @@REP@@``) removes that line: the repeated lines go in its place.  Otherwise the
    split is inside the line (``data: "@@DATA@@"`` -> ``...data: "`` | ``"\\n...``)."""
    parts = []
    rest = text
    for mk in markers:
        i = rest.index(mk)
        ls = rest.rfind("\n", 0, i) + 1
        le = rest.find("\n", i)
        line = rest[ls:le].strip()
        if re.match(r'^[a-z_]+: (' + re.escape(mk) + '|"' + re.escape(mk) + '")$', line) and "data" not in line \
                and "tensor_content" not in line:
            parts.append(rest[:ls])
            rest = rest[le + 1:]
        else:
            parts.append(rest[:i])
            rest = rest[i + len(mk):]
    parts.append(rest)
    return parts


class _Writer:
    def __init__(self, path: str) -> None:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.f = open(path, "wb", buffering=_BUF)
        self.bytes = 0
        self.lines = 0
        self.nodes = 0

    def put(self, t: Tmpl, vals: Optional[Dict[bytes, bytes]] = None) -> int:
        """Write a stamped template; returns the 1-based line number of its first line."""
        start = self.lines + 1
        b = t.stamp(vals)
        self.f.write(b)
        self.bytes += len(b)
        self.lines += t.nlines
        self.nodes += t.nnodes
        return start

    def data(self, b: bytes) -> None:
        """Raw bytes without newlines (part of a long single-line string)."""
        self.f.write(b)
        self.bytes += len(b)

    def close(self) -> None:
        self.f.close()


def _v(**kw: Any) -> Dict[bytes, bytes]:
    return {k.encode("ascii"): str(v).encode("ascii") for k, v in kw.items()}


# --------------------------------------------------------------------------------------------
# random payloads
# --------------------------------------------------------------------------------------------


def _float_bytes(rng: random.Random, n: int, scale: float = 0.05, zero_frac: float = 0.05) -> bytes:
    vals = [0.0 if rng.random() < zero_frac else rng.gauss(0.0, scale) for _ in range(n)]
    return struct.pack("<%df" % n, *vals)


class _BlockPool:
    """Pre-escaped blocks of float32 data (``rows`` x ``cols`` floats each); a big tensor is
    written as a seeded sequence of these blocks, so a 50 MB line costs ~250 writes."""

    def __init__(self, rng: random.Random, cols: int, rows: int, count: int = 8) -> None:
        self.cols = cols
        self.rows = rows
        self.blocks = [cescape(_float_bytes(rng, rows * cols)).encode("ascii") for _ in range(count)]
        self.lens = [len(b) for b in self.blocks]
        self.perm = list(range(count))
        rng.shuffle(self.perm)

    def seq(self, k: int, nblocks: int) -> List[int]:
        p = self.perm
        n = len(p)
        return [p[(k * 31 + i * 7 + (i // n)) % n] for i in range(nblocks)]

    def length(self, k: int, nblocks: int) -> int:
        return sum(self.lens[j] for j in self.seq(k, nblocks))

    def write(self, w: _Writer, k: int, nblocks: int) -> None:
        for j in self.seq(k, nblocks):
            w.data(self.blocks[j])


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


def _scalar_const(name: str, dtype: str, valfield: str, val: str, cls: Optional[str] = None,
                  inputs: Sequence[str] = ()) -> Fields:
    attrs = {"dtype": av_type(dtype), "value": av_tensor(dtype, [], [(valfield, val)])}
    if cls:
        attrs["_class"] = av_list_s(["loc:@" + cls])
    return tf_node(name, "Const", inputs, attrs)


def _input_pipeline(rng: random.Random, feat: int, batch: int) -> Tuple[Fields, Fields]:
    """Nodes of the tf.data pipeline and the matching library function (node_defs)."""
    rows = 64
    comp0 = av_tensor("DT_FLOAT", [rows, feat],
                      [("tensor_content", '"' + cescape(_float_bytes(rng, rows * feat, 0.5, 0.0)) + '"')])
    labels = struct.pack("<%dq" % rows, *[rng.randrange(10) for _ in range(rows)])
    comp1 = av_tensor("DT_INT64", [rows], [("tensor_content", '"' + cescape(labels) + '"')])
    elem_shapes = av_list_shape([[feat], []])
    batch_shapes = av_list_shape([[batch, feat], [batch]])
    types = av_list_type(["DT_FLOAT", "DT_INT64"])
    fn = "_make_dataset_%011x" % rng.getrandbits(44)

    def pipeline(lib: bool) -> Fields:
        def o(n: str, port: str) -> str:
            return n + ":" + port + ":0" if lib else n

        out = []  # type: Fields
        out += tf_node("normalize_element/component_0", "Const", (), {"dtype": av_type("DT_FLOAT"), "value": comp0})
        out += tf_node("normalize_element/component_1", "Const", (), {"dtype": av_type("DT_INT64"), "value": comp1})
        out += tf_node("TensorSliceDataset", "TensorSliceDataset",
                       [o("normalize_element/component_0", "output"), o("normalize_element/component_1", "output")],
                       {"Toutput_types": types, "is_files": av_b(False), "metadata": av_s(""),
                        "output_shapes": elem_shapes, "replicate_on_split": av_b(False)}, _exp_type())
        out += _scalar_const("count", "DT_INT64", "int64_val", "-1")
        out += tf_node("RepeatDataset", "RepeatDataset", [o("TensorSliceDataset", "handle"), o("count", "output")],
                       {"metadata": av_s(""), "output_shapes": elem_shapes, "output_types": types}, _exp_type())
        out += _scalar_const("batch_size", "DT_INT64", "int64_val", str(batch))
        out += _scalar_const("drop_remainder", "DT_BOOL", "bool_val", "true")
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


def _global_step() -> Fields:
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


def _fwd_compute(prev: str, kernel_in: str, bias_in: str, has_relu: bool) -> Fields:
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


def _dense_fwd_unit(is_first: bool, has_relu: bool, in_w: int, out_w: int, input_name: str) -> str:
    k = L + "/kernel"
    b = L + "/bias"
    ru = k + "/Initializer/random_uniform"
    cls = {"_class": av_list_s(["loc:@" + k])}
    limit = math.sqrt(6.0 / (in_w + out_w))
    out = tf_node(ru + "/shape", "Const", (), dict(cls, dtype=av_type("DT_INT32"), value=av_tensor(
        "DT_INT32", [2], [("tensor_content", '"' + cescape(struct.pack("<ii", in_w, out_w)) + '"')])))
    out += _scalar_const(ru + "/min", "DT_FLOAT", "float_val", f32(-limit), k)
    out += _scalar_const(ru + "/max", "DT_FLOAT", "float_val", f32(limit), k)
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
    out += _fwd_compute(prev, L + "/MatMul/ReadVariableOp", L + "/BiasAdd/ReadVariableOp", has_relu)
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


def _bwd_unit(is_first: bool, is_last: bool, input_name: str, kernel_read: str) -> str:
    upstream = XENT_GRAD_MUL if is_last else "gradients/layer_@@N@@/MatMul_grad/tuple/control_dependency"
    out = []  # type: Fields
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


def _loss_and_grad_head(logits: str, labels: str, batch: int) -> str:
    s = "sparse_softmax_cross_entropy_loss"
    g = "gradients/" + s
    f = "DT_FLOAT"
    i32 = "DT_INT32"
    out = _scalar_const(s + "/Const", f, "float_val", f32(1.0))
    out += tf_node(s + "/xentropy/xentropy", "SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                   {"T": av_type(f), "Tlabels": av_type("DT_INT64")})
    out += tf_node(s + "/Mul", "Mul", [s + "/xentropy/xentropy", s + "/Const"], {"T": av_type(f)})
    out += tf_node(s + "/Const_1", "Const", (), {"dtype": av_type(i32), "value": av_tensor(
        i32, [1], [("int_val", "0")])})
    out += tf_node(s + "/Sum", "Sum", [s + "/Mul", s + "/Const_1"],
                   {"T": av_type(f), "Tidx": av_type(i32), "keep_dims": av_b(False)})
    out += _scalar_const(s + "/num_present", f, "float_val", f32(float(batch)))
    out += tf_node(s + "/value", "DivNoNan", [s + "/Sum", s + "/num_present"], {"T": av_type(f)})
    out += tf_node("gradients/Shape", "Const", (), {"dtype": av_type(i32), "value": av_tensor(i32, [0], [])})
    out += _scalar_const("gradients/grad_ys_0/Const", f, "float_val", f32(1.0))
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
    out += _scalar_const(g + "/xentropy/xentropy_grad/ExpandDims/dim", i32, "int_val", "-1")
    out += tf_node(g + "/xentropy/xentropy_grad/ExpandDims", "ExpandDims",
                   [g + "/Mul_grad/Mul", g + "/xentropy/xentropy_grad/ExpandDims/dim"],
                   {"T": av_type(f), "Tdim": av_type(i32)})
    out += tf_node(XENT_GRAD_MUL, "Mul", [g + "/xentropy/xentropy_grad/ExpandDims", s + "/xentropy/xentropy:1"],
                   {"T": av_type(f), HMCD: av_b(True)})
    return render(out)


def _versions() -> str:
    return render([("versions", [("producer", str(TF_PRODUCER))])])


class _Repeated:
    """A node with a repeated section (one or more), e.g. a NoOp with one control input per
    layer: parts[0] + rep[0]*N + parts[1] + rep[1]*N + ... + parts[-1]."""

    def __init__(self, node: Fields, markers: Sequence[str], reps: Sequence[Fields],
                 rep_indent: Sequence[int]) -> None:
        parts = split_tokens(render(node), markers)
        self.parts = [Tmpl(p) for p in parts]
        self.reps = [Tmpl(render(r, ind)) for r, ind in zip(reps, rep_indent)]


# --------------------------------------------------------------------------------------------
# kind: dense
# --------------------------------------------------------------------------------------------

_WIDTHS = (64, 128, 256, 512, 1024)
NUM_CLASSES = 10


class _Dense:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed * 1000003 + 1)
        self.feat = self.rng.choice((16, 20, 24, 32))
        self.batch = self.rng.choice((8, 16, 32))
        pipe, lib = _input_pipeline(self.rng, self.feat, self.batch)
        self.head = Tmpl(nodes_text(pipe, _global_step()))
        self.library = Tmpl(render(lib))
        self._fwd = {}  # type: Dict[Tuple[bool, bool, int, int], Tmpl]
        self._bwd = {}  # type: Dict[Tuple[bool, bool], Tmpl]
        self.loss = Tmpl(_loss_and_grad_head(LP + "/BiasAdd", "IteratorGetNext:1", self.batch))
        # ---- optimizer
        self.lr = Tmpl(render(_scalar_const("GradientDescent/learning_rate", "DT_FLOAT", "float_val", f32(0.1))))
        opt = []  # type: Fields
        for var, grad in (("kernel", "MatMul"), ("bias", "BiasAdd")):
            opt += tf_node("GradientDescent/update_" + L + "/" + var + "/ResourceApplyGradientDescent",
                           "ResourceApplyGradientDescent",
                           [L + "/" + var, "GradientDescent/learning_rate",
                            GL + "/" + grad + "_grad/tuple/control_dependency_1"],
                           {"T": av_type("DT_FLOAT"), "_class": av_list_s(["loc:@" + L + "/" + var]),
                            HMCD: av_b(True), "use_locking": av_b(False)})
        self.opt = Tmpl(render(opt))
        upd = "GradientDescent/update_" + L + "/%s/ResourceApplyGradientDescent"
        self.gd_update = _Repeated(
            tf_node("GradientDescent/update", "NoOp", ["@@REP@@"], {HMCD: av_b(True)}), ["@@REP@@"],
            [[("input", q("^" + upd % "bias")), ("input", q("^" + upd % "kernel"))]], (2,))
        gd_tail = []  # type: Fields
        gd_tail += tf_node("GradientDescent/Const", "Const", ["^GradientDescent/update"], {
            "_class": av_list_s(["loc:@global_step"]), "dtype": av_type("DT_INT64"),
            "value": av_tensor("DT_INT64", [], [("int64_val", "1")])})
        gd_tail += tf_node("GradientDescent", "AssignAddVariableOp", ["global_step", "GradientDescent/Const"],
                           {"_class": av_list_s(["loc:@global_step"]), "dtype": av_type("DT_INT64")})
        self.gd_tail = Tmpl(render(gd_tail))
        self.init = _Repeated(tf_node("init", "NoOp", ["^global_step/Assign", "@@REP@@"]), ["@@REP@@"],
                              [[("input", q("^" + L + "/kernel/Assign")), ("input", q("^" + L + "/bias/Assign"))]],
                              (2,))
        # ---- saver
        st = "DT_STRING"
        save_head = []  # type: Fields
        save_head += _scalar_const("save/filename/input", st, "string_val", q("model"))
        save_head += tf_node("save/filename", "PlaceholderWithDefault", ["save/filename/input"],
                             {"dtype": av_type(st), "shape": av_shape([])})
        save_head += tf_node("save/Const", "PlaceholderWithDefault", ["save/filename"],
                             {"dtype": av_type(st), "shape": av_shape([])})
        self.save_head = Tmpl(render(save_head))
        names_rep = [("string_val", q(L + "/bias")), ("string_val", q(L + "/kernel"))]
        slices_rep = [("string_val", q("")), ("string_val", q(""))]

        def names_node(name: str) -> _Repeated:
            node = tf_node(name, "Const", (), {"dtype": av_type(st), "value": av_tensor(
                st, ["@@M@@"], [("string_val", q("global_step")), ("string_val", "@@REP@@")])})
            return _Repeated(node, ["@@REP@@"], [names_rep], (8,))

        def slices_node(name: str) -> _Repeated:
            node = tf_node(name, "Const", (), {"dtype": av_type(st), "value": av_tensor(
                st, ["@@M@@"], [("string_val", q("")), ("string_val", "@@REP@@")])})
            return _Repeated(node, ["@@REP@@"], [slices_rep], (8,))

        self.save_names = names_node("save/SaveV2/tensor_names")
        self.save_slices = slices_node("save/SaveV2/shape_and_slices")
        self.save_v2 = _Repeated(
            tf_node("save/SaveV2", "SaveV2",
                    ["save/Const", "save/SaveV2/tensor_names", "save/SaveV2/shape_and_slices",
                     "global_step/Read/ReadVariableOp", "@@REP@@"],
                    {"_has_manual_control_dependencies": av_b(True),
                     "dtypes": [("list", [("type", "DT_INT64"), ("type", "@@REP2@@")])]}),
            ["@@REP@@", "@@REP2@@"],
            [[("input", q(L + "/bias/Read/ReadVariableOp")), ("input", q(L + "/kernel/Read/ReadVariableOp"))],
             [("type", "DT_FLOAT"), ("type", "DT_FLOAT")]], (2, 8))
        self.save_mid = Tmpl(render(tf_node("save/control_dependency", "Identity", ["save/Const", "^save/SaveV2"],
                                            {"T": av_type(st), "_class": av_list_s(["loc:@save/Const"]),
                                             HMCD: av_b(True)})))
        self.restore_names = names_node("save/RestoreV2/tensor_names")
        self.restore_slices = slices_node("save/RestoreV2/shape_and_slices")
        self.restore_v2 = _Repeated(
            tf_node("save/RestoreV2", "RestoreV2",
                    ["save/Const", "save/RestoreV2/tensor_names", "save/RestoreV2/shape_and_slices"],
                    {"dtypes": [("list", [("type", "DT_INT64"), ("type", "@@REP@@")])]}),
            ["@@REP@@"], [[("type", "DT_FLOAT"), ("type", "DT_FLOAT")]], (8,))
        rs0 = []  # type: Fields
        rs0 += tf_node("save/Identity", "Identity", ["save/RestoreV2"], {"T": av_type("DT_INT64")})
        rs0 += tf_node("save/AssignVariableOp", "AssignVariableOp", ["global_step", "save/Identity"],
                       {"dtype": av_type("DT_INT64")})
        self.restore0 = Tmpl(render(rs0))
        rsk = []  # type: Fields
        for var, slot in (("bias", "@@IA@@"), ("kernel", "@@IB@@")):
            rsk += tf_node("save/Identity_" + slot, "Identity", ["save/RestoreV2:" + slot], {"T": av_type("DT_FLOAT")})
            rsk += tf_node("save/AssignVariableOp_" + slot, "AssignVariableOp",
                           [L + "/" + var, "save/Identity_" + slot], {"dtype": av_type("DT_FLOAT")})
        self.restore_k = Tmpl(render(rsk))
        self.restore_all = _Repeated(
            tf_node("save/restore_all", "NoOp", ["^save/AssignVariableOp", "@@REP@@"]), ["@@REP@@"],
            [[("input", q("^save/AssignVariableOp_@@IA@@")), ("input", q("^save/AssignVariableOp_@@IB@@"))]], (2,))
        self.versions = Tmpl(_versions())

    def fwd(self, is_first: bool, has_relu: bool, in_w: int, out_w: int) -> Tmpl:
        key = (is_first, has_relu, in_w, out_w)
        t = self._fwd.get(key)
        if t is None:
            t = self._fwd[key] = Tmpl(_dense_fwd_unit(is_first, has_relu, in_w, out_w, "IteratorGetNext"))
        return t

    def bwd(self, is_first: bool, is_last: bool) -> Tmpl:
        key = (is_first, is_last)
        t = self._bwd.get(key)
        if t is None:
            t = self._bwd[key] = Tmpl(_bwd_unit(is_first, is_last, "IteratorGetNext", L + "/MatMul/ReadVariableOp"))
        return t

    @staticmethod
    def layer_vals(k: int) -> Dict[bytes, bytes]:
        return _v(k=k, p=k - 1, n=k + 1, ia=2 * k + 1, ib=2 * k + 2)

    def _repeated_all(self) -> List[_Repeated]:
        return [self.gd_update, self.init, self.save_names, self.save_slices, self.save_v2,
                self.restore_names, self.restore_slices, self.restore_v2, self.restore_all]

    def per_layer_size(self, k: int, in_w: int, out_w: int) -> int:
        v = self.layer_vals(k)
        n = self.fwd(k == 0, True, in_w, out_w).size(v) + self.bwd(k == 0, False).size(v)
        n += self.opt.size(v) + self.restore_k.size(v)
        for r in self._repeated_all():
            n += sum(t.size(v) for t in r.reps)
        return n

    def fixed_size(self, nl: int) -> int:
        fv = _v(p=nl - 1, m=2 * nl + 1)
        n = self.head.size(None) + self.loss.size(fv) + self.lr.size(None) + self.gd_tail.size(None)
        n += self.save_head.size(None) + self.save_mid.size(None) + self.restore0.size(None)
        n += self.library.size(None) + self.versions.size(None)
        for r in self._repeated_all():
            n += sum(p.size(fv) for p in r.parts)
        return n

    def plan(self, target: int) -> List[int]:
        """Widths: widths[k] is the output width of layer k; input of layer 0 is self.feat."""
        widths = []  # type: List[int]
        fixed = self.fixed_size(10000)
        acc = 0
        in_w = self.feat
        k = 0
        last = 0
        while True:
            out_w = self.rng.choice(_WIDTHS)
            last = self.per_layer_size(k, in_w, out_w)
            acc += last
            widths.append(out_w)
            in_w = out_w
            k += 1
            if k >= 2 and acc + fixed >= target:
                break
        if k > 2 and (acc + fixed - target) > (target - (acc - last + fixed)):
            widths.pop()  # closer to the target without the last layer
        widths[-1] = NUM_CLASSES
        return widths

    def write(self, w: _Writer, target: int) -> Dict[str, Any]:
        widths = self.plan(target)
        nl = len(widths)
        fv = _v(p=nl - 1, m=2 * nl + 1)
        w.put(self.head)
        fp_line = 0
        in_w = self.feat
        for k in range(nl):
            t = self.fwd(k == 0, k < nl - 1, in_w, widths[k])
            start = w.put(t, self.layer_vals(k))
            if k == 0:
                fp_line = start + t.line_of('  name: "' + L + '/MatMul"\n')
            in_w = widths[k]
        w.put(self.loss, fv)
        bp_line = 0
        for k in range(nl - 1, -1, -1):
            t = self.bwd(k == 0, k == nl - 1)
            start = w.put(t, self.layer_vals(k))
            if k == 0:
                bp_line = start + t.line_of('  name: "' + GL + '/MatMul_grad/MatMul_1"\n')
        w.put(self.lr)
        for k in range(nl):
            w.put(self.opt, self.layer_vals(k))
        self._put_repeated(w, self.gd_update, fv, nl)
        w.put(self.gd_tail)
        self._put_repeated(w, self.init, fv, nl)
        w.put(self.save_head)
        for r in (self.save_names, self.save_slices, self.save_v2):
            self._put_repeated(w, r, fv, nl)
        w.put(self.save_mid)
        for r in (self.restore_names, self.restore_slices, self.restore_v2):
            self._put_repeated(w, r, fv, nl)
        w.put(self.restore0)
        for k in range(nl):
            w.put(self.restore_k, self.layer_vals(k))
        self._put_repeated(w, self.restore_all, fv, nl)
        w.put(self.library)
        w.put(self.versions)
        return {"layers": nl, "expected": {
            "fp": "layer_0/MatMul", "fp_line": fp_line,
            "bp": "gradients/layer_0/MatMul_grad/MatMul_1", "bp_line": bp_line,
            "input": "IteratorGetNext",
        }}

    def _put_repeated(self, w: _Writer, r: _Repeated, fv: Dict[bytes, bytes], nl: int) -> None:
        for i, part in enumerate(r.parts):
            w.put(part, fv)
            if i < len(r.reps):
                rep = r.reps[i]
                for k in range(nl):
                    w.put(rep, self.layer_vals(k))


# --------------------------------------------------------------------------------------------
# kind: const
# --------------------------------------------------------------------------------------------

_ROWS = 8


class _Const:
    def __init__(self, seed: int, target: int, line_len: int) -> None:
        self.rng = random.Random(seed * 1000003 + 2)
        self.batch = 8
        # escaped chars per raw byte for these weights (measured on a sample)
        sample = cescape(_float_bytes(random.Random(seed), 4096))
        expansion = len(sample) / (4096 * 4.0)
        overhead_per_layer = 9000
        n = max(2, int(round(target / float(line_len + overhead_per_layer))))
        per_line = max(1024, target / float(n) - overhead_per_layer - 3000.0 / n)
        width = int(math.sqrt(per_line / (4.0 * expansion)))
        self.width = max(_ROWS, (width // _ROWS) * _ROWS)
        self.layers = n
        self.pool = _BlockPool(self.rng, self.width, _ROWS)
        self.nblocks = self.width // _ROWS
        W = self.width
        head = []  # type: Fields
        head += tf_node("input", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([-1, W])})
        head += tf_node("labels", "Placeholder", (), {"dtype": av_type("DT_INT64"), "shape": av_shape([-1])})
        self.head = Tmpl(render(head))
        kern = tf_node(L + "/kernel", "Const", (), {"dtype": av_type("DT_FLOAT"), "value": av_tensor(
            "DT_FLOAT", [W, W], [("tensor_content", '"@@DATA@@"')])})
        a, b = split_tokens(render(kern), ["@@DATA@@"])
        self.kern_a, self.kern_b = Tmpl(a), Tmpl(b)
        self.bias = []  # type: List[Tmpl]
        for _ in range(4):
            content = cescape(_float_bytes(self.rng, W, 0.01, 0.0))
            self.bias.append(Tmpl(render(tf_node(L + "/bias", "Const", (), {
                "dtype": av_type("DT_FLOAT"),
                "value": av_tensor("DT_FLOAT", [W], [("tensor_content", '"' + content + '"')])}))))
        self.fwd_first = Tmpl(render(_fwd_compute("input", L + "/kernel", L + "/bias", True)))
        self.fwd_mid = Tmpl(render(_fwd_compute(LP + "/Relu", L + "/kernel", L + "/bias", True)))
        self.fwd_last = Tmpl(render(_fwd_compute(LP + "/Relu", L + "/kernel", L + "/bias", False)))
        self.fwd_only = Tmpl(render(_fwd_compute("input", L + "/kernel", L + "/bias", False)))
        self.loss = Tmpl(_loss_and_grad_head(LP + "/BiasAdd", "labels", self.batch))
        self.bwd = {}  # type: Dict[Tuple[bool, bool], Tmpl]
        for first in (True, False):
            for last in (True, False):
                self.bwd[(first, last)] = Tmpl(_bwd_unit(first, last, "input", L + "/kernel"))
        self.versions = Tmpl(_versions())

    def write(self, w: _Writer) -> Dict[str, Any]:
        nl = self.layers
        w.put(self.head)
        for k in range(nl):
            v = _Dense.layer_vals(k)
            w.put(self.kern_a, v)
            self.pool.write(w, k, self.nblocks)
            w.put(self.kern_b, v)
            w.put(self.bias[(k * 7 + 3) % len(self.bias)], v)
        fp_line = 0
        for k in range(nl):
            if nl == 1:
                t = self.fwd_only
            elif k == 0:
                t = self.fwd_first
            elif k == nl - 1:
                t = self.fwd_last
            else:
                t = self.fwd_mid
            start = w.put(t, _Dense.layer_vals(k))
            if k == 0:
                fp_line = start + t.line_of('  name: "' + L + '/MatMul"\n')
        w.put(self.loss, _v(p=nl - 1))
        bp_line = 0
        for k in range(nl - 1, -1, -1):
            t = self.bwd[(k == 0, k == nl - 1)]
            start = w.put(t, _Dense.layer_vals(k))
            if k == 0:
                bp_line = start + t.line_of('  name: "' + GL + '/MatMul_grad/MatMul_1"\n')
        w.put(self.versions)
        return {"layers": nl, "width": self.width, "expected": {
            "fp": "layer_0/MatMul", "fp_line": fp_line,
            "bp": "gradients/layer_0/MatMul_grad/MatMul_1", "bp_line": bp_line,
            "input": "input",
        }}


# --------------------------------------------------------------------------------------------
# kind: ge  (ge.proto.ModelDef, C++ TextFormat layout)
# --------------------------------------------------------------------------------------------

AIC = "AIcoreEngine"
AICPU = "aicpu_ascend_kernel"
GE_LOCAL = "DNN_VM_GE_LOCAL_OP_STORE"


def ge_list_s(xs: Sequence[str]) -> Fields:
    return [("list", [("s", q(x)) for x in xs] + [("val_type", "VT_LIST_STRING")])]


def ge_list_i(xs: Sequence[int]) -> Fields:
    return [("list", [("i", str(x)) for x in xs] + [("val_type", "VT_LIST_INT")])]


def ge_desc(dims: Sequence[int], dtype: str = "DT_FLOAT", layout: str = "ND", origin: Optional[str] = None,
            name: Optional[str] = None) -> Fields:
    f = []  # type: Fields
    if name:
        f.append(("name", q(name)))
    f.append(("dtype", dtype))
    f.append(("shape", [("dim", str(d)) for d in dims]))
    f.append(("layout", q(layout)))
    attrs = {"origin_format": av_s(layout), "origin_shape": ge_list_i(dims),
             "origin_data_type": av_s(dtype[3:])}
    if origin:
        attrs["_datadump_origin_name"] = av_s(origin)
        attrs["_datadump_origin_output_index"] = av_i(0)
    f += _attrs(attrs)
    f.append(("has_out_attr", "true"))
    nbytes = 4 if dtype in ("DT_FLOAT", "DT_INT32") else (2 if dtype == "DT_FLOAT16" else 8)
    f.append(("size", str(max(1, _prod(dims)) * nbytes)))
    f.append(("device_type", q("NPU")))
    if dims:
        f.append(("real_dim_cnt", str(len(dims))))
    return f


def _prod(xs: Sequence[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def ge_op(name: str, typ: str, inputs: Sequence[str], attrs: Dict[str, Fields], op_id: Optional[str],
          in_descs: Sequence[Tuple[str, Fields]] = (), out_descs: Sequence[Fields] = (),
          stream: Optional[str] = None, subgraphs: Sequence[str] = ()) -> Fields:
    f = [("name", q(name)), ("type", q(typ))]  # type: Fields
    f += [("input", q(i)) for i in inputs]
    f += _attrs(attrs)
    f.append(("has_out_attr", "true"))
    if op_id is not None:
        f.append(("id", op_id))
    if stream is not None:
        f.append(("stream_id", stream))
    f += [("input_name", q(n)) for n, _ in in_descs]
    srcs = [i.rsplit(":", 1) for i in inputs if ":" in i and not i.endswith(":-1")]
    f += [("src_name", q(s)) for s, _ in srcs]
    f += [("src_index", i) for _, i in srcs]
    f += [("input_desc", d) for _, d in in_descs]
    f += [("output_desc", d) for d in out_descs]
    f += [("subgraph_name", q(s)) for s in subgraphs]
    return [("op", f)]


def _ge_attrs(lib: Optional[str], orig: Optional[Sequence[str]] = None, orig_types: Optional[Sequence[str]] = None,
              extra: Optional[Dict[str, Fields]] = None, no_task: bool = False) -> Dict[str, Fields]:
    a = {}  # type: Dict[str, Fields]
    if lib is not None:
        a["_ge_attr_op_kernel_lib_name"] = av_s(lib)
    if orig is not None:
        a["_datadump_original_op_names"] = ge_list_s(orig)
    if orig_types is not None:
        a["_datadump_original_op_types"] = ge_list_s(orig_types)
    if no_task:
        a["_no_task"] = av_b(True)
    if lib == AIC:
        a["_fe_imply_type"] = av_i(6)
    a.update(extra or {})
    return a


class _GE:
    ROOT = "GeOp1_0"
    SUB = "GeOp1_0_learning_rate_PartitionedCall_sub_0"

    def __init__(self, seed: int, target: int) -> None:
        self.rng = random.Random(seed * 1000003 + 3)
        self.batch = 16
        sample = cescape(_float_bytes(random.Random(seed), 4096))
        expansion = len(sample) / (4096 * 4.0)
        n_target = max(4, min(400, target // (2 << 20)))
        kern_len = 0.85 * target / n_target
        width = int(math.sqrt(kern_len / (4.0 * expansion)))
        self.width = max(16, (width // 16) * 16)
        self.pool = _BlockPool(self.rng, self.width, _ROWS)
        self.nblocks = self.width // _ROWS
        self._fwd = {}  # type: Dict[Tuple[bool, bool, bool, bool], Tuple[Tmpl, Tmpl, int]]
        self._bwd = {}  # type: Dict[Tuple[bool, bool, bool, bool], Tmpl]
        self.fused_mod = self.rng.choice((3, 4, 5))
        B, W = self.batch, self.width
        # ---- head: GetNext (id 0: no `id:` line), global step
        head = []  # type: Fields
        head += ge_op("IteratorGetNext", "GetNext", [],
                      _ge_attrs(AICPU, ["IteratorGetNext"], ["IteratorGetNext"],
                                {"channel_name": av_s("Iterator_%d" % seed), "output_types": [
                                    ("list", [("dt", "1"), ("dt", "9"), ("val_type", "VT_LIST_DATA_TYPE")])]}),
                      None, (), [ge_desc([B, W], origin="IteratorGetNext"), ge_desc([B], "DT_INT64")], stream="1")
        head += ge_op("ge_global_step", "Variable", [], _ge_attrs(GE_LOCAL, no_task=True), "@@I0@@", (),
                      [ge_desc([], "DT_INT64")])
        self.head = Tmpl(render(head, 2), "  op {\n")
        self.head.nops = 2
        self.head_ids = 1
        # ---- loss
        s = "sparse_softmax_cross_entropy_loss"
        loss = []  # type: Fields
        loss += ge_op(s + "/xentropy/xentropy", "SparseSoftmaxCrossEntropyWithLogits",
                      ["@@LOGITS@@:0", "IteratorGetNext:1"],
                      _ge_attrs(AIC, [s + "/xentropy/xentropy"], ["SparseSoftmaxCrossEntropyWithLogits"]), "@@I0@@",
                      [("features", ge_desc([B, W])), ("labels", ge_desc([B], "DT_INT64"))],
                      [ge_desc([B], origin=s + "/xentropy/xentropy"), ge_desc([B, W])])
        loss += ge_op(s + "/value", "ReduceMeanD", [s + "/xentropy/xentropy:0"],
                      _ge_attrs(AIC, [s + "/Mul", s + "/Sum", s + "/num_present", s + "/value"],
                                ["Mul", "Sum", "Const", "DivNoNan"],
                                {"axes": ge_list_i([0]), "keep_dims": av_b(False)}), "@@I1@@",
                      [("x", ge_desc([B]))], [ge_desc([], origin=s + "/value")])
        loss += ge_op(XENT_GRAD_MUL, "Mul", [s + "/xentropy/xentropy:1", s + "/value:0"],
                      _ge_attrs(AIC, [XENT_GRAD_MUL, "gradients/" + s + "/xentropy/xentropy_grad/ExpandDims"],
                                ["Mul", "ExpandDims"]), "@@I2@@",
                      [("x1", ge_desc([B, W])), ("x2", ge_desc([]))], [ge_desc([B, W], origin=XENT_GRAD_MUL)])
        self.loss = Tmpl(render(loss, 2), "  op {\n")
        # ---- learning rate through a PartitionedCall + subgraph
        lr = ge_op("learning_rate/PartitionedCall", "PartitionedCall", ["ge_global_step:0"],
                   _ge_attrs(GE_LOCAL, ["learning_rate/PartitionedCall"], ["StatefulPartitionedCall"]),
                   "@@I0@@", [("args_0", ge_desc([], "DT_INT64"))], [ge_desc([])], subgraphs=[self.SUB])
        self.lr = Tmpl(render(lr, 2), "  op {\n")
        # ---- optimizer unit
        opt = []  # type: Fields
        for j, (var, grad) in enumerate((("kernel", "trans_Cast_@@K@@:0"),
                                         ("bias", GL + "/BiasAdd_grad/BiasAddGrad_1:0"))):
            dims = [W, W] if var == "kernel" else [W]
            nm = "GradientDescent/update_" + L + "/" + var + "/ResourceApplyGradientDescent"
            opt += ge_op(nm, "ApplyGradientDescent", [L + "/" + var + ":0", "learning_rate/PartitionedCall:0", grad],
                         _ge_attrs(AIC, [nm], ["ResourceApplyGradientDescent"], {"use_locking": av_b(False)}),
                         "@@I%d@@" % j, [("var", ge_desc(dims)), ("alpha", ge_desc([])), ("delta", ge_desc(dims))],
                         [ge_desc(dims, origin=nm)])
        self.opt = Tmpl(render(opt, 2), "  op {\n")
        # ---- NetOutput (control inputs from every update op) + graph attrs
        net = ge_op("NetOutput", "NetOutput", ["@@REP@@"], _ge_attrs(GE_LOCAL, []), "@@I0@@")
        a, b = split_tokens(render(net, 2), ["@@REP@@"])
        upd = "GradientDescent/update_" + L + "/%s/ResourceApplyGradientDescent:-1"
        self.net_a, self.net_b = Tmpl(a, "  op {\n"), Tmpl(b, "  op {\n")
        self.net_rep = Tmpl(render([("input", q(upd % "kernel")), ("input", q(upd % "bias"))], 4), "  op {\n")

        def named(items: Sequence[Tuple[str, str]]) -> Fields:
            return [("func", _attrs({k: av_s(v) for k, v in items}))]

        gattrs = _attrs({
            "GlobalOptions": named([("ge.exec.deviceId", "0"), ("ge.exec.precision_mode", "allow_fp32_to_fp16"),
                                    ("ge.graphRunMode", "1")]),
            "GraphOptions": named([("ge.exec.profilingOptions", ""), ("ge.trainFlag", "1")]),
            "SessionOptions": named([("ge.exec.enableDump", "1"), ("ge.exec.dumpMode", "all")]),
        })
        self.root_tail = Tmpl(render(gattrs, 2) + "}\n", "  op {\n")
        # ---- subgraph
        sub = []  # type: Fields
        sub += ge_op("learning_rate/PartitionedCall/Data_0", "Data", [],
                     {"_parent_node_index": av_i(0), "index": av_i(0)}, "@@I0@@", [("x", ge_desc([], "DT_INT64"))],
                     [ge_desc([], "DT_INT64")])
        sub += ge_op("learning_rate/PolynomialDecay/Cast", "Cast", ["learning_rate/PartitionedCall/Data_0:0"],
                     _ge_attrs(AIC, ["learning_rate/PolynomialDecay/Cast"], ["Cast"], {"dst_type": av_i(0)}),
                     "@@I1@@", [("x", ge_desc([], "DT_INT64"))], [ge_desc([])])
        sub += ge_op("learning_rate/PolynomialDecay", "Muls", ["learning_rate/PolynomialDecay/Cast:0"],
                     _ge_attrs(AIC, ["learning_rate/PolynomialDecay/Mul", "learning_rate/PolynomialDecay"],
                               ["Mul", "AddV2"], {"value": [("f", "0.001")]}),
                     "@@I2@@", [("x", ge_desc([]))], [ge_desc([], origin="learning_rate/PolynomialDecay")])
        sub += ge_op("learning_rate/PartitionedCall/NetOutput", "NetOutput", ["learning_rate/PolynomialDecay:0"],
                     _ge_attrs(GE_LOCAL, []), "@@I3@@", [("x", ge_desc([]))])
        sub_fields = [("name", q(self.SUB)), ("input", q("learning_rate/PartitionedCall/Data_0:0")),
                      ("output", q("learning_rate/PartitionedCall/NetOutput:0"))]
        sub_fields += sub
        sub_fields += _attrs({"_parent_graph_name": av_s(self.ROOT), "_parent_node_name":
                              av_s("learning_rate/PartitionedCall")})
        self.subgraph = Tmpl(render([("graph", sub_fields)]), "  op {\n")
        self.root_open = Tmpl(render([("name", q(self.ROOT)), ("output", q(s + "/value:0"))], 2))

    def fused(self, k: int, nl: int) -> bool:
        return 0 < k < nl - 1 and k % self.fused_mod == 1

    def act(self, k_tok: str, fused: bool) -> str:
        lk = "layer_@@" + k_tok + "@@"
        return lk + "/MatMul" + lk + "/Relu" if fused else lk + "/Relu"

    def fwd(self, is_first: bool, prev_fused: bool, fused: bool, has_relu: bool) -> Tuple[Tmpl, Tmpl, int]:
        key = (is_first, prev_fused, fused, has_relu)
        if key in self._fwd:
            return self._fwd[key]
        B, W = self.batch, self.width
        prev = "IteratorGetNext:0" if is_first else self.act("P", prev_fused) + ":0"
        ops = []  # type: Fields
        kin = L + "/kernel/Initializer/random_uniform"
        ops += ge_op(kin, "Const", [], _ge_attrs(GE_LOCAL, no_task=True, extra={"value": [("t", [
            ("desc", ge_desc([W, W])), ("data", '"@@DATA@@"')])]}), "@@I0@@", (), [ge_desc([W, W], origin=kin)])
        ops += ge_op(L + "/kernel", "Variable", [], _ge_attrs(GE_LOCAL, no_task=True), "@@I1@@", (), [ge_desc([W, W])])
        ops += ge_op(L + "/kernel/Assign", "Assign", [L + "/kernel:0", kin + ":0"],
                     _ge_attrs(AIC, [L + "/kernel/Assign"], ["AssignVariableOp"]), "@@I2@@",
                     [("ref", ge_desc([W, W])), ("value", ge_desc([W, W]))], [ge_desc([W, W])])
        bin_ = L + "/bias/Initializer/zeros"
        ops += ge_op(bin_, "Const", [], _ge_attrs(GE_LOCAL, no_task=True, extra={"value": [("t", [
            ("desc", ge_desc([W])), ("data", q("\0" * (4 * W)))])]}), "@@I3@@", (), [ge_desc([W], origin=bin_)])
        ops += ge_op(L + "/bias", "Variable", [], _ge_attrs(GE_LOCAL, no_task=True), "@@I4@@", (), [ge_desc([W])])
        ops += ge_op(L + "/bias/Assign", "Assign", [L + "/bias:0", bin_ + ":0"],
                     _ge_attrs(AIC, [L + "/bias/Assign"], ["AssignVariableOp"]), "@@I5@@",
                     [("ref", ge_desc([W])), ("value", ge_desc([W]))], [ge_desc([W])])
        mm_in = [("x1", ge_desc([B, W])), ("x2", ge_desc([W, W])), ("bias", ge_desc([W]))]
        mm_attrs = {"transpose_x1": av_b(False), "transpose_x2": av_b(False), "offset_x": av_i(0),
                    "_input_name_key": ge_list_s(["x1", "x2", "bias"]), "_input_name_value": ge_list_i([0, 1, 2])}
        ins = [prev, L + "/kernel:0", L + "/bias:0"]
        if fused:
            nm = L + "/MatMul" + L + "/Relu"
            ops += ge_op(nm, "MatMulV2", ins, _ge_attrs(AIC, [L + "/MatMul", L + "/BiasAdd", L + "/Relu"],
                                                        ["MatMul", "BiasAdd", "Relu"], dict(
                                                            mm_attrs, pass_name=ge_list_s(["MatMulBiasAddFusionPass",
                                                                                           "TbeMatmulElemwiseFusion"]),
                                                            fusion_scope=av_i(1)))
                         , "@@I6@@", mm_in, [ge_desc([B, W], origin=L + "/MatMul")])
            nops = 7
        else:
            ops += ge_op(L + "/MatMul", "MatMulV2", ins, _ge_attrs(AIC, [L + "/MatMul", L + "/BiasAdd"],
                                                                   ["MatMul", "BiasAdd"], dict(
                                                                       mm_attrs, pass_name=ge_list_s(
                                                                           ["MatMulBiasAddFusionPass"]))),
                         "@@I6@@", mm_in, [ge_desc([B, W], origin=L + "/MatMul")])
            nops = 7
            if has_relu:
                ops += ge_op(L + "/Relu", "Relu", [L + "/MatMul:0"], _ge_attrs(AIC, [L + "/Relu"], ["Relu"]),
                             "@@I7@@", [("x", ge_desc([B, W]))], [ge_desc([B, W], origin=L + "/Relu")])
                nops = 8
        a, b = split_tokens(render(ops, 2), ["@@DATA@@"])
        res = (Tmpl(a, "  op {\n"), Tmpl(b, "  op {\n"), nops)
        res[0].nops = res[0].nnodes
        res[1].nops = res[1].nnodes
        self._fwd[key] = res
        return res

    def bwd(self, is_first: bool, is_last: bool, fused: bool, prev_fused: bool) -> Tmpl:
        key = (is_first, is_last, fused, prev_fused)
        t = self._bwd.get(key)
        if t is not None:
            return t
        B, W = self.batch, self.width
        upstream = XENT_GRAD_MUL + ":0" if is_last else "gradients/layer_@@N@@/MatMul_grad/MatMul:0"
        ops = []  # type: Fields
        i = 0
        if not is_last:
            nm = GL + "/Relu_grad/ReluGrad"
            ops += ge_op(nm, "ReluGrad", [upstream, self.act("K", fused) + ":0"], _ge_attrs(AIC, [nm], ["ReluGrad"]),
                         "@@I%d@@" % i, [("gradients", ge_desc([B, W])), ("features", ge_desc([B, W]))],
                         [ge_desc([B, W], origin=nm)])
            i += 1
            g = nm + ":0"
        else:
            g = upstream
        # renamed by GE without recording the TF name: only a suffix heuristic finds it
        bag = GL + "/BiasAdd_grad/BiasAddGrad_1"
        ops += ge_op(bag, "BiasAddGrad", [g], _ge_attrs(AIC, [], None, {"data_format": av_s("NHWC")}),
                     "@@I%d@@" % i, [("x", ge_desc([B, W]))], [ge_desc([W])])
        i += 1
        mg = GL + "/MatMul_grad"
        mm_attrs = {"offset_x": av_i(0)}
        if not is_first:  # d(input) of layer 0 is dead and pruned by GE
            ops += ge_op(mg + "/MatMul", "MatMulV2", [g, L + "/kernel:0"],
                         _ge_attrs(AIC, [mg + "/MatMul"], ["MatMul"], dict(
                             mm_attrs, transpose_x1=av_b(False), transpose_x2=av_b(True))),
                         "@@I%d@@" % i, [("x1", ge_desc([B, W])), ("x2", ge_desc([W, W]))],
                         [ge_desc([B, W], origin=mg + "/MatMul")])
            i += 1
        prev = "IteratorGetNext:0" if is_first else self.act("P", prev_fused) + ":0"
        ops += ge_op(mg + "/MatMul_1", "MatMulV2", [prev, g],
                     _ge_attrs(AIC, [mg + "/MatMul_1"], ["MatMul"], dict(
                         mm_attrs, transpose_x1=av_b(True), transpose_x2=av_b(False))),
                     "@@I%d@@" % i, [("x1", ge_desc([B, W])), ("x2", ge_desc([B, W]))],
                     [ge_desc([W, W], "DT_FLOAT16", origin=mg + "/MatMul_1")])
        i += 1
        # a Cast inserted by FE carries the TF name of the op it serves
        ops += ge_op("trans_Cast_@@K@@", "Cast", [mg + "/MatMul_1:0"],
                     _ge_attrs(AIC, [mg + "/MatMul_1"], ["MatMul"], {"dst_type": av_i(0)}),
                     "@@I%d@@" % i, [("x", ge_desc([W, W], "DT_FLOAT16"))],
                     [ge_desc([W, W], origin=mg + "/MatMul_1")])
        t = Tmpl(render(ops, 2), "  op {\n")
        self._bwd[key] = t
        return t

    @staticmethod
    def vals(k: int, next_id: int, nids: int, extra: Optional[Dict[str, str]] = None) -> Dict[bytes, bytes]:
        d = {b"k": str(k).encode(), b"p": str(k - 1).encode(), b"n": str(k + 1).encode()}
        for j in range(nids):
            d[b"i%d" % j] = str(next_id + j).encode()
        if extra:
            for a, b in extra.items():
                d[a.encode()] = b.encode()
        return d

    def per_layer_size(self, k: int) -> int:
        a, b, _ = self.fwd(k == 0, False, False, True)
        v = self.vals(k, 100000, 8)
        n = a.size(v) + b.size(v) + self.pool.length(k, self.nblocks)
        n += self.bwd(k == 0, False, False, False).size(v) + self.opt.size(v) + self.net_rep.size(v)
        return n

    def fixed_size(self) -> int:
        v = self.vals(0, 100000, 8, {"logits": "layer_100/BiasAdd"})
        n = self.head.size(v) + self.loss.size(v) + self.lr.size(v) + self.net_a.size(v) + self.net_b.size(v)
        n += self.root_tail.size(None) + self.subgraph.size(v) + self.root_open.size(None) + 8
        return n

    def write(self, w: _Writer, target: int) -> Dict[str, Any]:
        fixed = self.fixed_size()
        acc = 0
        nl = 0
        last = 0
        while True:
            last = self.per_layer_size(nl)
            acc += last
            nl += 1
            if nl >= 2 and acc + fixed >= target:
                break
        if nl > 2 and (acc + fixed - target) > (target - (acc - last + fixed)):
            nl -= 1  # closer to the target without the last layer
        w.put(Tmpl("graph {\n"))
        w.put(self.root_open)
        w.put(self.head, self.vals(0, 1, 1))  # GetNext has id 0 (no `id:` line), ge_global_step 1
        nid = 2
        for k in range(nl):
            fz = self.fused(k, nl)
            a, b, nops = self.fwd(k == 0, self.fused(k - 1, nl), fz, k < nl - 1)
            v = self.vals(k, nid, nops)
            w.put(a, v)
            self.pool.write(w, k, self.nblocks)
            w.put(b, v)
            nid += nops
        logits = "layer_%d/MatMul" % (nl - 1)
        w.put(self.loss, self.vals(0, nid, 3, {"logits": logits}))
        nid += 3
        for k in range(nl - 1, -1, -1):
            t = self.bwd(k == 0, k == nl - 1, self.fused(k, nl), self.fused(k - 1, nl))
            w.put(t, self.vals(k, nid, t.nops))
            nid += t.nops
        w.put(self.lr, self.vals(0, nid, 1))
        nid += 1
        last_update = ""
        for k in range(nl):
            w.put(self.opt, self.vals(k, nid, 2))
            nid += 2
            last_update = "GradientDescent/update_layer_%d/bias/ResourceApplyGradientDescent" % k
        w.put(self.net_a, self.vals(0, nid, 1))
        for k in range(nl):
            w.put(self.net_rep, self.vals(k, 0, 0))
        w.put(self.net_b, self.vals(0, nid, 1))
        nid += 1
        w.put(self.root_tail)
        w.put(self.subgraph, self.vals(0, nid, 4))
        nid += 4
        fz = [k for k in range(nl) if self.fused(k, nl)]
        uk = fz[0] if fz else None
        resolve = [
            {"tf": "layer_0/MatMul", "ge": "layer_0/MatMul", "how": "exact"},
            {"tf": "layer_0/BiasAdd", "ge": "layer_0/MatMul", "how": "original_op_names"},
            {"tf": "gradients/layer_0/MatMul_grad/MatMul_1", "ge": "gradients/layer_0/MatMul_grad/MatMul_1",
             "how": "exact (trans_Cast_0 also lists it in original_op_names)"},
            {"tf": "gradients/layer_1/BiasAdd_grad/BiasAddGrad", "ge": "gradients/layer_1/BiasAdd_grad/BiasAddGrad_1",
             "how": "suffix heuristic (GE renamed, name not recorded)"},
            {"tf": "gradients/layer_0/MatMul_grad/MatMul", "ge": None, "how": "absent (pruned by GE)"},
            {"tf": "sparse_softmax_cross_entropy_loss/Sum", "ge": "sparse_softmax_cross_entropy_loss/value",
             "how": "original_op_names"},
        ]
        if uk is not None:
            resolve.insert(2, {"tf": "layer_%d/Relu" % uk, "ge": "layer_%d/MatMullayer_%d/Relu" % (uk, uk),
                               "how": "original_op_names (UB-fused, concatenated name)"})
        return {"layers": nl, "width": self.width, "ops": nid, "expected": {
            "root_graph": self.ROOT, "subgraph": self.SUB,
            "auto_fp": "layer_0/MatMul", "auto_fp_source": "IteratorGetNext",
            "auto_bp": last_update, "auto_bp_target": "NetOutput",
            "manual_fp": "layer_0/MatMul", "manual_bp": "gradients/layer_0/MatMul_grad/MatMul_1",
            "resolve": resolve,
        }}


# --------------------------------------------------------------------------------------------
# public API / CLI
# --------------------------------------------------------------------------------------------

_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(I?B?)\s*$", re.I)


def parse_size(s: "str | int") -> int:  # noqa: UP037 (string annotation: py3.8 at runtime)
    """``'1GB'``, ``'500MB'``, ``'5M'``, ``'1.5GiB'``, ``'1048576'`` -> bytes (K/M/G/T are powers of 1024)."""
    if isinstance(s, int):
        return s
    m = _SIZE_RE.match(s)
    if not m:
        raise ValueError("bad size: %r" % (s,))
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * mult)


def _size_tag(n: int) -> str:
    for unit, sh in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << sh and n % (1 << sh) == 0:
            return "%d%s" % (n >> sh, unit)
    return "%dB" % n


def default_bench_dir() -> str:
    return os.environ.get("PBTXT_SCAN_BENCH_DIR") or "/tmp/pbtxt-scan-bench"


def default_output_path(kind: str, size_bytes: int, seed: int = 0) -> str:
    tag = "%s-%s-s%d" % (kind, _size_tag(size_bytes), seed)
    if kind == "ge":
        return os.path.join(default_bench_dir(), tag, "ge_proto_00000001_graph_1_Build.txt")
    return os.path.join(default_bench_dir(), tag + (".pb" if kind == "binary" else ".pbtxt"))


def generate(kind: str, path: Optional[str], size_bytes: "int | str", seed: int = 0,
             const_line_bytes: int = DEFAULT_CONST_LINE) -> Dict[str, Any]:
    """Write a ``kind`` file of about ``size_bytes`` to ``path``; return its metadata."""
    if kind not in GENERATORS:
        raise ValueError("kind must be one of %s" % (GENERATORS,))
    size = parse_size(size_bytes)
    if path is None:
        path = default_output_path(kind, size, seed)
    if kind == "binary":
        from .gen_binary import generate_binary

        return generate_binary(path, size, seed)
    t0 = time.perf_counter()
    tmp = path + ".tmp-gen"
    w = _Writer(tmp)
    try:
        if kind == "dense":
            info = _Dense(seed).write(w, size)
        elif kind == "const":
            info = _Const(seed, size, const_line_bytes).write(w)
        elif kind in ("feed", "queue"):
            from benchmarks.gen_fed import write_fed

            info = write_fed(kind, seed, w, size)
        else:
            info = _GE(seed, size).write(w, size)
    finally:
        w.close()
    os.replace(tmp, path)
    dt = time.perf_counter() - t0
    meta = {"kind": kind, "path": os.path.abspath(path), "target_bytes": size, "bytes": w.bytes,
            "lines": w.lines, "nodes": w.nodes, "seed": seed}
    meta.update(info)
    meta["seconds"] = round(dt, 3)
    meta["mb_per_s"] = round(w.bytes / (1 << 20) / dt, 1) if dt > 0 else None
    return meta


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.gen_graph",
                                description="Generate large deterministic graph.pbtxt / GE dump files.")
    p.add_argument("kind", choices=GENERATORS)
    p.add_argument("--size", default="100MB", help="target size, e.g. 5MB, 1GB, 1.5GiB (powers of 1024)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", default=None,
                   help="output file (default: $PBTXT_SCAN_BENCH_DIR or /tmp/pbtxt-scan-bench/)")
    p.add_argument("--const-line", default="50000000",
                   help="const kind: escaped characters per big tensor_content line (default 50e6)")
    p.add_argument("--json", action="store_true", help="print metadata as JSON on stdout")
    a = p.parse_args(argv)
    meta = generate(a.kind, a.output, a.size, a.seed, parse_size(a.const_line))
    if a.json:
        json.dump(meta, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        e = meta["expected"]
        print("%s: %s bytes, %d lines, %d nodes in %.2fs (%.0f MB/s) -> %s" % (
            meta["kind"], meta["bytes"], meta["lines"], meta["nodes"], meta["seconds"], meta["mb_per_s"] or 0,
            meta["path"]))
        if "fp" in e:
            print("  fp %s (line %d), bp %s (line %d)" % (e["fp"], e["fp_line"], e["bp"], e["bp_line"]))
        else:
            print("  auto fp %s, auto bp %s" % (e["auto_fp"], e["auto_bp"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
