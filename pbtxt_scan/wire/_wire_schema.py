"""A serialized message against the schema, as protobuf's parser (upb, TensorFlow 2.21's Python)
reads it: the bytes it refuses, and where, with the field path (``node[12].attr["T"].type``).

What protobuf refuses (each case recorded with protobuf itself: ``tests/data/schema_wire/``):

- a tag of more than 5 bytes or 32 bits, field number 0, wire type 4 (an end-group tag with no
  group), 6 or 7; a group whose end tag is missing or names another field;
- a varint of more than 10 bytes, a length or fixed value past the end of its message;
- a known message field (wire type 2) whose payload is any of these, more than 100 messages deep;
- a packed repeated field whose payload is not whole values (a fixed32 one of 4n bytes...);
- invalid UTF-8 in a ``string`` field of a proto3 file (a proto2 file's strings, ``bytes``, and
  every unknown field are not read).

What it accepts, and so does this: a known field with another wire type than its own (kept as an
unknown field), a varint out of its type's range (an int32 or a bool is cut to its bits, a 10-byte
varint to 64 bits), an enum number the enum does not name (proto3 enums are open), unknown fields,
a singular field or two members of a ``oneof`` given twice (the last wins).

:func:`walk` reads a message held in a buffer and returns ``None``, or an :class:`Err` (where and
what, and the fields it lies in, innermost first) that :func:`error` turns into the
:class:`PbtxtError` the CLI prints: ``FILE:offset N: PATH: message``. It is the whole-file
commands' check of every node (``_wire_check``: the same walk, with a memo); ``_wire_stream``
reads a message too big to hold with it, a piece at a time.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional, Tuple

from .._errors import PbtxtError
from ..schema import default_schema

MAX_DEPTH = 100  # messages below the root (upb's default limit; the 101st is refused)
# What a field's length-delimited payload is checked as (other wire types need no schema).
MSG, UTF8, VARINTS, FIXED32, FIXED64 = 1, 2, 3, 4, 5
_FIXED32 = frozenset(("fixed32", "sfixed32", "float"))
_FIXED64 = frozenset(("fixed64", "sfixed64", "double"))
_BYTES = frozenset(("bytes", "string"))

TRUNCATED = "truncated: a field runs past the end of its enclosing message"
BAD_UTF8 = "invalid UTF-8 in a string field (protobuf refuses it in a proto3 string)"
BAD_VARINT = "bad varint: more than 10 bytes, or past the end of its message"
TOO_DEEP = "messages nested more than %d deep (protobuf's limit)" % MAX_DEPTH

Spec = Dict[int, Tuple[int, Any]]  # field number -> (what its payload is, the message's Spec)


@functools.lru_cache(maxsize=None)
def spec(message: str) -> Spec:
    """The checks of ``message``'s length-delimited fields (from the schema tables, built once)."""
    return _specs()[message]


@functools.lru_cache(maxsize=None)
def _specs() -> Dict[str, Spec]:
    schema = default_schema()
    proto2 = schema.proto2
    names = schema.messages()
    specs: Dict[str, Spec] = {m: {} for m in names}
    for m in names:
        out = specs[m]
        for f in schema.by_number(m).values():
            if f.kind == "message":
                out[f.number] = (MSG, specs[f.type])
            elif f.kind == "string":
                if m not in proto2:
                    out[f.number] = (UTF8, None)
            elif f.repeated and f.kind not in _BYTES:
                out[f.number] = (FIXED32 if f.kind in _FIXED32 else FIXED64 if f.kind in _FIXED64 else VARINTS, None)
    return specs


class Err:
    """Where a walk failed: ``at`` (index of the bad field's tag, or of the bad byte), ``msg``,
    and ``trail``: ``(message, its first field's index, field number, tag index)`` from the
    innermost field out (the bad field itself first when its tag was read)."""

    __slots__ = ("at", "msg", "trail")

    def __init__(self, at: int, msg: str) -> None:
        self.at = at
        self.msg = msg
        self.trail: List[Tuple[int, int, int]] = []


def varint_end(buf: bytes, i: int, end: int) -> int:
    """The index after the varint at ``buf[i]``; -1 past ``end`` or over 10 bytes."""
    k = i
    stop = i + 10
    if stop > end:
        stop = end
    while k < stop:
        if buf[k] < 0x80:
            return k + 1
        k += 1
    return -1


