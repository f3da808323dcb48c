"""bp's backward read of the blocks: look-ups of names not yet reached (read ahead, bounded),
shape arithmetic told from data, and a block's inputs read again from its bytes only where they may
name a gradient (the lane tells, ``Lane.inputs_naming``)."""
from __future__ import annotations

import collections
from typing import Callable, Deque, Dict, FrozenSet, Iterator, List, Optional

from ._answers import _op, _producer
from ._catalog import METADATA
from ..graph._input import GraphFile
from .._model import Block


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



def _inputs_again(g: GraphFile, b: Block, heads: FrozenSet[str]) -> List[str]:
    """The inputs of a block read without them: its bytes scanned again."""
    if "input" in (h.name for h in b.heads):
        return b.inputs
    again = g.rescan(b, heads)
    return again[0].inputs if len(again) == 1 else []


_READ = 1 << 20


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


def _gradient_inputs(g: GraphFile, b: Block, heads: FrozenSet[str], back: Optional[_BackBytes] = None, *, every: bool = False) -> List[str]:
    """The inputs of ``b`` that may name a gradients-scope node (the liveness read's question),
    cheaply: none when its bytes cannot name one (most of a long tail: ``init``, save/restore);
    else the ones its lane reads off its bytes (``Lane.inputs_naming``: in the text writer
    layout, its ``input`` lines); else its bytes scanned again. ``every``: all its inputs (the
    same reading, without the gradients test)."""
    size = b.end - b.start
    if size > _READ:
        return _inputs_again(g, b, heads) if every or _may_name_gradients(g, b) else []
    raw = back.get(b.start, b.end) if back is not None else g.read_at(b.start, size)
    got = g.lane.inputs_naming(b, raw, b"gradient", every=every)
    return _inputs_again(g, b, heads) if got is None else got


def _may_name_gradients(g: GraphFile, b: Block) -> bool:
    """Whether a large block may name a gradients-scope node among its inputs, from its bytes
    read through ``g`` in 1 MiB pieces (a Const's tensor_content can be 100 MB), as its lane tells."""
    lane = g.lane
    inp = got_grad = False
    pos, tail = b.start, b""
    while pos < b.end:
        chunk = g.read_at(pos, min(_READ, b.end - pos))
        if not chunk:
            break
        buf = tail + chunk
        inp = inp or lane.may_hold(buf, b"input")
        got_grad = got_grad or lane.may_name(buf, b"gradient")
        if got_grad and inp:
            return True
        pos += len(chunk)
        tail = buf[-16:]
    return False
