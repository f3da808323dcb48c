r"""Reading ahead for fp: where a node that could still change fp's answer may be, found by a
byte search instead of reading every later block (the argument for why it never misses one is in
``_rules``' docstring).

The search is one POSIX extended regex (``_needles._pattern``) run by ``grep -E`` (``_grep``: a
DFA, one C pass however many alternatives; Python's ``re`` ran the same pattern at 5 MB/s). grep
never opens the user's file: it reads the one open :class:`GraphFile`'s descriptor itself (a range
to the end: our own reads are positioned, so its offset is free) or a pipe this process fills from
it with ``os.sendfile`` at explicit offsets, so the input is still opened once. A long rest is cut
into parts, one a usable core, searched at once. Without grep, on streams (stdin, pipes, gzip) or
when grep fails, there is no search and fp reads the blocks instead: the same answers, at block
speed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple, Optional, Tuple

from ._catalog import in_gradients_scope
from ._grep import _grep, _grep_range, _SearchFailed
from ._needles import _GRAD_WORDS, _OP_WORDS, UNKNOWN, Judged, LineContext, _pattern, line_context, opens_library

if TYPE_CHECKING:
    from ..graph._input import GraphFile

Hits = Callable[[int], Iterator[Tuple[int, bytes]]]  # a byte search from an offset on
OpsIn = Callable[[int, int], Iterator[Tuple[int, Optional[str]]]]  # the ops judged in a range


class _Hit(NamedTuple):
    """A hit's line: where it is (``-1``: the search failed, anywhere), and what it may set."""

    off: int
    judged: Judged


class _Search:
    """One byte search read lazily: its hits at or after a position, each judged by its line."""

    __slots__ = ("_start", "_context", "_hits", "_line_end", "failed", "library")

    def __init__(self, start: Hits, context: Callable[[int], LineContext]) -> None:
        self._start = start
        self._context = context
        self._hits: Optional[Iterator[Tuple[int, bytes]]] = None
        self._line_end = -1  # the end of the last line judged (its other hits are skipped)
        self.failed = False
        self.library = False  # a line that may open the `library` met (only if searched for)

    def begin(self, pos: int) -> None:
        if self._hits is None:
            self._hits = self._start(pos)

    def close(self) -> None:
        close = getattr(self._hits, "close", None)
        if close is not None:
            close()  # stops the search process

    def lines(self, pos: int) -> Iterator[_Hit]:
        """Each hit's line from ``pos`` on, judged (:func:`judge_line`); ``(-1, ("?", "?"))``
        forever if the search failed."""
        self.begin(pos)
        assert self._hits is not None
        try:
            for off, text in self._hits:
                if off < pos or off <= self._line_end:
                    continue
                ctx = self._context(off)
                self._line_end = ctx.end
                if text == b"library" and opens_library(ctx.prev, ctx.line):  # the word, not a value
                    self.library = True
                yield _Hit(off, ctx.judged())
        except _SearchFailed:
            self.failed = True
        while self.failed:
            yield _Hit(-1, UNKNOWN)  # anywhere: the caller reads on


class _Ahead:
    """What the rest of the top level holds, learned from two byte searches instead of blocks.

    ``ops``: every place a node's op may be one that matters (``_needles._FP_OPS``, by
    ``_needles._OP_WORDS``); ``names``: every place a top-level node's name may be in a gradients
    scope. Their hits come from :func:`needle_hits` (C speed), each judged by its line
    (:func:`judge_line`): a line that surely sets no such op (or name) is passed over; any other
    counts. ``ops_in``: the ops search over a range only (fp's look for a copy of the model), as
    ``(offset, op)`` of each hit (``None``: surely no op there; ``"?"``: cannot tell).
    A binary graph's searches are ``_wire_ahead``'s: the same hits, verified by length prefixes.
    """

    __slots__ = ("_ops", "_names", "_ops_in", "_op_lines", "_pending", "read_all")

    def __init__(self, ops: _Search, names: _Search, *, ops_in: Optional[OpsIn] = None) -> None:
        self._ops = ops
        self._names = names
        self._ops_in = ops_in
        self._op_lines: Optional[Iterator[_Hit]] = None
        self._pending: Optional[Tuple[int, str]] = None  # the hit last returned: (offset, op)
        self.read_all = False  # the ops search has gone to the end of the file

    def next_op(self, pos: int, wanted: Callable[[str], bool]) -> Optional[int]:
        """Where the first node after ``pos`` whose op passes ``wanted`` may be, or ``None`` if
        there is surely none (a line whose op cannot be told counts as a possible one)."""
        if self._op_lines is None:
            self._op_lines = self._ops.lines(pos)
        if self._pending is not None:
            off, op = self._pending
            if off >= pos and (op == "?" or wanted(op)):
                return off
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
    """The byte searches fp reads ahead with in a text graph, or ``None`` where there can be none
    (a binary graph's: ``_wire_ahead.wire_ahead``)."""
    import shutil

    pattern = _pattern(_OP_WORDS, ["library"])
    ops = needle_hits(g, pattern)
    names = needle_hits(g, _pattern(_GRAD_WORDS))
    if ops is None or names is None:
        return None
    grep = shutil.which("grep") or "grep"  # (found: needle_hits needs it)
    return _Ahead(
        _Search(ops, lambda off: line_context(g, off)),
        _Search(names, lambda off: line_context(g, off)),
        ops_in=lambda start, end: _text_ops(g, _grep_range(grep, g, start, min(end, g.size or end), pattern)),
    )


def _text_ops(g: "GraphFile", hits: Iterator[Tuple[int, bytes]]) -> Iterator[Tuple[int, Optional[str]]]:
    """Each hit's op, judged by its line (one a line; the library's opener sets none)."""
    last = -1
    try:
        for off, text in hits:
            if off <= last or text == b"library":  # (the library's opener: no node here)
                continue
            ctx = line_context(g, off)
            last = ctx.end
            yield off, ctx.judged().op
    finally:
        close = getattr(hits, "close", None)
        if close is not None:
            close()


def needle_hits(g: "GraphFile", pattern: str) -> Optional[Hits]:
    """A byte search for ``pattern`` (POSIX extended regex, bytes as bytes) in the file: called
    with an offset, it yields ``(offset, text)`` of every match from there on, in order.
    ``None`` when there can be none (no grep; a stream): the caller reads blocks instead."""
    import shutil

    if not g.regular or not g.lane.searchable:
        return None
    grep = shutil.which("grep")
    if grep is None:
        return None
    return lambda offset: _grep(grep, g, offset, pattern)
