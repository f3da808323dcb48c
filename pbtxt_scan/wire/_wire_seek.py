"""Where a byte offset of a binary GraphDef lies, told by the length prefixes: the top-level field
that holds it, walked from a known field boundary (:class:`TopWalk`), and, when that field is a
node, the NodeDef field that holds it (:func:`node_field`). This is how a byte search's hit (an op
name found as raw bytes, by grep) is verified at a node boundary: a hit is a node's op only if the
walk lands it inside that node's ``op`` field; the same bytes inside a tensor, an attr string, a
name or a library function are not.

The walk reads tags and lengths only, in windows of ``_WINDOW`` bytes, and skips every field by
its length (a node, ``library``, ``versions``): its cost is a few operations per top-level field
between the boundary and the hit, its memory one window. A GraphDef is a sequence of top-level
fields (``node`` = 1, ``library`` = 2, ``version`` = 3, ``versions`` = 4, ``debug_info`` = 5);
concatenated GraphDef messages are one longer such sequence, so the walk needs no container.
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

from .._kit import NamedTuple

ReadAt = Callable[[int, int], bytes]

_WINDOW = 1 << 20
NODE, OP, NAME = 1, 2, 1  # GraphDef.node; NodeDef.op and NodeDef.name


class Field(NamedTuple):
    """One field: its number, where its tag starts, and its payload ``[start, end)`` (for a
    varint or fixed field, ``start == end`` is where the value ends)."""

    number: int
    tag: int
    start: int
    end: int


class Malformed(Exception):
    """The bytes do not chain as protobuf fields: the walk cannot tell where an offset lies."""


def _varint(buf: bytes, i: int) -> Tuple[int, int]:
    n = shift = 0
    while True:
        b = buf[i]  # (IndexError: the caller reads more)
        i += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, i
        shift += 7
        if shift > 63:
            raise Malformed("a varint longer than 10 bytes")


def _field(buf: bytes, i: int, base: int) -> Tuple[Field, int]:
    """The field whose tag is at ``buf[i]`` (``base``: the file offset of ``buf[0]``), and the
    index where its payload starts (length-delimited) or ends (the rest)."""
    key, j = _varint(buf, i)
    fn, wt = key >> 3, key & 7
    if fn == 0:
        raise Malformed("field number 0")
    if wt == 2:
        n, j = _varint(buf, j)
        return Field(fn, base + i, base + j, base + j + n), j
    if wt == 0:
        _v, j = _varint(buf, j)
    elif wt == 1:
        j += 8
    elif wt == 5:
        j += 4
    else:
        raise Malformed("wire type %d" % wt)
    return Field(fn, base + i, base + j, base + j), j


class TopWalk:
    """The top-level fields of a binary GraphDef read through ``read_at`` (a file of ``size``
    bytes), from the boundary ``start`` (where a top-level field's tag is) on. :meth:`holding`
    asks for offsets in increasing order; the walk never goes back."""

    __slots__ = ("_read", "_size", "pos", "_buf", "_base")

    def __init__(self, read_at: ReadAt, size: int, start: int) -> None:
        self._read = read_at
        self._size = size
        self.pos = start  # the boundary the walk has reached
        self._buf = b""
        self._base = start

    def holding(self, off: int) -> Optional[Field]:
        """The top-level field that holds byte ``off`` (``None``: past the end of the file, or
        before the walk's position). :class:`Malformed` if the fields do not chain."""
        if off < self.pos:
            return None
        size = self._size
        buf, base = self._buf, self._base
        pos = self.pos
        try:
            while pos < size:
                i = pos - base
                if not 0 <= i <= len(buf) - 20:
                    base, i = pos, 0
                    buf = self._read(pos, _WINDOW)
                    self._buf, self._base = buf, base
                # 1. nodes (tag 0x0A), by far the most common field, skipped in a tight loop: the
                # length inline (one or two bytes, a node under 16 KiB), no Field made for those
                # passed over (a walk over a GB passes millions: this loop is most of its cost)
                last = base + len(buf) >= size  # (no window after this one: its last bytes are read here)
                lim = len(buf) - (1 if last else 20)
                end = off - base  # (the walk stops at the node that holds this index)
                while i <= lim and buf[i] == 0x0A:
                    p = i  # (the next node's end straight into i: no tuple, no Field, 15 % less a node)
                    n = buf[i + 1]
                    if n < 0x80:
                        i += n + 2
                    else:
                        b = buf[i + 2]
                        if b < 0x80:
                            i += ((n & 0x7F) | (b << 7)) + 3
                        else:
                            n, j = _varint(buf, i + 1)
                            i = j + n
                    if i > end:
                        f = _field(buf, p, base)[0]  # (the node that holds the offset)
                        break
                else:
                    pos = base + i
                    if i > lim:
                        if pos > size:
                            raise Malformed("a field runs past the end of the file")
                        if pos == size:
                            return None
                        continue  # (the window's end: read the next)
                    f = _field(buf, i, base)[0]  # 2. anything else, by its wire type
                if f.end > size:
                    raise Malformed("a field runs past the end of the file")
                pos = f.end
                if off < pos:
                    return f
            return None
        except IndexError:  # (the last bytes of the file)
            raise Malformed("the file ends inside a tag or a length") from None
        finally:
            self.pos = pos


def node_field(read_at: ReadAt, node: Field, off: int) -> Optional[Field]:
    """The field of the NodeDef payload ``node`` that holds byte ``off`` (``None``: none, as when
    ``off`` is the node's own tag or length). Each field's tag and length are read where they are
    (a node's attrs may be megabytes: they are skipped, not read). :class:`Malformed` if its
    fields do not chain."""
    if not node.start <= off < node.end:
        return None
    at = node.start
    while at <= off:
        head = read_at(at, 20)
        try:
            f = _field(head, 0, at)[0]
        except IndexError:
            raise Malformed("the node ends inside a tag or a length") from None
        if f.end > node.end:
            raise Malformed("a field runs past the end of its node")
        if off < f.end:
            return f
        at = f.end
    return None
