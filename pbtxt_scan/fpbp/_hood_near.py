"""Neighbourhoods read near their centres, then proved complete by one byte search (``_hood``).

TF writes a graph in an order where a node's producers mostly sit just before it and its
consumers just after it, so the blocks within ``window`` bytes of a centre usually hold its whole
neighbourhood. The walk (``_hood.walk``) runs over the blocks read so far (:class:`Known`), and
records what it asked for: the names whose consumers it wanted and the producers it named. A
consumer may sit anywhere in the file, and so may a producer not read yet: one fixed-string grep
over the whole file for all those names at once (every centre's: the report draws two) finds every
block that names them at its ``name:`` or ``input:`` line. Blocks found outside the windows join
the known ones (with the bytes just before a producer found so: its own producers are usually
there), and the walk runs again; a second search is made only for names the first did not cover.
When the walk asks for nothing unsearched, it has met every block a walk over the whole graph
would have met, in the same order: the same Hood (``tests/test_hood.py``, with windows of 0 bytes
up to the whole file).

A producer read in a window is searched for too (in the same pass, or before its block only):
in a graph that names two nodes alike (TensorFlow refuses one) the first is taken, as before.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from .._kit import NamedTuple
from .._model import TF_HEADS, Block, Hood
from ._hood_find import _NAME_OK, UNCOUNTED, Fallback, Rec, _Cache, lane_finder, producer, rec_of
from ..graph._strict import check_one
from ..parallel._grep import _SearchFailed, newlines_to_end

if TYPE_CHECKING:
    from ..graph._input import GraphFile

WINDOW = 1 << 18  # bytes read on each side of a centre (256 KiB: a few hundred nodes of a training graph; a lane may read less)
BEFORE = 1 << 16  # bytes read before a producer found far away (its own producers)

Walk = Callable[[Rec, int, int, Callable[[FrozenSet[str], FrozenSet[str]], Iterable[Rec]]], Hood]


class Known:
    """The blocks read so far, by offset, name and the producers their inputs name; the spans of
    the file read whole (a hit inside one is a block known already); and the lines known: a
    window's blocks have lines counted from the window's first byte (``base``)."""

    __slots__ = ("recs", "by_name", "by_src", "spans", "base")

    def __init__(self) -> None:
        self.recs: Dict[int, Rec] = {}
        self.by_name: Dict[str, List[int]] = {}
        self.by_src: Dict[str, List[int]] = {}
        self.spans: List[Tuple[int, int]] = []
        self.base: Dict[int, int] = {}  # a block's offset -> its window's first byte (its line counted from there)

    def add(self, r: Rec, window: Optional[int] = None) -> None:
        if r.offset in self.recs:
            return
        self.recs[r.offset] = r
        self.by_name.setdefault(r.name, []).append(r.offset)
        for i in r.inputs:
            self.by_src.setdefault(producer(i), []).append(r.offset)
        if window is not None:
            self.base[r.offset] = window

    def cover(self, start: int, end: int) -> None:
        """Mark ``start..end`` read whole (joined with the spans it meets: they stay apart and in order)."""
        spans = self.spans
        k = bisect.bisect_left(spans, (start, start))
        if k > 0 and spans[k - 1][1] >= start:
            k -= 1
        j = k
        while j < len(spans) and spans[j][0] <= end:
            start, end = min(start, spans[j][0]), max(end, spans[j][1])
            j += 1
        spans[k:j] = [(start, end)]

    def covers(self, off: int) -> bool:
        k = bisect.bisect_right(self.spans, (off, 1 << 62)) - 1
        return k >= 0 and self.spans[k][0] <= off < self.spans[k][1]

    def find(self, want: FrozenSet[str], cons: FrozenSet[str]) -> List[Rec]:
        offs: Set[int] = set()
        for n in want:
            offs.update(self.by_name.get(n, ()))
        for n in cons:
            offs.update(self.by_src.get(n, ()))
        return [self.recs[o] for o in sorted(offs)]


class Centre(NamedTuple):
    """A neighbourhood asked for: its node (``rec``, or read at ``offset`` and checked to be
    named ``name``), the line known of it (or ``None``), and the hops up and down."""

    name: str
    offset: int
    line: Optional[int]
    up: int
    down: int
    rec: Optional[Rec] = None


def _inside_one(known: Known, start: int, end: int) -> bool:
    k = bisect.bisect_right(known.spans, (start, 1 << 62)) - 1
    return k >= 0 and known.spans[k][0] <= start and end <= known.spans[k][1]


def near_hoods(
    g: "GraphFile", centres: Sequence[Centre], walk: Walk, *, window: int = WINDOW, limit: int = 1 << 12,
) -> Optional[List[Hood]]:
    """Each centre's Hood (``walk`` given the centre, its hops up and down, and a finder), read
    near the centres (the lane's ``read_near``) and searched once for what lies elsewhere (its
    ``find_blocks``); ``None`` where this cannot be done (a lane that offers neither, a centre
    not found where it was said to be, a name grep -F cannot be trusted with, bytes that do not
    scan, a hit the search cannot place, over ``limit`` blocks found by one search: the walk
    would draw only the first few): then search hop by hop."""
    lane = g.lane
    lines = lane.unit == "line"  # (else positions are offsets: nothing to count)
    cache = _Cache(g)
    known = Known()

    def read(lo: int, hi: int, at: int) -> bool:
        got = lane.read_near(lo, hi, at, TF_HEADS, inside=lambda s, e: _inside_one(known, s, e), cache=cache)
        if got is None:
            return False
        base = got.span[0] if lines and got.span is not None else None
        for b in got.blocks:
            if check_one(g, b, recount=True) is None:
                continue  # (lenient: a block that is no valid node is skipped)
            known.add(rec_of(b), base)
        if got.span is not None:
            known.cover(*got.span)
        return True

    anchors: Dict[int, int] = {}
    recs: List[Rec] = []
    for c in centres:
        if not read(c.offset - window, c.offset + window, c.offset):
            return None
        r = c.rec or known.recs.get(c.offset)
        if r is None or r.name != c.name:
            return None
        known.add(r)
        if c.line is not None:
            anchors[c.offset] = c.line
        recs.append(r._replace(line=UNCOUNTED) if lines else r)
    size = g.size or 0

    searched: Set[str] = set()  # every name searched ("n": as a producer's name, or as a consumer's input)
    as_input: Set[str] = set()  # the names searched as inputs too ("n:..." and "^n")
    while True:
        want: Set[str] = set()
        cons: Set[str] = set()
        for r, c in zip(recs, centres):
            walk(r, c.up, c.down, _asking(known, want, cons, None))
        cons -= as_input
        want -= searched | cons
        unread = {n for n in want if n not in known.by_name}
        if not want and not cons:
            break
        if not all(_NAME_OK.match(n) for n in want | cons):
            return None
        # A producer read already is searched for too, in the same pass: a graph that names two
        # nodes alike (TensorFlow does not) has its first taken, as a walk over the whole file
        # does. Alone, such names are searched for before their first block only.
        hi = size if unread or cons else max(min(known.by_name[n]) for n in want)
        found = _found_elsewhere(g, known, want, cons, upto=hi, limit=limit)
        if found is None:
            return None
        searched.update(want | cons)
        as_input.update(cons)
        for b in found:
            known.add(rec_of(b))
            known.cover(b.start, b.end)  # (a later search's hits inside it are not read again: a NoOp's 150,000 inputs)
            if b.name in unread and not read(b.start - BEFORE, b.start, b.start):
                return None
    if not lines:
        return [walk(r, c.up, c.down, known.find) for r, c in zip(recs, centres)]
    drawn: Set[int] = set()  # (the blocks the walks meet: only their lines are counted)
    for r, c in zip(recs, centres):
        walk(r, c.up, c.down, _asking(known, set(), set(), drawn))
    counted = _lines(g, known, anchors, drawn | {r.offset for r in recs})
    for off in counted:
        known.recs[off] = known.recs[off]._replace(line=counted[off])
    return [walk(r._replace(line=counted[r.offset]), c.up, c.down, known.find) for r, c in zip(recs, centres)]


def _found_elsewhere(g: "GraphFile", known: Known, want: Set[str], cons: Set[str], *, upto: int, limit: int) -> Optional[List[Block]]:
    """The blocks before ``upto`` that one search finds named in ``want`` or naming one of ``cons``
    among their inputs, those inside a span read whole left out; ``None`` where the lane offers no
    search, it cannot place a hit, or it finds over ``limit`` blocks."""
    found: List[Block] = []
    if upto <= 0:
        return found
    search = lane_finder(g, ("node",), upto=upto, known=known.covers)
    if search is None:
        return None
    blocks = search(frozenset(want), frozenset(cons))
    try:
        for b in blocks:
            if not known.covers(b.start):
                found.append(b)
                if len(found) > limit:
                    return None  # (a node with thousands of consumers: hop by hop, each hop stopped when full)
    except (Fallback, _SearchFailed):
        return None
    finally:
        blocks.close()
    return found


def _asking(known: Known, want: Set[str], cons: Set[str], met: Optional[Set[int]]) -> Callable[[FrozenSet[str], FrozenSet[str]], List[Rec]]:
    def find(w: FrozenSet[str], c: FrozenSet[str]) -> List[Rec]:
        want.update(w)
        cons.update(c)
        got = known.find(w, c)
        if met is not None:
            met.update(r.offset for r in got)
        return got

    return find


def _newlines(g: "GraphFile", start: int, end: int) -> int:
    n = 0
    while start < end:
        k = min(1 << 20, end - start)
        n += g.read_at(start, k).count(b"\n")
        start += k
    return n


def _cached_newlines(g: "GraphFile") -> Optional[int]:
    """The file's newline count, if bp's backward reading left it in the cache."""
    import json

    from ..graph import _cache

    try:
        raw = _cache.read(_cache.key_of(g), "lines")
        return int(json.loads(raw)["newlines"]) if raw else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


_WC_MIN = 16 << 20  # (a shorter tail is counted here: starting wc costs more)


def _lines(g: "GraphFile", known: Known, anchors: Dict[int, int], offsets: Set[int]) -> Dict[int, int]:
    """The line of each block at ``offsets``: a window's block from its window's first line, the
    rest each its own; each counted from the nearest line known (an answer's, the file's start,
    or one counted before), backward or forward."""
    need = sorted({known.base.get(o, o) for o in offsets} - set(anchors))
    marks = sorted(anchors.items())
    if not marks or marks[0][0] != 0:
        marks.insert(0, (0, 1))
    total = _cached_newlines(g)
    if total is None and need and need[-1] > (g.size or 0) // 2:
        total = newlines_to_end(g)  # (a late node: counted back from the file's end, the whole file counted by wc)
    if total is not None and marks[-1][0] < (g.size or 0):
        marks.append((g.size or 0, total + 1))  # (the file's end: a late node is counted back from there)
    got = dict(marks)
    for off in need:
        k = bisect.bisect_right(marks, (off, 1 << 62)) - 1
        a_off, a_line = marks[k]
        if k + 1 < len(marks) and marks[k + 1][0] - off < off - a_off:
            b_off, b_line = marks[k + 1]
            n = newlines_to_end(g, off) if b_off >= (g.size or 0) and b_off - off > _WC_MIN else None
            line = b_line - (_newlines(g, off, b_off) if n is None else n)
        else:
            line = a_line + _newlines(g, a_off, off)
        got[off] = line
        bisect.insort(marks, (off, line))
    out: Dict[int, int] = {}
    for o in offsets:
        w = known.base.get(o)
        if o in anchors:
            out[o] = anchors[o]
        elif w is not None:
            in_window = known.recs[o].line
            assert in_window is not None  # (a window's block, on a lane with lines: its line counted from the window's first byte)
            out[o] = got[w] + in_window - 1
        else:
            out[o] = got[o]
    return out
