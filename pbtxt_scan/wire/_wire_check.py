"""A NodeDef's verdict for ``check`` and ``stats``, without building the values: does
:func:`pbtxt_scan.wire._wire_text.check_node` accept it?

``check_node`` renders the node as text format to validate it (every tensor byte C-escaped, every
float printed): about 3 MB/s. :func:`node_ok` walks the same mini-schema (``_wire_text.SCHEMA``)
over tags and length prefixes only, and a payload it need not descend (a ``tensor_content``, a
string) is skipped by its length. It is at least as strict as ``check_node``: ``True`` only where
``check_node`` passes; on ``False`` (a real error, or something it does not try to prove, such as a
group or a singular message given twice) the caller runs ``check_node``, which says what is wrong
and where, with the offsets it always gave.

Attr entries repeat from node to node (``T: DT_FLOAT``, the same shapes; about 9 in 10 in the
benchmark's graphs and more in graphs of copied blocks), so the NodeDef's own attr entries found
valid are remembered by their bytes (:class:`Seen`, bounded): a verdict depends on the bytes
alone, since a NodeDef's attr entries always sit at the same depth.
"""
from __future__ import annotations

from typing import Any, Dict, Set, Tuple

from ._wire_text import _MAX_DEPTH, _WIRE, SCHEMA

# A field's check: _MSG (a message: its name, and whether it is singular), _MAP (map entries: the
# value's message name) or _PACKED (a varint scalar, which may come packed: each varint checked).
_MSG, _MAP, _PACKED = 0, 1, 2


def _compile() -> Dict[str, Dict[int, Tuple[int, Any, bool]]]:
    specs: Dict[str, Dict[int, Tuple[int, Any, bool]]] = {}
    for name, fields in SCHEMA.items():
        spec: Dict[int, Tuple[int, Any, bool]] = {}
        for fn, (_field, typ, label) in fields.items():
            if label == "map":
                spec[fn] = (_MAP, typ[1], False)
            elif isinstance(typ, str) and typ in SCHEMA:
                spec[fn] = (_MSG, typ, label != "*")
            elif _WIRE[typ[0] if isinstance(typ, tuple) else typ] == 0:
                spec[fn] = (_PACKED, None, False)
            # strings, bytes, floats, doubles: nothing in them can be wrong
        specs[name] = spec
    return specs


_SPECS = _compile()
_STRINGS = frozenset((0x0A, 0x12, 0x1A, 0x22))  # NodeDef name, op, input, device
_MEMO_MAX = 1 << 12  # attr runs up to this size are remembered ...
_MEMO_BYTES = 16 << 20  # ... up to about this many bytes at a time (then all forgotten)


class Seen:
    """The attr runs (their bytes) already found valid; forgotten all at once when full."""

    __slots__ = ("entries", "left")

    def __init__(self) -> None:
        self.entries: Set[bytes] = set()
        self.left = _MEMO_BYTES

    def add(self, run: bytes) -> None:
        self.left -= len(run) + 64  # (what a bytes object and its set slot cost, about)
        if self.left < 0:
            self.entries = set()
            self.left = _MEMO_BYTES - len(run) - 64
        self.entries.add(run)


def _varint_end(buf: bytes, i: int, end: int) -> int:
    """The index after the varint at ``buf[i]``, or -1 where ``check_node`` would fail on it
    (past ``end``, over 10 bytes, over 64 bits)."""
    k = i
    while k < end:
        b = buf[k]
        k += 1
        if b < 0x80:
            return -1 if k - i == 10 and b > 1 else k
        if k - i == 10:
            return -1
    return -1


def _length(buf: bytes, i: int, end: int) -> Tuple[int, int]:
    """A length prefix at ``buf[i]``: ``(length, index after it)``; ``(-1, -1)`` where bad."""
    if i < end:
        b = buf[i]
        if b < 0x80:
            return b, i + 1
    k = _varint_end(buf, i, end)
    if k < 0:
        return -1, -1
    n = 0
    for j in range(k - 1, i - 1, -1):
        n = n << 7 | (buf[j] & 0x7F)
    return n, k


