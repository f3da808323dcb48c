"""What fp and bp answer, and the trail that explains each answer (``--explain``)."""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Tuple

from .._kit import NamedTuple
from ._catalog import Catalog
from .._model import Block

DOC_NAME_FILTERS = ("step", "Dataset", "seed", "kernel")
_PROPAGATING = ("type, shape and identity", "control flow", "optionals", "function arguments and results", "communication")
RULES = ("auto", "dataflow", "doc")


class Point(NamedTuple):
    """An answer. ``line``/``name_line`` are ``None`` in a binary graph (no lines): ``offset`` is
    the position there (the serialized NodeDef's first byte), the block's first byte in text."""

    kind: str  # "fp" or "bp"
    name: str
    op: Optional[str]
    line: Optional[int]
    name_line: Optional[int]
    offset: int
    rule: str
    file: str
    function: Optional[str]

    def to_json(self) -> Dict[str, Any]:
        return self._asdict()

    @property
    def where(self) -> str:
        """``line N`` (text) or ``offset N`` (binary)."""
        return "offset %d" % self.offset if self.line is None else "line %d" % self.line


class Step(NamedTuple):
    """One node the search looked at, and what it made of it (or, verdict "more", a run of
    ``count`` skipped nodes, lines ``line`` to ``upto``, left out of the trail). In a binary graph
    ``line`` and ``upto`` are byte offsets (:func:`format_trail` is told so)."""

    line: int
    name: str
    op: Optional[str]
    verdict: str  # "skip", "pass", "chosen", "more"
    why: str
    upto: int = 0
    count: int = 0  # type: ignore[assignment]  # (public since the trail had runs; it shadows tuple.count, never called on a Step)


class Trail(List[Step]):
    """The steps of a search, in bounded memory: of a run of skips for one reason it keeps the
    first and last ``KEEP`` steps and counts the ones between (a bp search may pass millions)."""

    KEEP = 3

    def __init__(self) -> None:
        super().__init__()
        self._run = 0  # steps in the current run of skips sharing a reason

    def append(self, s: Step) -> None:
        if s.verdict != "skip" or not self or self[-1].verdict != "skip" or self[-1].why != s.why:
            self._run = 1 if s.verdict == "skip" else 0
            super().append(s)
            return
        self._run += 1
        k = self.KEEP
        if self._run <= 2 * k + 1:
            super().append(s)
            return
        # The run holds k head steps, then (once it is long) a "more" marker, then k tail steps.
        if self._run == 2 * k + 2:  # first overflow: the oldest tail step becomes the marker
            old = self[-(k + 1)]
            self[-(k + 1)] = Step(old.line, "", None, "more", old.why, old.line, 1)
        old = self[-k]  # the oldest tail step joins the marker
        m = self[-(k + 1)]
        self[-(k + 1)] = m._replace(upto=old.line, count=m.count + 1)
        del self[-k]
        super().append(s)


# Why an alternative is not the answer, one word of a closed set (``Alternative.why``; docs/json.md):
WHYS = (
    "label",  # label side: its data reaches the loss without meeting a trained variable
    "metric",  # a metric's input
    "dead",  # nothing that runs uses it (TensorFlow prunes it)
    "prefetch",  # the next batch going into a queue or a staging area
    "untrained_copy",  # a copy of the model that no gradient trains (an eval copy)
    "feature_mask",  # a mask or a length on the feature side
    "cast",  # input preprocessing: a dtype conversion or scaling of the batch
    "other_optimizer",  # another optimizer's point (--train-op chooses)
    "other_copy",  # another trained copy of the model (--source chooses)
    "ge_order",  # on a GE dump: it qualifies under GE's own rule too, and GE's order (op ids) picks the answer
)


class Alternative(NamedTuple):
    """A node a careful reader could have taken for the point, why the answer is not it (``why``,
    one of :data:`WHYS`), and the same in words (``reason``)."""

    point: Point
    reason: str
    why: str

    def to_json(self) -> Dict[str, Any]:
        d = self.point.to_json()
        d["why"] = self.why
        d["reason"] = self.reason
        return d


class Answer(NamedTuple):
    kind: str
    point: Optional[Point]
    rule: str
    reason: str  # why this answer (or why none)
    trail: List[Step]  # a Trail
    unit: str = "line"  # what the trail's positions are: "line" (text) or "offset" (binary)
    confidence: str = "certain"  # or "ambiguous": the answer stands, but another is as plausible
    doubt: str = ""  # why it is ambiguous (one line)
    alternatives: Tuple[Alternative, ...] = ()


class Options(NamedTuple):
    rule: str = "auto"
    skip_ops: FrozenSet[str] = frozenset()
    keep_ops: FrozenSet[str] = frozenset()
    name_filters: Tuple[str, ...] = DOC_NAME_FILTERS
    sources: FrozenSet[str] = frozenset()  # --source: the nodes that carry the batch (else found)
    train_op: Optional[str] = None  # --train-op: the optimizer (its update op or train op) whose step is profiled

    @property
    def catalog(self) -> Catalog:
        return Catalog(self.skip_ops, self.keep_ops)


def _producer(inp: str) -> Optional[str]:
    """The node an input names: ``x``, ``x:1`` and function-body ``x:output:0`` -> ``x``; control -> None."""
    if inp.startswith("^"):
        return None
    return inp.split(":", 1)[0]


def _op(b: Block) -> Optional[str]:
    op = b.op
    return op[3:] if op is not None and op.startswith("ge:") else op  # GE's ONNX view: "ge:Conv2D"


def _in_units(g: Any, ans: Answer) -> Answer:
    """The trail's positions as the graph's lane shows them: lines, or (a binary graph's) byte
    offsets (``g``: the GraphFile read)."""
    return ans if g.lane.unit == "line" else ans._replace(unit=g.lane.unit)


def _at(b: Block) -> int:
    """Where a block is, for the trail: its line (text) or byte offset (binary: line 0)."""
    return b.line or b.start


def _point(kind: str, b: Block, rule: str, file: str, fn: Optional[str]) -> Point:
    if b.line == 0:  # a binary graph: no lines
        return Point(kind, b.name or "", b.op, None, None, b.start, rule, file, fn)
    return Point(kind, b.name or "", b.op, b.line, b.head_line("name"), b.start, rule, file, fn)


# --- explain --------------------------------------------------------------------------------


def format_trail(trail: List[Step], unit: str = "line") -> List[str]:
    """The trail as lines (long runs of skips are already collapsed by :class:`Trail`); ``unit``:
    ``line`` (text) or ``offset`` (binary: the positions are byte offsets)."""
    return [_fmt_step(st, unit) for st in trail]


def _fmt_step(s: Step, unit: str = "line") -> str:
    if s.verdict == "more":
        return "  ... %d more: %s (%ss %d-%d)" % (s.count, s.why, unit, s.line, s.upto)
    mark = {"skip": "skip  ", "pass": "pass  ", "chosen": "CHOSEN"}[s.verdict]
    return "%s %s %-7d %s (%s): %s" % (mark, unit, s.line, s.name, s.op, s.why)
