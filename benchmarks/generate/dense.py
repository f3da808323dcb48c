"""Kind ``dense``: a node-dense TF1 training graph, as ``tf.io.write_graph`` writes an MLP trained
with SGD: the tf.data input pipeline, ``global_step``, one unit per layer (variables, initializers,
MatMul/BiasAdd/Relu), the loss, the ``gradients/`` scope in reverse layer order, the optimizer
updates, ``init``, the saver (``save/...``), ``library`` and ``versions``.

fp is ``layer_0/MatMul`` near the top; bp ``gradients/layer_0/MatMul_grad/MatMul_1`` about 84 % of
the way down, before the optimizer / init / save tail.
"""

from __future__ import annotations

import random
from typing import Any, Dict, List, Tuple

from ._stamp import Tmpl, Writer, slot_values
from ._text import Fields, av_b, av_list_s, av_shape, av_tensor, av_type, f32, nodes_text, q, render, tf_node
from ._tf import (GL, HMCD, LP, L, Repeated, bwd_unit, dense_fwd_unit, global_step, input_pipeline, layer_vals,
                  loss_and_grad_head, scalar_const, versions_text)

_WIDTHS = (64, 128, 256, 512, 1024)
NUM_CLASSES = 10


class DenseGraph:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed * 1000003 + 1)
        self.input = "IteratorGetNext"  # what layer 0 reads; the fed kinds change it (feed_from)
        self.feat = self.rng.choice((16, 20, 24, 32))
        self.batch = self.rng.choice((8, 16, 32))
        pipe, lib = input_pipeline(self.rng, self.feat, self.batch)
        self.head = Tmpl(nodes_text(pipe, global_step()))
        self.library = Tmpl(render(lib))
        self._fwd: Dict[Tuple[bool, bool, int, int], Tmpl] = {}
        self._bwd: Dict[Tuple[bool, bool], Tmpl] = {}
        self.loss = Tmpl(loss_and_grad_head(LP + "/BiasAdd", "IteratorGetNext:1", self.batch))
        # ---- optimizer
        self.lr = Tmpl(render(scalar_const("GradientDescent/learning_rate", "DT_FLOAT", "float_val", f32(0.1))))
        opt: Fields = []
        for var, grad in (("kernel", "MatMul"), ("bias", "BiasAdd")):
            opt += tf_node("GradientDescent/update_" + L + "/" + var + "/ResourceApplyGradientDescent",
                           "ResourceApplyGradientDescent",
                           [L + "/" + var, "GradientDescent/learning_rate",
                            GL + "/" + grad + "_grad/tuple/control_dependency_1"],
                           {"T": av_type("DT_FLOAT"), "_class": av_list_s(["loc:@" + L + "/" + var]),
                            HMCD: av_b(True), "use_locking": av_b(False)})
        self.opt = Tmpl(render(opt))
        upd = "GradientDescent/update_" + L + "/%s/ResourceApplyGradientDescent"
        self.gd_update = Repeated(
            tf_node("GradientDescent/update", "NoOp", ["@@REP@@"], {HMCD: av_b(True)}), ["@@REP@@"],
            [[("input", q("^" + upd % "bias")), ("input", q("^" + upd % "kernel"))]], (2,))
        gd_tail: Fields = []
        gd_tail += tf_node("GradientDescent/Const", "Const", ["^GradientDescent/update"], {
            "_class": av_list_s(["loc:@global_step"]), "dtype": av_type("DT_INT64"),
            "value": av_tensor("DT_INT64", [], [("int64_val", "1")])})
        gd_tail += tf_node("GradientDescent", "AssignAddVariableOp", ["global_step", "GradientDescent/Const"],
                           {"_class": av_list_s(["loc:@global_step"]), "dtype": av_type("DT_INT64")})
        self.gd_tail = Tmpl(render(gd_tail))
        self.init = Repeated(tf_node("init", "NoOp", ["^global_step/Assign", "@@REP@@"]), ["@@REP@@"],
                              [[("input", q("^" + L + "/kernel/Assign")), ("input", q("^" + L + "/bias/Assign"))]],
                              (2,))
        # ---- saver
        st = "DT_STRING"
        save_head: Fields = []
        save_head += scalar_const("save/filename/input", st, "string_val", q("model"))
        save_head += tf_node("save/filename", "PlaceholderWithDefault", ["save/filename/input"],
                             {"dtype": av_type(st), "shape": av_shape([])})
        save_head += tf_node("save/Const", "PlaceholderWithDefault", ["save/filename"],
                             {"dtype": av_type(st), "shape": av_shape([])})
        self.save_head = Tmpl(render(save_head))
        names_rep = [("string_val", q(L + "/bias")), ("string_val", q(L + "/kernel"))]
        slices_rep = [("string_val", q("")), ("string_val", q(""))]

        def names_node(name: str) -> Repeated:
            node = tf_node(name, "Const", (), {"dtype": av_type(st), "value": av_tensor(
                st, ["@@M@@"], [("string_val", q("global_step")), ("string_val", "@@REP@@")])})
            return Repeated(node, ["@@REP@@"], [names_rep], (8,))

        def slices_node(name: str) -> Repeated:
            node = tf_node(name, "Const", (), {"dtype": av_type(st), "value": av_tensor(
                st, ["@@M@@"], [("string_val", q("")), ("string_val", "@@REP@@")])})
            return Repeated(node, ["@@REP@@"], [slices_rep], (8,))

        self.save_names = names_node("save/SaveV2/tensor_names")
        self.save_slices = slices_node("save/SaveV2/shape_and_slices")
        self.save_v2 = Repeated(
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
        self.restore_v2 = Repeated(
            tf_node("save/RestoreV2", "RestoreV2",
                    ["save/Const", "save/RestoreV2/tensor_names", "save/RestoreV2/shape_and_slices"],
                    {"dtypes": [("list", [("type", "DT_INT64"), ("type", "@@REP@@")])]}),
            ["@@REP@@"], [[("type", "DT_FLOAT"), ("type", "DT_FLOAT")]], (8,))
        rs0: Fields = []
        rs0 += tf_node("save/Identity", "Identity", ["save/RestoreV2"], {"T": av_type("DT_INT64")})
        rs0 += tf_node("save/AssignVariableOp", "AssignVariableOp", ["global_step", "save/Identity"],
                       {"dtype": av_type("DT_INT64")})
        self.restore0 = Tmpl(render(rs0))
        rsk: Fields = []
        for var, slot in (("bias", "@@IA@@"), ("kernel", "@@IB@@")):
            rsk += tf_node("save/Identity_" + slot, "Identity", ["save/RestoreV2:" + slot], {"T": av_type("DT_FLOAT")})
            rsk += tf_node("save/AssignVariableOp_" + slot, "AssignVariableOp",
                           [L + "/" + var, "save/Identity_" + slot], {"dtype": av_type("DT_FLOAT")})
        self.restore_k = Tmpl(render(rsk))
        self.restore_all = Repeated(
            tf_node("save/restore_all", "NoOp", ["^save/AssignVariableOp", "@@REP@@"]), ["@@REP@@"],
            [[("input", q("^save/AssignVariableOp_@@IA@@")), ("input", q("^save/AssignVariableOp_@@IB@@"))]], (2,))
        self.versions = Tmpl(versions_text())

    def feed_from(self, input_name: str, labels: str, head: Fields) -> None:
        """Feed the model from ``head``'s nodes instead of the tf.data pipeline: layer 0 reads
        ``input_name``, the loss ``labels``; no dataset function in ``library`` (feed, queue)."""
        self.input = input_name
        self.head = Tmpl(nodes_text(head))
        self.library = Tmpl("")
        self.loss = Tmpl(loss_and_grad_head(LP + "/BiasAdd", labels, self.batch))

    def fwd(self, is_first: bool, has_relu: bool, in_w: int, out_w: int) -> Tmpl:
        key = (is_first, has_relu, in_w, out_w)
        t = self._fwd.get(key)
        if t is None:
            t = self._fwd[key] = Tmpl(dense_fwd_unit(is_first, has_relu, in_w, out_w, self.input))
        return t

    def bwd(self, is_first: bool, is_last: bool) -> Tmpl:
        key = (is_first, is_last)
        t = self._bwd.get(key)
        if t is None:
            t = self._bwd[key] = Tmpl(bwd_unit(is_first, is_last, self.input, L + "/MatMul/ReadVariableOp"))
        return t

    def _repeated_all(self) -> List[Repeated]:
        return [self.gd_update, self.init, self.save_names, self.save_slices, self.save_v2,
                self.restore_names, self.restore_slices, self.restore_v2, self.restore_all]

    def per_layer_size(self, k: int, in_w: int, out_w: int) -> int:
        v = layer_vals(k)
        n = self.fwd(k == 0, True, in_w, out_w).size(v) + self.bwd(k == 0, False).size(v)
        n += self.opt.size(v) + self.restore_k.size(v)
        for r in self._repeated_all():
            n += sum(t.size(v) for t in r.reps)
        return n

    def fixed_size(self, nl: int) -> int:
        fv = slot_values(p=nl - 1, m=2 * nl + 1)
        n = self.head.size(None) + self.loss.size(fv) + self.lr.size(None) + self.gd_tail.size(None)
        n += self.save_head.size(None) + self.save_mid.size(None) + self.restore0.size(None)
        n += self.library.size(None) + self.versions.size(None)
        for r in self._repeated_all():
            n += sum(p.size(fv) for p in r.parts)
        return n

    def plan(self, target: int) -> List[int]:
        """Widths: widths[k] is the output width of layer k; input of layer 0 is self.feat."""
        widths: List[int] = []
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

    def write(self, w: Writer, target: int) -> Dict[str, Any]:
        widths = self.plan(target)
        nl = len(widths)
        fv = slot_values(p=nl - 1, m=2 * nl + 1)
        w.put(self.head)
        fp_line = 0
        in_w = self.feat
        for k in range(nl):
            t = self.fwd(k == 0, k < nl - 1, in_w, widths[k])
            start = w.put(t, layer_vals(k))
            if k == 0:
                fp_line = start + t.line_of('  name: "' + L + '/MatMul"\n')
            in_w = widths[k]
        w.put(self.loss, fv)
        bp_line = 0
        for k in range(nl - 1, -1, -1):
            t = self.bwd(k == 0, k == nl - 1)
            start = w.put(t, layer_vals(k))
            if k == 0:
                bp_line = start + t.line_of('  name: "' + GL + '/MatMul_grad/MatMul_1"\n')
        w.put(self.lr)
        for k in range(nl):
            w.put(self.opt, layer_vals(k))
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
            w.put(self.restore_k, layer_vals(k))
        self._put_repeated(w, self.restore_all, fv, nl)
        w.put(self.library)
        w.put(self.versions)
        return {"layers": nl, "expected": {
            "fp": "layer_0/MatMul", "fp_line": fp_line,
            "bp": "gradients/layer_0/MatMul_grad/MatMul_1", "bp_line": bp_line,
            "input": self.input,
        }}

    def _put_repeated(self, w: Writer, r: Repeated, fv: Dict[bytes, bytes], nl: int) -> None:
        for i, part in enumerate(r.parts):
            w.put(part, fv)
            if i < len(r.reps):
                rep = r.reps[i]
                for k in range(nl):
                    w.put(rep, layer_vals(k))



def write(w: Writer, size: int, seed: int) -> Dict[str, Any]:
    return DenseGraph(seed).write(w, size)
