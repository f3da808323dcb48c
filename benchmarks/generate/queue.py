"""Kind ``queue``: the ``dense`` graph fed by an Estimator-style queue pipeline: ``input_producer``
(Range, RandomShuffle, FIFOQueueV2, QueueEnqueueManyV2, QueueDequeueV2), two GatherV2 of the
examples, the ``batch/fifo_queue`` enqueue and the ``batch`` QueueDequeueManyV2 that feeds the
model. fp must know that no later enqueue makes ``batch`` a pipeline stage.
"""

from __future__ import annotations

import random
import struct
from typing import Any, Dict

from ._stamp import Writer, float_bytes
from ._text import Fields, av_i, av_list_shape, av_list_type, av_s, av_tensor, av_type, cescape, tf_node
from ._tf import global_step, scalar_const
from .dense import DenseGraph


def _queue_head(rng: random.Random, feat: int, batch: int) -> Fields:
    rows = 64
    cpu = [("device", '"/device:CPU:0"')]
    i32 = "DT_INT32"
    ip = "input_producer"
    out = scalar_const(ip + "/Const", i32, "int_val", "0")
    out += scalar_const(ip + "/limit", i32, "int_val", str(rows))
    out += scalar_const(ip + "/delta", i32, "int_val", "1")
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
                      [("tensor_content", '"' + cescape(float_bytes(rng, rows * feat, 0.5, 0.0)) + '"')])
    labels = struct.pack("<%dq" % rows, *[rng.randrange(10) for _ in range(rows)])
    out += tf_node("examples/features", "Const", (), {"dtype": av_type("DT_FLOAT"), "value": feats})
    out += tf_node("examples/labels", "Const", (), {"dtype": av_type("DT_INT64"), "value": av_tensor(
        "DT_INT64", [rows], [("tensor_content", '"' + cescape(labels) + '"')])})
    out += scalar_const("GatherV2/axis", i32, "int_val", "0")
    for n, src, t in (("GatherV2", "examples/features", "DT_FLOAT"), ("GatherV2_1", "examples/labels", "DT_INT64")):
        out += tf_node(n, "GatherV2", [src, ip + "/input_producer_Dequeue", "GatherV2/axis"],
                       {"Taxis": av_type(i32), "Tindices": av_type(i32), "Tparams": av_type(t), "batch_dims": av_i(0)})
    types = av_list_type(["DT_FLOAT", "DT_INT64"])
    out += tf_node("batch/fifo_queue", "FIFOQueueV2", (),
                   {"capacity": av_i(4 * batch), "component_types": types, "container": av_s(""),
                    "shapes": av_list_shape([[feat], []]), "shared_name": av_s("")}, cpu)
    out += tf_node("batch/fifo_queue_enqueue", "QueueEnqueueV2", ["batch/fifo_queue", "GatherV2", "GatherV2_1"],
                   {"Tcomponents": types, "timeout_ms": av_i(-1)}, cpu)
    out += scalar_const("batch/n", i32, "int_val", str(batch))
    out += tf_node("batch", "QueueDequeueManyV2", ["batch/fifo_queue", "batch/n"],
                   {"component_types": types, "timeout_ms": av_i(-1)}, cpu)
    return out


def write(w: Writer, size: int, seed: int) -> Dict[str, Any]:
    g = DenseGraph(seed)
    # after DenseGraph's own draws from g.rng, as the queue head always was
    g.feed_from("batch", "batch:1", _queue_head(g.rng, g.feat, g.batch) + global_step())
    return g.write(w, size)
