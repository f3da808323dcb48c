"""The Lark grammar: loaded once, lazily, and used to parse text into plain data.

``grammar/pbtxt.lark`` is the only definition of the language. The wheel and ``pbtxt-scan.pyz`` carry
a copy inside the package, read through the package's loader (``pkgutil.get_data``: a zip's member
too); a source checkout or an editable install reads it from ``grammar/`` beside the package.
The scanner's lexer (``_lexer.py``) takes its token patterns from here too (through the static copy
in ``_terminals``, checked against the grammar by a test), so the two cannot drift.
"""
from __future__ import annotations

import functools
import os
import re
from typing import Any, Callable, Dict, List, Tuple, cast

from .._kit import regex
from .._errors import IncompleteInputError, PbtxtError
from .._model import Field, Message
from ._values import _number, decode, string_value, unescape


def grammar_text() -> str:
    """The grammar's text: the copy inside the package, read through its loader (a wheel's file, or a
    member of ``pbtxt-scan.pyz``: never by path), else ``grammar/`` beside the package (a checkout)."""
    import pkgutil

    try:
        data = pkgutil.get_data(__name__.rpartition(".")[0], "pbtxt.lark")
    except OSError:
        data = None
    if data is None:
        checkout = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "grammar", "pbtxt.lark")
        try:
            with open(checkout, "rb") as f:
                data = f.read()
        except OSError:
            raise FileNotFoundError("pbtxt.lark not found inside the package nor in ../grammar") from None
    return data.decode("utf-8")


@functools.lru_cache(maxsize=None)
def _lark(with_transformer: bool = True) -> Any:
    from lark import Lark  # lazy: `pbtxt-scan --version` must not pay for it

    return Lark(
        grammar_text(),
        parser="lalr",  # Earley is orders of magnitude slower and unbounded in memory
        lexer="basic",  # no terminal collisions in this grammar; basic also gives Lark.lex()
        maybe_placeholders=False,
        # Tree-less: callbacks run at each reduce and build plain data directly (about half the
        # time and a third of the memory of building a Tree first).
        transformer=_ToData() if with_transformer else None,
    )


def terminal_patterns() -> Dict[str, str]:
    """The regex of every named terminal, as the grammar defines it (for the scanner's lexer).

    Read from ``_terminals``, a static copy generated from the grammar (``tests/test_terminals.py``
    proves it is the grammar's), so that scanning never builds the Lark parser (about 100 ms)."""
    from ._terminals import TERMINALS

    return TERMINALS


def grammar_terminals() -> Dict[str, str]:
    """The same, derived from the grammar by Lark (to generate and check ``_terminals``)."""
    return {t.name: t.pattern.to_regexp() for t in _lark().terminals}


_TERMINALS_HEAD = '''"""The grammar's terminals as regex text. Generated from grammar/pbtxt.lark: do not edit.

The scanner builds its lexer and layout regexes from these without building the Lark parser.
Regenerate with ``python tools/gen_terminals.py --write`` after changing a terminal in the
grammar; tests/test_terminals.py fails while this file and the grammar differ.
"""
'''


def render_terminals() -> str:
    """The text of ``_terminals.py`` for the grammar as it is."""
    lines = ["TERMINALS = {"]
    lines += ["    %r: %r," % (name, pattern) for name, pattern in grammar_terminals().items()]
    lines.append("}")
    return _TERMINALS_HEAD + "\n" + "\n".join(lines) + "\n"


# --- the transformer --------------------------------------------------------------------------


def _flatten(items: List[Any]) -> Message:
    msg = Message()
    for it in items:
        if isinstance(it, list) and not isinstance(it, Message):
            msg.extend(it)
        else:
            msg.append(it)
    return msg


