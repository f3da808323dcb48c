"""A neighbourhood's searches in a binary GraphDef (the wire lane's ``find_blocks`` and
``read_near``): blocks found by one fixed-string grep for names, each hit proved a ``name`` or
``input`` field of a top-level node by the length prefixes around it, and the nodes of a window
read near an offset. Only the found blocks' places are given: the rules read them
(``fpbp._hood_find``).

Boundaries of top-level fields met by a walk, about one a MB, are kept on the lane (:class:`Marks`)
for the next hop (and the centre's search before them): each walk starts at the last one before
its hit, so the hops walk the length prefixes about once between them, not once each."""
from __future__ import annotations

import bisect
from typing import Any, Callable, FrozenSet, Iterator, List, Optional, Tuple

from ._wire_marks import SPLIT_MIN, far_marks
from ._wire_seek import NAME, NODE, Field, Malformed, TopWalk, node_field
from .._model import Block
from ..parallel import _grep as _search
from ..parallel._grep import ere, folded
from ..source._lane import Found, Named, NameQuery, Near, Unplaced

INPUT = 3  # NodeDef.input
_MARK = 1 << 20
_MARK_EVERY = 1 << 20
WINDOW = 1 << 16  # (at most, each side: a binary graph's nodes are each decoded, fewer of them)


def producer(inp: str) -> str:
    """The node an ``input`` names (``^x``, ``x:1``: ``x``)."""
    return inp[1:].split(":", 1)[0] if inp.startswith("^") else inp.split(":", 1)[0]


class Marks:
    """The node boundaries known in one binary graph, in order: 0, and the checkpoints of the
    backward index bp built for it, when ``cache`` holds it (the report's hits near bp are then
    walked to from close by, not from the start); more are added as walks meet them."""

    __slots__ = ("g", "at")

    def __init__(self, g: Any, cache: Any) -> None:
        from ._wire_index import load_index

        self.g = g
        try:
            index = load_index(cache.read("wire-index-node") if cache is not None else None, ("node",))
        except OSError:
            index = None
        self.at: List[int] = [0] if index is None else [0] + sorted(o for o, f in zip(index.offs, index.fids) if f == -1 and o > 0)

    def reach(self, off: int) -> None:
        """Bring the boundaries known near ``off``: a hit far past the last is walked to by
        parallel parts (``_wire_marks``), not one field after another from there."""
        from ..parallel._cores import usable_cores

        marks = self.at
        if off - marks[-1] > SPLIT_MIN:
            marks.extend(far_marks(self.g.read_at, self.g.size or 0, marks[-1], off, _MARK, usable_cores()))


class _Tops:
    """The top-level field that holds each hit of a search (hits in file order), walked by the
    length prefixes from the last boundary known before it (:class:`Marks`, kept up to date)."""

    __slots__ = ("g", "marks", "walk", "last")

    def __init__(self, g: Any, marks: Marks) -> None:
        self.g = g
        self.marks = marks
        self.walk: Optional[TopWalk] = None
        self.last: Optional[Field] = None

    def at(self, off: int) -> Optional[Field]:
        last = self.last
        if last is not None and last.tag <= off < last.end:
            return last
        at = self.marks.at
        self.marks.reach(off)
        m = at[bisect.bisect_right(at, off) - 1]
        walk = self.walk
        if walk is None or walk.pos > off or m > walk.pos:
            walk = self.walk = TopWalk(self.g.read_at, self.g.size or 0, m)
        while walk.pos + _MARK < off and walk.holding(walk.pos + _MARK) is not None:
            if walk.pos > at[-1]:
                at.append(walk.pos)
        self.last = walk.holding(off)
        return self.last


def hood_blocks(
    g: Any, marks: Marks, grep: str, opts: Tuple[str, ...] = ("-F",), known: Optional[Callable[[int], bool]] = None,
    upto: Optional[int] = None,
) -> Found:
    """A hop's search in a binary GraphDef (``upto``: in its first bytes only; ``known(offset)``:
    whether a hit lies in a block read already, left alone)."""
    size = g.size or 0

    def find(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Block]:
        tops: List[Field] = []
        walk = _Tops(g, marks)
        try:
            pattern = "\n".join(sorted(want | cons))
            hits = (
                _search._grep(grep, g, 0, pattern, opts=opts) if upto is None or upto >= size
                else _search._grep_range(grep, g, 0, upto, pattern, opts)
            )
            for off, _ in hits:
                if (known is not None and known(off)) or not _may_name(g, off, want, cons):
                    continue  # (no name or input field there: not walked to)
                top = walk.at(off)
                if top is None or top.number != NODE or (tops and tops[-1] == top):
                    continue
                f = node_field(g.read_at, top, off)
                if f is None or f.number not in (NAME, INPUT):
                    continue
                v = g.read_at(f.start, f.end - f.start).decode("utf-8", "surrogateescape")
                if (f.number == NAME and v in want) or (f.number == INPUT and producer(v) in cons):
                    tops.append(top)
                    yield Block(("node",), top.start, top.end, 0, 0, ())  # (lazily: the centre's search stops at its first)
        except Malformed:
            raise Unplaced("a binary graph whose fields do not chain") from None

    return find


LIBRARY = 2  # GraphDef.library


NEAR_MAX = 1 << 15  # close names read at most (then the search goes on without their pieces)


