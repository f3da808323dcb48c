"""What fp's byte search looks for (the rules' side of it): the ops that can still change fp once it
has a candidate, a word each of them holds, and the word of a gradients scope's names. How a lane
spells and judges them is the lane's (:meth:`~pbtxt_scan.source._lane.Lane.ahead`). The argument for
why no such node is missed is in ``_rules``' docstring."""
from __future__ import annotations

from typing import Iterable

from ._catalog import DATA_SOURCES, ENQUEUES, PLACEHOLDERS, STAGES

# The ops that can still change fp once it has a candidate, and a word each of them holds (the
# search looks for the words: fewer, and no short prefix as common as `Mul"`).
_FP_OPS = DATA_SOURCES | ENQUEUES | STAGES | PLACEHOLDERS
_OP_WORDS = ("GetNext", "QueueDequeue", "QueueEnqueue", "Placeholder", "Data", "Arg", "Unstage", "Stage")
assert all(any(w in op for w in _OP_WORDS) for op in _FP_OPS)
_GRAD_WORDS = ("gradient",)  # gradients, gradients_N, gradient_tape


# fp's needles as each lane spells them (for tools and tests: fp itself asks the lane, ``Lane.ahead``).
def _pattern(words: Iterable[str], extra: Iterable[str] = ()) -> str:
    """The text lane's regex of ``words`` (``text._needles._pattern``)."""
    from ..text import needle_pattern

    return needle_pattern(words, extra)


def op_pattern() -> str:
    """The wire lane's regex of fp's ops (``wire._ahead.op_pattern``)."""
    from ..wire import op_pattern as wire_ops

    return wire_ops(_FP_OPS)


def name_pattern() -> str:
    from ..wire import name_pattern as wire_names

    return wire_names(_GRAD_WORDS)
