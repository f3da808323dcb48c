"""Generated kinds whose training data is fed without a tf.data iterator (see ``gen_graph``).

``feed``   the ``dense`` training graph fed through ``feed_dict`` placeholders: a scalar
           ``learning_rate`` (PlaceholderWithDefault) and ``keep_prob``, then ``x`` [-1, F] and
           ``y`` [-1]; no ``library``. fp (``layer_0/MatMul``) is near the top; a correct fp must
           still know that no data source (IteratorGetNext, QueueDequeue*) comes later.
``queue``  the ``dense`` graph fed by an Estimator-style queue pipeline: ``input_producer``
           (Range, RandomShuffle, FIFOQueueV2, QueueEnqueueManyV2, QueueDequeueV2), two GatherV2
           of the examples, the ``batch/fifo_queue`` enqueue and the ``batch`` QueueDequeueManyV2
           that feeds the model. fp must know that no later enqueue makes ``batch`` a pipeline stage.

Same writer layout, determinism and metadata as ``gen_graph``'s ``dense`` (used through
``python -m benchmarks.gen_graph feed|queue --size 1GB``).
"""

from __future__ import annotations

import random
import struct
from typing import Any, Dict

from benchmarks.gen_graph import (
    L,
    LP,
    Fields,
    Tmpl,
    _Dense,
    _Writer,
    _bwd_unit,
    _dense_fwd_unit,
    _float_bytes,
    _global_step,
    _loss_and_grad_head,
    _scalar_const,
    av_i,
    av_list_shape,
    av_list_type,
    av_s,
    av_shape,
    av_tensor,
    av_type,
    cescape,
    nodes_text,
    tf_node,
)

FED_KINDS = ("feed", "queue")


def _feed_head() -> Fields:
    out = _scalar_const("learning_rate/input", "DT_FLOAT", "float_val", "0.10000000149011612")
    out += tf_node("learning_rate", "PlaceholderWithDefault", ["learning_rate/input"],
                   {"dtype": av_type("DT_FLOAT"), "shape": av_shape([])})
    out += tf_node("keep_prob", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([])})
    return out


def _feed_inputs(feat: int) -> Fields:
    out = tf_node("x", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([-1, feat])})
    out += tf_node("y", "Placeholder", (), {"dtype": av_type("DT_INT64"), "shape": av_shape([-1])})
    return out


def _queue_head(rng: random.Random, feat: int, batch: int) -> Fields:
    rows = 64
    cpu = [("device", '"/device:CPU:0"')]
    i32 = "DT_INT32"
    ip = "input_producer"
    out = _scalar_const(ip + "/Const", i32, "int_val", "0")
    out += _scalar_const(ip + "/limit", i32, "int_val", str(rows))
    out += _scalar_const(ip + "/delta", i32, "int_val", "1")
    out += tf_node(ip + "/range", "Range", [ip + "/Const", ip + "/limit", ip + "/delta"], {"Tidx": av_type(i32)})
    out += tf_node(ip + "/RandomShuffle", "RandomShuffle", [ip + "/range"],
                   {"T": av_type(i32), "seed": av_i(0), "seed2": av_i(0)})
    queue_attrs = {"capacity": av_i(32), "component_types": av_list_type([i32]), "container": av_s(""),
                   "shapes": av_list_shape([[]]), "shared_name": av_s("")}
    out += tf_node(ip, "FIFOQueueV2", (), queue_attrs, cpu)
    out += tf_node(ip + "/input_producer_EnqueueMany", "QueueEnqueueManyV2", [ip, ip + "/RandomShuffle"],
                   {"Tcomponents": av_list_type([i32]), "timeout_ms": av_i(-1)}, cpu)
    out += tf_node(ip + "/input_producer_Dequeue", "QueueDequeueV2", [ip],
                   {"component_types": av_list_type([i32]), "timeout_ms": av_i(-1)}, cpu)
    feats = av_tensor("DT_FLOAT", [rows, feat],
                      [("tensor_content", '"' + cescape(_float_bytes(rng, rows * feat, 0.5, 0.0)) + '"')])
    labels = struct.pack("<%dq" % rows, *[rng.randrange(10) for _ in range(rows)])
    out += tf_node("examples/features", "Const", (), {"dtype": av_type("DT_FLOAT"), "value": feats})
    out += tf_node("examples/labels", "Const", (), {"dtype": av_type("DT_INT64"), "value": av_tensor(
        "DT_INT64", [rows], [("tensor_content", '"' + cescape(labels) + '"')])})
    out += _scalar_const("GatherV2/axis", i32, "int_val", "0")
    for n, src, t in (("GatherV2", "examples/features", "DT_FLOAT"), ("GatherV2_1", "examples/labels", "DT_INT64")):
        out += tf_node(n, "GatherV2", [src, ip + "/input_producer_Dequeue", "GatherV2/axis"],
                       {"Taxis": av_type(i32), "Tindices": av_type(i32), "Tparams": av_type(t), "batch_dims": av_i(0)})
    types = av_list_type(["DT_FLOAT", "DT_INT64"])
    out += tf_node("batch/fifo_queue", "FIFOQueueV2", (),
                   {"capacity": av_i(4 * batch), "component_types": types, "container": av_s(""),
                    "shapes": av_list_shape([[feat], []]), "shared_name": av_s("")}, cpu)
    out += tf_node("batch/fifo_queue_enqueue", "QueueEnqueueV2", ["batch/fifo_queue", "GatherV2", "GatherV2_1"],
                   {"Tcomponents": types, "timeout_ms": av_i(-1)}, cpu)
    out += _scalar_const("batch/n", i32, "int_val", str(batch))
    out += tf_node("batch", "QueueDequeueManyV2", ["batch/fifo_queue", "batch/n"],
                   {"component_types": types, "timeout_ms": av_i(-1)}, cpu)
    return out


class _Fed(_Dense):
    """``_Dense`` with its tf.data pipeline replaced by placeholders or a queue pipeline."""

    def __init__(self, kind: str, seed: int) -> None:
        super().__init__(seed)
        if kind == "feed":
            self.input, labels = "x", "y"
            head = _feed_head() + _global_step() + _feed_inputs(self.feat)
        else:
            self.input, labels = "batch", "batch:1"
            head = _queue_head(self.rng, self.feat, self.batch) + _global_step()
        self.head = Tmpl(nodes_text(head))
        self.library = Tmpl("")  # no dataset function
        self.loss = Tmpl(_loss_and_grad_head(LP + "/BiasAdd", labels, self.batch))

    def fwd(self, is_first: bool, has_relu: bool, in_w: int, out_w: int) -> Tmpl:
        key = (is_first, has_relu, in_w, out_w)
        t = self._fwd.get(key)
        if t is None:
            t = self._fwd[key] = Tmpl(_dense_fwd_unit(is_first, has_relu, in_w, out_w, self.input))
        return t

    def bwd(self, is_first: bool, is_last: bool) -> Tmpl:
        key = (is_first, is_last)
        t = self._bwd.get(key)
        if t is None:
            t = self._bwd[key] = Tmpl(_bwd_unit(is_first, is_last, self.input, L + "/MatMul/ReadVariableOp"))
        return t


def write_fed(kind: str, seed: int, w: _Writer, size: int) -> Dict[str, Any]:
    g = _Fed(kind, seed)
    info = g.write(w, size)
    info["expected"]["input"] = g.input
    return info


__all__ = ["FED_KINDS", "write_fed"]