def named_blocks(g: Any, marks: Marks, grep: str, query: NameQuery) -> Iterator[Named]:
    """The search of :meth:`WireLane.find_named <pbtxt_scan.wire._lane.WireLane.find_named>`: one
    ``grep -E`` for the needles (and the pieces of the close names, in any case), each hit walked
    to the node field that holds it; a node's ``name`` field the query keeps is a node, another a
    close name (the first :data:`NEAR_MAX`), and an exact name's bytes in the ``library`` are
    ``elsewhere`` (read for them)."""
    wanted = set(query.needles) if query.exact else None
    exact = frozenset(query.needles)
    walk = _Tops(g, marks)
    seen: Optional[Field] = None
    start, near = 0, 0
    while True:
        pats = [ere(n) for n in query.needles] + [folded(p) for p in query.near]
        hits = _search._grep(grep, g, start, "|".join(pats), opts=("-E", "--line-buffered") if query.exact else ("-E",))
        try:
            for off, text in hits:
                is_near = text.decode("utf-8", "surrogateescape") not in exact
                if query.exact and not is_near and not _may_name(g, off, exact, frozenset()):
                    continue  # (an exact name's bytes that begin no name field)
                top = walk.at(off)
                if top is None or top == seen:
                    continue
                if top.number != NODE:
                    if top.number == LIBRARY and not is_near and wanted is not None:
                        yield Named("elsewhere", text.decode("utf-8", "surrogateescape"))
                    continue
                f = node_field(g.read_at, top, off)
                if f is None or f.number != NAME:
                    continue
                seen = top
                name = g.read_at(f.start, f.end - f.start).decode("utf-8", "surrogateescape")
                if not query.keep(name):
                    near += 1
                    if near > NEAR_MAX and query.near:
                        start, query = top.end, query._replace(near=())  # (the next node on, without them)
                        break
                    yield Named("near", name)
                    continue
                yield Named("node", name, Block(("node",), top.start, top.end, 0, 0, ()))
                if wanted is not None:
                    wanted.discard(name)
                    if not wanted:
                        return
            else:
                return
        except Malformed:
            raise Unplaced("a binary graph whose fields do not chain") from None
        finally:
            close = getattr(hits, "close", None)
            if close is not None:
                close()


_NAME_TAG, _INPUT_TAG = 0x0A, 0x1A  # NodeDef.name and NodeDef.input, length-delimited


def _may_name(g: Any, off: int, want: FrozenSet[str], cons: FrozenSet[str]) -> bool:
    """Whether a raw hit at ``off`` may lie in a ``name`` field naming one of ``want`` or an
    ``input`` field naming one of ``cons``, by the bytes around it alone: such a field's value
    starts at the hit, one byte before it (``^x``: no name holds a ``^``) or one byte after it
    (grep's match began at the length's last byte, which may be a name's character; no tag is,
    so no match spans one). A hit that fails is no such field's first match, and a field's
    other matches follow its first: only hits that pass need the walk that proves them."""
    lo = max(0, off - 12)
    head = g.read_at(lo, off + 2 - lo)
    for s in (off, off + 1, off - 1):
        k = s - lo  # (the value's first byte in head)
        if k < 2 or k > len(head) or (s == off - 1 and head[k:k + 1] != b"^"):
            continue
        n, shift, j = 0, 0, k - 1  # the length: a varint that ends at k - 1, read backward
        if head[j] >= 0x80:
            continue
        while j > 0 and head[j - 1] >= 0x80 and k - j < 5:
            j -= 1
        for b in head[j:k]:
            n |= (b & 0x7F) << shift
            shift += 7
        if j < 1 or head[j - 1] not in (_NAME_TAG, _INPUT_TAG):
            continue
        v = g.read_at(s, n).decode("utf-8", "surrogateescape")
        if len(v) != n:
            continue
        if (head[j - 1] == _NAME_TAG and v in want) or (head[j - 1] == _INPUT_TAG and producer(v) in cons):
            return True
    return False


def read_near(
    g: Any, rescan: Callable[[Block, FrozenSet[str]], List[Block]], marks: Marks, *, lo: int, hi: int, at: int,
    heads: FrozenSet[str],
) -> Optional[Near]:
    """The nodes from the one that holds ``lo`` (walked to by the length prefixes from the last
    boundary known before it) to the one that holds ``hi``, at least to the node at ``at``, each
    side at most :data:`WINDOW` from ``at``; ``None`` if the fields do not chain there."""
    lo, hi = max(lo, at - WINDOW), min(hi, at + WINDOW)
    marks_at = marks.at
    size = g.size or 0
    lo = max(0, min(lo, at))
    marks.reach(lo)
    m = marks_at[bisect.bisect_right(marks_at, lo) - 1]
    walk = TopWalk(g.read_at, size, m)
    start: Optional[int] = None
    end = m
    blocks: List[Block] = []
    try:
        while end < size and (end <= max(hi, at) or start is None):
            top = walk.holding(end)
            if top is None:
                break
            if top.tag - m >= _MARK_EVERY and top.tag > marks_at[-1]:
                marks_at.append(top.tag)
                m = top.tag
            end = top.end
            if top.end <= lo:
                continue
            if start is None:
                start = top.tag
            if top.number == NODE:
                got = rescan(Block(("node",), top.start, top.end, 0, 0, ()), heads)
                if len(got) != 1:
                    return None
                blocks.append(got[0])
    except Malformed:
        return None
    return Near(None if start is None else (start, end), blocks)
