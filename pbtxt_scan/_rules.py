"""fp_point and bp_point: the rules, and the trail that explains each answer.

fp reads forward and stops at its answer; bp reads backward (``_reverse``) and stops at its answer.

Rules (``--rule``):
- ``doc``: the documented recipe made complete. fp = the first node, scanning forward, whose op is
  not in the catalog, whose name holds none of the recipe's filters (step, Dataset, seed, kernel)
  and that is not inside a variable initializer (``.../Initializer/...``). bp = scanning backward,
  the first node in a gradients scope whose op is not in the catalog.
- ``dataflow``: fp = the first compute node in file order fed by the training data source
  (IteratorGetNext*, QueueDequeue*, GetNext; Placeholders only when none exists), directly or
  through ops that pass data on unchanged (Identity, Reshape, control flow...). bp = the doc bp,
  also skipping nodes that compute only from constants and shapes (shape arithmetic that GE
  folds away, e.g. the int32 ops that pack an IndexedSlices gradient).
- ``auto`` (default): dataflow where the graph has a data source or placeholder, else doc.

A gradients scope is a path component ``gradients``, ``gradients_N`` or ``gradient_tape`` anywhere
in the name but the last (a summary *named* ``.../gradients`` is not in one). When the top level
has no compute op or no gradients scope but a ``library`` function does (GradientTape inside a
``tf.function``), the answer comes from that function, and names it.
"""
from __future__ import annotations

import collections
import re
from typing import Any, Callable, Deque, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from ._catalog import DATA_SOURCES, METADATA, PLACEHOLDERS, Catalog
from ._model import Block, Message
from ._dialect import operator_layout
from ._input import GraphFile, Source, opened
from ._reverse import reverse_blocks

DOC_NAME_FILTERS = ("step", "Dataset", "seed", "kernel")
_GRAD_SCOPE = re.compile(r"^(?:gradients(?:_\d+)?|gradient_tape)$")
_PROPAGATING = ("type, shape and identity", "control flow")
_HEADS = frozenset({"name", "op", "input", "device"})
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
    count: int = 0


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


class Answer(NamedTuple):
    kind: str
    point: Optional[Point]
    rule: str
    reason: str  # why this answer (or why none)
    trail: List[Step]  # a Trail
    unit: str = "line"  # what the trail's positions are: "line" (text) or "offset" (binary)


class Options(NamedTuple):
    rule: str = "auto"
    skip_ops: FrozenSet[str] = frozenset()
    keep_ops: FrozenSet[str] = frozenset()
    name_filters: Tuple[str, ...] = DOC_NAME_FILTERS

    @property
    def catalog(self) -> Catalog:
        return Catalog(self.skip_ops, self.keep_ops)


def in_gradients_scope(name: str) -> bool:
    parts = name.split("/")
    return any(_GRAD_SCOPE.match(p) for p in parts[:-1])


def _producer(inp: str) -> Optional[str]:
    """The node an input names: ``x``, ``x:1`` and function-body ``x:output:0`` -> ``x``; control -> None."""
    if inp.startswith("^"):
        return None
    return inp.split(":", 1)[0]


# --- fp -------------------------------------------------------------------------------------


