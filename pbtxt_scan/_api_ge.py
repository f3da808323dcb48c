"""The public API's answers on a GE dump: GE's own fp and bp (rule ``ge``), never TensorFlow's rules.

A GE Build dump is the graph GE compiled: its ops are GE's (fused, renamed, split), its data source
an ``IteratorV2`` or ``Data`` op and its last ops the optimizer's. TensorFlow's rules read on it
answer a data op or an ``ApplyMomentum``; what the profiler does with such a graph is GE's own
search (``ProfilingTaskUtils``), which :func:`pbtxt_scan.ge.ge_choices` replays. So on a dump,
:func:`~pbtxt_scan.find_fp`, :func:`~pbtxt_scan.find_bp` and :func:`~pbtxt_scan.points` answer what
``ge-auto`` computes: the op, GE's reason, its trail (one ``chosen`` step), the other ops that
qualified as alternatives, and where GE would pick none, no point and why, with the command that
maps a TensorFlow graph's points onto the dump instead.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .fpbp._answers import Alternative, Answer, Point, Step

RULE = "ge"
GE_DIALECTS = ("ge_proto", "ge_onnx")
_VERDICTS = {"dropped": "skip", "source": "pass", "target": "pass", "descend": "pass", "candidate": "pass"}
_PICK = {"fp": ("minimum", "smallest"), "bp": ("maximum", "largest")}


def is_ge_dump(g: Any) -> bool:
    """Whether an open GraphFile is read as a GE dump (by its content, or as ``--input-kind`` says)."""
    return getattr(g.dialect, "name", "") in GE_DIALECTS


def ge_answers(g: Any) -> Tuple[Answer, Answer]:
    """GE's own fp and bp of the dump ``g`` (read once, through ``g``), as :class:`Answer` objects."""
    from .ge import ge_choices

    _, fp, bp, trail = ge_choices(g)
    return _answer(fp, trail, g.name), _answer(bp, trail, g.name)


def _point(kind: str, op: Any, file: str) -> Point:
    return Point(kind, op.name, op.type, op.line, op.name_line, op.offset, RULE, file, None)


def _answer(choice: Any, trail: List[Dict[str, Any]], file: str) -> Answer:
    kind, op = choice.kind, choice.op
    steps = _steps(kind, trail, op)
    if op is None:
        reason = ("GE would pick no %s here: %s; to profile this model, give its TensorFlow graph with this dump: "
                  "pbtxt-scan points GRAPH --ge %s" % (kind, choice.reason, file))
        return Answer(kind, None, RULE, reason, steps)
    most = _PICK[kind][1]
    others: List[Any] = []
    for c in choice.candidates:  # (an op reading the source at two inputs qualifies twice)
        if c is not op and all(c is not o for o in others):
            others.append(c)
    ties = [c.name for c in others if c.id == op.id]
    doubt = ""
    if ties:
        doubt = ("%s and %s have the same id %d: GE takes the first in its node order (the dump's), "
                 "so a dump written in another order would pick otherwise" % (op.name, ", ".join(ties), op.id))
    alternatives = tuple(
        Alternative(_point(kind, c, file), "qualifies too, but id %d%s: GE takes the %s id" % (
            c.id, " ties with %s's and comes later in GE's node order" % op.name if c.id == op.id
            else (" > %d" % op.id if kind == "fp" else " < %d" % op.id), most), "ge_order")
        for c in others
    )
    reason = "GE's own choice (what it traces with \"%s_point\":\"\"): %s" % (kind, choice.reason)
    return Answer(kind, _point(kind, op, file), RULE, reason, steps, "line",
                  "ambiguous" if ties else "certain", doubt, alternatives)


def _steps(kind: str, trail: List[Dict[str, Any]], chosen: Optional[Any]) -> List[Step]:
    """GE's trail for one point as the answer's steps: dropped ops are skipped, the rest passed,
    the chosen op (a candidate) the one ``chosen`` step."""
    word = _PICK[kind][0]
    steps: List[Step] = []
    taken = False  # (one chosen step, if the op qualified twice)
    for t in trail:
        if t["step"] != kind:
            continue
        verdict, why = _VERDICTS.get(t["verdict"], "pass"), "%s: %s" % (t["verdict"], t["why"])
        if t["verdict"] == "candidate" and chosen is not None:
            if (t["name"], t["line"]) == (chosen.name, chosen.line):
                if taken:
                    continue
                verdict, why, taken = "chosen", "candidate: %s; the %s id (%d)" % (t["why"], word, chosen.id), True
            else:
                why += "; id %d, not the %s" % (t["id"], word)
        steps.append(Step(t["line"] or 0, t["name"] or "", t.get("type"), verdict, why))
    return steps


__all__ = ["GE_DIALECTS", "RULE", "ge_answers", "is_ge_dump"]