def _ToData() -> Any:
    from lark import Token, Transformer

    class ToData(Transformer):
        """Builds Message/Field values bottom-up; ``[a, b]`` becomes one Field per item."""

        def start(self, items: List[Any]) -> Message:
            return _flatten(items)

        message = start

        def _fields(self, items: List[Any]) -> List[Field]:
            name = items[0]
            rest = items[1:]
            value = rest[-1] if rest else None
            values = value if isinstance(value, _Items) else [value]
            return [Field(str(name), v, name.line, name.column) for v in values]

        scalar_field = _fields
        message_field = _fields

        def scalar_list(self, items: List[Any]) -> "_Items":
            return _Items(items)

        message_list = scalar_list

        def empty_list(self, items: List[Any]) -> "_Items":
            return _Items()

        def type_name(self, items: List[Any]) -> Any:
            return Token("IDENT", ".".join(items), line=items[0].line, column=items[0].column)

        # items: "[", name, ("/", name,) "]": the position is the "[" token's (whitespace or a line
        # break may follow it).
        def ext_name(self, items: List[Any]) -> Any:
            b = items[0]
            return Token("IDENT", "[%s]" % items[1], line=b.line, column=b.column)

        def any_name(self, items: List[Any]) -> Any:
            b = items[0]
            return Token("IDENT", "[%s/%s]" % (items[1], items[3]), line=b.line, column=b.column)

        def string(self, items: List[Any]) -> str:
            return decode(b"".join(unescape(t[1:-1]) for t in items))

        def number(self, items: List[Any]) -> Any:
            neg = len(items) == 2
            text = str(items[-1])
            value = _number(text)
            return -value if neg else value

        def ident_value(self, items: List[Any]) -> str:
            return "-" + items[1] if len(items) == 2 else str(items[0])

    return ToData()


class _Items(list):
    """The items of a ``[...]`` list, before they become separate fields."""


# --- parsing ----------------------------------------------------------------------------------

_TERMINAL_WORDS = {
    "IDENT": "a field name",
    "NUMBER": "a number",
    "STRING": "a string",
    "NEG": "'-'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "LESSTHAN": "'<'",
    "MORETHAN": "'>'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COLON": "':'",
    "SEMICOLON": "';'",
    "COMMA": "','",
    "DOT": "'.'",
    "SLASH": "'/'",
    "$END": "end of input",
}


def describe_token(kind: str, text: str) -> str:
    if kind in ("IDENT", "NUMBER", "STRING"):
        shown = text if len(text) <= 40 else text[:37] + "..."
        return "%s %s" % ({"IDENT": "identifier", "NUMBER": "number", "STRING": "string"}[kind], shown)
    return _TERMINAL_WORDS.get(kind, repr(text))


def describe_expected(expected: Any) -> str:
    # IDENT is a field name where a field may start, but a value (an enum, true, inf) where a number
    # may also come: "x: -" expects "a number or an identifier", not "a field name".
    value = "NUMBER" in expected
    words = sorted({"an identifier" if value and e == "IDENT" else _TERMINAL_WORDS.get(e, e) for e in expected})
    if len(words) > 4:
        return ""
    return ", expected " + " or ".join(words)


def _line_col(text: str, pos: int) -> "tuple[int, int]":
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


_HEX_ESC = regex(r"\\x[0-9A-Fa-f]")  # (matched in place: a slice per escape was quadratic)
_VALID_ESCAPE_STARTS = set("abfnrtv?\\'\"01234567xuU")
_UNICODE_ESC = regex(r"\\(?:u(?![dD][89a-fA-F])[0-9A-Fa-f]{4}|U000(?!0[dD][89a-fA-F])[0-9A-Fa-f]{5}|U0010[0-9A-Fa-f]{4})")


