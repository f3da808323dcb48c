"""Reading the protobuf wire format: a buffered reader with absolute offsets that skips by
length, the field walk, errors with offsets, and telling a binary graph's kind by its first bytes.
The API and the conventions are described in :mod:`pbtxt_scan.wire._wire`."""
from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, Dict, Iterator, NamedTuple, Optional, Tuple

from .._errors import PbtxtError
from .._model import FUNCTION_NODES, TF_HEADS

GRAPHDEF, METAGRAPH, SAVEDMODEL = "graphdef", "metagraph", "savedmodel"
KINDS = (GRAPHDEF, METAGRAPH, SAVEDMODEL)
NODE_PATH = ("node",)
FUNCTION_PATH = FUNCTION_NODES
HEADS = TF_HEADS
_HEAD_FIELD = {"name": 1, "op": 2, "input": 3, "device": 4}
_FIELD_HEAD = {v: k for k, v in _HEAD_FIELD.items()}

DEFAULT_CHUNK = 1 << 20
SNIFF_BYTES = 1 << 16

TRUNCATED_FILE = "truncated: a length-delimited field runs past the end of the file"
TRUNCATED_MSG = "truncated: a field runs past the end of its enclosing message"


def _error(msg: str, offset: int) -> PbtxtError:
    return PbtxtError(msg, offset=offset)


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


def _varint_slow(buf: bytes, i: int, start: int) -> Tuple[int, int]:
    """A varint of 2 or more bytes at ``buf[i]``; ``start`` is its absolute offset (for errors)."""
    v = 0
    shift = 0
    for k in range(10):
        try:
            b = buf[i + k]
        except IndexError:
            raise _error("truncated: the file ends inside a varint", start) from None
        v |= (b & 0x7F) << shift
        if b < 0x80:
            if k == 9 and b > 1:
                raise _error("bad varint: more than 64 bits", start)
            return v, i + k + 1
        shift += 7
    raise _error("bad varint: more than 10 bytes", start)


def _tag(r: _Reader) -> Tuple[int, int, int]:
    """(field number, wire type, offset of the tag) of the next field."""
    off = r.tell()
    t = r.varint()
    fn = t >> 3
    wt = t & 7
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


# --------------------------------------------------------------------------------------------
# detection
# --------------------------------------------------------------------------------------------

# Mini-schemas for telling the kinds apart: field -> "s" (printable string), "v" (varint),
# "m" (any length-delimited bytes) or a nested schema.
_S_NODE: Dict[int, Any] = {1: "s", 2: "s", 3: "s", 4: "s", 5: {1: "s", 2: "m"}, 6: "m", 7: "m"}
_S_FUNC: Dict[int, Any] = {1: "m", 3: _S_NODE, 4: "m", 5: "m", 6: "m", 7: "m", 8: "m"}
_S_GRAPH: Dict[int, Any] = {1: _S_NODE, 2: {1: _S_FUNC, 2: "m", 3: "m"}, 3: "v", 4: "m", 5: "m"}
_S_INFO: Dict[int, Any] = {1: "s", 2: "m", 3: "m", 4: "s", 5: "s", 6: "s", 7: "v", 8: "m"}
_S_META: Dict[int, Any] = {1: _S_INFO, 2: _S_GRAPH, 3: "m", 4: "m", 5: "m", 6: "m", 7: "m"}
_S_SAVED: Dict[int, Any] = {1: "v", 2: _S_META}
_SNIFF = ((GRAPHDEF, _S_GRAPH), (METAGRAPH, _S_META), (SAVEDMODEL, _S_SAVED))


def sniff(head: bytes) -> Optional[str]:
    """The kind of binary graph whose file starts with ``head`` (its first bytes, up to
    :data:`SNIFF_BYTES`): ``"graphdef"``, ``"metagraph"``, ``"savedmodel"``, or ``None`` for text
    format (which starts with an identifier, ``#`` or whitespace) and anything else.

    Each kind's fields are checked against a mini-schema of its known fields (at the top level)
    and the messages below (where fields numbered above the known ones are allowed: TensorFlow
    adds fields with new numbers). The kind that explains the most bytes wins; it must explain all
    of ``head`` (a cut last field is fine) or at least its first 1 KiB of whole top-level fields.
    """
    if not head:
        return None
    best, best_len = None, 0
    for kind, schema in _SNIFF:
        ok = _plausible(head, 0, len(head), schema, 0)
        if ok > best_len:
            best, best_len = kind, ok
    if best is None or best_len < min(len(head), 1024):
        return None
    whole = _plausible(head, 0, len(head), dict(_SNIFF)[best], 0, True)  # whole fields only
    if len(head) < 16 and whole < len(head):
        return None  # a few bytes, cut: too little to tell (text "\n" is not a cut GraphDef)
    if len(head) < SNIFF_BYTES and whole == 0:
        # The whole file (shorter than the head), and its first field runs past its end: not a
        # graph, cut or not, that this reader could show anything of. Text that starts with a
        # newline starts like a GraphDef's first node (0x0A); read it as text.
        return None
    return best


