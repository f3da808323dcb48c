r"""fp_point and bp_point: the rules, and the trail that explains each answer.

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
in the name but the last (a summary *named* ``.../gradients`` is not in one).

Where the step is (:func:`step_body`, one rule for fp and bp): the top level when one of its nodes
is in a gradients scope; else the ``library`` function holding the most gradients-scope nodes
(GradientTape in a ``tf.function``; Keras ``model.fit``, whose ``train_function`` calls
``one_step_on_data``; an Ascend ``GeOp`` body), however deep the call chain; else the top level.
Both points then come from that body, and name it.

fp in bounded memory, at the cost of the distance to its answer
----------------------------------------------------------------
fp reads blocks forward. What it keeps grows only until its answer: the names downstream of a
data placeholder (dropped once the first op they feed is found), the names downstream of a data
source through plumbing (and, for queue data, until no enqueue can follow), a few per-queue
entries, and the :class:`Trail` (bounded). Once it has a candidate, the answer can change only if
a node with one of a few ops comes later (:func:`_still_wanted`): a data source after a
placeholder's op; an enqueue (which would make the candidate's queue a pipeline stage) or a
non-queue source after a queue's op; a source or placeholder after a doc-rule candidate. Rather
than read every later block to rule those out, fp asks a byte search where such a node may be
(:class:`_Ahead`), reads blocks on to there if anywhere, and stops when the answer is "nowhere".

Why the search never misses such a node, whatever the layout. Every op that matters holds one of
a few words (:data:`_OP_WORDS`: GetNext, QueueDequeue, QueueEnqueue, Placeholder, Data, Arg). A
value that holds a word is written (i) plainly, and the word is in the bytes; or (ii) as adjacent
literals split inside the word (``"QueueDe" "queue"``), and a piece ends with a proper prefix of
the word and a quote; or (iii) with a letter escaped, and the bytes hold ``\1``, ``\5`` (octal
0o1xx, and 0o5xx that the grammar wraps to a byte, are where letters are), ``\x``, ``\u`` or
``\U``. :func:`_pattern` matches all three, as one regex run by ``grep -E`` (a DFA at grep's
speed; :func:`needle_hits`) from the candidate on. So a node that matters yields a hit on its
line. Each hit's line is then judged (:func:`judge_line`): it is passed over only when it surely
sets no such op, that is when it is one whole scalar field (``field: value``) whose field is not
the op (``op``, GE's ``type``/``op_type``), or whose (unescaped) value is not a wanted op, and the
next line does not continue its string. Any other line (several fields on one line, a line too
long to read, a field split over lines) counts as a possible node: fp reads blocks on to it and
asks again from there, so a non-canonical layout costs reading, never a wrong answer. Lines are
judged by content, not by indentation: the search does not assume the writer layout.

fp and bp must also agree on the body, so fp must know whether a top-level node sits in a
gradients scope. It knows if it met one; else, if the ops search read to the end and met no
``library`` field (and no gap between node blocks where one could hide), there is no function
and the question is moot; else a second search for ``gradient`` (same construction) judges each
line: a ``name`` field right after a ``node {`` opener names a top-level node (GraphDef has no
other ``node`` field), after any other opener it does not, and anything else is "cannot tell",
where fp reads the remaining blocks' names (bounded, slower).

Without grep (or on stdin and gzip input) there is no search: fp reads the blocks it would have
skipped, names and ops only, with the same bounded state: the same answers, at block speed.
"""
from __future__ import annotations

import collections
import contextlib
from typing import Any, Callable, Deque, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple

from ._ahead import _Ahead, ahead_of, graph_producer
from ._catalog import DATA_SOURCES, ENQUEUES, METADATA, PLACEHOLDERS, Catalog, in_gradients_scope
from ._dialect import operator_layout
from ._input import GraphFile, Source, opened
from ._model import Block, Message
from ._reverse import reverse_blocks

DOC_NAME_FILTERS = ("step", "Dataset", "seed", "kernel")
_PROPAGATING = ("type, shape and identity", "control flow", "optionals", "function arguments and results")
_HEADS = frozenset({"name", "op", "input", "device"})
RULES = ("auto", "dataflow", "doc")


