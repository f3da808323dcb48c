"""The canonical layout as regexes, built from the grammar's own terminals (for ``_canonical``):
the line as ``language._lines`` spells it (its classifier, one for every depth, is ``line_re``), composed
level by level for whole blocks and runs of fields.

``tf.io.write_graph`` and GE write one field per line, two spaces of indentation per level and
``}`` alone on a line. Each regex here spells that layout out for one job: a whole block, one
line, one field with its head lines, the head lines of verified text. Also here: reading a
scalar's value and the last field name off verified text.

Two spellings of the same regexes, chosen by the Python's ``re`` (``native``):

- From 3.11 on, possessive repeats and atomic groups: no backtracking into a line once matched,
  and no backtracking state kept per line.
- Before 3.11, ``_atomic`` can emulate those (a look-ahead and a back-reference), but that costs a
  second pass over every nested block and a capture group per level. None of them is needed:
  in the layout a repeat can never usefully give anything back, because whatever follows it
  cannot start where one of its iterations started, and NUMBER ends its line wherever it is
  used. So the old spelling is plain greedy throughout (each place says why). It matches what
  the native one matches; on text that does not match it backtracks, but every line reads one
  way only (the alternatives of a line exclude each other), so a failure costs linear time.
  ``test_layout_forms`` checks both against the native spelling, and the time of failing
  blocks. Indentation is a counted repeat there (`` {6}``): one step, not one per space. And
  ``re`` keeps backtracking state for every line a greedy repeat has taken, so ``_canonical``
  matches smaller blocks whole there (``_BIG``).
"""
from __future__ import annotations

import functools
import re
from typing import Any, List, Optional, Tuple

from .._kit import regex
from ..language._atomic import NATIVE, compile_bytes, user_groups
from ..language._values import _number, decode, unescape, unescape_in
from ..language._lines import CLOSE, IDENT, OPEN, SEP, VERIFIED_VALUE, ind, line_re, terms
from .._model import Bare, Field, Message

# Nesting levels one block regex spells out below the block's own level; deeper blocks are
# entered. Fewer before 3.11, where compiling these long patterns takes longer (the text grows
# with the depth: 0.05 s for a node's regex at 12 levels on 3.9, and one more regex for each
# depth a file makes the walk enter); 8 levels hold every node and node_def of the fixtures and
# of the generated graphs.
REL_DEPTH = 12 if NATIVE else 8
MAX_LITERAL = 1 << 19  # head/label strings at least this long are left to it too (it truncates
# strings over its long-token size, 1 MiB, depending on where its chunks fall)
SMALL = 1 << 16  # a whole block this long or longer has no shape kept: its pieces would be many (_schema, _batch)


def _rep(native: bool) -> str:
    """The repeat of the lines inside a block: each starts with one more level of indentation
    and a name, where the closer that follows them has ``}``, so none is ever given back."""
    return "*+" if native else "*"


def line_text(d: int, stop: int, native: bool = NATIVE) -> str:
    ident, scalar = terms(native)
    i = ind(d, native)
    if d >= stop:
        return "%s%s%s%s\\n" % (i, ident, SEP, scalar)
    inner = line_text(d + 1, stop, native)
    return "%s%s(?:%s%s\\n|%s\\n(?:%s)%s%s%s\\n)" % (i, ident, SEP, scalar, OPEN, inner, _rep(native), i, CLOSE)


@functools.lru_cache(maxsize=None)
def block_re(d: int, native: bool = NATIVE) -> "re.Pattern[bytes]":
    """One whole canonical block opened at depth ``d``, nested at most ``REL_DEPTH`` levels."""
    return compile_bytes(block_text(d, native), native)


def block_text(d: int, native: bool = NATIVE) -> str:
    ident, _ = terms(native)
    i = ind(d, native)
    inner = line_text(d + 1, d + REL_DEPTH, native)
    return "%s%s%s\\n(?:%s)%s%s%s\\n" % (i, ident, OPEN, inner, _rep(native), i, CLOSE)


@functools.lru_cache(maxsize=None)
def long_line_re(d: int, native: bool = NATIVE) -> "re.Pattern[bytes]":
    """The start of a long string line at depth ``d``: (field name) then the opening quote."""
    return compile_bytes("%s(%s)%s[\"']" % (ind(d, native), terms(native)[0], SEP), native)


@functools.lru_cache(maxsize=None)
def fields_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """Scalar lines at depth ``d`` (inside a verified block) whose field is one of ``names``."""
    alt = "|".join(re.escape(n) for n in names)
    return re.compile(("\\n%s(%s)%s(%s)" % (ind(d, True), alt, SEP, VERIFIED_VALUE)).encode("ascii"))


@functools.lru_cache(maxsize=None)
def closer_of(d: int) -> bytes:
    return b"\n" + b"  " * d + b"}\n"


@functools.lru_cache(maxsize=None)
def field_re(d: int, names: Tuple[str, ...], native: bool = NATIVE) -> "re.Pattern[bytes]":
    """One whole field at depth ``d``: (name, scalar value, the run of ``names`` scalar lines that
    opens a block, an empty group where a later ``names`` line is). Each line is checked as
    anywhere else; the groups only say where the heads are."""
    return compile_bytes(field_text(d, names, native), native)


def warm(_built: Tuple[Any, ...] = (block_re, field_re)) -> bool:
    """Whether this process has compiled a whole-block or a batch regex: the walk's warm-up
    (``_canonical``) is spent only until then. (``_built``: the caches themselves, whatever a
    test puts in their place.)"""
    return any(f.cache_info().currsize for f in _built)