def _plausible(buf: bytes, i: int, end: int, schema: Dict[int, Any], depth: int, strict: bool = False) -> int:
    """How far ``buf[i:end]`` reads as ``schema`` (``end`` when it all does; a field cut by the
    end of ``buf`` counts as read unless ``strict``)."""
    while i < end:
        start = i
        try:
            t, i = _varint_slow(buf, i, i) if buf[i] >= 0x80 else (buf[i], i + 1)
        except (PbtxtError, IndexError):
            return start if strict or i < len(buf) - 10 else end
        fn, wt = t >> 3, t & 7
        kind = schema.get(fn)
        if kind is None:
            if depth == 0 or fn <= max(schema) or wt not in (0, 1, 2, 5):
                return start
            kind = "v" if wt == 0 else "m"
            if wt != 0 and wt != 2:
                i += 8 if wt == 1 else 4
                continue
        if (kind == "v") != (wt == 0) or (kind != "v" and wt != 2):
            return start
        try:
            v, i = _varint_slow(buf, i, i) if buf[i] >= 0x80 else (buf[i], i + 1)
        except (PbtxtError, IndexError):
            return end if len(buf) - i < 10 and not strict else start
        if wt == 0:
            continue
        stop = i + v
        if stop > end and (end < len(buf) or strict):
            return start  # runs past its enclosing message (or, strict, the bytes given)
        if kind == "s":
            try:
                s = buf[i:stop].decode("utf-8")
            except UnicodeDecodeError as e:
                if stop <= len(buf) or e.start < len(buf) - i - 3:
                    return start
                s = ""
            if any(c < " " for c in s):
                return start
        elif isinstance(kind, dict) and depth < 4:
            got = _plausible(buf, i, min(stop, len(buf)), kind, depth + 1, strict)
            if got < min(stop, len(buf)):
                return start
        i = stop
    return end


BROKEN_MIN = 4  # bytes of a kind's fields read before the break: a node's tag and length, and its
# name's. Files of other kinds break at their first bytes (their magic numbers are no tags); text
# can read further (newlines are a node's and a name's tags), and is told apart before this is
# asked (graph._input: clean UTF-8 text is left to the text lane).


def broken(head: bytes, *, complete: bool) -> Optional[Tuple[str, int, str]]:
    """A binary graph damaged near its start (where :func:`sniff` can no longer tell it):
    ``(kind, offset, why)`` for the kind whose fields read furthest before the wire format
    breaks, if they read at least :data:`BROKEN_MIN` bytes; else ``None``. The kind is ``""``
    (unknown) when another kind reads as far (the break is in the first fields, which the kinds
    share). ``complete``: ``head`` is the whole file (a field cut by its end is then a break, not
    the end of the head)."""
    found = sorted(((_breaks(head, 0, len(head), schema, 0, complete), kind) for kind, schema in _SNIFF),
                   key=lambda x: -x[0][2])  # (the furthest read first; a tie keeps _SNIFF's order)
    (at, why, read), kind = found[0]
    if not why or read < BROKEN_MIN:
        return None
    return ("" if found[1][0][2] >= read else kind), at, why


def _breaks(buf: bytes, i: int, end: int, schema: Dict[int, Any], depth: int, complete: bool) -> Tuple[int, str, int]:
    """Where ``buf[i:end]`` stops reading as ``schema``, why, and how far it read: ``(offset,
    reason, read)``, for the deepest field that breaks (``(end, "", end)``: it all reads; a field
    cut by the end of the file is named at its tag, and read as far as its bytes go).
    :func:`_plausible`'s walk, strict, with reasons."""
    while i < end:
        start = i
        try:
            t, i = _varint_slow(buf, i, i) if buf[i] >= 0x80 else (buf[i], i + 1)
        except (PbtxtError, IndexError):
            if not complete and len(buf) - start < 10:
                return end, "", end
            return start, "a field's tag is no valid varint", start
        fn, wt = t >> 3, t & 7
        kind = schema.get(fn)
        if kind is None:
            if fn == 0:
                return start, "field number 0 is not valid", start
            if depth == 0 or fn <= max(schema) or wt not in (0, 1, 2, 5):
                return start, "field %d of wire type %d is not a field here" % (fn, wt), start
            kind = "v" if wt == 0 else "m"
            if wt != 0 and wt != 2:
                i += 8 if wt == 1 else 4
                continue
        if (kind == "v") != (wt == 0) or (kind != "v" and wt != 2):
            return start, "field %d has wire type %d, which it never has" % (fn, wt), start
        try:
            v, i = _varint_slow(buf, i, i) if buf[i] >= 0x80 else (buf[i], i + 1)
        except (PbtxtError, IndexError):
            if not complete and len(buf) - i < 10:
                return end, "", end
            return start, "a length or value is no valid varint", start
        if wt == 0:
            continue
        stop = i + v
        if stop > end and end < len(buf):
            return start, TRUNCATED_MSG, start
        cut = stop > len(buf) and complete  # (the file ends inside this field)
        if kind == "s":
            try:
                buf[i:stop].decode("utf-8")
            except UnicodeDecodeError as e:
                if stop <= len(buf) or e.start < len(buf) - i - 3:
                    return i + e.start, "a name is not UTF-8 (byte 0x%02x)" % buf[i + e.start], i + e.start
        elif isinstance(kind, dict) and depth < 4:
            at, why, read = _breaks(buf, i, min(stop, len(buf)), kind, depth + 1, complete)
            if why:
                return at, why, read
        if cut:
            return start, TRUNCATED_FILE, len(buf)
        i = stop
    return end, "", end


class WireInfo(NamedTuple):
    """What was read: the kind, and for a SavedModel which MetaGraph (0-based) and why."""

    kind: str
    meta_graph: Optional[int] = None
    tags: Tuple[str, ...] = ()
    meta_graphs: Optional[int] = None
    why: str = ""


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")

