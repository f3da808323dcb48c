"""A NodeDef's verdict for ``check`` and ``stats``, fast: does protobuf parse it
(:func:`pbtxt_scan.wire._wire_schema.walk`, TensorFlow 2.21's schema)?

The walk reads tags and length prefixes only; a payload it need not descend (a
``tensor_content``, a ``bytes`` field, an unknown field) is skipped by its length, and a
``string`` is checked as UTF-8 (at C speed: ``bytes.isascii`` first). On ``False`` the caller
walks the node again for the :class:`~pbtxt_scan._errors.PbtxtError` (what is wrong, where, and
its field path).

Attr entries repeat from node to node (``T: DT_FLOAT``, the same shapes; about 9 in 10 in the
benchmark's graphs and more in graphs of copied blocks), so the NodeDef's own attr entries found
valid are remembered by their bytes (:class:`Seen`, bounded): a verdict depends on the bytes
alone, since a NodeDef's attr entries always sit at the same depth in one walk.
"""
from __future__ import annotations

from typing import Set

from ._wire_read import T_ATTR, T_HEADS
from ._wire_schema import length, spec, walk

_NODE = "tensorflow.NodeDef"
_STRINGS = T_HEADS  # NodeDef name, op, input, device
_ATTR = T_ATTR  # NodeDef attr (an entry of map<string, AttrValue>)
_NODE_SPEC = spec(_NODE)  # (looked up once: the walks below run once per node)
_ENTRY_SPEC = _NODE_SPEC[T_ATTR >> 3][1]  # attr's entries
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


def message_ok(buf: bytes, i: int, end: int, name: str, depth: int) -> bool:
    """Whether protobuf parses ``buf[i:end]`` as TensorFlow's message ``name`` (``NodeDef``)
    at ``depth`` (messages above it)."""
    return walk(buf, i, end, spec("tensorflow." + name), depth) is None


def node_ok(buf: bytes, start: int, i: int, end: int, seen: Seen, depth: int = 1) -> bool:
    """Whether protobuf parses the NodeDef ``buf[start:end]`` (at ``depth``: 1 in a GraphDef), its
    fields before ``i`` (a field boundary) already read as a name and an op. The usual NodeDef
    (strings, then attr entries, with one-byte tags) is walked here: its strings (and their tags
    and lengths) checked at once as ASCII, its attr entries, from the first to the node's end,
    looked up in ``seen`` first; anything else by :func:`walk` over the whole node."""
    entries = seen.entries
    try:
        while i < end:
            t = buf[i]
            if t != _ATTR and t not in _STRINGS:
                return walk(buf, start, end, _NODE_SPEC, depth) is None
            n = buf[i + 1]
            if n < 0x80:
                s = i + 2
            else:
                n, s = length(buf, i + 1, end)
                if n < 0:
                    return False
            j = s + n
            if j > end:
                return False
            if t == _ATTR:
                if not buf[start:i].isascii() and not message_ok(buf, start, i, "NodeDef", depth):
                    return False
                return _attrs_ok(buf, start, i, end, seen, depth) if end - i > _MEMO_MAX or buf[i:end] not in entries else True
            i = j
    except IndexError:
        return False
    return buf[start:end].isascii() or walk(buf, start, end, _NODE_SPEC, depth) is None


def _attrs_ok(buf: bytes, start: int, i: int, end: int, seen: Seen, depth: int) -> bool:
    """The NodeDef's (at ``buf[start]``) fields from its first attr entry at ``buf[i]`` to its
    ``end``; remembered when valid (and small)."""
    first = i
    entries = seen.entries
    entry = _ENTRY_SPEC
    while i < end:
        t = buf[i]
        if t != _ATTR:
            return walk(buf, start, end, _NODE_SPEC, depth) is None  # not the usual node
        n = buf[i + 1] if i + 1 < end else 0x80
        if n < 0x80:
            s = i + 2
        else:
            n, s = length(buf, i + 1, end)
        j = s + n
        if n < 0 or j > end:
            return False
        # (an entry is remembered as a run of one: its tag, length and payload)
        if j - i > _MEMO_MAX or buf[i:j] not in entries:
            if walk(buf, s, j, entry, depth + 1) is not None:
                return False
            if j - i <= _MEMO_MAX:
                seen.add(buf[i:j])
        i = j
    if end - first <= _MEMO_MAX:
        seen.add(buf[first:end])
    return True