class Point(NamedTuple):
    kind: str  # "fp" or "bp"
    name: str
    op: Optional[str]
    line: int
    name_line: Optional[int]
    offset: int
    rule: str
    file: str
    function: Optional[str]

    def to_json(self) -> Dict[str, Any]:
        return self._asdict()


class Step(NamedTuple):
    """One node the search looked at, and what it made of it (or, verdict "more", a run of
    ``count`` skipped nodes, lines ``line`` to ``upto``, left out of the trail)."""

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


class Options(NamedTuple):
    rule: str = "auto"
    skip_ops: FrozenSet[str] = frozenset()
    keep_ops: FrozenSet[str] = frozenset()
    name_filters: Tuple[str, ...] = DOC_NAME_FILTERS

    @property
    def catalog(self) -> Catalog:
        return Catalog(self.skip_ops, self.keep_ops)


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
    role: Callable[[Block], Tuple[bool, str]] = lambda b: (True, ""),
    ahead: Optional[_Ahead] = None,
) -> Tuple[Dict[str, Any], List[Step]]:
    """One forward pass computing every rule's fp candidate, stopping once dataflow has its answer.

    ``sources``: names that count as data sources up front (a function's arguments).
    ``role``: whether a placeholder feeds data (a batch) and, if not, what it is.
    ``ahead``: the byte search over the rest of the file; without it the pass reads on.
    Queue pipelines (Estimator input queues) chain queues: a dequeue whose data is enqueued into
    another queue is not the training input, so with queue sources the pass reads on and picks the
    first compute op fed by a dequeue whose data reaches no enqueue.

    Bounded state: ``ph`` (names downstream of a data placeholder) grows only until the first op
    fed by one is found, then is dropped; ``data`` holds the names downstream of a data source
    through plumbing, and through compute only for queue data until the pass knows no enqueue
    follows. Once the answer can only change if a given op appears later, the pass asks ``ahead``
    where such a node may be, reads on to there (blocks), and stops when there is none.
    """
    cat = opts.catalog
    trail = Trail()
    data: Dict[str, str] = {n: n for n in sources}  # node -> the data source it is downstream of
    ph: Set[str] = set()  # downstream of a placeholder (until the first op it feeds is found)
    found: Dict[str, Any] = {"doc": None, "placeholder": None, "dataflow": None, "grad": False, "pos": 0, "gap": False}
    queue_first: Dict[str, Block] = {}  # queue dequeue -> first compute op it feeds
    pipeline: Set[str] = set()  # dequeues whose data is enqueued again
    queues: Set[str] = set()  # the data sources that are queue dequeues
    n_sources = 0  # data sources met (function arguments are not in the file)
    wait_until = -1  # the byte search said nothing that matters comes before this offset
    for b in blocks:
        name = b.name or ""
        op = _op(b)
        if b.start - found["pos"] > 256:  # something other than nodes between them (a library?)
            found["gap"] = True
        found["pos"] = b.end
        if not found["grad"] and in_gradients_scope(name):
            found["grad"] = True
        c = cat.category(op)
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        src = next((data[p] for p in prods if p in data), None)
        fed_ph = bool(ph) and any(p in ph for p in prods)
        if op in DATA_SOURCES and op not in opts.keep_ops:
            data[name] = name
            n_sources += 1
            if op.startswith("QueueDequeue"):
                queues.add(name)
            trail.append(Step(b.line, name, op, "pass", "data source"))
        elif op in PLACEHOLDERS and op not in opts.keep_ops and not _placeholder(b, role, found, ph, trail, opts):
            pass
        else:
            if _fp_node(b, name, op, c, src, fed_ph, opts, found, trail, data, ph, queue_first, pipeline, queues):
                return found, trail
        # Would a later node change the answer? Only one of these ops could: ask the byte search.
        if ahead is None or b.end <= wait_until:
            continue
        wanted = _still_wanted(found, opts, n_sources, ph, queue_first, pipeline, queues)
        if wanted is None:
            continue
        nxt = ahead.next_op(b.end, wanted)
        if nxt is None:
            trail.append(Step(b.line, name, op, "pass", "a byte search of the rest of the file finds no node that could change the answer"))
            break
        wait_until = nxt
    final = [blk for q, blk in queue_first.items() if q not in pipeline] or list(queue_first.values())
    if final:
        found["dataflow"] = min(final, key=lambda blk: blk.start)
        trail.append(Step(found["dataflow"].line, found["dataflow"].name or "", found["dataflow"].op, "chosen",
                          "first compute op fed by the last queue of the input pipeline"))
    return found, trail


