"""The public API's rules: fp_point and bp_point (loaded on first use by ``pbtxt_scan.__getattr__``)."""
from __future__ import annotations

from typing import List

from .points._profiling import profiling_options
from .points._rules import RULES, Answer, Options, Point, find_bp, find_fp, format_trail


def explain(answer: Answer) -> List[str]:
    """The answer's trail as lines: each node considered, where, and why it was taken or skipped
    (what ``--explain`` prints)."""
    return format_trail(answer.trail, answer.unit)


__all__ = ["RULES", "Answer", "Options", "Point", "explain", "find_bp", "find_fp", "profiling_options"]
