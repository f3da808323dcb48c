"""bp_point: the last op of backward propagation, read backward from the end of the file."""
from __future__ import annotations

import collections
import re
from typing import Callable, Deque, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Set

from ._answers import _at, _in_units, Answer, Options, Step, Trail, _op, _point, _producer
from ._body import called_function, function_body, step_body, training_function
from ._catalog import CALLS, METADATA, in_gradients_scope
from ..graph._dialect import operator_layout
from ..graph._input import GraphFile, Source, opened
from .._model import Block
from ..graph._reverse import reverse_blocks


class _Backward:
    """Blocks in reverse order, with look-up of names not yet reached (read ahead, bounded).

    Producers come before their consumers in a GraphDef, so a look-up reads ahead; the blocks
    already handed out are forgotten after ``recent`` more, keeping memory flat on long tails.
    """

    __slots__ = ("_it", "inputs", "_ahead", "_recent", "seen", "_window", "_keep", "_recent_heads")

    def __init__(
        self,
        it: Iterator[Block],
        *,
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


# Ops whose consumer comes before them in the file: a while loop's back edge (NextIteration ->
# Merge). A backward read meets their consumer after them, so they are taken as live.
_BACK_EDGES = frozenset(("NextIteration", "RefNextIteration"))
_DEAD = "nothing that runs uses its result (TensorFlow prunes it)"
_NET = "last op in a gradients scope that computes (nothing that runs uses any: the answer reading gradients scopes alone)"


class _Live:
    """Which gradients-scope nodes run, read backward (consumers come after their producers).

    ``used`` holds the gradients-scope names that a live node met so far names as an input; a
    name is dropped once its node is passed. A node outside every gradients scope is live (the
    optimizer, summaries, clipping...); a gradients-scope node is live iff its name is in
    ``used`` (or it is a loop's back edge), and only a live one adds its inputs. ``inputs_of``
    gives a block's inputs, or only those that may be in a gradients scope (it may look at the
    block's bytes first, so that the tail's other blocks are not read again).
    """

    __slots__ = ("used", "_inputs")

    def __init__(self, inputs_of: Callable[[Block], List[str]]) -> None:
        self.used: Set[str] = set()
        self._inputs = inputs_of

    def visit(self, b: Block, grad: bool) -> bool:
        """Whether ``b`` runs (``grad``: it is in a gradients scope), noting what it uses."""
        if grad:
            name = b.name or ""
            live = name in self.used or _op(b) in _BACK_EDGES
            self.used.discard(name)
            if not live:
                return False
        for inp in self._inputs(b):
            p = _producer(inp.lstrip("^")) or ""  # (data and control inputs alike)
            if in_gradients_scope(p):
                self.used.add(p)
        return True


class _Inside(NamedTuple):
    """bp inside a called function: its block, the function, and the trail read there."""

    block: Block
    function: str
    trail: List[Step]


class _Found(NamedTuple):
    """What one backward read found: bp's block (or ``None``), the trail, whether any node was in
    a gradients scope, and why the block is bp."""

    block: Optional[Block]
    trail: List[Step]
    any_grad: bool
    why: str


def _bp_scan(
    blocks: Iterator[Block],
    opts: Options,
    rule: str,
    *,
    inputs_of: Optional[Callable[[Block], List[str]]] = None,
    gradient_inputs: Optional[Callable[[Block], List[str]]] = None,
    descend: Optional[Callable[[Block], Optional[_Inside]]] = None,
) -> _Found:
    """bp read backward: the first live gradients-scope node that computes. ``descend``: a call
    that takes a gradient (the backward function of a ``tf.function`` called in the step) is
    answered inside the function it calls (or ``None``)."""
    cat = opts.catalog
    back = _Backward(blocks, inputs_of=inputs_of)
    live = None if rule == "doc" else _Live(gradient_inputs or back.inputs)
    memo: Dict[str, bool] = {}
    trail = Trail()
    any_grad = False
    net: Optional[Block] = None  # the first dead candidate: the answer if none runs
    read = net_read = 0  # blocks read, and read when `net` was found
    end = 0  # where the read began (the first block's end)
    for b in back:
        name = b.name or ""
        read += 1
        end = end or b.end
        if net is not None and (read - net_read > max(_NET_BLOCKS, net_read) or net.start - b.end > max(_NET_BYTES, end - net.start)):
            # A live candidate this far before a dead one is unlikely (optimizers apply the
            # gradients next to them); reading on could mean the whole file (the gradients may be
            # fetched, not consumed, or, as in a bare gradients graph, used by nothing).
            trail.append(Step(_at(b), name, b.op, "pass", "no op that runs within %d blocks before it: the search stops" % (read - net_read)))
            break
        grad = in_gradients_scope(name)
        runs = live is None or live.visit(b, grad)
        if not grad:
            if descend is not None and runs and _op(b) in CALLS:
                inside = descend(b)
                if inside is not None:
                    ib, fname, itrail = inside.block, inside.function, inside.trail
                    why = "the call %s takes a gradient: the backward pass of function %s runs in it" % (name, fname)
                    trail.append(Step(_at(b), name, b.op, "pass", why))
                    trail.extend(itrail)
                    return _Found(ib, trail, True, "%s; in it, the last op in a gradients scope that computes" % why)
            trail.append(Step(_at(b), name, b.op, "skip", "not in a gradients scope"))
            continue
        any_grad = True
        c = cat.category(_op(b))
        if c is not None:
            trail.append(Step(_at(b), name, b.op, "skip", "catalog: %s" % c))
            continue
        if not runs and net is not None:
            trail.append(Step(_at(b), name, b.op, "skip", _DEAD))
            continue
        if rule != "doc" and _shape_only(name, back, memo):
            trail.append(Step(_at(b), name, b.op, "skip", "computes only from constants and shapes"))
            continue
        if not runs:
            net, net_read = b, read
            trail.append(Step(_at(b), name, b.op, "skip", _DEAD))
            continue
        trail.append(Step(_at(b), name, b.op, "chosen", "last op in a gradients scope that computes"))
        return _Found(b, trail, True, "last op in a gradients scope that computes")
    if net is not None:
        trail.append(Step(_at(net), net.name or "", net.op, "chosen", _NET))
        return _Found(net, trail, True, _NET)
    return _Found(None, trail, any_grad, "")


def find_bp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_bp(g, opts))