def field_text(d: int, names: Tuple[str, ...], native: bool = NATIVE) -> str:
    ident, scalar = terms(native)
    if not names:  # (no heads: the same groups, the run always empty, no later head; half the text)
        inner = "(?:%s)" % line_text(d + 1, d + REL_DEPTH, native)
        return "%s(%s)(?:%s(%s)\\n|%s\\n()%s%s(?:(?!)())?%s%s\\n)" % (
            ind(d, native), ident, SEP, scalar, OPEN, inner, _rep(native), ind(d, native), CLOSE,
        )
    alt = "|".join(re.escape(n) for n in names)
    head = "%s(?:%s)%s" % (ind(d + 1, native), alt, SEP)
    inner = "(?:%s)" % line_text(d + 1, d + REL_DEPTH, native)
    r = _rep(native)
    # Old re: the run of head lines is greedy, and "(?!head)" after it says it took them all
    # (given back, a head line would be read again as a later one: the same span, other groups,
    # and a failing block would be read once more per head line given back).
    run = "((?:%s%s\\n)*+)" % (head, scalar) if native else "((?:%s%s\\n)*)(?!%s)" % (head, scalar, head)
    return "%s(%s)(?:%s(%s)\\n|%s\\n%s(?:(?!%s)%s)%s(?:(?=%s)()%s%s)?%s%s\\n)" % (
        ind(d, native), ident, SEP, scalar, OPEN, run, head, inner, r, head, inner, r, ind(d, native), CLOSE,
    )


@functools.lru_cache(maxsize=None)
def scalars_re(d: int, names: Tuple[str, ...], native: bool = NATIVE) -> "re.Pattern[bytes]":
    """A run of scalar lines at depth ``d``, none of them a ``name`` or one of ``names``. (Nothing
    follows the repeat, so greedy stops where possessive does.)"""
    ident, scalar = terms(native)
    alt = "|".join(re.escape(n) for n in ("name",) + names)
    text = "(?:%s(?!(?:%s)%s)%s%s%s\\n)+%s" % (ind(d, native), alt, SEP, ident, SEP, scalar, "+" if native else "")
    return compile_bytes(text, native)


@functools.lru_cache(maxsize=None)
def run_heads_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[str]":
    """The head lines of a run: (name, a string without escapes, or any other scalar)."""
    alt = "|".join(re.escape(n) for n in names)
    return re.compile('%s(%s)%s(?:("[^"\\\\\\n]*")|(%s))\\n' % (ind(d, True), alt, SEP, VERIFIED_VALUE))


IDENT_AT = regex((" *(%s)" % IDENT).encode("ascii"))


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
IDENT_NAME = re.compile(IDENT + "\\Z")


def text_value(raw: str) -> str:
    """``scalar_value`` of a scalar already decoded (with surrogateescape) as text."""
    q = raw[:1]
    if q == '"' or q == "'":
        if "\\" not in raw:
            return raw[1:-1]
        return decode(unescape(raw[1:-1]))
    return Bare(raw)


def scalar_value(raw: bytes) -> str:
    """A scalar's value as ``_scan`` computes it (strings unescaped, others as written)."""
    q = raw[:1]
    if q == b'"' or q == b"'":
        if b"\\" not in raw:
            return decode(raw[1:-1])
        return decode(unescape_in(raw, 1, len(raw) - 1))  # (a tensor_content: no copies of it)
    return Bare(raw.decode("ascii"))


# --- a whole block, read as the grammar parses it ------------------------------------------------


def read_block(raw: bytes, d: int, first_line: int) -> Optional[Message]:
    """The one-field :class:`Message` that the grammar's parse gives for a block in the writer
    layout (``_grammar.parse_text``, positions included), read with the walk's line regexes
    instead: each line is one field opener, scalar or closer, and reads one way only, so the
    lines fix the tree. It spares a small block (fp's placeholder, ``show``) the Lark parser,
    ~0.14 s to import and build. ``raw`` runs from the block's field name, at depth ``d`` (column
    ``2 d + 1``) on line ``first_line``, to its closing ``}``. None when a line is out of the
    layout: the caller parses with Lark, which also words any error."""
    buf = b"  " * d + raw + b"\n"
    root = Message()
    outer: List[Message] = []
    cur = root
    depth = d
    pos = 0
    line = first_line
    lre = line_re()
    groups = user_groups(lre)
    while True:
        m = lre.match(buf, pos)
        if m is None:
            return None
        spaces, ident, opener, scalar, closer = m.group(*groups)
        if len(spaces) != 2 * (depth - 1 if closer is not None else depth):
            return None
        pos = m.end()
        if closer is not None:
            depth -= 1
            cur = outer.pop()
            if depth == d:
                return root if pos == len(buf) else None
        elif opener is not None:
            msg = Message()
            cur.append(Field(ident.decode("ascii"), msg, line, 2 * depth + 1))
            outer.append(cur)
            cur = msg
            depth += 1
        else:
            value = _value(scalar)
            if depth == d or value is None:
                return None  # (a scalar field, not a block; a value Lark reports)
            cur.append(Field(ident.decode("ascii"), value, line, 2 * depth + 1))
        line += 1


def _value(raw: bytes) -> Any:
    """A scalar's value as the grammar's transformer makes it (``_grammar._ToData``)."""
    c = raw[:1]
    if c == b'"' or c == b"'":
        return scalar_value(raw)
    neg = c == b"-"
    text = raw[1:] if neg else raw
    if text[:1] not in b"0123456789.":  # (an identifier: DT_FLOAT, true, -inf)
        return raw.decode("ascii")
    v = _number(text.decode("ascii"))
    if neg:
        # (past the 4,300-digit conversion limit a number stays text, which Lark's negation fails
        # on: let it report it)
        return None if isinstance(v, str) else -v
    return v
