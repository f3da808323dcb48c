"""Top-level field boundaries far into a binary GraphDef, walked in parallel parts and joined
(``TopWalk`` walks the length prefixes one field after another: 1 s a GB on one core).

Part ``k`` of ``[start, stop)`` is walked by its own worker from ``LEAD`` bytes before its cut, a
byte that need not be a boundary: where the fields do not chain from there it starts again one
byte on. Each part reports the first boundary of its walk at or after its cut, boundaries about a
``mark`` apart, and the first at or after the next cut. The first part starts at a known boundary,
so its walk is the file's. A later part's is the file's too when its first boundary is the one
the part before it ended at: a walk's next boundary is fixed by where it stands, so two walks that
meet at a boundary go on as one. A part that does not meet the part before it (a field longer
than the lead, bytes that chain a false way past the cut) ends the joined walk there: what comes
after is walked one field after another, as without workers. The answer never depends on the
parts: only the time does.
"""
from __future__ import annotations

from typing import Callable, List, Tuple

from ._wire_seek import Malformed, TopWalk

ReadAt = Callable[[int, int], bytes]

SPLIT_MIN = 64 << 20  # a shorter walk is not split: starting workers costs more than it saves
LEAD = 1 << 16  # bytes walked before a cut, for a part's walk to meet the file's
_TRIES = 256  # starts tried in a part's lead before it gives up


def far_marks(read_at: ReadAt, size: int, start: int, stop: int, mark: int, jobs: int) -> List[int]:
    """Boundaries after the known boundary ``start``, about ``mark`` bytes apart, up to the last at
    or before ``stop`` that the joined parts prove, in order; ``[]`` when the walk is too short
    to split, there is one core, or no worker could start. :class:`Malformed` if the fields do not
    chain on the file's own walk."""
    from ..parallel._pool import Pool, PoolError, can_fork

    parts = min(jobs, 16, (stop - start) // SPLIT_MIN)
    if parts < 2 or not can_fork():
        return []
    cuts = [start + (stop - start) * k // parts for k in range(parts)] + [stop]

    def part(k: int) -> Tuple[int, List[int], int, bool]:
        return _part(read_at, size, cuts[k], cuts[k + 1], mark, k == 0)

    try:
        with Pool(parts, [part]) as pool:
            got = list(pool.map(part, list(range(parts)), ahead=parts))
    except PoolError:
        return []
    out: List[int] = []
    at = start  # the file's boundary the next part must meet
    for first, marks, end, broken in got:
        if first != at:
            break
        if broken:
            raise Malformed("the fields do not chain")
        out += marks
        at = end
    return out


def _part(read_at: ReadAt, size: int, cut: int, stop: int, mark: int, known: bool) -> Tuple[int, List[int], int, bool]:
    """(the walk's first boundary at or after ``cut``, boundaries ``mark`` apart from there, the
    first at or after ``stop``, whether the fields stopped chaining after ``cut``); ``known``:
    ``cut`` is a boundary (no lead). A part whose lead finds no walk reports ``-1``."""
    s = cut if known else max(0, cut - LEAD)
    for _ in range(1 if known else _TRIES):
        if not known:
            s = _node_like(read_at, s, cut)
            if s < 0:
                break
        walk = TopWalk(read_at, size, s)
        marks: List[int] = []
        first = cut if known else -1
        try:
            first = _next_boundary(walk, cut)
            while walk.pos + mark < stop and walk.holding(walk.pos + mark) is not None:
                marks.append(walk.pos)
            return first, marks, _next_boundary(walk, stop), False
        except Malformed:
            if known or walk.pos >= cut + LEAD:
                # (the file's own walk, or one that went far: the part before says which)
                return first, marks, walk.pos, True
            s += 1  # (a false start: it stopped chaining soon)
    return -1, [], -1, False


def _node_like(read_at: ReadAt, s: int, cut: int) -> int:
    """The first byte at or after ``s`` (and before ``cut``) that starts what looks like a node:
    its tag, a length, and a NodeDef's ``name`` tag; ``-1`` if none does. (Any byte would do,
    but a walk started elsewhere mostly goes a false way first.)"""
    while s < cut:
        buf = read_at(s, min(cut - s, 1 << 16) + 12)
        k = buf.find(b"\x0a")
        while 0 <= k < cut - s:
            j = k + 1
            while j < len(buf) and buf[j] >= 0x80 and j - k < 6:
                j += 1
            if j + 1 < len(buf) and buf[j + 1] == 0x0A:
                return s + k
            k = buf.find(b"\x0a", k + 1)
        s += min(cut - s, 1 << 16)
    return -1


def _next_boundary(walk: TopWalk, at: int) -> int:
    """The walk's first boundary at or after ``at`` (the file's end if it ends first)."""
    if walk.pos >= at:
        return walk.pos
    f = walk.holding(at)
    if f is None:
        return walk.pos
    return at if f.tag == at else f.end