def _placeholder(b: Block, role: Callable[[Block], Tuple[bool, str]], found: Dict[str, Any], ph: Set[str], trail: Trail, opts: Options) -> bool:
    """Handle a placeholder; False when it is settled here (skipped), True to go on as a node."""
    if found["placeholder"] is not None or opts.rule == "doc":
        trail.append(Step(b.line, b.name or "", b.op, "skip", "catalog: inputs"))
        return False
    holds, why = role(b)
    if holds:
        ph.add(b.name or "")
        trail.append(Step(b.line, b.name or "", b.op, "pass", why or "a placeholder that feeds data"))
    else:
        trail.append(Step(b.line, b.name or "", b.op, "skip", why))
    return False


def _fp_node(b, name, op, c, src, fed_ph, opts, found, trail, data, ph, queue_first, pipeline, queues) -> bool:  # type: ignore[no-untyped-def]
    """Judge one node that is neither a data source nor a placeholder; True when fp is answered."""
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
            return True
    if opts.rule == "doc":
        trail.append(Step(b.line, name, op, "skip", doc_why or ""))
        return False
    if src is None and not fed_ph:
        trail.append(Step(b.line, name, op, "skip", "catalog: %s" % c if c else "not fed by the data source"))
        return False
    if op is not None and op in ENQUEUES and src is not None:
        pipeline.add(src)
        trail.append(Step(b.line, name, op, "skip", "data from %s goes into another queue" % src))
        return False
    if c is None or op in opts.keep_ops:
        if src is not None:
            if src in queues:
                data[name] = src  # to see whether this data goes into another queue
                if src not in queue_first:
                    queue_first[src] = b
                    why = "first compute op fed by queue %s (kept until the pipeline is known)" % src
                    trail.append(Step(b.line, name, op, "pass", why))
                return False
            found["dataflow"] = b
            trail.append(Step(b.line, name, op, "chosen", "first compute op fed by the data source %s" % src))
            return True
        found["placeholder"] = b
        ph.clear()  # only the first op fed by a placeholder matters
        trail.append(Step(b.line, name, op, "pass", "first compute op fed by a placeholder (kept in case no data source exists)"))
        return False
    if op in METADATA:
        trail.append(Step(b.line, name, op, "skip", "reads only the shape (or presence) of the data"))
        return False
    if c in _PROPAGATING or c == "added by --skip-op":
        if src is not None:
            data[name] = src
        else:
            ph.add(name)
        trail.append(Step(b.line, name, op, "pass", "passes the data on (%s)" % c))
        return False
    trail.append(Step(b.line, name, op, "skip", "catalog: %s" % c))
    return False


def _still_wanted(found, opts, n_sources, ph, queue_first, pipeline, queues) -> Optional[Callable[[str], bool]]:  # type: ignore[no-untyped-def]
    """Which later op could still change fp, once the answer is settled up to that (else None).

    - a queue candidate whose queue is not known to feed another queue: only a later enqueue (it
      may feed one) or a non-queue data source (it would win) could change it;
    - a placeholder candidate and no data source yet: only a later data source could;
    - (rule auto) only a doc candidate: a later data source or placeholder could.
    """
    if opts.rule == "doc":
        return None
    kept = opts.keep_ops
    if n_sources > len(queues):
        return None  # a non-queue source met: the first op it feeds wins, wherever it is
    if any(q not in pipeline for q in queue_first):
        return lambda op: op not in kept and (op in ENQUEUES or (op in DATA_SOURCES and not op.startswith("QueueDequeue")))
    if n_sources or ph:
        return None  # data met, the first compute op it feeds not yet: read on
    if found["placeholder"] is not None:
        return lambda op: op in DATA_SOURCES and op not in kept
    if opts.rule == "auto" and found["doc"] is not None:
        return lambda op: (op in DATA_SOURCES or op in PLACEHOLDERS) and op not in kept
    return None


def find_fp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _find_fp(g, opts)


