"""Telling a binary graph's kind by its first bytes, before any node is read: :func:`sniff` (which
kind's fields explain the head) and :func:`broken` (a graph damaged where sniff can no longer tell
it, and where). Mini-schemas of each kind's known fields, walked over the head's bytes; the
reader itself is :mod:`pbtxt_scan.wire._wire_read`, which takes the kinds' names, the truncation
messages and the varint from here (a text graph's sniff loads no reader and no schema table)."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from .._errors import PbtxtError

GRAPHDEF, METAGRAPH, SAVEDMODEL = "graphdef", "metagraph", "savedmodel"
SNIFF_BYTES = 1 << 16

TRUNCATED_FILE = "truncated: a length-delimited field runs past the end of the file"
TRUNCATED_MSG = "truncated: a field runs past the end of its enclosing message"


def _error(msg: str, offset: int) -> PbtxtError:
    return PbtxtError(msg, offset=offset)


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
            return v & 0xFFFFFFFFFFFFFFFF, i + k + 1  # (protobuf keeps a 10th byte's low bit only)
        shift += 7
    raise _error("bad varint: more than 10 bytes", start)


_ROOTS = {GRAPHDEF: "tensorflow.GraphDef", METAGRAPH: "tensorflow.MetaGraphDef", SAVEDMODEL: "tensorflow.SavedModel"}

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
        kind = _as_parsed(schema.get(fn), wt, depth)
        if kind is None:
            if depth == 0 or fn <= max(schema) or wt not in (0, 1, 2, 5):
                if fn not in schema or depth == 0 or wt not in (0, 1, 2, 5):
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


def _as_parsed(kind: Any, wt: int, depth: int) -> Any:
    """A known field's kind, or None where protobuf would keep it as an unknown field: below the
    top level, one with another wire type than its own (a top-level one still tells the kind)."""
    if kind is None or depth == 0 or wt == (0 if kind == "v" else 2):
        return kind
    return None


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
    if found[1][0][2] >= read:
        return "", at, why
    path = _path_to(head, kind, at)
    return kind, at, ("%s: %s" % (path, why) if path else why)


def _path_to(head: bytes, kind: str, at: int) -> str:
    """The field path (``node[3].name``) of the break at ``at``, as the schema's walk finds it."""
    from ._wire_schema import field_path, spec, walk  # (a damaged head only: a text graph's fp never loads it)

    root = _ROOTS[kind]
    e = walk(head, 0, len(head), spec(root), 0)
    if e is None or e.at > at:
        return ""
    return field_path(head, e, root).lstrip(".")


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
        kind = _as_parsed(schema.get(fn), wt, depth)
        if kind is None:
            if fn == 0:
                return start, "field number 0 is not valid", start
            if (depth == 0 or fn <= max(schema) or wt not in (0, 1, 2, 5)) and (fn not in schema or wt not in (0, 1, 2, 5)):
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