def _find_bp(g: GraphFile, opts: Options) -> Answer:
    rule = "doc" if opts.rule == "doc" else "dataflow"
    block_path, heads = operator_layout(g.dialect)
    # Backward, read names and ops only: most of a long tail is never a candidate, and a NoOp
    # like `init` has 100,000+ inputs. The few blocks whose inputs matter are read again.
    light = frozenset(h for h in heads if h in ("name", "op", "type", "op_type"))
    into: List[str] = []  # the function a call's backward pass was answered in
    tail = _BackBytes(g)

    def descend(call: Block) -> Optional[_Inside]:
        if rule == "doc" or block_path != ("node",):
            return None
        if not any(in_gradients_scope(_producer(i) or "") for i in _gradient_inputs(g, call, heads)):
            return None
        fname = called_function(g, call)
        body = function_body(g, fname) if fname else None
        if body is None:
            return None
        inside = _bp_scan(body.reversed_blocks(), opts, rule)
        if inside.block is None:
            return None
        into.append(fname)
        return _Inside(inside.block, fname, inside.trail)

    b, trail, any_grad, why = _bp_scan(
        reverse_blocks(g, block_path, light), opts, rule, inputs_of=lambda blk: _inputs_again(g, blk, heads),
        gradient_inputs=lambda blk: _gradient_inputs(g, blk, heads, tail), descend=descend,
    )
    if b is not None:
        return Answer("bp", _point("bp", b, rule, g.name, into[0] if into else None), rule, why, trail)
    body = step_body(any_grad, lambda: training_function(g)) if block_path == ("node",) else None
    if body is not None:
        fname = body.name
        inside = _bp_scan(body.reversed_blocks(), opts, rule)
        b2, t2, why2 = inside.block, inside.trail, inside.why
        if b2 is not None:
            reason = "the training step runs in function %s (it holds the gradients)" % fname
            if why2 == _NET:
                reason += "; " + _NET
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