def _fp_scan(
    blocks: Iterable[Block],
    opts: Options,
    sources: FrozenSet[str] = frozenset(),
    holds_data: Callable[[Block], bool] = lambda b: True,
) -> Tuple[Dict[str, Any], List[Step]]:
    """One forward pass computing every rule's fp candidate, stopping once dataflow has its answer.

    ``sources``: names that count as data sources up front (a function's arguments).
    ``holds_data``: whether a placeholder feeds a batch rather than a scalar hyper-parameter.
    Queue pipelines (Estimator input queues) chain queues: a dequeue whose data is enqueued into
    another queue is not the training input, so with queue sources the pass reads on and picks the
    first compute op fed by a dequeue whose data reaches no enqueue.
    """
    cat = opts.catalog
    trail = Trail()
    data: Dict[str, str] = {n: n for n in sources}  # node -> the data source it is downstream of
    ph: Set[str] = set()  # downstream of a placeholder
    found: Dict[str, Any] = {"doc": None, "placeholder": None, "dataflow": None}
    queue_first: Dict[str, Block] = {}  # queue dequeue -> first compute op it feeds
    pipeline: Set[str] = set()  # dequeues whose data is enqueued again
    queues: Set[str] = set()  # the data sources that are queue dequeues
    for b in blocks:
        name = b.name or ""
        op = _op(b)
        c = cat.category(op)
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        src = next((data[p] for p in prods if p in data), None)
        fed_ph = any(p in ph for p in prods)
        if op in DATA_SOURCES and op not in opts.keep_ops:
            data[name] = name
            if op.startswith("QueueDequeue"):
                queues.add(name)
            trail.append(Step(_at(b), name, op, "pass", "data source"))
            continue
        if op in PLACEHOLDERS:
            if holds_data(b):
                ph.add(name)
            else:
                trail.append(Step(_at(b), name, op, "skip", "a scalar placeholder (a hyper-parameter, not data)"))
                continue
        # doc rule candidate (first only)
        doc_why = None
        if c is not None:
            doc_why = "catalog: %s" % c
        else:
            hit = next((f for f in opts.name_filters if f in name), None)
            if hit:
                doc_why = "name holds %r" % hit
            elif "/Initializer/" in name or name.startswith("Initializer/"):
                doc_why = "inside a variable initializer"
        if doc_why is None and found["doc"] is None:
            found["doc"] = b
            if opts.rule == "doc":  # the recipe stops at its first candidate
                return found, trail
        if opts.rule == "doc":
            trail.append(Step(_at(b), name, op, "skip", doc_why or ""))
            continue
        # dataflow
        if src is not None or fed_ph:
            if op is not None and op.startswith("QueueEnqueue") and src is not None:
                pipeline.add(src)
                trail.append(Step(_at(b), name, op, "skip", "data from %s goes into another queue" % src))
                continue
            if c is None or op in opts.keep_ops:
                if src is not None:
                    if src in queues:
                        data[name] = src  # to see whether this data goes into another queue
                        if src not in queue_first:
                            queue_first[src] = b
                            why = "first compute op fed by queue %s (kept until the pipeline is known)" % src
                            trail.append(Step(_at(b), name, op, "pass", why))
                        continue
                    found["dataflow"] = b
                    trail.append(Step(_at(b), name, op, "chosen", "first compute op fed by the data source %s" % src))
                    return found, trail
                if found["placeholder"] is None:
                    found["placeholder"] = b
                    trail.append(Step(_at(b), name, op, "pass", "first compute op fed by a placeholder (kept in case no data source exists)"))
                continue
            if op in METADATA:
                trail.append(Step(_at(b), name, op, "skip", "reads only the shape of the data"))
                continue
            if c in _PROPAGATING or c == "added by --skip-op":
                if src is not None:
                    data[name] = src
                else:
                    ph.add(name)
                trail.append(Step(_at(b), name, op, "pass", "passes the data on (%s)" % c))
                continue
            trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c))
            continue
        trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c if c else "not fed by the data source"))
    final = [blk for q, blk in queue_first.items() if q not in pipeline] or list(queue_first.values())
    if final:
        found["dataflow"] = min(final, key=lambda blk: blk.start)
        trail.append(Step(_at(found["dataflow"]), found["dataflow"].name or "", found["dataflow"].op, "chosen",
                          "first compute op fed by the last queue of the input pipeline"))
    return found, trail


def find_fp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_fp(g, opts))


def _in_units(g: GraphFile, ans: Answer) -> Answer:
    return ans._replace(unit="offset") if g.binary else ans


def _find_fp(g: GraphFile, opts: Options) -> Answer:
    block_path, heads = operator_layout(g.dialect)
    found, trail = _fp_scan(g.blocks(block_path, heads), opts, holds_data=lambda b: _holds_data(g, b))
    ans = _fp_pick(found, trail, opts, g.name, None)
    if ans.point is None or (ans.rule != "doc" and found["dataflow"] is None and found["placeholder"] is None):
        # No compute op at the top level: a TF2 graph runs its step inside a library function.
        fn = training_function(g)
        if fn is not None:
            fname, fblocks = fn
            args = _function_args(fblocks)
            f2, t2 = _fp_scan(iter(fblocks), opts, args)
            sub = _fp_pick(f2, t2, opts, g.name, fname)
            if sub.point is not None:
                reason = "no compute op fed by data at the top level; the training step runs in function %s: %s" % (
                    fname,
                    sub.reason,
                )
                return Answer("fp", sub.point, sub.rule, reason, trail + t2)
    return ans


def _holds_data(g: GraphFile, b: Block) -> bool:
    """A placeholder whose ``shape`` attr has a dimension (a batch) or an unknown rank holds data; a
    scalar one (``learning_rate``, ``keep_prob``, ``is_training``) is a hyper-parameter."""
    from ._errors import PbtxtError

    try:
        node = g.parse(b, max_bytes=1 << 20)[0].value
    except PbtxtError:
        return True  # cannot tell: keep it
    for attr in node.all("attr"):
        if attr.get("key") == "shape":
            shape = (attr.get("value") or Message()).get("shape")
            if shape is None:
                return True
            return bool(shape.all("dim")) or shape.get("unknown_rank") in ("true", "True", "t", 1)
    return True