def length(buf: bytes, i: int, end: int) -> Tuple[int, int]:
    """The varint at ``buf[i]`` (a length or a tag) and the index after it; ``(-1, -1)`` if bad."""
    if i < end:
        b = buf[i]
        if b < 0x80:
            return b, i + 1
    k = varint_end(buf, i, end)
    if k < 0:
        return -1, -1
    n = 0
    for j in range(k - 1, i - 1, -1):
        n = n << 7 | (buf[j] & 0x7F)
    return n, k


def tag(buf: bytes, i: int, end: int) -> Tuple[int, int]:
    """A tag of more than one byte at ``buf[i]``: ``(tag, index after)``; -1 where protobuf
    refuses it (over 5 bytes or 32 bits)."""
    t, k = length(buf, i, end)
    if k < 0 or k - i > 5 or t >> 32:
        return -1, -1
    return t, k


def walk(buf: bytes, i: int, end: int, sp: Spec, depth: int) -> Optional[Err]:
    """The message ``buf[i:end]`` (of the fields ``sp``) at ``depth`` (messages above it):
    ``None`` if protobuf parses it, else where and why not."""
    first = i
    while i < end:
        at = i
        t = buf[i]
        if t < 0x80:
            i += 1
        else:
            t, i = tag(buf, i, end)
            if t < 0:
                return Err(at, "bad tag: more than 5 bytes or 32 bits" if varint_end(buf, at, end) > 0 else TRUNCATED)
        fn = t >> 3
        wt = t & 7
        if fn == 0:
            return Err(at, "field number 0 is not valid")
        if wt == 2:
            # (most fields are length-delimited, with a one-byte length: read here)
            n = buf[i] if i < end else 0x80
            if n < 0x80:
                i += 1
            else:
                n, i = length(buf, i, end)
            j = i + n
            if n < 0 or j > end:
                return _at(Err(at, TRUNCATED), first, fn, at)
            how = sp.get(fn)
            if how is not None:
                e = _payload(buf, i, j, how, depth)
                if e is not None:
                    if e.at < 0:
                        e.at = at
                    return _at(e, first, fn, at)
            i = j
        elif wt == 0:
            if i < end and buf[i] < 0x80:
                i += 1
                continue
            i = varint_end(buf, i, end)
            if i < 0:
                return _at(Err(at, BAD_VARINT), first, fn, at)
        elif wt == 5 or wt == 1:
            i += 4 if wt == 5 else 8
            if i > end:
                return _at(Err(at, TRUNCATED), first, fn, at)
        elif wt == 3:
            i = group_end(buf, i, end, fn, depth + 1)
            if i < 0:
                return _at(Err(at, "bad group: no end tag, or one that does not match it (or more than %d deep)" % MAX_DEPTH), first, fn, at)
        else:
            return Err(at, "end-group tag without a group" if wt == 4 else "wire type %d is not valid" % wt)
    return None


def _at(e: Err, first: int, fn: int, at: int) -> Err:
    e.trail.append((first, fn, at))
    return e


def _payload(buf: bytes, i: int, j: int, how: Tuple[int, Any], depth: int) -> Optional[Err]:
    """The payload ``buf[i:j]`` of a known length-delimited field; an :class:`Err` whose ``at``
    is -1 is the field's own (its tag's index is filled in by the caller)."""
    what = how[0]
    if what == MSG:
        if depth >= MAX_DEPTH:
            return Err(-1, TOO_DEEP)
        return walk(buf, i, j, how[1], depth + 1)
    if what == UTF8:
        return None if utf8_ok(buf[i:j]) else Err(-1, BAD_UTF8)
    if what == VARINTS:
        while i < j:
            if buf[i] < 0x80:
                i += 1
            else:
                i = varint_end(buf, i, j)
                if i < 0:
                    return Err(-1, "bad packed field: a varint runs past its end")
        return None
    size = 4 if what == FIXED32 else 8
    return Err(-1, "bad packed field: %d bytes are not whole %d-byte values" % (j - i, size)) if (j - i) % size else None


