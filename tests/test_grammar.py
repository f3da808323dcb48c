"""The Lark grammar (``grammar/pbtxt.lark`` through ``parse_text``): the external conformance corpus,
error positions, and the values it gives (unescaping, numbers, names, lists, positions)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Dict, List

import pytest

from pbtxt_scan import Field, IncompleteInputError, Message, PbtxtError, parse_text

EXTERNAL = Path(__file__).parent / "data" / "_external"
FILES = sorted(EXTERNAL.glob("*.jsonl"))
assert FILES


def _cases() -> List[Any]:
    out = []
    for f in FILES:
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            c = json.loads(line)
            out.append(pytest.param(c, id="%s:%d" % (f.stem, i)))
    return out


CASES = _cases()
assert len(CASES) > 600


# --- the corpus -------------------------------------------------------------------------------

# The peer's position and ours may differ in two documented ways (tests/data/_external/README.md):
#
# 1. C++ (protobuf's tokenizer) points at the bad character INSIDE a bad token, we (a regex lexer)
#    at the token's start. Accepted only for protocolbuffers/protobuf sources, on the same line,
#    with our column <= the peer's and the text between them a prefix of one token: an unclosed
#    string prefix (no closing quote) or a run of number/identifier characters (a sign only right
#    after an exponent's e/E).
# 2. Input that ends too early: we report the end of input; a peer may point at the last token it
#    read (Go: "x: -" at the "-"). Accepted only for IncompleteInputError at the very end, when the
#    text from the peer's column to the end is one token plus whitespace.
_TOKEN_PREFIX = re.compile(
    r"""  "(?:[^"\\\n]|\\.)*\\?        # an unclosed "string
        | '(?:[^'\\\n]|\\.)*\\?        # an unclosed 'string
        | [0-9.][0-9A-Za-z_.]*[eE][+-][0-9]*   # a number cut inside its exponent
        | [0-9A-Za-z_.]+               # a number or identifier
    """,
    re.X,
)
_ONE_TOKEN = re.compile(r"""[{}<>\[\]:;,/.\-]|[A-Za-z_][A-Za-z0-9_]*|[0-9.][0-9A-Za-z_.]*""")


def position_agrees(case: Dict[str, Any], err: PbtxtError) -> bool:
    want_line, want_col = case["line"], case["col"]
    if (err.line, err.column) == (want_line, want_col):
        return True
    if err.line != want_line or err.column is None:
        return False
    text = case["input"]
    line_text = text.split("\n")[want_line - 1]
    if err.column < want_col:  # rule 1
        between = line_text[err.column - 1 : want_col - 1]
        return case["source"].startswith("protocolbuffers/protobuf:") and bool(_TOKEN_PREFIX.fullmatch(between))
    if isinstance(err, IncompleteInputError):  # rule 2
        at_end = err.line == text.count("\n") + 1 and err.column == len(line_text) + 1
        return at_end and bool(_ONE_TOKEN.fullmatch(line_text[want_col - 1 :].rstrip()))
    return False


@pytest.mark.parametrize("case", CASES)
def test_corpus_case(case: Dict[str, Any]) -> None:
    text = case["input"]
    if case["valid"]:
        assert isinstance(parse_text(text), Message)
        return
    with pytest.raises(PbtxtError) as ei:
        parse_text(text)
    err = ei.value
    assert err.line is not None and err.column is not None, err
    assert 1 <= err.line <= text.count("\n") + 1
    if "line" in case:
        assert position_agrees(case, err), "peer %d:%d, ours %s" % (case["line"], case["col"], err)


def test_position_rules_are_narrow() -> None:
    # The tolerance must not swallow a real disagreement.
    c = {"input": "x: 123foo bar", "line": 1, "col": 7, "source": "protocolbuffers/protobuf:x"}
    assert position_agrees(c, PbtxtError("m", 1, 4))
    assert not position_agrees(c, PbtxtError("m", 1, 8))  # after the peer's point
    assert not position_agrees(c, PbtxtError("m", 2, 4))
    assert not position_agrees(dict(c, source="protocolbuffers/protobuf-go:x"), PbtxtError("m", 1, 4))
    c2 = dict(c, input="x: 1 foo", col=6)
    assert not position_agrees(c2, PbtxtError("m", 1, 4))  # "1 f" is two tokens
    c3 = {"input": "x: -", "line": 1, "col": 4, "source": "protocolbuffers/protobuf-go:x"}
    assert position_agrees(c3, IncompleteInputError("m", 1, 5))
    assert not position_agrees(c3, PbtxtError("m", 1, 5))  # only for end-of-input errors
    c4 = dict(c3, input="x: - ", col=1)
    assert not position_agrees(c4, IncompleteInputError("m", 1, 6))  # "x: -" is not one token


def test_every_corpus_file_has_both_verdicts() -> None:
    for f in FILES:
        verdicts = {json.loads(line)["valid"] for line in f.read_text(encoding="utf-8").splitlines()}
        assert verdicts == {True, False}, f


# --- values: strings --------------------------------------------------------------------------


def value(text: str) -> Any:
    msg = parse_text(text)
    assert len(msg) == 1, msg
    return msg[0].value


@pytest.mark.parametrize(
    "literal, expected",
    [
        (r'"\101\102"', "AB"),
        (r'"\0"', "\x00"),
        (r'"\1234"', "S4"),  # at most 3 octal digits
        (r'"\x41\x4a"', "AJ"),
        (r'"\x213"', "!3"),  # at most 2 hex digits
        (r'"\xA"', "\n"),
        (r'"\u00e9\u4e2d"', "é中"),
        (r'"\U0001F600"', "\U0001F600"),
        (r'"\U0010FFFF"', "\U0010FFFF"),
        (r'"\a\b\f\n\r\t\v"', "\a\b\f\n\r\t\v"),
        (r'"\?\\\'\""', "?\\'\""),
        (r"'single \"q\" \''", "single \"q\" '"),
        ('"raw é 中 😀"', "raw é 中 😀"),
        ('"a" "b"', "ab"),
        ("\"a\"'b'\"c\"", "abc"),
        ('"a"\n  # comment\n  "b"', "ab"),
        ('""', ""),
        ('""""""', ""),
        (r'"\303\251"', "é"),  # octal bytes that form UTF-8
        (r'"\377"', "\udcff"),  # a byte that is not UTF-8 is kept as a surrogate escape
    ],
)
def test_string_unescaping(literal: str, expected: str) -> None:
    assert value("s: " + literal) == expected


@pytest.mark.parametrize(
    "literal",
    [r'"\q"', r'"\x"', r'"\u12"', r'"\uD800"', r'"\U00110000"', r'"\U0000DC00"', '"a\nb"', '"a', "'a\"", '"\x00"'],
)
def test_bad_strings(literal: str) -> None:
    with pytest.raises(PbtxtError) as ei:
        parse_text("s: " + literal)
    assert (ei.value.line, ei.value.column) == (1, 4)


# --- values: numbers and identifiers ------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("42", 42),
        ("-42", -42),
        ("- 2", -2),
        ("-\n # c\n 2", -2),
        ("0x1F", 31),
        ("0XaB", 171),
        ("-0x10", -16),
        ("017", 15),
        ("00", 0),
        ("1.5", 1.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e5", 1e5),
        ("1E-3", 1e-3),
        ("2.5e+2", 250.0),
        ("1.5f", 1.5),
        ("10f", 10.0),
        ("1.0F", 1.0),
        ("-0.5f", -0.5),
        ("18446744073709551615", 18446744073709551615),
    ],
)
def test_numbers(text: str, expected: Any) -> None:
    got = value("n: " + text)
    assert got == expected and type(got) is type(expected)


def test_negative_zero_float_keeps_its_sign() -> None:
    assert math.copysign(1, value("n: -0.0")) == -1


@pytest.mark.parametrize(
    "text, expected",
    [("true", "true"), ("False", "False"), ("inf", "inf"), ("-inf", "-inf"), ("- inf", "-inf"), ("-nan", "-nan"),
     ("INFINITY", "INFINITY"), ("ENUM_VALUE", "ENUM_VALUE"), ("t", "t")],
)
def test_identifiers_stay_text(text: str, expected: str) -> None:
    assert value("v: " + text) == expected


@pytest.mark.parametrize("text", ["10bar", "1e", "0800", "01.5", "+1", "1 2", "0x", "1.2.3", "- -1", '-"s"'])
def test_bad_numbers(text: str) -> None:
    with pytest.raises(PbtxtError):
        parse_text("n: " + text)


# --- field names, lists, positions --------------------------------------------------------------


def test_extension_and_any_names() -> None:
    msg = parse_text("[a.b]: 1\n[type.googleapis.com/x.Y] { z: 2 }\n[ p . q ]: 3\n[\n  c.d/e.F] <>")
    assert [(f.name, f.line, f.column) for f in msg] == [
        ("[a.b]", 1, 1),
        ("[type.googleapis.com/x.Y]", 2, 1),
        ("[p.q]", 3, 1),  # whitespace inside the brackets is not part of the name
        ("[c.d/e.F]", 4, 1),  # the position is the "[", even with the name on the next line
    ]
    assert msg[1].value == [Field("z", 2, 2, 29)]


@pytest.mark.parametrize("text", ["[a/b/c.D] {}", "[a.b/c]: 1", "[a..b]: 1", "[]: 1", "[a-b]: 1", "[a/b.C]: 1"])
def test_bad_bracketed_names(text: str) -> None:
    with pytest.raises(PbtxtError):
        parse_text(text)


def test_lists_become_repeated_fields() -> None:
    msg = parse_text('a: [1, -2, "x" \'y\', inf]\nm [{k: 1}, <k: 2>]\nm: []\ne []\n')
    assert [(f.name, f.value) for f in msg if f.name == "a"] == [("a", 1), ("a", -2), ("a", "xy"), ("a", "inf")]
    assert [f.value.get("k") for f in msg if f.name == "m"] == [1, 2]
    assert all((f.line, f.column) == (1, 1) for f in msg if f.name == "a")
    assert all((f.line, f.column) == (2, 1) for f in msg if f.name == "m")
    assert msg.all("e") == []  # an empty list adds no field


@pytest.mark.parametrize("text", ["a [1]", "a: [1,]", "a: [,1]", "a: [[1]]", "a: [1 2]", "a: [1, {}]", "a: [{}, 1]"])
def test_bad_lists(text: str) -> None:
    with pytest.raises(PbtxtError):
        parse_text(text)


def test_field_lines_and_columns() -> None:
    text = "a {\n  b: 1\n  c <\n\td: 2 >\n}\n# c\n  e: 'x' ;f: 1,g{}\n"
    msg = parse_text(text)
    assert [(f.name, f.line, f.column) for f in msg] == [("a", 1, 1), ("e", 7, 3), ("f", 7, 11), ("g", 7, 16)]
    inner = msg[0].value
    assert [(f.name, f.line, f.column) for f in inner] == [("b", 2, 3), ("c", 3, 3)]
    assert [(f.name, f.line, f.column) for f in inner[1].value] == [("d", 4, 2)]  # a tab is one column


def test_columns_count_characters_not_bytes() -> None:
    msg = parse_text('s: "é中😀" t: 1')
    assert (msg[1].line, msg[1].column) == (1, 10)  # s1 :2 _3 "4 é5 中6 😀7 "8 _9 t10


def test_first_line_shifts_every_position() -> None:
    msg = parse_text("a {\n  b: 1\n}", first_line=10)
    assert (msg[0].line, msg[0].value[0].line) == (10, 11)
    with pytest.raises(PbtxtError) as ei:
        parse_text("a {\n  b: }", first_line=10, path="f.pbtxt")
    assert str(ei.value).startswith("f.pbtxt:11:")


@pytest.mark.parametrize(
    "text",
    ["m: {}", "m {}", "m: <>", "m <a: 1>", "m [{}, <>]", "a: 1;b: 2,c: 3", "a: 1 b: 2", "", "  \n# only\n", "a: 1,"],
)
def test_valid_shapes(text: str) -> None:
    parse_text(text)


@pytest.mark.parametrize(
    "text, line, col, message",
    [
        ("a: 1,,", 1, 6, "unexpected ','"),
        ("m { >", 1, 5, "unexpected '>', expected '[' or '}' or a field name"),
        ("m {\n a: 1\n", 3, 1, "unexpected end of input, expected '[' or '}' or a field name"),
        ("x: -", 1, 5, "unexpected end of input, expected a number or an identifier"),
        ("s 10", 1, 3, "unexpected number 10, expected ':' or '<' or '[' or '{'"),
        ('a: "x\\q"', 1, 4, "invalid escape '\\q' in string"),
        ('a: "x', 1, 4, "unterminated string (a string cannot span lines)"),
        ("a: 1+2", 1, 5, "unexpected '+' (a number takes no '+' sign)"),
        ("a: 12ab", 1, 4, "invalid number (a number cannot be followed directly by a letter or digit)"),
        ("a: 1\n\x00", 2, 1, "NUL byte in text (is this a binary file?)"),
    ],
)
def test_error_messages(text: str, line: int, col: int, message: str) -> None:
    with pytest.raises(PbtxtError) as ei:
        parse_text(text)
    assert (ei.value.line, ei.value.column, ei.value.msg) == (line, col, message)
    assert str(ei.value) == "<input>:%d:%d: %s" % (line, col, message)


@pytest.mark.slow  # (over a second: the slow step runs it)
def test_deep_nesting_parses_without_recursion() -> None:
    # LALR is iterative: 100,000 open messages need no Python recursion.
    n = 100_000
    msg = parse_text("a {" * n + "}" * n)
    depth = 0
    while msg:
        msg = msg[0].value
        depth += 1
    assert depth == n


@pytest.mark.parametrize("escape", ["\\322", "\\32", "\\3", "\\x4", "\\x41", "\\1234"])
def test_unterminated_string_of_escapes_fails_fast(escape: str) -> None:
    # A file cut inside a tensor_content literal: each escape must match one way only, or the
    # regex backtracks 3**n ways before it can say "unterminated" (found by the fuzz run).
    import time

    for tail in ("", "\n}"):
        t0 = time.perf_counter()
        with pytest.raises(PbtxtError) as ei:
            parse_text('s: "' + (escape + ";?") * 200 + tail)
        assert ei.value.msg == "unterminated string (a string cannot span lines)"
        assert time.perf_counter() - t0 < 1.0