def _fp_pick(found: Dict[str, Any], trail: List[Step], opts: Options, file: str, fn: Optional[str]) -> Answer:
    rule = opts.rule
    b: Optional[Block] = None
    used = rule
    reason = ""
    if rule in ("auto", "dataflow"):
        if found["dataflow"] is not None:
            b, used, reason = found["dataflow"], "dataflow", "first compute op fed by the data source"
        elif found["placeholder"] is not None:
            b, used, reason = found["placeholder"], "dataflow", "no data source: first compute op fed by a placeholder"
        elif rule == "dataflow":
            return Answer("fp", None, "dataflow", "no data source or placeholder feeds a compute op", trail)
    if b is None and rule in ("auto", "doc"):
        b, used = found["doc"], "doc"
        reason = "first node not in the catalog and not filtered by name" if b is not None else ""
        if b is not None and rule == "auto":
            reason = "no data source: " + reason
    if b is None:
        return Answer("fp", None, used, "no compute op found", trail)
    if b is not found["dataflow"]:
        trail.append(Step(_at(b), b.name or "", b.op, "chosen", reason))
    return Answer("fp", _point("fp", b, used, file, fn), used, reason, trail)


def _at(b: Block) -> int:
    """Where a block is, for the trail: its line (text) or byte offset (binary: line 0)."""
    return b.line or b.start


def _op(b: Block) -> Optional[str]:
    op = b.op
    return op[3:] if op is not None and op.startswith("ge:") else op  # GE's ONNX view: "ge:Conv2D"


def _point(kind: str, b: Block, rule: str, file: str, fn: Optional[str]) -> Point:
    if b.line == 0:  # a binary graph: no lines
        return Point(kind, b.name or "", b.op, None, None, b.start, rule, file, fn)
    return Point(kind, b.name or "", b.op, b.line, b.head_line("name"), b.start, rule, file, fn)


# --- bp -------------------------------------------------------------------------------------


class _Backward:
    """Blocks in reverse order, with look-up of names not yet reached (read ahead, bounded).

    Producers come before their consumers in a GraphDef, so a look-up reads ahead; the blocks
    already handed out are forgotten after ``recent`` more, keeping memory flat on long tails.
    """

    def __init__(
        self,
        it: Iterator[Block],
        window: int = 20000,
        recent: int = 4096,
        inputs_of: Optional[Callable[[Block], List[str]]] = None,
    ) -> None:
        self._it = it
        self.inputs = inputs_of or (lambda b: b.inputs)
        self._ahead: Deque[Block] = collections.deque()  # read but not yet handed out
        self._recent: Deque[Block] = collections.deque()
        self.seen: Dict[str, Block] = {}
        self._window = window
        self._keep = recent
        self._recent_heads = 0

    def __iter__(self) -> "_Backward":
        return self

    def __next__(self) -> Block:
        if self._ahead:
            b = self._ahead.popleft()
        else:
            b = next(self._it)
            self.seen[b.name or ""] = b
        self._recent.append(b)
        self._recent_heads += len(b.heads)
        # Forget by count and by size: a NoOp like `init` can carry 100,000 control inputs.
        while len(self._recent) > self._keep or (self._recent_heads > 20000 and len(self._recent) > 1):
            old = self._recent.popleft()
            self._recent_heads -= len(old.heads)
            if self.seen.get(old.name or "") is old:
                del self.seen[old.name or ""]
        return b

    def lookup(self, name: str, window: Optional[int] = None) -> Optional[Block]:
        n = 0
        limit = self._window if window is None else window
        while name not in self.seen and n < limit and len(self._ahead) < self._window:
            try:
                b = next(self._it)
            except StopIteration:
                break
            self.seen[b.name or ""] = b
            self._ahead.append(b)
            n += 1
        return self.seen.get(name)