# What a text block that names a gradients-scope node must hold (see ``_ahead._pattern``):
# ``gradient`` plainly, an escape (a letter of it escaped: a backslash), or a literal split inside
# it (``"gradi" "ents/x"``: a piece ending in a proper prefix of the word, then its quote). Three
# cheap searches (``in`` and a regex with a literal first byte) rather than one alternation.
_SPLIT = re.compile(rb"g(?:r(?:a(?:d(?:i(?:e(?:n)?)?)?)?)?)?[\"']")


def _text_names_gradients(raw: bytes) -> bool:
    return b"gradient" in raw or b"\\" in raw or _SPLIT.search(raw) is not None


_READ = 1 << 20
# How far bp reads back past a candidate that does not run, for one that does (at least; or as
# far again as the read so far): blocks, bytes.
_NET_BLOCKS = 1 << 16
_NET_BYTES = 64 << 20
_INPUT_LINES: Dict[int, "re.Pattern[bytes]"] = {}


class _BackBytes:
    """Block bytes for a backward read, taken from one window read ending at a block's end (the
    next blocks come before it), so the tail costs a read per window, not per block."""

    __slots__ = ("g", "lo", "buf")

    def __init__(self, g: GraphFile) -> None:
        self.g = g
        self.lo = 0
        self.buf = b""

    def get(self, start: int, end: int) -> bytes:
        if not (self.lo <= start and end <= self.lo + len(self.buf)):
            self.lo = max(0, end - _READ)
            self.buf = self.g.read_at(self.lo, end - self.lo)
        return self.buf[start - self.lo : end - self.lo]


def _gradient_inputs(g: GraphFile, b: Block, heads: FrozenSet[str], back: Optional[_BackBytes] = None) -> List[str]:
    """The inputs of ``b`` that may name a gradients-scope node (the liveness read's question),
    cheaply: none when its bytes cannot name one (most of a long tail: ``init``, save/restore);
    else, in the writer layout, its ``input`` lines; else its bytes scanned again.

    The writer layout's lines are taken only when they are all the block's inputs: every
    ``input`` in its bytes is one of those lines (an input field's name is always written
    plainly), and no value is escaped. A line taken that is not an input (another layout) only
    keeps more nodes live, the answer reading gradients scopes alone."""
    size = b.end - b.start
    if size > _READ:
        return _inputs_again(g, b, heads) if _may_name_gradients(g, b) else []
    raw = back.get(b.start, b.end) if back is not None else g.read_at(b.start, size)
    if not g.lane.text:  # (wire format: strings as they are; field names are numbers)
        return _inputs_again(g, b, heads) if b"gradient" in raw else []
    if b"input" not in raw or not _text_names_gradients(raw):
        return []
    rx = _INPUT_LINES.get(b.column)
    if rx is None:
        indent = b" " * (b.column + 1)  # (one level in from the block's field name)
        rx = _INPUT_LINES[b.column] = re.compile(rb"^" + indent + rb'input: "([^"\\\n]*)"$', re.M)
    found = rx.findall(raw)
    if len(found) != raw.count(b"input"):
        return _inputs_again(g, b, heads)
    return [v.decode("utf-8", "surrogateescape") for v in found]


def _may_name_gradients(g: GraphFile, b: Block) -> bool:
    """Whether a large block may name a gradients-scope node among its inputs, from its bytes
    read through ``g`` in 1 MiB pieces (a Const's tensor_content can be 100 MB)."""
    inp = not g.lane.text  # (field names are numbers there, strings as they are)
    got_grad = False
    pos, tail = b.start, b""
    while pos < b.end:
        chunk = g.read_at(pos, min(_READ, b.end - pos))
        if not chunk:
            break
        buf = tail + chunk
        inp = inp or b"input" in buf
        got_grad = got_grad or (b"gradient" in buf if not g.lane.text else _text_names_gradients(buf))
        if got_grad and inp:
            return True
        pos += len(chunk)
        tail = buf[-16:]
    return False
