"""Where to cut a file into chunks for the workers: one planner for every split.

The planner picks target offsets about one chunk apart and asks the caller's *finder* for the
first split point at or after each (a line start where a chunk may begin: a top-level opener for
``graph._parallel``, an op opener inside the graph block for ``ge._split``; what makes one sound is
the caller's). :func:`search` is the usual finder's loop: a pattern looked for in the file window
by window.
"""
from __future__ import annotations

from typing import Callable, List, Optional

MIN_SPLIT = 1 << 20  # chunks are at least this big (smaller ones cost more to hand out than to scan)
MAX_SPLIT = 16 << 20  # ... and at most this big (a chunk's result is held whole)
CHUNKS_PER_JOB = 8  # enough chunks that the last one to finish leaves little idle time

#: ``finder(t, limit)``: the first split point in ``[t, limit)``, or None.
Finder = Callable[[int, int], Optional[int]]


def chunk_bytes(size: int, jobs: int, *, split_bytes: Optional[int] = None) -> int:
    """The target chunk size for a file of ``size`` bytes on ``jobs`` processes (``split_bytes``:
    this size instead, so that the tests' small files really split)."""
    return split_bytes or max(MIN_SPLIT, min(MAX_SPLIT, size // (jobs * CHUNKS_PER_JOB)))


def plan(size: int, jobs: int, finder: Finder, *, window: Optional[int] = None, split_bytes: Optional[int] = None) -> Optional[List[int]]:
    """Chunk boundaries ``[0, b1, ..., size]``, or None when there would be fewer than two chunks.

    Each boundary is the first split point in a window of ``window`` bytes (default: a chunk)
    after a target, the targets one chunk past the boundary before; a window without one moves the
    target a chunk on."""
    split = chunk_bytes(size, jobs, split_bytes=split_bytes)
    span = split if window is None else min(split, window)
    bounds = [0]
    t = split
    while t < size:
        b = finder(t, min(size, t + span))
        if b is None:
            t += split
            continue
        bounds.append(b)
        t = b + split
    if len(bounds) < 2:
        return None
    bounds.append(size)
    return bounds


def search(
    read_at: Callable[[int, int], bytes], t: int, limit: int, find: Callable[[bytes], int], *, over: int,
    first: int = 1 << 16, step: int = 1 << 20,
) -> Optional[int]:
    """The first split point in ``[t, limit)``: ``find(data)`` is the index in ``data`` of the
    ``\\n`` that ends the line before a split point (-1: none), ``data`` being the file's bytes
    from ``t - 1`` on. Read ``first`` bytes first (a node-dense file has a split point within 1 KB),
    then ``step`` at a time, each read ``over`` bytes longer (a match cut by a read's end is found
    whole)."""
    at = t - 1
    n = first
    while at + 1 < limit:
        want = min(n, limit - at) + over
        data = read_at(at, want)
        i = find(data)
        if i >= 0:
            b = at + i + 1
            return b if b < limit else None
        if len(data) < want:
            return None  # (the end of the file)
        at += n
        n = step
    return None
