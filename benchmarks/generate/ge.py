"""Kind ``ge``: an Ascend GE ``ge_proto_*_Build.txt`` dump (``ge.proto.ModelDef`` as the C++
``TextFormat::Print`` writes it): weights as ``Const`` ops holding ``t { desc data }`` (one long
line each), ops fused by GE with ``_datadump_original_op_names``, BiasAddGrad renamed without a
record, a root graph and one subgraph (a ``PartitionedCall``'s learning rate).
"""

from __future__ import annotations

import math
import random
from typing import Any, Dict, Optional, Sequence, Tuple

from ._ge_text import AIC, AICPU, GE_LOCAL, ge_attrs, ge_desc, ge_list_i, ge_list_s, ge_op
from ._stamp import ROWS, BlockPool, Tmpl, Writer, float_bytes, split_tokens
from ._text import Fields, attr_entries, av_b, av_i, av_s, cescape, q, render
from ._tf import GL, XENT_GRAD_MUL, L

class GEDump:
    ROOT = "GeOp1_0"
    SUB = "GeOp1_0_learning_rate_PartitionedCall_sub_0"

    def __init__(self, seed: int, target: int) -> None:
        self.rng = random.Random(seed * 1000003 + 3)
        self.batch = 16
        sample = cescape(float_bytes(random.Random(seed), 4096))
        expansion = len(sample) / (4096 * 4.0)
        n_target = max(4, min(400, target // (2 << 20)))
        kern_len = 0.85 * target / n_target
        width = int(math.sqrt(kern_len / (4.0 * expansion)))
        self.width = max(16, (width // 16) * 16)
        self.pool = BlockPool(self.rng, self.width, ROWS)
        self.nblocks = self.width // ROWS
        self._fwd: Dict[Tuple[bool, bool, bool, bool], Tuple[Tmpl, Tmpl, int]] = {}
        self._bwd: Dict[Tuple[bool, bool, bool, bool], Tmpl] = {}
        self.fused_mod = self.rng.choice((3, 4, 5))
        B, W = self.batch, self.width
        # ---- head: GetNext (id 0: no `id:` line), global step
        head: Fields = []
        head += ge_op("IteratorGetNext", "GetNext", [],
                      ge_attrs(AICPU, ["IteratorGetNext"], ["IteratorGetNext"],
                                {"channel_name": av_s("Iterator_%d" % seed), "output_types": [
                                    ("list", [("dt", "1"), ("dt", "9"), ("val_type", "VT_LIST_DATA_TYPE")])]}),
                      None, in_descs=(), out_descs=[ge_desc([B, W], origin="IteratorGetNext"), ge_desc([B], "DT_INT64")], stream="1")
        head += ge_op("ge_global_step", "Variable", [], ge_attrs(GE_LOCAL, no_task=True), "@@I0@@", in_descs=(),
                      out_descs=[ge_desc([], "DT_INT64")])
        self.head = Tmpl(render(head, 2), "  op {\n")
        self.head.nops = 2
        self.head_ids = 1
        # ---- loss
        s = "sparse_softmax_cross_entropy_loss"
        loss: Fields = []
        loss += ge_op(s + "/xentropy/xentropy", "SparseSoftmaxCrossEntropyWithLogits",
                      ["@@LOGITS@@:0", "IteratorGetNext:1"],
                      ge_attrs(AIC, [s + "/xentropy/xentropy"], ["SparseSoftmaxCrossEntropyWithLogits"]), "@@I0@@",
                      in_descs=[("features", ge_desc([B, W])), ("labels", ge_desc([B], "DT_INT64"))],
                      out_descs=[ge_desc([B], origin=s + "/xentropy/xentropy"), ge_desc([B, W])])
        loss += ge_op(s + "/value", "ReduceMeanD", [s + "/xentropy/xentropy:0"],
                      ge_attrs(AIC, [s + "/Mul", s + "/Sum", s + "/num_present", s + "/value"],
                                ["Mul", "Sum", "Const", "DivNoNan"],
                                {"axes": ge_list_i([0]), "keep_dims": av_b(False)}), "@@I1@@",
                      in_descs=[("x", ge_desc([B]))], out_descs=[ge_desc([], origin=s + "/value")])
        loss += ge_op(XENT_GRAD_MUL, "Mul", [s + "/xentropy/xentropy:1", s + "/value:0"],
                      ge_attrs(AIC, [XENT_GRAD_MUL, "gradients/" + s + "/xentropy/xentropy_grad/ExpandDims"],
                                ["Mul", "ExpandDims"]), "@@I2@@",
                      in_descs=[("x1", ge_desc([B, W])), ("x2", ge_desc([]))], out_descs=[ge_desc([B, W], origin=XENT_GRAD_MUL)])
        self.loss = Tmpl(render(loss, 2), "  op {\n")
        # ---- learning rate through a PartitionedCall + subgraph
        lr = ge_op("learning_rate/PartitionedCall", "PartitionedCall", ["ge_global_step:0"],
                   ge_attrs(GE_LOCAL, ["learning_rate/PartitionedCall"], ["StatefulPartitionedCall"]),
                   "@@I0@@", in_descs=[("args_0", ge_desc([], "DT_INT64"))], out_descs=[ge_desc([])], subgraphs=[self.SUB])
        self.lr = Tmpl(render(lr, 2), "  op {\n")
        # ---- optimizer unit
        opt: Fields = []
        for j, (var, grad) in enumerate((("kernel", "trans_Cast_@@K@@:0"),
                                         ("bias", GL + "/BiasAdd_grad/BiasAddGrad_1:0"))):
            dims = [W, W] if var == "kernel" else [W]
            nm = "GradientDescent/update_" + L + "/" + var + "/ResourceApplyGradientDescent"
            opt += ge_op(nm, "ApplyGradientDescent", [L + "/" + var + ":0", "learning_rate/PartitionedCall:0", grad],
                         ge_attrs(AIC, [nm], ["ResourceApplyGradientDescent"], {"use_locking": av_b(False)}),
                         "@@I%d@@" % j, in_descs=[("var", ge_desc(dims)), ("alpha", ge_desc([])), ("delta", ge_desc(dims))],
                         out_descs=[ge_desc(dims, origin=nm)])
        self.opt = Tmpl(render(opt, 2), "  op {\n")
        # ---- NetOutput (control inputs from every update op) + graph attrs
        net = ge_op("NetOutput", "NetOutput", ["@@REP@@"], ge_attrs(GE_LOCAL, []), "@@I0@@")
        a, b = split_tokens(render(net, 2), ["@@REP@@"])
        upd = "GradientDescent/update_" + L + "/%s/ResourceApplyGradientDescent:-1"
        self.net_a, self.net_b = Tmpl(a, "  op {\n"), Tmpl(b, "  op {\n")
        self.net_rep = Tmpl(render([("input", q(upd % "kernel")), ("input", q(upd % "bias"))], 4), "  op {\n")

        def named(items: Sequence[Tuple[str, str]]) -> Fields:
            return [("func", attr_entries({k: av_s(v) for k, v in items}))]

        gattrs = attr_entries({
            "GlobalOptions": named([("ge.exec.deviceId", "0"), ("ge.exec.precision_mode", "allow_fp32_to_fp16"),
                                    ("ge.graphRunMode", "1")]),
            "GraphOptions": named([("ge.exec.profilingOptions", ""), ("ge.trainFlag", "1")]),
            "SessionOptions": named([("ge.exec.enableDump", "1"), ("ge.exec.dumpMode", "all")]),
        })
        self.root_tail = Tmpl(render(gattrs, 2) + "}\n", "  op {\n")
        # ---- subgraph
        sub: Fields = []
        sub += ge_op("learning_rate/PartitionedCall/Data_0", "Data", [],
                     {"_parent_node_index": av_i(0), "index": av_i(0)}, "@@I0@@", in_descs=[("x", ge_desc([], "DT_INT64"))],
                     out_descs=[ge_desc([], "DT_INT64")])
        sub += ge_op("learning_rate/PolynomialDecay/Cast", "Cast", ["learning_rate/PartitionedCall/Data_0:0"],
                     ge_attrs(AIC, ["learning_rate/PolynomialDecay/Cast"], ["Cast"], {"dst_type": av_i(0)}),
                     "@@I1@@", in_descs=[("x", ge_desc([], "DT_INT64"))], out_descs=[ge_desc([])])
        sub += ge_op("learning_rate/PolynomialDecay", "Muls", ["learning_rate/PolynomialDecay/Cast:0"],
                     ge_attrs(AIC, ["learning_rate/PolynomialDecay/Mul", "learning_rate/PolynomialDecay"],
                               ["Mul", "AddV2"], {"value": [("f", "0.001")]}),
                     "@@I2@@", in_descs=[("x", ge_desc([]))], out_descs=[ge_desc([], origin="learning_rate/PolynomialDecay")])
        sub += ge_op("learning_rate/PartitionedCall/NetOutput", "NetOutput", ["learning_rate/PolynomialDecay:0"],
                     ge_attrs(GE_LOCAL, []), "@@I3@@", in_descs=[("x", ge_desc([]))])
        sub_fields = [("name", q(self.SUB)), ("input", q("learning_rate/PartitionedCall/Data_0:0")),
                      ("output", q("learning_rate/PartitionedCall/NetOutput:0"))]
        sub_fields += sub
        sub_fields += attr_entries({"_parent_graph_name": av_s(self.ROOT), "_parent_node_name":
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
        ops: Fields = []
        kin = L + "/kernel/Initializer/random_uniform"
        ops += ge_op(kin, "Const", [], ge_attrs(GE_LOCAL, no_task=True, extra={"value": [("t", [
            ("desc", ge_desc([W, W])), ("data", '"@@DATA@@"')])]}), "@@I0@@", in_descs=(), out_descs=[ge_desc([W, W], origin=kin)])
        ops += ge_op(L + "/kernel", "Variable", [], ge_attrs(GE_LOCAL, no_task=True), "@@I1@@", in_descs=(), out_descs=[ge_desc([W, W])])
        ops += ge_op(L + "/kernel/Assign", "Assign", [L + "/kernel:0", kin + ":0"],
                     ge_attrs(AIC, [L + "/kernel/Assign"], ["AssignVariableOp"]), "@@I2@@",
                     in_descs=[("ref", ge_desc([W, W])), ("value", ge_desc([W, W]))], out_descs=[ge_desc([W, W])])
        bin_ = L + "/bias/Initializer/zeros"
        ops += ge_op(bin_, "Const", [], ge_attrs(GE_LOCAL, no_task=True, extra={"value": [("t", [
            ("desc", ge_desc([W])), ("data", q("\0" * (4 * W)))])]}), "@@I3@@", in_descs=(), out_descs=[ge_desc([W], origin=bin_)])
        ops += ge_op(L + "/bias", "Variable", [], ge_attrs(GE_LOCAL, no_task=True), "@@I4@@", in_descs=(), out_descs=[ge_desc([W])])
        ops += ge_op(L + "/bias/Assign", "Assign", [L + "/bias:0", bin_ + ":0"],
                     ge_attrs(AIC, [L + "/bias/Assign"], ["AssignVariableOp"]), "@@I5@@",
                     in_descs=[("ref", ge_desc([W])), ("value", ge_desc([W]))], out_descs=[ge_desc([W])])
        mm_in = [("x1", ge_desc([B, W])), ("x2", ge_desc([W, W])), ("bias", ge_desc([W]))]
        mm_attrs = {"transpose_x1": av_b(False), "transpose_x2": av_b(False), "offset_x": av_i(0),
                    "_input_name_key": ge_list_s(["x1", "x2", "bias"]), "_input_name_value": ge_list_i([0, 1, 2])}
        ins = [prev, L + "/kernel:0", L + "/bias:0"]
        if fused:
            nm = L + "/MatMul" + L + "/Relu"
            ops += ge_op(nm, "MatMulV2", ins, ge_attrs(AIC, [L + "/MatMul", L + "/BiasAdd", L + "/Relu"],
                                                        ["MatMul", "BiasAdd", "Relu"], dict(
                                                            mm_attrs, pass_name=ge_list_s(["MatMulBiasAddFusionPass",
                                                                                           "TbeMatmulElemwiseFusion"]),
                                                            fusion_scope=av_i(1)))
                         , "@@I6@@", in_descs=mm_in, out_descs=[ge_desc([B, W], origin=L + "/MatMul")])
            nops = 7
        else:
            ops += ge_op(L + "/MatMul", "MatMulV2", ins, ge_attrs(AIC, [L + "/MatMul", L + "/BiasAdd"],
                                                                   ["MatMul", "BiasAdd"], dict(
                                                                       mm_attrs, pass_name=ge_list_s(
                                                                           ["MatMulBiasAddFusionPass"]))),
                         "@@I6@@", in_descs=mm_in, out_descs=[ge_desc([B, W], origin=L + "/MatMul")])
            nops = 7
            if has_relu:
                ops += ge_op(L + "/Relu", "Relu", [L + "/MatMul:0"], ge_attrs(AIC, [L + "/Relu"], ["Relu"]),
                             "@@I7@@", in_descs=[("x", ge_desc([B, W]))], out_descs=[ge_desc([B, W], origin=L + "/Relu")])
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
        ops: Fields = []
        i = 0
        if not is_last:
            nm = GL + "/Relu_grad/ReluGrad"
            ops += ge_op(nm, "ReluGrad", [upstream, self.act("K", fused) + ":0"], ge_attrs(AIC, [nm], ["ReluGrad"]),
                         "@@I%d@@" % i, in_descs=[("gradients", ge_desc([B, W])), ("features", ge_desc([B, W]))],
                         out_descs=[ge_desc([B, W], origin=nm)])
            i += 1
            g = nm + ":0"
        else:
            g = upstream
        # renamed by GE without recording the TF name: only a suffix heuristic finds it
        bag = GL + "/BiasAdd_grad/BiasAddGrad_1"
        ops += ge_op(bag, "BiasAddGrad", [g], ge_attrs(AIC, [], None, {"data_format": av_s("NHWC")}),
                     "@@I%d@@" % i, in_descs=[("x", ge_desc([B, W]))], out_descs=[ge_desc([W])])
        i += 1
        mg = GL + "/MatMul_grad"
        mm_attrs = {"offset_x": av_i(0)}
        if not is_first:  # d(input) of layer 0 is dead and pruned by GE
            ops += ge_op(mg + "/MatMul", "MatMulV2", [g, L + "/kernel:0"],
                         ge_attrs(AIC, [mg + "/MatMul"], ["MatMul"], dict(
                             mm_attrs, transpose_x1=av_b(False), transpose_x2=av_b(True))),
                         "@@I%d@@" % i, in_descs=[("x1", ge_desc([B, W])), ("x2", ge_desc([W, W]))],
                         out_descs=[ge_desc([B, W], origin=mg + "/MatMul")])
            i += 1
        prev = "IteratorGetNext:0" if is_first else self.act("P", prev_fused) + ":0"
        ops += ge_op(mg + "/MatMul_1", "MatMulV2", [prev, g],
                     ge_attrs(AIC, [mg + "/MatMul_1"], ["MatMul"], dict(
                         mm_attrs, transpose_x1=av_b(True), transpose_x2=av_b(False))),
                     "@@I%d@@" % i, in_descs=[("x1", ge_desc([B, W])), ("x2", ge_desc([B, W]))],
                     out_descs=[ge_desc([W, W], "DT_FLOAT16", origin=mg + "/MatMul_1")])
        i += 1
        # a Cast inserted by FE carries the TF name of the op it serves
        ops += ge_op("trans_Cast_@@K@@", "Cast", [mg + "/MatMul_1:0"],
                     ge_attrs(AIC, [mg + "/MatMul_1"], ["MatMul"], {"dst_type": av_i(0)}),
                     "@@I%d@@" % i, in_descs=[("x", ge_desc([W, W], "DT_FLOAT16"))],
                     out_descs=[ge_desc([W, W], origin=mg + "/MatMul_1")])
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

    def write(self, w: Writer, target: int) -> Dict[str, Any]:
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


def write(w: Writer, size: int, seed: int) -> Dict[str, Any]:
    return GEDump(seed, size).write(w, size)
