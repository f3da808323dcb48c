"""Reading the protobuf wire format: a buffered reader with absolute offsets that skips by
length, the field walk and errors with offsets (telling a binary graph's kind by its first bytes,
and the few names and the varint that needs, are ``_wire_sniff``'s). The API and the conventions are described in :mod:`pbtxt_scan.wire._wire`."""
from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, Dict, Iterator, Optional, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from .._model import FUNCTION_NODES, TF_HEADS
from ..schema._tensorflow import MESSAGES
# (the kinds' names, the head's size, the truncation messages and the varint every reader shares are
# ``_wire_sniff``'s: telling text from binary loads neither this reader nor the schema tables)
from ._wire_sniff import GRAPHDEF, METAGRAPH, SAVEDMODEL, TRUNCATED_FILE, TRUNCATED_MSG, _error, _varint_slow

KINDS = (GRAPHDEF, METAGRAPH, SAVEDMODEL)
NODE_PATH = ("node",)
FUNCTION_PATH = FUNCTION_NODES
HEADS = TF_HEADS

def _number(message: str, field: str) -> int:
    """A field's number, from the schema tables (the one source; looked up once, at import, in the
    table itself: a text graph's sniff builds no schema)."""
    return MESSAGES["tensorflow." + message][field][0]


# The fields the walk reads, by number (``F_``) or by the tag of their length-delimited form (``T_``).
F_NODE, F_LIBRARY = _number("GraphDef", "node"), _number("GraphDef", "library")
F_FUNCTION, F_SIGNATURE, F_NODE_DEF = _number("FunctionDefLibrary", "function"), _number("FunctionDef", "signature"), _number("FunctionDef", "node_def")
F_OP_NAME = _number("OpDef", "name")
F_META_INFO, F_GRAPH_DEF, F_TAGS = _number("MetaGraphDef", "meta_info_def"), _number("MetaGraphDef", "graph_def"), _number("MetaGraphDef.MetaInfoDef", "tags")
F_META_GRAPHS = _number("SavedModel", "meta_graphs")
_HEAD_FIELD = {h: _number("NodeDef", h) for h in ("name", "op", "input", "device")}
_FIELD_HEAD = {v: k for k, v in _HEAD_FIELD.items()}
T_NODE, T_LIBRARY = F_NODE << 3 | 2, F_LIBRARY << 3 | 2
T_NAME, T_OP, T_ATTR = _HEAD_FIELD["name"] << 3 | 2, _HEAD_FIELD["op"] << 3 | 2, _number("NodeDef", "attr") << 3 | 2
T_HEADS = frozenset(n << 3 | 2 for n in _HEAD_FIELD.values())  # NodeDef name, op, input, device

DEFAULT_CHUNK = 1 << 20


class _Bad(Exception):
    """The fast path met something unusual: decode the node again the careful way."""


# --------------------------------------------------------------------------------------------
# reading: a buffered reader that knows absolute offsets and skips by length
# --------------------------------------------------------------------------------------------


class _Reader:
    """Bytes of ``f`` from absolute offset ``base``; ``buf[i]`` is the byte at ``base + i``."""

    __slots__ = ("f", "buf", "i", "base", "chunk", "seekable", "size", "want", "validate")

    def __init__(self, f: BinaryIO, chunk: int = DEFAULT_CHUNK) -> None:
        self.f = f
        self.buf = b""
        self.i = 0
        self.chunk = max(chunk, 64)
        self.seekable = _seekable(f)
        self.base = f.tell() if self.seekable else 0
        self.size = _size(f) if self.seekable else None
        self.want: Dict[int, str] = {}  # head names by tag, for the blocks made
        self.validate = False  # check each node down to its attr values (``check``)

    def tell(self) -> int:
        return self.base + self.i

    def fill(self, n: int) -> int:
        """Make ``n`` bytes from the current position available in ``buf`` (fewer at the end of the
        file); returns how many are."""
        avail = len(self.buf) - self.i
        if avail >= n:
            return avail
        parts = [self.buf[self.i :]]
        self.base += self.i
        self.i = 0
        while avail < n:
            data = _read(self.f, max(n - avail, self.chunk))
            if not data:
                break
            parts.append(data)
            avail += len(data)
        self.buf = b"".join(parts)
        return avail

    def at_eof(self) -> bool:
        return self.fill(1) == 0

    def skip_to(self, off: int, field_start: int) -> None:
        """Move forward to ``off`` without holding what lies between."""
        end = self.base + len(self.buf)
        if off <= end:
            self.i = off - self.base
            return
        if self.seekable:
            if self.size is not None and off > self.size:
                raise _error(TRUNCATED_FILE, field_start)
            if self.f.seek(off) != off:  # (a gzip file stops at its end)
                raise _error(TRUNCATED_FILE, field_start)
        else:
            left = off - end
            while left > 0:
                data = _read(self.f, min(left, self.chunk))
                if not data:
                    raise _error(TRUNCATED_FILE, field_start)
                left -= len(data)
        self.buf = b""
        self.i = 0
        self.base = off

    def seek(self, off: int) -> None:
        """Go to any offset (seekable files only: backward reading)."""
        if self.base <= off <= self.base + len(self.buf):
            self.i = off - self.base
            return
        self.f.seek(off)
        self.buf = b""
        self.i = 0
        self.base = off

    def varint(self) -> int:
        if len(self.buf) - self.i < 10:
            self.fill(10)
        buf = self.buf
        i = self.i
        start = self.base + i
        try:
            b = buf[i]
        except IndexError:
            raise _error("truncated: the file ends inside a field", start) from None
        if b < 0x80:
            self.i = i + 1
            return b
        v, j = _varint_slow(buf, i, start)
        self.i = j
        return v

    def take(self, n: int, field_start: int) -> bytes:
        if self.fill(n) < n:
            raise _error(TRUNCATED_FILE, field_start)
        i = self.i
        self.i = i + n
        return self.buf[i : i + n]


