"""The text lane's backward reading (``TextLane.backward``, for bp): top-level blocks from the end
of a file, in bounded memory.

Canonical writer output opens every top-level block on a column-0 line ``name {``. Reading chunks
from the end, each such line found starts a *segment* that runs to the next one; the segment is
then scanned by the general validating scanner as a complete sequence of top-level fields. That
check is what makes the shortcut safe rather than assumed: in a valid file, text after a
column-0 token boundary that parses as whole top-level fields is at depth 0. A segment that fails
it (another layout, or a broken file) drops to the index path: one forward pass records each
block's offsets and line in a small cache file (the ``cache`` it is given: ``graph._cache``, under
the user's cache folder, never beside the input; checksummed, keyed so that an in-place edit
misses), and later runs reuse it.

Line numbers when reading backward need the file's total line count: one C-speed newline count,
cached with the same key.
"""
from __future__ import annotations

import array
import itertools
import io
import json
import re
from typing import Any, BinaryIO, FrozenSet, Generator, Iterator, NamedTuple, Optional, Tuple, cast

from .._errors import PbtxtError
from .._model import Block
from ..source._lane import strict_of
from ._strict import Met, collecting, last_first

OPENER = re.compile(rb"\n([A-Za-z_][A-Za-z0-9_]*) [{<]\n")  # a column-0 opener (graph._parallel splits at it too)
_CHUNK = 1 << 20
# Blocks one backward region may hold. A region runs from the first column-0 opener in a 1 MiB
# chunk to the region read before (in the writer layout, the ~3,000 nodes of one chunk); sparse
# openers (another layout mixed in) make it longer. Past this many, the index path instead.
_REGION_BLOCKS = 50000


class _Slice(io.RawIOBase):
    """Bytes [start, end) of an open file, read through without loading them."""

    def __init__(self, f: BinaryIO, start: int, end: int) -> None:
        self._f = f
        self._pos = start
        self._end = end

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        left = self._end - self._pos
        if left <= 0:
            return b""
        n = left if n < 0 else min(n, left)
        self._f.seek(self._pos)
        data = self._f.read(n)
        self._pos += len(data)
        return data


class _NotCanonical(Exception):
    pass


class _Reading(NamedTuple):
    """What every region of one backward reading shares: the seekable file, the top-level field
    read, the heads wanted and the name errors give."""

    f: BinaryIO
    field: str
    heads: FrozenSet[str]
    name: str
    top: Any  # the check of the top-level fields (``_strict.TopFields``), or None


def total_lines(f: BinaryIO, cache: Any) -> int:
    """The file's newline count (from ``cache`` when it has it)."""
    cached = cache.read("lines")
    if cached:
        try:
            return int(json.loads(cached)["newlines"])
        except (ValueError, KeyError, TypeError):
            pass  # (a checksum-valid file of another format: count again)
    f.seek(0)
    n = 0
    while True:
        chunk = f.read(_CHUNK * 8)
        if not chunk:
            break
        n += chunk.count(b"\n")
    cache.write("lines", json.dumps({"newlines": n}).encode())
    return n


def reverse_blocks(lane: Any, block_path: Tuple[str, ...], heads: FrozenSet[str], cache: Any) -> Generator[Block, None, None]:
    """The blocks at ``block_path`` from last to first, with lines and heads (``lane``: the
    :class:`~pbtxt_scan.text._lane.TextLane` read; ``cache``: see ``Lane.backward``).

    Top-level blocks (``("node",)``) take the backward shortcut when the layout allows; nested ones
    (GE's ``("graph", "op")``, inside one huge ``graph`` block) always take the index path. A
    stream (stdin, a pipe, gzip) is read backward from its spool.
    """
    store = lane.store
    f, size = store.whole()
    if len(block_path) == 1:
        newlines = total_lines(f, cache)
        done = 0
        try:
            reading = _Reading(f, block_path[0], heads, store.name, lane.top_fields(block_path))
            for b in _canonical_reverse(reading, size, newlines):
                done += 1
                yield b
            return
        except _NotCanonical:
            pass
        # The index path hands out the same blocks in the same order: skip those already out.
        yield from itertools.islice(_indexed(lane, block_path, heads, cache), done, None)
        return
    yield from _indexed(lane, block_path, heads, cache)


