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

Other layouts have no column-0 opener in a chunk: one node a line, or the whole graph on one line
(``as_one_line``). There a region starts at a *loose* opener, a top-level field's name and ``{`` after
a token boundary (a space, a ``}``...), verified the same way: a loose opener inside a string
literal or a nested message makes the region fail (the lexer's states never merge again on one
line, but through a ``#``: a region whose first line holds one is not taken), and the next is
tried. So a one-line file is read back by blocks too, its cost the tail after the answer.

Line numbers when reading backward need the file's total line count: one C-speed newline count,
cached with the same key (with the last line's characters: a block's column on a one-line file is
counted back from the end).
"""
from __future__ import annotations

import array
import itertools
import io
import json
import re
from typing import Any, BinaryIO, FrozenSet, Generator, Iterator, Optional, Tuple, cast

from .._kit import NamedTuple
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
_TRIES = 4  # loose openers tried in one chunk before its region is let grow to the chunk before
# Bytes that are not UTF-8 continuation bytes: deleting them leaves one byte a character's tail.
_NOT_TAIL = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)
# Outside a string, what opens one, a comment, or the line's end; inside one, what closes it or escapes.
_OUTSIDE = re.compile(rb"[\"'#\n]")
_IN_STRING = {0x22: re.compile(rb'[\\"\n]'), 0x27: re.compile(rb"[\\'\n]")}


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


def total_lines(f: BinaryIO, cache: Any) -> Tuple[int, int]:
    """The file's newline count and its last line's characters (from ``cache`` when it has them)."""
    cached = cache.read("lines")
    if cached:
        try:
            got = json.loads(cached)
            return int(got["newlines"]), int(got["last"])
        except (ValueError, KeyError, TypeError):
            pass  # (a checksum-valid file of another format, or an older one: count again)
    f.seek(0)
    n = last = 0
    while True:
        chunk = f.read(_CHUNK * 8)
        if not chunk:
            break
        k = chunk.count(b"\n")
        n += k
        last = (last if not k else 0) + _chars(chunk[chunk.rfind(b"\n") + 1 :] if k else chunk)
    cache.write("lines", json.dumps({"newlines": n, "last": last}).encode())
    return n, last


def _chars(data: bytes) -> int:
    """The characters of UTF-8 ``data`` (its bytes but continuation bytes), at C speed."""
    return len(data) - len(data.translate(None, _NOT_TAIL))


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
        lines = total_lines(f, cache)
        done = 0
        try:
            reading = _Reading(f, block_path[0], heads, store.name, lane.top_fields(block_path))
            for b in _canonical_reverse(reading, size, lines):
                done += 1
                yield b
            return
        except _NotCanonical:
            pass
        # The index path hands out the same blocks in the same order: skip those already out.
        yield from itertools.islice(_indexed(lane, block_path, heads, cache), done, None)
        return
    yield from _indexed(lane, block_path, heads, cache)


class _End(NamedTuple):
    """Where the regions read so far begin: the byte, its column (characters from its line's
    start) and the newlines after it."""

    at: int
    column: int
    lines_after: int


def _canonical_reverse(rd: _Reading, size: int, lines: Tuple[int, int]) -> Iterator[Block]:
    """Chunks from the end; in each, the region from its first column-0 opener (else its first
    loose opener that verifies) to the region already read is verified (as whole top-level
    fields, by the fast scanner) and its blocks handed out last first."""
    newlines, last = lines
    f = rd.f
    end = _End(size, last, 0)
    hi = size
    found_any = False
    loose = _loose_openers(rd)
    while hi > 0:
        lo = max(0, hi - _CHUNK)
        base = max(0, lo - 1)
        f.seek(base)
        buf = f.read(hi - base + 512)  # overlap past hi, for an opener line cut by the chunk edge
        if lo == 0:
            buf = b"\n" + buf  # the file's first line is a column-0 line too
            base -= 1
        window = _Window(buf, base, lo, min(hi, end.at))
        hi = lo
        m = _first_opener(buf, base, lo, window.upto)
        if m is not None:
            n = _count_newlines(f, m, end.at)
            blocks = _region(rd, m, end.at, newlines - end.lines_after - n + 1)
            end = _End(m, 0, end.lines_after + n)
        else:
            got = _loose_region(rd, loose, window, end, newlines)
            if got is None:
                continue  # a block longer than a chunk: the region grows
            end, blocks = got
        found_any = True
        yield from blocks
    if not found_any and size > 0:
        raise _NotCanonical()  # (before reading the whole file as one region)
    if end.at > 0:
        # Text before the first opener (comments, or a layout we do not know): verify it too.
        yield from _region(rd, 0, end.at, 1)


class _Window(NamedTuple):
    """A chunk read backward: its bytes from ``base`` (a byte before it, for the boundary before an
    opener at its start), and where an opener in it may start: ``lo`` to ``upto``."""

    buf: bytes
    base: int
    lo: int
    upto: int


def _loose_openers(rd: _Reading) -> Tuple["re.Pattern[bytes]", Tuple[bytes, ...]]:
    """A top-level field's name then ``{`` (or ``<``), after a token boundary; and the names."""
    names = tuple(sorted({rd.field.encode("ascii")} | (rd.top.bnames if rd.top is not None else frozenset())))
    alt = b"|".join(re.escape(n) for n in names)
    return re.compile(rb"(?<![^\s}>;,\]])(?:" + alt + rb")[ \t]*:?[ \t]*[{<]"), names


def _loose_region(
    rd: _Reading, loose: Tuple["re.Pattern[bytes]", Tuple[bytes, ...]], w: _Window, end: _End, newlines: int
) -> Optional[Tuple[_End, Iterator[Block]]]:
    """The region from the first of the window's loose openers whose region verifies (a few tried,
    in file order), to ``end``; None if none does."""
    pattern, names = loose
    if not any(n in w.buf for n in names):
        return None
    tries = 0
    for m in pattern.finditer(w.buf):
        at = w.base + m.start()
        if at < w.lo:
            continue
        if at >= w.upto or tries == _TRIES:
            break
        tries += 1
        n, chars, hashed = _span(rd.f, at, end.at)
        if w.buf[at - w.base - 1] == 0x0A:  # (a line's start: never inside a string)
            col = 0
        elif hashed and _comment_on_first_line(rd.f, at, end.at):
            continue  # (a "#" outside the strings as read from here: were this inside a string, the rest would be a comment)
        else:
            col = end.column - chars if not n else _column(rd.f, w, at)
        try:
            blocks = _region(rd, at, end.at, newlines - end.lines_after - n + 1, col)
        except _NotCanonical:
            continue  # (inside a string or a message: the next)
        return _End(at, col, end.lines_after + n), blocks
    return None


def _span(f: BinaryIO, start: int, end: int) -> Tuple[int, int, bool]:
    """Of bytes [start, end): the newlines, the characters after the last (all, if none), and
    whether a ``#`` is on the first line."""
    f.seek(start)
    n = chars = 0
    hashed = False
    left = end - start
    while left > 0:
        chunk = f.read(min(left, _CHUNK * 8))
        if not chunk:
            break
        left -= len(chunk)
        k = chunk.count(b"\n")
        if not n:
            hashed = hashed or b"#" in (chunk[: chunk.find(b"\n")] if k else chunk)
        n += k
        chars = (chars if not k else 0) + _chars(chunk[chunk.rfind(b"\n") + 1 :] if k else chunk)
    return n, chars, hashed


def _comment_on_first_line(f: BinaryIO, start: int, end: int) -> bool:
    """Whether the first line of bytes [start, end), read from outside any string, holds a comment:
    a ``#`` outside the string literals as they pair from ``start`` (read a piece at a time)."""
    f.seek(start)
    quote = 0  # the quote of the string open, if any
    skip = 0  # bytes to skip at the next piece's start (an escape's second byte)
    while start < end:
        piece = f.read(min(end - start, _CHUNK))
        if not piece:
            break
        start += len(piece)
        i = skip
        skip = 0
        while True:
            m = (_IN_STRING[quote] if quote else _OUTSIDE).search(piece, i)
            if m is None:
                break
            c, i = piece[m.start()], m.start() + 1
            if c == 0x0A:
                return False
            if not quote:
                if c == 0x23:
                    return True
                quote = c
            elif c == 0x5C:  # (an escape: its next byte is not a quote)
                i += 1
                skip = max(0, i - len(piece))
            else:
                quote = 0
    return False


def _column(f: BinaryIO, w: _Window, at: int) -> int:
    """The characters from the start of the line of byte ``at`` to it (read back to its newline)."""
    i = w.buf.rfind(b"\n", 0, at - w.base)
    if i >= 0:
        return _chars(w.buf[i + 1 : at - w.base])
    chars, pos = _chars(w.buf[: at - w.base]), w.base
    while pos > 0:
        lo = max(0, pos - _CHUNK)
        f.seek(lo)
        piece = f.read(pos - lo)
        i = piece.rfind(b"\n")
        if i >= 0:
            return chars + _chars(piece[i + 1 :])
        chars += _chars(piece)
        pos = lo
    return chars


def _first_opener(buf: bytes, base: int, lo: int, hi: int) -> Optional[int]:
    for m in OPENER.finditer(buf):
        at = base + m.start() + 1
        if lo <= at < hi:
            return at
    return None


def _region(rd: _Reading, start: int, end: int, first: int, column: int = 0) -> Iterator[Block]:  # (a reversed list)
    """The blocks of [start, end), last first. ``first``: the file line of byte ``start`` (counted
    from the end, since reading backward never counts the lines before ``start``); ``column``: the
    characters before it on its line (a loose opener's)."""
    from ._canonical import scan_canonical

    # A top-level field the graph has not is refused when the blocks after it are out (not when
    # the region is scanned): bp, which stops at its answer, never meets one before it.
    met = Met()
    # (a _Slice is a file-like, no BinaryIO: reading is all a walk of a slice does)
    scanned = scan_canonical(
        cast(BinaryIO, _Slice(rd.f, start, end)), (rd.field,), rd.heads, chunk_size=_CHUNK, display=rd.name, start_offset=start, start_line=first,
        start_column=column,
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
