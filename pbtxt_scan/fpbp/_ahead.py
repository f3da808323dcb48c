r"""Reading ahead for fp: where a node that could still change fp's answer may be, found by a
byte search instead of reading every later block (the argument for why it never misses one is in
``_rules``' docstring).

The searches are the lane's (``Lane.ahead``: on text, ``text._needles``; on a binary GraphDef,
``wire._ahead``); this module reads them. On text the search is one POSIX extended regex
(``text._needles._pattern``) run by ``grep -E`` (``parallel._grep``: a
DFA, one C pass however many alternatives; Python's ``re`` ran the same pattern at 5 MB/s). grep
never opens the user's file: it reads the one open :class:`GraphFile`'s descriptor itself (a range
to the end: our own reads are positioned, so its offset is free) or a pipe this process fills from
it with ``os.sendfile`` at explicit offsets, so the input is still opened once. A long rest is cut
into parts, one a usable core, searched at once. Without grep, on streams (stdin, pipes, gzip) or
when grep fails, there is no search and fp reads the blocks instead: the same answers, at block
speed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, Optional, Tuple

from ._catalog import in_gradients_scope
from ._needles import _FP_OPS, _GRAD_WORDS, _OP_WORDS
from ..parallel._grep import _SearchFailed
from ..source._lane import Hit, OpsIn, Search

if TYPE_CHECKING:
    from ..graph._input import GraphFile


class _Ahead:
    """What the rest of the top level holds, learned from two byte searches instead of blocks.

    ``ops``: every place a node's op may be one that matters (``_needles._FP_OPS``, by
    ``_needles._OP_WORDS``); ``names``: every place a top-level node's name may be in a gradients
    scope. Their hits come from :func:`needle_hits` (C speed), each judged by its line
    (on text, ``text._needles.judge_line``): a line that surely sets no such op (or name) is passed over; any other
    counts. ``ops_in``: the ops search over a range only (fp's look for a copy of the model), as
    ``(offset, op)`` of each hit (``None``: surely no op there; ``"?"``: cannot tell).
    A binary graph's searches are ``wire._ahead``'s: the same hits, verified by length prefixes.
    """

    __slots__ = ("_ops", "_names", "_ops_in", "_op_lines", "_pending", "read_all")

    def __init__(self, ops: Search, names: Search, *, ops_in: Optional[OpsIn] = None) -> None:
        self._ops = ops
        self._names = names
        self._ops_in = ops_in
        self._op_lines: Optional[Iterator[Hit]] = None
        self._pending: Optional[Tuple[int, str]] = None  # the hit last returned: (offset, op)
        self.read_all = False  # the ops search has gone to the end of the file

    def next_op(self, pos: int, wanted: Callable[[str], bool]) -> Optional[int]:
        """Where the first node after ``pos`` whose op passes ``wanted`` may be, or ``None`` if
        there is surely none (a line whose op cannot be told counts as a possible one)."""
        if self._op_lines is None:
            self._op_lines = self._ops.lines(pos)
        if self._pending is not None:
            at, was = self._pending
            if at >= pos and (was == "?" or wanted(was)):
                return at
            self._pending = None
        for off, (op, _name) in self._op_lines:
            if off < 0:  # the search failed: every line counts
                return pos
            if op is None or off < pos:
                continue
            if op == "?" or wanted(op):
                self._pending = (off, op)
                return off
        self.read_all = True
        return None

    def input_within(self, start: int, end: int, wanted: Callable[[str], bool]) -> Optional[int]:
        """Where the first node in ``[start, end)`` whose op may pass ``wanted`` (a node whose op
        cannot be told counts) is, or ``None`` if there is surely none there. One bounded search."""
        if self._ops_in is None or start >= end:
            return None
        hits = self._ops_in(start, end)
        try:
            for off, op in hits:
                if op == "?" or (op is not None and wanted(op)):
                    return off
        except _SearchFailed:
            return start  # cannot tell: read on
        finally:
            close = getattr(hits, "close", None)
            if close is not None:
                close()
        return None

    def no_library(self) -> bool:
        """True when the ops search read to the end of the file and met no ``library`` field."""
        return self.read_all and not self._ops.library and not self._ops.failed

    def close(self) -> None:
        self._ops.close()
        self._names.close()

    def top_gradients(self, pos: int) -> Optional[bool]:
        """Whether a top-level node after ``pos`` sits in a gradients scope: True, False, or None
        when the search cannot tell (a line it cannot judge)."""
        for _off, (_op, name) in self._names.lines(pos):
            if name == "?":
                return None
            if name is not None and in_gradients_scope(name):
                return True
        return False


def ahead_of(g: "GraphFile") -> Optional[_Ahead]:
    """The byte searches fp reads ahead with, as the graph's lane makes them (text: each hit judged
    by its line; wire: verified at a node boundary), or ``None`` where there can be none."""
    got = g.lane.ahead(_FP_OPS, _OP_WORDS, _GRAD_WORDS)
    return None if got is None else _Ahead(got.ops, got.names, ops_in=got.ops_in)


wire_ahead = ahead_of  # (the name tests knew: on a binary GraphDef the lane's searches are the wire's)
