r"""fp's byte search on text format (:meth:`TextLane.ahead <pbtxt_scan.text._lane.TextLane.ahead>`):
the POSIX extended regex (:func:`_pattern`) that finds every place a node with one of a few ops
(or a gradients-scope name) may be, and the judgement of a hit's line (:func:`judge_line`, on
the lines :func:`line_context` reads around it). The argument for why no such node is missed is in
``fpbp._rules``' docstring."""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Optional, Sequence, Tuple

from .._kit import NamedTuple
from ..language._lines import IDENT
from ..parallel._grep import _grep_range, _SearchFailed, needle_hits
from ..source._lane import UNKNOWN, Ahead, Hit, Hits, Judged, Search

def _pattern(words: Iterable[str], extra: Iterable[str] = ()) -> str:
    r"""A POSIX extended regex matching, in any text that spells a value holding one of ``words``
    (a string literal, escaped or split, or a bare identifier), at least one place:

    - the word itself, when it is written plainly;
    - where a literal is split inside the word (``"QueueDe" "queue"``), the first piece's end: a
      proper prefix of the word and its closing quote;
    - where a letter is escaped, the escape's start: ``\1``/``\5`` (octal: 0o1xx, and 0o5xx that
      the grammar wraps to a byte, hold the letters), ``\x``, ``\u``, ``\U``.

    ``extra``: more words (field names such as ``library``, which are never escaped or split).
    One regex, not a list of fixed strings: grep runs it as one DFA, as fast as a single word
    (a list of 400 fixed strings ran 3x slower than ``grep -c``).
    """
    words = list(words)
    prefixes = sorted({w[:i] for w in words for i in range(1, len(w))})
    alts = [re.escape(w) for w in words + list(extra)]
    alts.append(r"\\[15xuU]")
    alts.append("(%s)[\"']" % "|".join(prefixes))
    return "|".join(alts)


# A line of any layout that may be one field: the grammar's field name (``language._lines.IDENT``),
# then a value, loosely (any escape), or an opener.
_SINGLE = re.compile(
    b"[ \\t]*(" + IDENT.encode("ascii") + rb""")[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z0-9_.+-]+)[ \t]*\r?"""
)
_OPENER = re.compile(b"[ \\t]*(" + IDENT.encode("ascii") + rb")[ \t]*[{<][ \t]*\r?")
_OP_FIELDS = (b"op", b"type", b"op_type")


def judge_line(prev: bytes, line: bytes, nxt: bytes) -> Judged:
    """What one line may hold: (the op value it sets, or ``None`` if it surely sets no op, or
    ``"?"``; the top-level node name it sets, or ``None`` if surely none, or ``"?"``).

    A line is judged only when it is one whole scalar field (``field: value``) and the next line
    does not continue its string (adjacent literals concatenate); anything else is ``"?"``. A
    ``name`` is a top-level node's when the line before opens a ``node`` block (GraphDef has no
    other ``node`` field) and surely not when it opens any other message.
    """
    from ..language._values import string_value

    m = _SINGLE.fullmatch(line)
    if m is None:
        return UNKNOWN
    field, raw = m.group(1), m.group(2)
    if nxt.lstrip(b" \t")[:1] in (b'"', b"'", b"#"):
        return UNKNOWN
    if raw[:1] in (b'"', b"'"):
        value = string_value(raw.decode("utf-8", "surrogateescape"))
    else:
        value = raw.decode("ascii")
    op = name = None
    if field in _OP_FIELDS:
        op = value[3:] if value.startswith("ge:") else value
    if field == b"name":
        o = _OPENER.fullmatch(prev)
        if o is None:
            name = "?"
        elif o.group(1) == b"node":
            name = value
    return Judged(op, name)


def opens_library(prev: Optional[bytes], line: bytes) -> bool:
    """Whether a line where the word ``library`` was found may open the ``library`` field (only
    a whole scalar field named otherwise surely does not)."""
    m = _SINGLE.fullmatch(line) if prev is not None else None
    return m is None or m.group(1) == b"library"


class LineContext(NamedTuple):
    """The lines around an offset, without their newlines; ``prev`` is ``None`` for a line longer
    than 64 KiB (``line`` and ``nxt`` are then empty), ``end`` the offset where the line ends."""

    prev: Optional[bytes]
    line: bytes
    nxt: bytes
    end: int

    def judged(self) -> Judged:
        """:func:`judge_line` of these lines (a line too long to read cannot be told)."""
        return UNKNOWN if self.prev is None else judge_line(self.prev, self.line, self.nxt)


_WINDOW = 1 << 16


def line_context(g: Any, offset: int, window: int = 4096) -> LineContext:
    """The previous line, the line and the next line around ``offset`` in the file, and where the
    line ends. A line longer than 64 KiB comes back as ``(None, b"", b"", its end)``."""
    lo = max(0, offset - window)
    buf = g.read_at(lo, offset - lo + window)
    i = offset - lo
    s = buf.rfind(b"\n", 0, i) + 1
    e = buf.find(b"\n", i)
    ps = buf.rfind(b"\n", 0, max(0, s - 1)) + 1 if s > 0 else 0
    ne = buf.find(b"\n", e + 1) if e >= 0 else -1
    eof = len(buf) < offset - lo + window
    whole = (ps > 0 or lo == 0) and e >= 0 and (ne >= 0 or eof)
    if whole or (eof and e < 0 and (ps > 0 or lo == 0)):
        if e < 0:
            e = len(buf)
        if ne < 0:
            ne = len(buf)
        prev = buf[ps : s - 1] if s > 0 else b""
        return LineContext(prev, buf[s:e], buf[e + 1 : ne], lo + e)
    if window < _WINDOW:
        return line_context(g, offset, _WINDOW)
    at = offset  # a long line (a tensor's bytes): find its end only
    while True:
        chunk = g.read_at(at, 1 << 20)
        if not chunk:
            return LineContext(None, b"", b"", at)
        j = chunk.find(b"\n")
        if j >= 0:
            return LineContext(None, b"", b"", at + j)
        at += len(chunk)


class LineSearch(Search):
    """One byte search read lazily: its hits at or after a position, each judged by its line."""

    __slots__ = ("_context", "_line_end")

    def __init__(self, start: Hits, context: Any) -> None:
        super().__init__(start)
        self._context = context
        self._line_end = -1  # the end of the last line judged (its other hits are skipped)

    def lines(self, pos: int) -> Iterator[Hit]:
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
                yield Hit(off, ctx.judged())
        except _SearchFailed:
            self.failed = True
        while self.failed:
            yield Hit(-1, UNKNOWN)  # anywhere: the caller reads on


def text_ahead(g: Any, op_words: Sequence[str], name_words: Sequence[str]) -> Optional[Ahead]:
    """The byte searches fp reads ahead with in a text graph (:meth:`Lane.ahead
    <pbtxt_scan.source._lane.Lane.ahead>`), or ``None`` where there can be none."""
    import shutil

    pattern = _pattern(op_words, ["library"])
    ops = needle_hits(g, pattern)
    names = needle_hits(g, _pattern(name_words))
    if ops is None or names is None:
        return None
    grep = shutil.which("grep") or "grep"  # (found: needle_hits needs it)
    return Ahead(
        LineSearch(ops, lambda off: line_context(g, off)),
        LineSearch(names, lambda off: line_context(g, off)),
        lambda start, end: _text_ops(g, _grep_range(grep, g, start, min(end, g.known_size() or end), pattern)),
    )


def _text_ops(g: Any, hits: Iterator[Tuple[int, bytes]]) -> Iterator[Tuple[int, Optional[str]]]:
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