def lexical_error_message(text: str, pos: int) -> str:
    """Why no token starts at ``pos`` (shared by the Lark path and the scanner's lexer)."""
    ch = text[pos]
    if ch in "\"'":
        end = text.find("\n", pos)
        line = text[pos : end if end >= 0 else len(text)]
        if "\x00" in line:
            return "NUL character inside a string"
        for esc in re.finditer(r"\\(.?)", line[1:]):
            e = esc.group(0)
            if e[1:] not in _VALID_ESCAPE_STARTS or (e == "\\x" and not _HEX_ESC.match(line, 1 + esc.start())):
                return "invalid escape '%s' in string" % e  # %r would double the backslash
            if e[1:] in "uU" and not _UNICODE_ESC.match(line, 1 + esc.start()):
                return "invalid \\%s escape in string (too few hex digits, a surrogate, or beyond U+10FFFF)" % e[1:]
        return "unterminated string (a string cannot span lines)"
    if ch.isdigit() or (ch == "." and pos + 1 < len(text) and text[pos + 1].isdigit()):
        return "invalid number (a number cannot be followed directly by a letter or digit)"
    if ch == "+":
        return "unexpected '+' (a number takes no '+' sign)"
    if ch == "\x00":
        return "NUL byte in text (is this a binary file?)"
    return "unexpected character %r" % ch


def _rebuilt(msg: Message, place: "Callable[[int, int], Tuple[int, int]]", value: "Callable[[Any], Any]" = lambda v: v) -> Message:
    """``msg`` with each field's (line, column) made ``place(line, column)`` and each scalar value
    ``value(v)`` (a ``LookupError`` from it stops the rebuild: the caller answers ``None``);
    iterative, since a block may nest thousands deep."""
    out = Message()
    todo = [(msg, out)]
    while todo:
        src, dst = todo.pop()
        for f in src:
            v = f.value
            if isinstance(v, Message):
                todo.append((v, Message()))
                v = todo[-1][1]
            else:
                v = value(v)
            line, col = place(f.line, f.column)
            dst.append(Field(f.name, v, line, col))
    return out


def _shift_lines(msg: Message, by: int) -> Message:
    """``msg`` with every line moved by ``by``."""
    return _rebuilt(msg, lambda line, col: (line + by, col))


def parse_text(text: str, first_line: int = 1, path: "str | None" = None) -> Message:
    """Parse a whole text-format message with the Lark grammar into a :class:`Message`.

    ``first_line`` is the file line of ``text[0]`` so that positions match the file.
    Raises :class:`PbtxtError` (with line and column) on invalid input.
    """
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

    try:
        msg: Message = _lark().parse(text)
        return msg if first_line == 1 else _shift_lines(msg, first_line - 1)
    except UnexpectedCharacters as e:
        # (lark's stub says Optional: UnexpectedCharacters always sets where the text stopped)
        why = lexical_error_message(text, cast(int, e.pos_in_stream))
        raise PbtxtError(why, e.line + first_line - 1, e.column, path) from None
    except UnexpectedToken as e:
        tok = e.token
        if tok.type == "$END":
            line, col = _line_col(text, len(text))
            raise IncompleteInputError(
                "unexpected end of input" + describe_expected(e.expected), line + first_line - 1, col, path
            ) from None
        raise PbtxtError(
            "unexpected %s%s" % (describe_token(tok.type, str(tok)), describe_expected(e.expected)),
            tok.line + first_line - 1,
            tok.column,
            path,
        ) from None
    except UnexpectedEOF:  # pragma: no cover - LALR reports EOF as UnexpectedToken($END)
        line, col = _line_col(text, len(text))
        raise IncompleteInputError("unexpected end of input", line + first_line - 1, col, path) from None
    except VisitError as e:  # a value the grammar accepts but Python cannot hold (e.g. float overflow)
        raise PbtxtError("invalid value: %s" % e.orig_exc, None, None, path) from None
    except UnexpectedInput as e:  # pragma: no cover
        raise PbtxtError(str(e).splitlines()[0], getattr(e, "line", None), getattr(e, "column", None), path) from None


# --- a block with long strings: Lark parses the rest ---------------------------------------------