def utf8_ok(s: bytes) -> bool:
    """Whether ``s`` is valid UTF-8 as protobuf checks it (no surrogates, nothing over U+10FFFF)."""
    if s.isascii():
        return True
    try:
        s.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def group_end(buf: bytes, i: int, end: int, fn: int, depth: int) -> int:
    """The index after the end tag of the (unknown) group ``fn`` whose start tag ends at ``i``;
    -1 where protobuf refuses it."""
    if depth > MAX_DEPTH:
        return -1
    while i < end:
        t, i = tag(buf, i, end)
        if t < 0 or t >> 3 == 0:
            return -1
        wt = t & 7
        if wt == 4:
            return i if t >> 3 == fn else -1
        if wt == 0:
            i = varint_end(buf, i, end)
        elif wt == 2:
            n, i = length(buf, i, end)
            i = -1 if n < 0 else i + n
        elif wt == 1 or wt == 5:
            i += 8 if wt == 1 else 4
        elif wt == 3:
            i = group_end(buf, i, end, t >> 3, depth + 1)
        else:
            return -1
        if i < 0 or i > end:
            return -1
    return -1


# --- the error, with its field path ------------------------------------------------------------


def error(buf: bytes, e: Err, message: str, base: int, prefix: str) -> PbtxtError:
    """``e`` (from :func:`walk` over a ``message`` in ``buf``, whose ``buf[0]`` is at file offset
    ``base``) as the error the CLI prints; ``prefix``: the path of the message (``node[12]``)."""
    path = prefix + field_path(buf, e, message)
    return PbtxtError(("%s: %s" % (path, e.msg)) if path else e.msg, offset=base + e.at)


def field_path(buf: bytes, e: Err, message: str) -> str:
    """The fields of ``e.trail`` as ``.attr["T"].type`` (a leading dot; map entries by their
    key, repeated fields by their index in the message, unknown fields as ``#99``)."""
    schema = default_schema()
    out: List[str] = []
    trail = e.trail[::-1]
    k = 0
    while k < len(trail):
        first, fn, at = trail[k]
        k += 1
        f = schema.by_number(message).get(fn)
        if f is None:
            out.append(".#%d" % fn)
            break
        name = "." + f.name
        if f.kind == "message" and f.type in schema.map_entries and k < len(trail) and trail[k][1] == 2:
            out.append(name + "[%s]" % _key(buf, at))
            message = schema.by_number(f.type)[2].type
            k += 1
            if schema.by_number(f.type)[2].kind != "message":
                break
            continue
        if f.repeated:
            name += "[%d]" % _index(buf, first, at, fn)
        out.append(name)
        if f.kind != "message":
            break
        message = f.type
    return _runs(out)


def _runs(segments: List[str]) -> str:
    """The segments joined, a run of more than three alike written once with its count
    (``.args[0](x98)``: a path as deep as protobuf allows stays one readable line)."""
    out: List[str] = []
    k = 0
    while k < len(segments):
        n = 1
        while k + n < len(segments) and segments[k + n] == segments[k]:
            n += 1
        out.append(segments[k] * n if n <= 3 else "%s(x%d)" % (segments[k], n))
        k += n
    return "".join(out)


def _index(buf: bytes, i: int, at: int, fn: int) -> int:
    """How many fields ``fn`` come before index ``at`` in the message whose fields start at ``i``."""
    n = 0
    while i < at:
        t, i = length(buf, i, at)
        if t < 0:
            break
        n += t >> 3 == fn
        wt = t & 7
        if wt == 0:
            i = varint_end(buf, i, at)
        elif wt == 2:
            m, i = length(buf, i, at)
            i += m
        elif wt == 3:
            i = group_end(buf, i, at, t >> 3, 0)
        else:
            i += 8 if wt == 1 else 4
        if i < 0:
            break
    return n


def _key(buf: bytes, at: int) -> str:
    """The key of the map entry whose tag is at ``buf[at]``."""
    _, i = length(buf, at, len(buf))
    n, i = length(buf, i, len(buf))
    return entry_key(buf, i, i + n)


def entry_key(data: bytes, i: int, end: int) -> str:
    """The key of the map entry ``data[i:end]`` as ``"T"`` or ``3`` (the last one given)."""
    key: Any = None
    while 0 <= i < end:
        t, i = length(data, i, end)
        if t < 0:
            break
        wt = t & 7
        if wt == 2:
            m, i = length(data, i, end)
            if t >> 3 == 1:
                key = data[i : i + m]
            i += m
        elif wt == 0:
            v, i = length(data, i, end)
            if t >> 3 == 1:
                key = v
        else:
            break
    if key is None:
        return '""'
    if isinstance(key, int):
        return str(key)
    return '"%s"' % key.decode("utf-8", "backslashreplace").replace('"', '\\"')
