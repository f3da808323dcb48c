"""Kind ``feed``: the ``dense`` training graph fed through ``feed_dict`` placeholders: a scalar
``learning_rate`` (PlaceholderWithDefault) and ``keep_prob``, then ``x`` [-1, F] and ``y`` [-1];
no ``library``. fp (``layer_0/MatMul``) is near the top; a correct fp must still know that no data
source (IteratorGetNext, QueueDequeue*) comes later.
"""

from __future__ import annotations

from typing import Any, Dict

from ._stamp import Writer
from ._text import Fields, av_shape, av_type, tf_node
from ._tf import global_step, scalar_const
from .dense import DenseGraph


def _feed_head() -> Fields:
    out = scalar_const("learning_rate/input", "DT_FLOAT", "float_val", "0.10000000149011612")
    out += tf_node("learning_rate", "PlaceholderWithDefault", ["learning_rate/input"],
                   {"dtype": av_type("DT_FLOAT"), "shape": av_shape([])})
    out += tf_node("keep_prob", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([])})
    return out


def _feed_inputs(feat: int) -> Fields:
    out = tf_node("x", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([-1, feat])})
    out += tf_node("y", "Placeholder", (), {"dtype": av_type("DT_INT64"), "shape": av_shape([-1])})
    return out


def write(w: Writer, size: int, seed: int) -> Dict[str, Any]:
    g = DenseGraph(seed)
    g.feed_from("x", "y", _feed_head() + global_step() + _feed_inputs(g.feat))
    return g.write(w, size)
