"""Reading top-level blocks from the end of a file backward (for bp), in bounded memory.

Canonical writer output opens every top-level block on a column-0 line ``name {``. Reading chunks
from the end, each such line found starts a *segment* that runs to the next one; the segment is
then scanned by the general validating scanner as a complete sequence of top-level fields. That
check is what makes the shortcut safe rather than assumed: in a valid file, text after a
column-0 token boundary that parses as whole top-level fields is at depth 0. A segment that fails
it (another layout, or a broken file) drops to the index path: one forward pass records each
block's offsets and line in a small cache file (``_cache``: under the user's cache folder, never
beside the input; checksummed, keyed so that an in-place edit misses), and later runs reuse it.

Line numbers when reading backward need the file's total line count: one C-speed newline count,
cached with the same key.
"""
from __future__ import annotations

import array
import itertools
import io
import json
import re
from typing import TYPE_CHECKING, BinaryIO, FrozenSet, Iterator, Optional, Tuple

from . import _cache
from .._errors import PbtxtError
from .._model import Block

if TYPE_CHECKING:
    from ._input import GraphFile

_OPENER = re.compile(rb"\n([A-Za-z_][A-Za-z0-9_]*) [{<]\n")
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


def total_lines(f: BinaryIO, size: int, key: Optional[str]) -> int:
    cached = _cache.read(key, "lines")
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
    _cache.write(key, "lines", json.dumps({"newlines": n}).encode())
    return n


def reverse_blocks(g: "GraphFile", block_path: Tuple[str, ...], heads: FrozenSet[str]) -> Iterator[Block]:
    """The blocks at ``block_path`` from last to first, with lines and heads.

    Top-level blocks (``("node",)``) take the backward shortcut when the layout allows; nested ones
    (GE's ``("graph", "op")``, inside one huge ``graph`` block) always take the index path. A
    stream (stdin, a pipe, gzip) is read backward from its spool. A binary graph is read backward
    through its index of node offsets (``_binary``).
    """
    if g.binary:
        from ..wire._binary import reverse_blocks as wire_reverse

        key = _cache.key_of(g)
        kind = "wire-index-" + ".".join(block_path)
        yield from wire_reverse(g, block_path, heads, lambda: _cache.read(key, kind), lambda data: _cache.write(key, kind, data))
        return
    f, size = g.whole()
    key = _cache.key_of(g)
    if len(block_path) == 1:
        newlines = total_lines(f, size, key)
        done = 0
        try:
            for b in _canonical_reverse(f, size, newlines, block_path[0], heads, g.name):
                done += 1
                yield b
            return
        except _NotCanonical:
            pass
        # The index path hands out the same blocks in the same order: skip those already out.
        yield from itertools.islice(_indexed(g, block_path, heads, key), done, None)
        return
    yield from _indexed(g, block_path, heads, key)


def _canonical_reverse(
    f: BinaryIO, size: int, newlines: int, block_name: str, heads: FrozenSet[str], path: str
) -> Iterator[Block]:
    """Chunks from the end; in each, the region from its first column-0 opener to the region
    already read is verified (as whole top-level fields, by the fast scanner) and its blocks
    handed out last first."""
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
        yield from _region(f, m, seg_end, newlines - lines_after + 1, block_name, heads, path)
        seg_end = m
    if not found_any and size > 0:
        raise _NotCanonical()  # (before reading the whole file as one region)
    if seg_end > 0:
        # Text before the first opener (comments, or a layout we do not know): verify it too.
        yield from _region(f, 0, seg_end, 1, block_name, heads, path)


def _first_opener(buf: bytes, base: int, lo: int, hi: int) -> Optional[int]:
    for m in _OPENER.finditer(buf):
        at = base + m.start() + 1
        if lo <= at < hi:
            return at
    return None


def _region(
    f: BinaryIO, start: int, end: int, first: int, block_name: str, heads: FrozenSet[str], path: str
) -> Iterator[Block]:  # (a reversed list)
    """The blocks of [start, end), last first. ``first``: the file line of byte ``start`` (counted
    from the end, since reading backward never counts the lines before ``start``)."""
    from ..text._canonical import scan_canonical

    try:
        # A region is held whole to be reversed: bounded by _REGION_BLOCKS.
        blocks = list(itertools.islice(
            scan_canonical(_Slice(f, start, end), (block_name,), heads, chunk_size=_CHUNK, display=path, start_offset=start, start_line=first), _REGION_BLOCKS + 1
        ))
    except PbtxtError:
        raise _NotCanonical() from None
    if len(blocks) > _REGION_BLOCKS:
        raise _NotCanonical()
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


def _indexed(g: "GraphFile", block_path: Tuple[str, ...], heads: FrozenSet[str], key: Optional[str]) -> Iterator[Block]:
    """The index path: block offsets from one forward pass (cached), then blocks read backward."""
    kind = "index-" + ".".join(block_path)
    data = _cache.read(key, kind)
    idx = array.array("q")
    if data and len(data) % (8 * 4) == 0:
        idx.frombytes(data)
        if not _plausible(g, idx, block_path[-1]):
            idx = array.array("q")  # (a stale index: build it again)
    if not idx:
        for b in g.blocks(block_path, frozenset()):
            idx.extend((b.start, b.end, b.line, b.column))
        _cache.write(key, kind, idx.tobytes())
    for i in range(len(idx) // 4 - 1, -1, -1):
        start, end, line, col = idx[4 * i : 4 * i + 4]
        got = g.rescan(Block(block_path, start, end, line, col, ()), heads)
        if len(got) != 1:
            raise PbtxtError("the file changed while it was being read", line, col, g.name)
        yield got[0]


def _plausible(g: "GraphFile", idx: "array.array[int]", field: str) -> bool:
    """A cached index still fits the file: its last and a few other blocks start with the field
    name (or an item's ``{``) and end with a closer. A miss rebuilds the index."""
    n = len(idx) // 4
    for i in sorted({0, n // 3, n // 2, (2 * n) // 3, n - 1}):
        start, end = idx[4 * i], idx[4 * i + 1]
        first = g.read_at(start, len(field))
        if not (first == field.encode() or first[:1] in (b"{", b"<")) or g.read_at(end - 1, 1) not in (b"}", b">"):
            return False
    return True