def _find_fp(g: GraphFile, opts: Options) -> Answer:
    block_path, heads = operator_layout(g.dialect)
    tf = block_path == ("node",)
    producer: List[Optional[int]] = []

    def role(b: Block) -> Tuple[bool, str]:
        if not producer:
            producer.append(graph_producer(g) if tf else None)
        return _holds_data(g, b, producer[0])

    blocks = iter(g.blocks(block_path, heads))
    with contextlib.ExitStack() as stack:
        ahead = ahead_of(g)
        if ahead is not None:
            stack.callback(ahead.close)
        found, trail = _fp_scan(blocks, opts, role=role, ahead=ahead)
        # Where the step is (step_body, as bp decides). A file with no library has no function
        # to hold it: the top level, and no need to look for gradients.
        no_library = ahead is not None and ahead.no_library() and not found["gap"]
        top_grad = _top_gradients(found, ahead, blocks) if tf and not no_library else True
    ans = _fp_pick(found, trail, opts, g.name, None)
    # The body that holds the training step (the same choice bp makes: step_body).
    body = step_body(top_grad, lambda: training_function(g))
    if body is None:
        return ans
    fname, fblocks = body
    args = _function_args(fblocks)
    f2, t2 = _fp_scan(iter(fblocks), opts, args, role=role)
    sub = _fp_pick(f2, t2, opts, g.name, fname)
    if sub.point is None:
        return ans
    reason = "the training step runs in function %s (it holds the gradients): %s" % (fname, sub.reason)
    return Answer("fp", sub.point, sub.rule, reason, trail + t2)


def _top_gradients(found: Dict[str, Any], ahead: Optional[_Ahead], rest: Iterator[Block]) -> bool:
    """Whether a top-level node sits in a gradients scope: seen by the pass, else told by the byte
    search, else (no byte search, or a line it cannot judge) read from the remaining blocks."""
    if found["grad"]:
        return True
    if ahead is not None:
        told = ahead.top_gradients(found["pos"])
        if told is not None:
            return told
    for b in rest:  # names and ops only are looked at: bounded
        if in_gradients_scope(b.name or ""):
            return True
    return False


def step_body(top_has_gradients: bool, functions: Callable[[], Optional[Tuple[str, List[Block]]]]) -> Optional[Tuple[str, List[Block]]]:
    """The one rule for where the training step is, shared by fp and bp: the top level when one of
    its nodes is in a gradients scope; else the library function holding the most gradients-scope
    nodes (a ``tf.function`` step, however deep the call chain: Keras ``model.fit`` calls
    ``one_step_on_data`` from ``train_function``); else the top level (an inference graph)."""
    if top_has_gradients:
        return None
    return functions()



def placeholder_role(node: Message, producer: Optional[int]) -> Tuple[bool, str]:
    """Whether a placeholder (or a function's ``_Arg``) feeds the training data, and if not, what
    it is. ``node`` is the parsed node; ``producer`` the GraphDef's ``versions.producer``.

    - DT_RESOURCE: a resource handle (a captured variable, or the iterator a ``tf.function`` takes);
      DT_VARIANT: a dataset, optional or tensor-list handle. Neither is data.
    - ``shape`` with a dimension, or ``unknown_rank``: data (a batch).
    - ``shape {}``: a scalar (a hyper-parameter: learning rate, keep_prob, is_training) from
      producer 22 on. Before, an empty shape meant "unknown": TensorFlow's
      ``core/public/version.h``, GraphDef version 22: "Placeholder now can specify and enforce
      scalar and partial shapes, particularly when restoring a graph from GraphDef produced at
      version 22 or later." There ``_output_shapes`` (written with ``add_shapes``) decides.
    - no ``shape``: ``_output_shapes`` decides; without it, data.
    """
    attrs = {a.get("key"): (a.get("value") or Message()) for a in node.all("attr")}
    dtype = None
    for key in ("dtype", "T"):
        if key in attrs:
            dtype = attrs[key].get("type")
            break
    if dtype == "DT_RESOURCE":
        return False, "a resource handle (a captured variable, or the iterator a tf.function takes), not data"
    if dtype == "DT_VARIANT":
        return False, "a variant handle (a dataset, optional or tensor list), not data"
    shape = attrs["shape"].get("shape") if "shape" in attrs else None
    if shape is not None and (shape.all("dim") or _true(shape.get("unknown_rank"))):
        return True, "a placeholder that feeds data (it has a batch dimension)"
    if shape is not None and (producer is None or producer >= 22):
        return False, "a scalar placeholder (a hyper-parameter such as a learning rate, not data)"
    # An old empty shape (unknown), or no shape: what the writer inferred, if it wrote it.
    out = attrs.get("_output_shapes")
    shapes = (out.get("list") or Message()).all("shape") if out is not None else []
    if node.get("op") in ("_Arg", "_DeviceArg"):
        holds = not shapes or bool(shapes[0].all("dim")) or _true(shapes[0].get("unknown_rank"))
        what = "an argument the caller hands in (_Arg)"
        return holds, what + (" that feeds data" if holds else ": a scalar, not data")
    if shapes:
        s0 = shapes[0]
        if s0.all("dim") or _true(s0.get("unknown_rank")):
            return True, "a placeholder that feeds data (_output_shapes has a dimension)"
        return False, "a scalar placeholder (_output_shapes is a scalar: a hyper-parameter, not data)"
    if shape is not None:
        return True, "a placeholder of unknown shape (an empty shape before GraphDef version 22)"
    return True, "a placeholder of unknown shape"