def _shape_only(name: str, back: _Backward, memo: Dict[str, bool], depth: int = 0) -> bool:
    """True if the node computes only from constants and shapes (no tensor data flows into it)."""
    if name in memo:
        return memo[name]
    b = back.lookup(name)
    if b is None or depth > 64:
        return False
    op = _op(b)
    if op in ("Const", "HostConst", "Constant") or op in METADATA:
        res = True
    else:
        prods = [p for p in map(_producer, back.inputs(b)) if p is not None]
        memo[name] = False  # cycles (while loops) are data
        # Producers come earlier in the file, so later in a backward read: look for the near ones
        # first, so that one data input settles it before a long read-ahead for a far one.
        for p in prods:
            near = back.lookup(p, window=256)
            if near is not None and not _shape_only(p, back, memo, depth + 1):
                res = False
                break
        else:
            res = bool(prods) and all(_shape_only(p, back, memo, depth + 1) for p in prods)
    memo[name] = res
    return res


def _bp_scan(
    blocks: Iterator[Block], opts: Options, rule: str, inputs_of: Optional[Callable[[Block], List[str]]] = None
) -> Tuple[Optional[Block], List[Step], bool]:
    cat = opts.catalog
    back = _Backward(blocks, inputs_of=inputs_of)
    memo: Dict[str, bool] = {}
    trail = Trail()
    any_grad = False
    for b in back:
        name = b.name or ""
        if not in_gradients_scope(name):
            trail.append(Step(_at(b), name, b.op, "skip", "not in a gradients scope"))
            continue
        any_grad = True
        c = cat.category(_op(b))
        if c is not None:
            trail.append(Step(_at(b), name, b.op, "skip", "catalog: %s" % c))
            continue
        if rule != "doc" and _shape_only(name, back, memo):
            trail.append(Step(_at(b), name, b.op, "skip", "computes only from constants and shapes"))
            continue
        trail.append(Step(_at(b), name, b.op, "chosen", "last op in a gradients scope that computes"))
        return b, trail, True
    return None, trail, any_grad


def find_bp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_bp(g, opts))


def _find_bp(g: GraphFile, opts: Options) -> Answer:
    rule = "doc" if opts.rule == "doc" else "dataflow"
    block_path, heads = operator_layout(g.dialect)
    # Backward, read names and ops only: most of a long tail is never a candidate, and a NoOp
    # like `init` has 100,000+ inputs. The few blocks whose inputs matter are read again.
    light = frozenset(h for h in heads if h in ("name", "op", "type", "op_type"))
    b, trail, any_grad = _bp_scan(reverse_blocks(g, block_path, light), opts, rule, lambda blk: _inputs_again(g, blk, heads))
    if b is not None:
        return Answer("bp", _point("bp", b, rule, g.name, None), rule, "last op in a gradients scope that computes", trail)
    fn = training_function(g)
    if fn is not None:
        fname, fblocks = fn
        b2, t2, _ = _bp_scan(reversed(fblocks), opts, rule)
        if b2 is not None:
            reason = "no gradients scope at the top level; the training step runs in function %s" % fname
            return Answer("bp", _point("bp", b2, rule, g.name, fname), rule, reason, trail + t2)
    why = (
        "no compute op in a gradients scope"
        if any_grad
        else "no node in a gradients scope: this looks like an inference graph"
    )
    return Answer("bp", None, rule, why, trail)


def _inputs_again(g: GraphFile, b: Block, heads: FrozenSet[str]) -> List[str]:
    """The inputs of a block read without them: its bytes scanned again."""
    if "input" in (h.name for h in b.heads):
        return b.inputs
    again = g.rescan(b, heads)
    return again[0].inputs if len(again) == 1 else []


# --- TF2 functions --------------------------------------------------------------------------


def training_function(g: GraphFile) -> Optional[Tuple[str, List[Block]]]:
    """The library function holding the most gradients-scope nodes, with its node blocks."""
    best: Optional[Tuple[int, str, List[Block]]] = None
    cur: Optional[str] = None
    nodes: List[Block] = []
    count = 0

    def close() -> None:
        nonlocal best
        if cur is not None and count and (best is None or count > best[0]):
            best = (count, cur, nodes)

    for b in g.blocks(("library", "function", "node_def"), _HEADS):
        fname = b.parents[-1] if b.parents else None
        if fname != cur:
            close()
            cur, nodes, count = fname, [], 0
        nodes.append(b)
        if in_gradients_scope(b.name or ""):
            count += 1
    close()
    if best is None:
        return None
    return best[1] or "?", best[2]


def _function_args(blocks: Sequence[Block]) -> FrozenSet[str]:
    """A function body names its arguments bare (``x``); other nodes as ``node:out:idx``."""
    names = {b.name for b in blocks}
    args = set()
    for b in blocks:
        for inp in b.inputs:
            if not inp.startswith("^") and ":" not in inp and inp not in names:
                args.add(inp)
    return frozenset(args)


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
