"""The writer layout's line, from the grammar's terminals: the one classifier every reader of it uses.

``tf.io.write_graph`` (Python ``text_format``) and GE (C++ ``TextFormat::Print``) write one field
per line, two spaces of indentation per level and ``}`` alone on a line::

    IND IDENT ": " SCALAR "\\n"     a field (one string literal, or "-"? a number or an identifier)
    IND IDENT " {\\n"               a message opens (its fields at IND and two spaces)
    IND "}\\n"                      ... and closes at the indentation it opened at

IDENT, the string literal and NUMBER are the grammar's terminals (``_terminals``, generated from
``grammar/pbtxt.lark``); the rest of a line is spelt here once (:data:`OPEN`, :data:`SEP`,
:data:`CLOSE`). :func:`classify` reads one line: (indentation, kind, field name, raw value). Each
reader composes its own regex from these pieces, specialised for its job and speed:

- the fast path's walk (``text._canonical``) reads a line with :func:`line_re` and checks its
  indentation against the depth it is at; ``text._layout`` spells the same line out level by level
  for whole blocks (:func:`classifier_text`, :func:`terms`);
- GE's attrs (``ge._fast``) read lines the walk has verified already, so a value is the rest of its
  line (:data:`VERIFIED_VALUE`, in :func:`verified_line_text`: no second check, and a long ``s``
  attr is passed at memchr speed);
- the hood (``text._hood``) reads the head of a field line up to a value's opening quote
  (:data:`FIELD_HEAD`).

``tests/test_line_classifier.py`` checks that each of them classifies a line as :func:`classify`
does and as the Lark parse reads it.
"""
from __future__ import annotations

import functools
import re
from typing import Optional, Tuple

from .._kit import NamedTuple
from ._atomic import NATIVE, compile_bytes, user_groups
from ._terminals import TERMINALS

MAX_TOKEN = 1 << 16  # longer identifiers/numbers are left to the general scanner (token limits)

OPEN = " \\{"  # after a field name: a message opens
SEP = ": "  # after a field name: its scalar value follows
CLOSE = "\\}"  # alone after the indentation: the open message closes
IDENT = TERMINALS["IDENT"]  # a field name, unbounded (readers of verified text)
VERIFIED_VALUE = "[^\\n]*"  # a value on a line verified already: the rest of the line
FIELD_HEAD = "( *)(%s)%s" % (IDENT, SEP)  # a field line up to its value: (indentation, name)

OPENER, FIELD, CLOSER = "open", "field", "close"


def possessive(pattern: str, native: bool = NATIVE) -> str:
    """The string terminal with possessive repeats (compile with ``_atomic``).

    The string patterns are unrolled loops with disjoint alternatives, so making their repeats
    possessive changes no match; it removes backtracking bookkeeping that made a 50 MB literal
    scan at 14 MB/s instead of about 200 MB/s (measured on 3.11)."""
    out = pattern.replace("]*", "]*+")
    if native:
        return out.replace(")*", ")*+")
    # Below 3.11 the escape loop stays a plain greedy repeat: _atomic would emulate it with a
    # look-ahead and a back-reference in every string, 18% of the fast path's time (measured on
    # 3.9). It matches the same: each iteration starts with a backslash, which cannot end the
    # string, and the escapes exclude each other (a string body reads one way only), so giving an
    # iteration back never leads to another match. (test_atomic compares the two forms.)
    return out


