"""Checking, as protobuf parses them, the parts of a binary graph the walk reads as a stream
(``check`` and ``stats``): a container's fields other than the nodes (a GraphDef's ``library``
and ``versions``, a MetaGraphDef's every other field, a SavedModel's other MetaGraphs) and a
node too big to hold. A field's payload up to :data:`HOLD` bytes is read whole and walked by
:func:`~pbtxt_scan.wire._wire_schema.walk`; a bigger one is read a field at a time (a message)
or a piece at a time (a string, packed values), so memory stays bounded whatever the file.
"""
from __future__ import annotations

import codecs
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .._errors import PbtxtError
from .._model import Head
from ._wire_read import TRUNCATED_MSG, _check_end, _error, _Reader, _skip_value, _tag, _text
from ._wire_schema import BAD_UTF8, BAD_VARINT, FIXED32, MAX_DEPTH, MSG, TOO_DEEP, UTF8, VARINTS, Err, _payload, entry_key, field_path, spec, utf8_ok, varint_end
from ..schema import default_schema

HOLD = 8 << 20  # payloads up to this size are walked whole
_PIECE = 1 << 20


def segment(message: str, fn: int, k: int) -> str:
    """Field ``fn`` of ``message``, its ``k``-th (0-based) occurrence, as a path segment."""
    f = default_schema().by_number(message).get(fn)
    if f is None:
        return ".#%d" % fn
    return ".%s[%d]" % (f.name, k) if f.repeated else "." + f.name


def join(path: str, name: str) -> str:
    """``path.name`` (``name`` alone at the root)."""
    return path + "." + name if path else name


def check_field(r: _Reader, field: Any, q: int, off: int, path: str, depth: int) -> None:
    """:func:`check_payload` if ``field`` (``(message, field number, occurrence)``) is one the
    schema checks (else its payload is not read: a ``bytes`` field, an unknown one)."""
    if field[1] in spec(field[0]):
        check_payload(r, field, q, off, path, depth)


def named(e: PbtxtError, path: str) -> PbtxtError:
    """``e`` (a wire-format error) naming the field ``path`` it is in."""
    return _error("%s: %s" % (path.lstrip("."), e.msg), e.offset or 0) if path else e


def fields(r: _Reader, end: Optional[int], message: str, path: str) -> Iterator[Tuple[int, int, int, int, int]]:
    """The fields of ``message`` (at ``path``) up to ``end`` (None: the end of the file), as
    ``_wire_read._fields`` reads them, each error naming its field: the length-delimited ones as
    ``(field, occurrence, tag offset, payload start, payload end)``, the reader at the payload
    (what the caller leaves is skipped); the others skipped here."""
    counts: Dict[int, int] = {}
    while True:
        if end is None:
            if r.at_eof():
                return
        elif r.tell() >= end:
            if r.tell() > end:
                raise named(_error(TRUNCATED_MSG, r.tell()), path)
            return
        try:
            fn, wt, off = _tag(r)
        except PbtxtError as e:
            raise named(e, path) from None
        k = counts[fn] = counts.get(fn, -1) + 1
        if wt == 4:
            raise named(_error("end-group tag without a group", off), path)
        try:
            if wt != 2:
                _skip_value(r, fn, wt, off, end)
                continue
            n = r.varint()
            p = r.tell()
            _check_end(p + n, end, off, r)
        except PbtxtError as e:
            bad = _error(BAD_VARINT, off) if wt == 0 else e  # (a varint: as the walk says it, at the tag)
            raise named(bad, path + segment(message, fn, k)) from None
        yield fn, k, off, p, p + n
        if r.tell() != p + n:
            r.skip_to(p + n, off)


def check_message(r: _Reader, end: int, message: str, path: str, depth: int, heads: Optional[Dict[int, str]] = None) -> List[Head]:
    """The fields of ``message`` (at ``depth``) from the reader's position to ``end``, each checked;
    ``heads`` (tag byte -> head name): the NodeDef's heads to collect on the way."""
    sp = spec(message)
    got: List[Head] = []
    for fn, k, off, p, q in fields(r, end, message, path):
        name = heads.get(fn << 3 | 2) if heads is not None else None
        if name is not None and q - p <= HOLD:
            data = r.take(q - p, off)
            if fn in sp and not utf8_ok(data):
                raise _error("%s: %s" % ((path + segment(message, fn, k)).lstrip("."), BAD_UTF8), off)
            got.append(Head(name, _text(data), 0))
        elif fn in sp:
            check_payload(r, (message, fn, k), q, off, path, depth)
    return got


def check_payload(r: _Reader, field: Any, q: int, off: int, path: str, depth: int) -> None:
    """The payload (the reader at its start, ending at ``q``) of ``field``: ``(message, field
    number, occurrence)``, a known length-delimited field of a message at ``depth`` whose path is
    ``path``; its tag is at ``off``."""
    message, fn, k = field
    how = spec(message)[fn]
    f = default_schema().by_number(message)[fn]
    here = (path + segment(message, fn, k)).lstrip(".")
    n = q - r.tell()
    if n <= HOLD:
        p = r.tell()
        data = r.take(n, off)
        e = _payload(data, 0, n, how, depth)
        if e is not None:
            raise _located(data, e, f, here, p, off)
        return
    if how[0] == MSG:
        if depth >= MAX_DEPTH:
            raise _error("%s: %s" % (here, TOO_DEEP), off)
        check_message(r, q, f.type, here, depth + 1)
    elif how[0] == UTF8:
        dec = codecs.getincrementaldecoder("utf-8")()
        try:
            while r.tell() < q:
                dec.decode(r.take(min(_PIECE, q - r.tell()), off))
            dec.decode(b"", True)
        except UnicodeDecodeError:
            raise _error("%s: %s" % (here, BAD_UTF8), off) from None
    elif how[0] == VARINTS:
        carry = b""
        while r.tell() < q:
            piece = carry + r.take(min(_PIECE, q - r.tell()), off)
            i = 0
            while i < len(piece):
                j = varint_end(piece, i, len(piece))
                if j < 0:
                    break
                i = j
            carry = piece[i:]
            if len(carry) >= 10:
                break
        if carry:
            raise _error("%s: bad packed field: a varint runs past its end" % here, off)
    elif n % (4 if how[0] == FIXED32 else 8):
        raise _error("%s: bad packed field: %d bytes are not whole %d-byte values" % (here, n, 4 if how[0] == FIXED32 else 8), off)


def _located(data: bytes, e: Err, f: Any, here: str, p: int, off: int) -> PbtxtError:
    """``e`` from walking the payload ``data`` (at file offset ``p``) of field ``f`` (path
    ``here``, tag at ``off``) as the error to print."""
    if e.at < 0:  # the payload itself (a string, packed values, too deep)
        return _error("%s: %s" % (here, e.msg), off)
    schema = default_schema()
    message = f.type
    if message in schema.map_entries and e.trail and e.trail[-1][1] == 2:
        # a map's value: named by its key (``attr["T"]``), not its index
        e.trail.pop()
        here = "%s[%s]" % (here.rsplit("[", 1)[0], entry_key(data, 0, len(data)))
        message = schema.by_number(message)[2].type
        if not e.trail:
            return _error("%s: %s" % (here, e.msg), p + e.at)
    return _error("%s%s: %s" % (here, field_path(data, e, message), e.msg), p + e.at)