LONG_LITERAL = 64 << 10  # a string literal this long (a tensor_content) is kept out of Lark's parse
_LITERAL_RE = regex(r'#[^\n]*|"[^"\\\n]*(?:\\.[^"\\\n]*)*"|\'[^\'\\\n]*(?:\\.[^\'\\\n]*)*\'')


def long_literals(text: str, min_len: int = LONG_LITERAL) -> List[Any]:
    """The ``(start, end)`` spans of ``text``'s quoted string literals at least ``min_len`` long
    (comments skipped; a literal cut by its line's end is none: Lark words that error)."""
    return [m.span() for m in _LITERAL_RE.finditer(text) if m.end() - m.start() >= min_len and text[m.start()] != "#"]


PAD_MAX = 4096  # a block starting past this column is parsed unpadded, its first line's columns shifted


def parse_text_at(text: str, first_line: int, first_column: int, path: "str | None", limit: int) -> "Message | None":
    """:func:`parse_text_within` of a block that starts at ``first_column`` of ``first_line``: the
    positions and errors are the file's. The text is padded to its column, as the file has it,
    unless that column is past ``PAD_MAX`` (a block far along one long line: a one-line file), where
    the pad would be as big as the line; then the first line's columns are shifted instead."""
    if first_column - 1 <= PAD_MAX:
        return parse_text_within(" " * (first_column - 1) + text, first_line, path, limit)
    shift = first_column - 1
    try:
        msg = parse_text_within(text, first_line, path, limit)
    except PbtxtError as e:
        if e.line == first_line and e.column is not None:
            raise e.__class__(e.msg, e.line, e.column + shift, path) from None
        raise
    if msg is None:
        return None
    return _rebuilt(msg, lambda line, col: (line, col + shift if line == first_line else col))


def parse_text_within(text: str, first_line: int, path: "str | None", limit: int) -> "Message | None":
    """:func:`parse_text` with Lark's part bounded: the text less its long string literals (each a
    token of Lark's, but tens of bytes of its memory a byte) must be at most ``limit`` characters,
    else None. Each long literal is parsed apart (:func:`string_value`, the grammar's own value)
    and put back, with the columns after it on its line made true again. The values and positions
    are :func:`parse_text`'s; so is an error's wording."""
    if len(text) <= limit:
        return parse_text(text, first_line, path)
    spans = long_literals(text)
    if len(text) - sum(b - a for a, b in spans) + 40 * len(spans) > limit:
        return None
    marker = "pbtxt-scan-long-literal-"
    while marker in text:
        marker += "~"
    parts: List[str] = []
    values: Dict[str, str] = {}
    shifts: Dict[int, List[Any]] = {}  # line -> [(column just past the placeholder, characters it stands in for)]
    pos = 0
    for i, (a, b) in enumerate(spans):
        key = "%s%d" % (marker, i)
        ph = '"%s"' % key
        line, col = _line_col(text, a)
        done = sum(d for _, d in shifts.get(line, ()))
        shifts.setdefault(line, []).append((col - done + len(ph), (b - a) - len(ph)))
        try:
            values[key] = string_value(text[a:b])
        except (PbtxtError, ValueError):  # (an escape the grammar refuses: the caller says the block is too big for it)
            return None
        parts += [text[pos:a], ph]
        pos = b
    parts.append(text[pos:])

    def column(line: int, col: int) -> int:
        return col + sum(d for end, d in shifts.get(line, ()) if end <= col)

    try:
        msg = parse_text("".join(parts), 1, path)
    except PbtxtError as e:
        if e.line is not None and e.column is not None:
            raise e.__class__(e.msg, e.line + first_line - 1, column(e.line, e.column), path) from None
        raise
    def value(v: Any) -> Any:
        if isinstance(v, str) and marker in v:
            return values[v]  # (KeyError: a long literal joined to another, "a" "...", reads as one value)
        return v

    try:
        return _rebuilt(msg, lambda line, col: (line + first_line - 1, column(line, col)), value)
    except KeyError:
        return None