@functools.lru_cache(maxsize=None)
def terms(native: bool = NATIVE) -> Tuple[str, str]:
    """(field name, scalar value) regexes as text, for lines read and checked at once: IDENT and
    NUMBER bounded by :data:`MAX_TOKEN`, and spelt for the Python's ``re`` (``native``)."""
    t = TERMINALS
    assert t["IDENT"].endswith("]*") and t["IDENT"].count("[") == 2, t["IDENT"]  # (a class, then a class repeated)
    # Possessive, or (old re) greedy: a name is always followed by ": ", " {" or a newline, none
    # of which it can take, so giving characters back never leads to a match.
    ident = "%s{0,%d}%s" % (t["IDENT"][:-1], MAX_TOKEN - 1, "+" if native else "")
    string = possessive(t["STRING"], native)
    if not native:
        # Each run of plain characters in the string pattern is followed by a backslash or the
        # closing quote, which the run excludes: greedy is possessive there too.
        assert string.count("]*+") == 4 and string.count("[^") == 4, string  # keep in step
        string = string.replace("]*+", "]*")
        # The usual strings first: no escapes, then the others with at least one (the same
        # language, one repeat fewer to run). The two must exclude each other: a line that two
        # alternatives match alike would be matched again, with all the lines after it, for
        # each of them whenever the block fails.
        assert string.count(')*"') == 1 and string.count(")*'") == 1, string  # keep in step
        runs = [re.search(q + r"(\[\^" + q + r"[^\]]*\])\*", string) for q in "\"'"]
        plain = [m.group(1) for m in runs if m is not None]
        assert len(plain) == 2, string  # keep in step
        escaped = string.replace(')*"', ')+"').replace(")*'", ")+'")
        # All of them alternatives of the scalar itself, not of a group in it: old re enters a
        # nested alternation for every scalar that is not a string.
        assert escaped.startswith('(?:"') and escaped.endswith("')"), escaped  # (one group)
        string = "\"%s*\"|'%s*'|%s" % (plain[0], plain[1], escaped[3:-1])
    else:
        string = "(?:%s)" % string
    # Atomic: the lexer takes the first alternative of NUMBER that matches, never a later one.
    # The old spelling leaves it a plain group: there a number always ends its line, and when
    # one alternative reaches the newline no earlier one can stop short of it (see
    # test_layout_forms: an earlier stop would be at a "." or a sign, but NUMBER holds at most one
    # "." and a sign only after an exponent's "e", which no alternative ends with).
    number = "(?![^\\n]{%d})(%s%s)" % (MAX_TOKEN, "?>" if native else "?:", t["NUMBER"])
    neg = t["NEG"].replace("\\", "")
    if not native:
        # A name starts with a letter or "_", a number with a digit or ".": the order is free, and
        # names (DT_FLOAT, true) are the usual unquoted values, so old re tries them first.
        return ident, "(?:%s|%s?%s|%s?%s)" % (string, neg, ident, neg, number)
    return ident, "(?:%s|%s?%s|%s?%s)" % (string, neg, number, neg, ident)


def ind(d: int, native: bool = NATIVE) -> str:
    """The indentation of depth ``d`` (a counted repeat for old ``re``: one step, not one a space)."""
    if native or d == 0:
        return "  " * d
    return " {%d}" % (2 * d)


def classifier_text(indent: str, close_indent: Optional[str], native: bool = NATIVE) -> str:
    """One whole line, newline included: groups (field name, opener, scalar, closer). ``indent``:
    a field's or opener's indentation; ``close_indent``: a closer's (``None``: no closer here)."""
    ident, scalar = terms(native)
    closer = "%s(%s\\n)" % (close_indent, CLOSE) if close_indent is not None else "(?!)()"
    return "(?:%s(%s)(?:(%s\\n)|%s(%s)\\n)|%s)" % (indent, ident, OPEN, SEP, scalar, closer)


def verified_line_text(names: str) -> str:
    """A line of verified text, searched for after its newline, up to its own: (indentation,
    opener's name) or (indentation, a field of ``names`` (an alternation), its raw value)."""
    return "\\n( *)(?:(%s)%s|(%s)%s(%s))(?=\\n)" % (IDENT, OPEN, names, SEP, VERIFIED_VALUE)


class Line(NamedTuple):
    """A line of the writer layout: its indentation (spaces), kind (:data:`OPENER`, :data:`FIELD`
    or :data:`CLOSER`), field name (not for a closer) and raw value (a field's, as written)."""

    indent: int
    kind: str
    name: Optional[bytes]
    raw: Optional[bytes]


@functools.lru_cache(maxsize=None)
def line_re(native: bool = NATIVE) -> "re.Pattern[bytes]":
    """One line at any depth, newline included: its user groups are (indentation, field name,
    opener, scalar, closer). One regex for every depth: the reader checks the indentation against
    the depth it is at (``2 d`` spaces, a closer ``2 (d - 1)``), as :func:`classify` checks it is
    even. (The spaces are followed by a name or ``}``, never a space: greedy gives nothing back.)"""
    return compile_bytes("( *%s)%s" % ("+" if native else "", classifier_text("", "", native)), native)


def classify(line: bytes, native: bool = NATIVE) -> Optional[Line]:
    """``line`` (newline included) as a line of the writer layout, or ``None`` if it is none (the
    writers indent by two spaces a depth: an odd indent is no such line): the general scanner
    reads such a line (or says what is wrong with it)."""
    pat = line_re(native)
    m = pat.match(line)
    if m is None or m.end() != len(line):
        return None
    spaces, name, opener, scalar, closer = m.group(*user_groups(pat))
    if len(spaces) % 2:
        return None
    if closer is not None:
        return Line(len(spaces), CLOSER, None, None)
    return Line(len(spaces), OPENER if opener is not None else FIELD, name, scalar)