def _canonical_reverse(rd: _Reading, size: int, newlines: int) -> Iterator[Block]:
    """Chunks from the end; in each, the region from its first column-0 opener to the region
    already read is verified (as whole top-level fields, by the fast scanner) and its blocks
    handed out last first."""
    f = rd.f
    seg_end = size
    hi = size
    lines_after = 0  # newlines in [seg_end, size)
    found_any = False
    while hi > 0:
        lo = max(0, hi - _CHUNK)
        base = max(0, lo - 1)
        f.seek(base)
        buf = f.read(hi - base + 512)  # overlap past hi, for an opener line cut by the chunk edge
        if lo == 0:
            buf = b"\n" + buf  # the file's first line is a column-0 line too
            base -= 1
        m = _first_opener(buf, base, lo, min(hi, seg_end))
        hi = lo
        if m is None:
            continue  # a block longer than a chunk: the region grows
        found_any = True
        n = _count_newlines(f, m, seg_end)
        lines_after += n
        yield from _region(rd, m, seg_end, newlines - lines_after + 1)
        seg_end = m
    if not found_any and size > 0:
        raise _NotCanonical()  # (before reading the whole file as one region)
    if seg_end > 0:
        # Text before the first opener (comments, or a layout we do not know): verify it too.
        yield from _region(rd, 0, seg_end, 1)


def _first_opener(buf: bytes, base: int, lo: int, hi: int) -> Optional[int]:
    for m in OPENER.finditer(buf):
        at = base + m.start() + 1
        if lo <= at < hi:
            return at
    return None


def _region(rd: _Reading, start: int, end: int, first: int) -> Iterator[Block]:  # (a reversed list)
    """The blocks of [start, end), last first. ``first``: the file line of byte ``start`` (counted
    from the end, since reading backward never counts the lines before ``start``)."""
    from ._canonical import scan_canonical

    # A top-level field the graph has not is refused when the blocks after it are out (not when
    # the region is scanned): bp, which stops at its answer, never meets one before it.
    met = Met()
    # (a _Slice is a file-like, no BinaryIO: reading is all a walk of a slice does)
    scanned = scan_canonical(
        cast(BinaryIO, _Slice(rd.f, start, end)), (rd.field,), rd.heads, chunk_size=_CHUNK, display=rd.name, start_offset=start, start_line=first,
        validate=False,  # (bp's reading: a long literal's escapes are check's, as on the forward lane)
        top=None if rd.top is None else collecting(rd.top, met),
    )
    try:
        # A region is held whole to be reversed: bounded by _REGION_BLOCKS.
        blocks = list(itertools.islice(scanned, _REGION_BLOCKS + 1))
    except PbtxtError:
        raise _NotCanonical() from None
    if len(blocks) > _REGION_BLOCKS:
        raise _NotCanonical()
    if met.found:
        return last_first(reversed(blocks), met, rd.top.strict)
    return reversed(blocks)


def _count_newlines(f: BinaryIO, start: int, end: int) -> int:
    f.seek(start)
    n = 0
    left = end - start
    while left > 0:
        chunk = f.read(min(left, _CHUNK * 8))
        if not chunk:
            break
        n += chunk.count(b"\n")
        left -= len(chunk)
    return n


def _indexed(lane: Any, block_path: Tuple[str, ...], heads: FrozenSet[str], cache: Any) -> Iterator[Block]:
    """The index path: block offsets from one forward pass (cached), then blocks read backward."""
    kind = "index-" + ".".join(block_path)
    data = cache.read(kind)
    idx = array.array("q")
    if data and len(data) % (8 * 4) == 0:
        idx.frombytes(data)
        if not _plausible(lane.store, idx, block_path[-1]):
            idx = array.array("q")  # (a stale index: build it again)
    if not idx:
        strict = strict_of(lane.store)
        skipped = strict.skipped
        for b in lane.blocks(block_path, frozenset()):
            idx.extend((b.start, b.end, b.line, b.column))
        if strict.skipped == skipped:  # (an index read past a top-level field the graph has not, lenient, is not kept)
            cache.write(kind, idx.tobytes())
    for i in range(len(idx) // 4 - 1, -1, -1):
        start, end, line, col = idx[4 * i : 4 * i + 4]
        got = lane.rescan(Block(block_path, start, end, line, col, ()), heads)
        if len(got) != 1:
            raise PbtxtError("the file changed while it was being read", line, col, lane.store.name)
        yield got[0]


def _plausible(store: Any, idx: "array.array[int]", field: str) -> bool:
    """A cached index still fits the file: its last and a few other blocks start with the field
    name (or an item's ``{``) and end with a closer. A miss rebuilds the index."""
    n = len(idx) // 4
    for i in sorted({0, n // 3, n // 2, (2 * n) // 3, n - 1}):
        start, end = idx[4 * i], idx[4 * i + 1]
        first = store.read_at(start, len(field))
        if not (first == field.encode() or first[:1] in (b"{", b"<")) or store.read_at(end - 1, 1) not in (b"}", b">"):
            return False
    return True