def _read(f: BinaryIO, n: int) -> bytes:
    try:
        return f.read(n)
    except PbtxtError:
        raise
    except OSError as e:
        raise PbtxtError("read error: %s" % (e.strerror or e)) from None


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def _size(f: Any) -> Optional[int]:
    """The size of a plain file or a seekable stream (not of a gzip file: its fd is the packed one)."""
    if isinstance(f, (io.BufferedReader, io.FileIO)):
        try:
            return os.fstat(f.fileno()).st_size
        except (OSError, ValueError, io.UnsupportedOperation):
            pass
    try:
        here = f.tell()
        size = f.seek(0, 2)
        f.seek(here)
        return int(size)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None


def _tag(r: _Reader) -> Tuple[int, int, int]:
    """(field number, wire type, offset of the tag) of the next field."""
    off = r.tell()
    t = r.varint()
    fn = t >> 3
    wt = t & 7
    if t > 0x7F and (t >> 32 or r.tell() - off > 5):
        raise _error("bad tag: more than 5 bytes or 32 bits", off)
    if fn == 0:
        raise _error("field number 0 is not valid", off)
    if wt > 5:
        raise _error("wire type %d is not valid" % wt, off)
    return fn, wt, off


def _skip_value(r: _Reader, fn: int, wt: int, off: int, end: Optional[int]) -> None:
    """Skip the value of a field whose tag was just read."""
    if wt == 2:
        n = r.varint()
        p = r.tell()
        _check_end(p + n, end, off, r)
        r.skip_to(p + n, off)
    elif wt == 0:
        r.varint()
    elif wt == 1 or wt == 5:
        n = 8 if wt == 1 else 4
        _check_end(r.tell() + n, end, off, r)
        r.skip_to(r.tell() + n, off)
    elif wt == 3:  # a group (proto2; TensorFlow never writes one): skip to its end tag
        while True:
            if end is not None and r.tell() >= end:
                raise _error("truncated: a group has no end tag", off)
            f2, w2, o2 = _tag(r)
            if w2 == 4:
                if f2 != fn:
                    raise _error("end-group tag %d does not match its group %d" % (f2, fn), o2)
                return
            _skip_value(r, f2, w2, o2, end)
    else:
        raise _error("end-group tag without a group", off)
    if end is not None and r.tell() > end:
        raise _error(TRUNCATED_MSG, off)


def _check_end(stop: int, end: Optional[int], off: int, r: _Reader) -> None:
    if end is not None and stop > end:
        raise _error(TRUNCATED_MSG, off)
    if r.size is not None and stop > r.size:
        raise _error(TRUNCATED_FILE, off)


def _fields(r: _Reader, end: Optional[int]) -> Iterator[Tuple[int, int, int, int]]:
    """The length-delimited fields of a message ending at ``end`` (``None``: the end of the file)
    as ``(field, tag offset, payload start, payload end)``, the reader at the payload start; the
    caller may read into the payload, the rest is skipped. Other wire types are skipped here."""
    while True:
        if end is None:
            if r.at_eof():
                return
        elif r.tell() >= end:
            if r.tell() > end:
                raise _error(TRUNCATED_MSG, r.tell())
            return
        fn, wt, off = _tag(r)
        if wt != 2:
            _skip_value(r, fn, wt, off, end)
            continue
        n = r.varint()
        p = r.tell()
        _check_end(p + n, end, off, r)
        yield fn, off, p, p + n
        if r.tell() != p + n:
            r.skip_to(p + n, off)


class WireInfo(NamedTuple):
    """What was read: the kind, and for a SavedModel which MetaGraph (0-based) and why."""

    kind: str
    meta_graph: Optional[int] = None
    tags: Tuple[str, ...] = ()
    meta_graphs: Optional[int] = None
    why: str = ""


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")

