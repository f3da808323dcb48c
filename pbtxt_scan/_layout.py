"""The canonical layout as regexes, built from the grammar's own terminals (for ``_canonical``).

``tf.io.write_graph`` and GE write one field per line, two spaces of indentation per level and
``}`` alone on a line. Each regex here spells that layout out for one job: a whole block, one
line, one field with its head lines, the head lines of verified text. They are written with
possessive repeats and atomic groups (no backtracking into a line once matched) and compiled by
``_atomic``, which rewrites those for Pythons before 3.11. Also here: reading a scalar's value and
the last field name off verified text.
"""
from __future__ import annotations

import functools
import re
from typing import Tuple

from ._atomic import compile_bytes
from ._grammar import decode, terminal_patterns, unescape
from ._lexer import _possessive

REL_DEPTH = 12  # nesting levels one block regex spells out below the block's own level
MAX_TOKEN = 1 << 16  # longer identifiers/numbers are left to the general scanner (token limits)
MAX_LITERAL = 1 << 19  # head/label strings at least this long are left to it too (it truncates
# strings over its long-token size, 1 MiB, depending on where its chunks fall)


@functools.lru_cache(maxsize=None)
def terms() -> Tuple[str, str]:
    """(field name, scalar value) regexes as text."""
    t = terminal_patterns()
    assert t["IDENT"] == "[A-Za-z_][A-Za-z0-9_]*", t["IDENT"]  # bounded below; keep in step
    ident = "[A-Za-z_][A-Za-z0-9_]{0,%d}+" % (MAX_TOKEN - 1)
    string = "(?:%s)" % _possessive(t["STRING"])
    # Atomic: the lexer takes the first alternative of NUMBER that matches, never a later one.
    number = "(?![^\\n]{%d})(?>%s)" % (MAX_TOKEN, t["NUMBER"])
    return ident, "(?:%s|-?%s|-?%s)" % (string, number, ident)


def ind(d: int) -> str:
    return "  " * d


def line_text(d: int, stop: int) -> str:
    ident, scalar = terms()
    if d >= stop:
        return "%s%s: %s\\n" % (ind(d), ident, scalar)
    return "%s%s(?:: %s\\n| \\{\\n(?:%s)*+%s\\}\\n)" % (ind(d), ident, scalar, line_text(d + 1, stop), ind(d))


@functools.lru_cache(maxsize=None)
def block_re(d: int) -> "re.Pattern[bytes]":
    """One whole canonical block opened at depth ``d``, nested at most ``REL_DEPTH`` levels."""
    ident, _ = terms()
    text = "%s%s \\{\\n(?:%s)*+%s\\}\\n" % (ind(d), ident, line_text(d + 1, d + REL_DEPTH), ind(d))
    return compile_bytes(text)


@functools.lru_cache(maxsize=None)
def line_re(d: int) -> "re.Pattern[bytes]":
    """One line inside ``d`` open messages: groups (field name, opener, scalar, closer)."""
    ident, scalar = terms()
    closer = "%s(\\}\\n)" % ind(d - 1) if d else "(?!)()"
    text = "(?:%s(%s)(?:( \\{\\n)|: (%s)\\n)|%s)" % (ind(d), ident, scalar, closer)
    return compile_bytes(text)


@functools.lru_cache(maxsize=None)
def long_line_re(d: int) -> "re.Pattern[bytes]":
    """The start of a long string line at depth ``d``: (field name) then the opening quote."""
    return compile_bytes("%s(%s): [\"']" % (ind(d), terms()[0]))


@functools.lru_cache(maxsize=None)
def fields_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """Scalar lines at depth ``d`` (inside a verified block) whose field is one of ``names``."""
    alt = "|".join(re.escape(n) for n in names)
    return re.compile(("\\n%s(%s): ([^\\n]*)" % (ind(d), alt)).encode("ascii"))


@functools.lru_cache(maxsize=None)
def closer_of(d: int) -> bytes:
    return b"\n" + b"  " * d + b"}\n"


@functools.lru_cache(maxsize=None)
def field_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """One whole field at depth ``d``: (name, scalar value, the run of ``names`` scalar lines that
    opens a block, an empty group where a later ``names`` line is). Each line is checked as
    anywhere else; the groups only say where the heads are."""
    ident, scalar = terms()
    alt = "|".join(re.escape(n) for n in names) or "(?!)"
    head = "%s(?:%s): " % (ind(d + 1), alt)
    inner = "(?:%s)" % line_text(d + 1, d + REL_DEPTH)
    text = "%s(%s)(?:: (%s)\\n| \\{\\n((?:%s%s\\n)*+)(?:(?!%s)%s)*+(?:(?=%s)()%s*+)?%s\\}\\n)" % (
        ind(d), ident, scalar, head, scalar, head, inner, head, inner, ind(d),
    )
    return compile_bytes(text)


@functools.lru_cache(maxsize=None)
def run_heads_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """The head lines of a run: (name, a string without escapes, or any other scalar)."""
    alt = "|".join(re.escape(n) for n in names)
    return re.compile('%s(%s): (?:("[^"\\\\\\n]*")|([^\\n]*))\\n' % (ind(d), alt))


IDENT_AT = re.compile(rb" *([A-Za-z_][A-Za-z0-9_]*)")


def last_name(buf: bytes, end: int) -> bytes:
    """The last field name written in the canonical lines before ``end``: the general scanner
    names it in "the last field ... is incomplete" (closers do not change it)."""
    j = end - 1
    while True:
        k = buf.rfind(b"\n", 0, j)
        m = IDENT_AT.match(buf, k + 1, j)
        if m is not None:
            return m.group(1)
        j = k


NEXT_CHAR = re.compile(rb" *([^ ])")
IDENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def text_value(raw: str) -> str:
    """``scalar_value`` of a scalar already decoded (with surrogateescape) as text."""
    q = raw[:1]
    if q == '"' or q == "'":
        if "\\" not in raw:
            return raw[1:-1]
        return decode(unescape(raw[1:-1]))
    return raw


def scalar_value(raw: bytes) -> str:
    """A scalar's value as ``_scan`` computes it (strings unescaped, others as written)."""
    q = raw[:1]
    if q == b'"' or q == b"'":
        if b"\\" not in raw:
            return decode(raw[1:-1])
        return decode(unescape(raw[1:-1].decode("utf-8", "surrogateescape")))
    return raw.decode("ascii")


