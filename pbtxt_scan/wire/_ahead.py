r"""fp's byte search ahead on a binary GraphDef (``WireLane.ahead``): the text lane's design
(``text._needles``, read by ``fpbp._ahead``) on the wire.

A NodeDef's op is field 2, a length-delimited string, so an op stands in the file as its raw
bytes after the tag ``\x12`` and its length: ``\x12\x0fIteratorGetNext``. The ops search is one
``grep -E`` (``parallel._grep``, C speed) for exactly those bytes of every op asked for (fp's:
``fpbp._needles._FP_OPS``); the names search for the words asked for (``gradient``). A hit is not yet a node: the same
bytes may sit in a tensor's content, an attr string (``s: "Placeholder"`` is ``\x12\x0b...`` too),
a name or input, or a library function's node. Each hit is verified at a node boundary
(``_wire_seek``): from the position fp has read to (a top-level field boundary), the walk
follows the length prefixes to the top-level field that holds the hit; the hit counts only when
that field is a ``node`` and the hit lies in its ``op`` (``name``) field, whose whole value is then
read. So fp reads on only to a real node that can change its answer, and, where there is none,
stops: no block after the answer is decoded, nothing is kept per node.

Binary GraphDefs only (``.pb``, concatenated messages included): in a MetaGraphDef or SavedModel
the nodes sit inside containers, so fp reads their blocks instead (the same answers). Where the
fields do not chain (a damaged file), every later hit counts: fp reads on and meets the damage.
"""
from __future__ import annotations

import re
from typing import Any, FrozenSet, Iterator, Optional, Sequence, Tuple

from ._wire_marks import SPLIT_MIN, far_marks
from ._wire_seek import NAME, NODE, OP, Field, Malformed, TopWalk, node_field
from ..parallel._grep import _grep_range, _SearchFailed, needle_hits
from ..source._lane import UNKNOWN, Ahead, Hit, Hits, Judged, Search

_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")


def _ere(raw: str) -> str:
    return _ERE_SPECIAL.sub(r"\\\1", raw)


def op_pattern(ops: FrozenSet[str]) -> str:
    """The POSIX extended regex of every op field of ``ops``: tag, length, the op's bytes.
    (A length of 10 is a newline byte, which grep would read as a second pattern: such an op is
    searched by its name alone, and the verification places it all the same.)"""
    alts = []
    for op in sorted(ops):
        n = len(op)
        alts.append(_ere(op) if n in (10, 0) or n >= 0x80 else _ere("\x12" + chr(n) + op))
    return "|".join(alts)


def name_pattern(words: Sequence[str]) -> str:
    return "|".join(_ere(w) for w in words)


_MARK = 1 << 20  # (the far walk's boundaries: only its last one before the hit is kept)


class Verifier:
    """Where hits of one search lie, for hits asked in increasing order: the top-level walk from a
    field boundary, and the last field it found (several hits may fall in one node). A hit more
    than ``_wire_marks.SPLIT_MIN`` past the walk is walked to by parallel parts, joined at
    boundaries (``far_marks``: the same fields, on every usable core), and the walk goes on from
    the last boundary they prove before it: the first gradients node of a 1 GB graph lies half a
    GB on, 0.5 s of one core's walk."""

    __slots__ = ("_read", "_size", "_walk", "_last", "broken")

    def __init__(self, g: Any, start: int) -> None:
        self._read = g.read_at
        self._size = g.size or 0
        self._walk = TopWalk(g.read_at, self._size, start)
        self._last: Optional[Field] = None
        self.broken = False  # the fields did not chain: nothing can be told after that

    def value(self, off: int, field: int) -> Optional[str]:
        """The value of field ``field`` of the top-level node whose field holds byte ``off``;
        ``None`` if ``off`` is not in such a field (another field of a node, the library, past the
        end); ``"?"`` when the bytes do not chain."""
        if self.broken:
            return "?"
        try:
            last = self._last
            top = last if last is not None and last.tag <= off < last.end else self._holding(off)
            self._last = top
            if top is None or top.number != NODE:
                return None
            f = node_field(self._read, top, off)
            if f is None or f.number != field:
                return None
            raw = self._read(f.start, f.end - f.start)
        except Malformed:
            self.broken = True
            return "?"
        return raw.decode("utf-8", "surrogateescape")

    def _holding(self, off: int) -> Optional[Field]:
        walk = self._walk
        if off - walk.pos > SPLIT_MIN:
            from ..parallel._cores import usable_cores

            marks = far_marks(self._read, self._size, walk.pos, off, _MARK, usable_cores())
            if marks and walk.pos < marks[-1] <= off:
                walk = self._walk = TopWalk(self._read, self._size, marks[-1])
        return walk.holding(off)


class _WireSearch(Search):
    """A byte search whose hits are verified by :class:`Verifier`: each hit in a top-level node's
    ``field`` yields that field's value (as ``Judged.op`` for the op field, ``Judged.name`` for
    the name field); hits elsewhere are passed over."""

    __slots__ = ("_g", "_field", "_verifier")

    def __init__(self, start: Hits, g: Any, field: int) -> None:
        super().__init__(start)
        self._g = g
        self._field = field
        self._verifier: Optional[Verifier] = None
        self.library = True  # (a byte search cannot tell: the library is looked for when needed)

    def lines(self, pos: int) -> Iterator[Hit]:
        self.begin(pos)
        assert self._hits is not None
        if self._verifier is None:
            self._verifier = Verifier(self._g, pos)
        v = self._verifier
        try:
            for off, _text in self._hits:
                if off < pos:
                    continue
                value = v.value(off, self._field)
                if value is None:
                    continue
                if value == "?":
                    yield Hit(off, UNKNOWN)
                elif self._field == OP:
                    yield Hit(off, Judged(value, None))
                else:
                    yield Hit(off, Judged(None, value))
        except _SearchFailed:
            self.failed = True
        while self.failed:
            yield Hit(-1, UNKNOWN)


def wire_ahead(g: Any, ops_wanted: FrozenSet[str], name_words: Sequence[str]) -> Optional[Ahead]:
    """fp's searches on a binary GraphDef (``g``'s lane's kind), or ``None`` (another kind, a
    stream, no grep)."""
    import shutil

    from ._wire import GRAPHDEF

    if g.lane.kind != GRAPHDEF:
        return None
    ops_rx, names_rx = op_pattern(ops_wanted), name_pattern(name_words)
    ops, names = needle_hits(g, ops_rx), needle_hits(g, names_rx)
    if ops is None or names is None:
        return None
    grep = shutil.which("grep") or "grep"

    def ops_in(start: int, end: int) -> Iterator[Tuple[int, Optional[str]]]:
        return _verified(g, start, _grep_range(grep, g, start, min(end, g.size or end), ops_rx))

    return Ahead(_WireSearch(ops, g, OP), _WireSearch(names, g, NAME), ops_in)


def _verified(g: Any, start: int, hits: Iterator[Tuple[int, bytes]]) -> Iterator[Tuple[int, Optional[str]]]:
    """Each hit that lies in a top-level node's op field, with that op (``"?"``: cannot tell)."""
    v = Verifier(g, start)
    try:
        for off, _text in hits:
            op = v.value(off, OP)
            if op is not None:
                yield off, op
    finally:
        close = getattr(hits, "close", None)
        if close is not None:
            close()