def message_ok(buf: bytes, i: int, end: int, name: str, depth: int) -> bool:
    """Whether ``check_node``'s walk of message ``name`` over ``buf[i:end]`` at ``depth`` passes."""
    if depth > _MAX_DEPTH:
        return False
    spec = _SPECS[name]
    once = 0  # singular message fields met (bits by field number): a second one merges, see above
    while i < end:
        t = buf[i]
        if t < 0x80:
            i += 1
        else:
            t, i = _length(buf, i, end)
            if t < 0:
                return False
        fn, wt = t >> 3, t & 7
        if fn == 0:
            return False
        if wt == 2:
            n, i = _length(buf, i, end)
            j = i + n
            if n < 0 or j > end:
                return False
            how = spec.get(fn)
            if how is not None:
                kind, sub, singular = how
                if kind == _MSG:
                    if singular:
                        if once >> fn & 1:
                            return False
                        once |= 1 << fn
                    if not message_ok(buf, i, j, sub, depth + 1):
                        return False
                elif kind == _MAP:
                    if not entry_ok(buf, i, j, sub, depth):
                        return False
                elif not _packed_ok(buf, i, j):
                    return False
            i = j
        elif wt == 0:
            i = _varint_end(buf, i, end)
            if i < 0:
                return False
        elif wt == 1 or wt == 5:
            i += 8 if wt == 1 else 4
            if i > end:
                return False
        else:
            return False  # a group (check_node walks it; this does not try), or a bad wire type
    return True


def entry_ok(buf: bytes, i: int, end: int, value: str, depth: int) -> bool:
    """A map entry (key = 1, value = 2) of a message at ``depth``: its fields, and every value
    as message ``value`` (``check_node`` reads the last value of the last entry of each key: this
    reads them all, which is stricter)."""
    while i < end:
        t = buf[i]
        if t < 0x80:
            i += 1
        else:
            t, i = _length(buf, i, end)
            if t < 0:
                return False
        fn, wt = t >> 3, t & 7
        if fn == 0:
            return False
        if wt == 2:
            n, i = _length(buf, i, end)
            j = i + n
            if n < 0 or j > end:
                return False
            if fn == 2 and not message_ok(buf, i, j, value, depth + 1):
                return False
            i = j
        elif wt == 0:
            i = _varint_end(buf, i, end)
            if i < 0:
                return False
        elif wt == 1 or wt == 5:
            i += 8 if wt == 1 else 4
            if i > end:
                return False
        else:
            return False
    return True


def _packed_ok(buf: bytes, i: int, end: int) -> bool:
    """Packed varints (``check_node`` unpacks every one)."""
    while i < end:
        if buf[i] < 0x80:
            i += 1
            continue
        i = _varint_end(buf, i, end)
        if i < 0:
            return False
    return True


def node_ok(buf: bytes, start: int, i: int, end: int, seen: Seen) -> bool:
    """Whether ``check_node(buf[start:end])`` passes, its fields from ``i`` on not read yet (a
    field boundary). The usual NodeDef (strings, then attr entries, with one-byte tags) is walked
    here, its attr entries, from the first to the node's end, looked up in ``seen`` first;
    anything else by :func:`message_ok` over the whole node."""
    entries = seen.entries
    try:
        while i < end:
            t = buf[i]
            n = buf[i + 1]
            if n < 0x80:
                s = i + 2
            else:
                n, s = _length(buf, i + 1, end)
                if n < 0:
                    return False
            j = s + n
            if j > end:
                return False
            if t == 0x2A:
                return _attrs_ok(buf, start, i, end, seen) if end - i > _MEMO_MAX or buf[i:end] not in entries else True
            if t not in _STRINGS:
                return message_ok(buf, start, end, "NodeDef", 0)
            i = j
    except IndexError:
        return False
    return True


def _attrs_ok(buf: bytes, start: int, i: int, end: int, seen: Seen) -> bool:
    """The NodeDef's (at ``buf[start]``) fields from its first attr entry at ``buf[i]`` to its
    ``end``; remembered when valid (and small)."""
    first = i
    entries = seen.entries
    while i < end:
        t = buf[i]
        n, s = _length(buf, i + 1, end)
        j = s + n
        if n < 0 or j > end:
            return False
        if t == 0x2A:
            # (an entry is remembered as a run of one: its tag, length and payload)
            if j - i > _MEMO_MAX or buf[i:j] not in entries:
                if not entry_ok(buf, s, j, "AttrValue", 0):
                    return False
                if j - i <= _MEMO_MAX:
                    seen.add(buf[i:j])
        elif t not in _STRINGS:
            return message_ok(buf, start, end, "NodeDef", 0)  # not the usual node
        i = j
    if end - first <= _MEMO_MAX:
        seen.add(buf[first:end])
    return True