def _true(v: Any) -> bool:
    return v in ("true", "True", "t", 1)


def _holds_data(g: GraphFile, b: Block, producer: Optional[int]) -> Tuple[bool, str]:
    """:func:`placeholder_role` of a block, parsed from the file."""
    from ._errors import PbtxtError

    try:
        node = g.parse(b, max_bytes=1 << 20)[0].value
    except PbtxtError:
        return True, "a placeholder (too big to read: kept)"
    return placeholder_role(node, producer)


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
        trail.append(Step(b.line, b.name or "", b.op, "chosen", reason))
    return Answer("fp", _point("fp", b, used, file, fn), used, reason, trail)


def _op(b: Block) -> Optional[str]:
    op = b.op
    return op[3:] if op is not None and op.startswith("ge:") else op  # GE's ONNX view: "ge:Conv2D"


def _point(kind: str, b: Block, rule: str, file: str, fn: Optional[str]) -> Point:
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
            trail.append(Step(b.line, name, b.op, "skip", "not in a gradients scope"))
            continue
        any_grad = True
        c = cat.category(_op(b))
        if c is not None:
            trail.append(Step(b.line, name, b.op, "skip", "catalog: %s" % c))
            continue
        if rule != "doc" and _shape_only(name, back, memo):
            trail.append(Step(b.line, name, b.op, "skip", "computes only from constants and shapes"))
            continue
        trail.append(Step(b.line, name, b.op, "chosen", "last op in a gradients scope that computes"))
        return b, trail, True
    return None, trail, any_grad


def find_bp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _find_bp(g, opts)


def _find_bp(g: GraphFile, opts: Options) -> Answer:
    rule = "doc" if opts.rule == "doc" else "dataflow"
    block_path, heads = operator_layout(g.dialect)
    # Backward, read names and ops only: most of a long tail is never a candidate, and a NoOp
    # like `init` has 100,000+ inputs. The few blocks whose inputs matter are read again.
    light = frozenset(h for h in heads if h in ("name", "op", "type", "op_type"))
    b, trail, any_grad = _bp_scan(reverse_blocks(g, block_path, light), opts, rule, lambda blk: _inputs_again(g, blk, heads))
    if b is not None:
        return Answer("bp", _point("bp", b, rule, g.name, None), rule, "last op in a gradients scope that computes", trail)
    body = step_body(any_grad, lambda: training_function(g)) if block_path == ("node",) else None
    if body is not None:
        fname, fblocks = body
        b2, t2, _ = _bp_scan(reversed(fblocks), opts, rule)
        if b2 is not None:
            reason = "the training step runs in function %s (it holds the gradients)" % fname
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


def format_trail(trail: List[Step]) -> List[str]:
    """The trail as lines (long runs of skips are already collapsed by :class:`Trail`)."""
    return [_fmt_step(st) for st in trail]


def _fmt_step(s: Step) -> str:
    if s.verdict == "more":
        return "  ... %d more: %s (lines %d-%d)" % (s.count, s.why, s.line, s.upto)
    mark = {"skip": "skip  ", "pass": "pass  ", "chosen": "CHOSEN"}[s.verdict]
    return "%s line %-7d %s (%s): %s" % (mark, s.line, s.name, s.op, s.why)
