"""One classifier of a writer-layout line (``language._lines``), built from the grammar's terminals,
and every reader of that layout classifying a line as it does: the fast path's walk
(``text._layout.line_re``), GE's attrs off verified lines (``ge._fast``) and the hood's field line
(``text._hood``).

Every value the grammar spells in one token is read alike by all of them and by the Lark parse
(every escape form, both quotes, every number form, names); a line the grammar reads but the writers
never write (adjacent literals, a comment, other spacing) is no layout line to any of them, and the
general scanner reads it. A hand-written regex in one reader would drift from the grammar
(``\\w+`` takes a name that starts with a digit); these tests fail when one does.
"""
from __future__ import annotations

import re
from typing import Optional

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.lines import LINES, PIECES, edited

from pbtxt_scan._errors import PbtxtError
from pbtxt_scan.ge import _fast
from pbtxt_scan.ge._skim import _KEEP
from pbtxt_scan.language import _lines
from pbtxt_scan.language._atomic import compile_bytes, user_groups
from pbtxt_scan.language._grammar import parse_text
from pbtxt_scan.language._lines import CLOSER, FIELD, OPENER, Line, classify
from pbtxt_scan.language._terminals import TERMINALS
from pbtxt_scan.text import _canonical, _hood
from pbtxt_scan.text import _layout as layout

# Values of one token, each form the grammar has: every escape, both quotes, every number, names.
VALUES = [
    b'"a"', b'""', b"''", b'"a#b // c"', b'"caf\xc3\xa9"', b'"\xe4\xb8\xad"',
    b'"\\a\\b\\f\\n\\r\\t\\v\\?\\\\\\\'\\""', b"'\\a\\b\\f\\n\\r\\t\\v\\?\\\\\\'\\\"'",
    b'"\\0\\7\\12\\123\\1234\\08"', b'"\\x4\\x41\\x4g\\xfF"', b'"\\u00e9\\U0001F600\\U0010FFFF"',
    b"'it\\'s \"q\"'", b'"it\'s"', b'"\\\\"', b'"a\\"b"',
    b"0", b"1", b"-1", b"1.5", b".5", b"1.", b"1e5", b"1E-5", b"3.4e+38", b"1.5f", b"1f", b"0x1F", b"0X1f", b"017",
    b"-0", b"-.5e3F",
    b"DT_FLOAT", b"true", b"-inf", b"nan", b"_x9",
]
# Lines the grammar reads as one field, but not in the writer layout: the general scanner's.
GRAMMAR_ONLY = [
    b'name: "a" "b"\n', b"name: 'a' \"b\"\n", b'name:"a"\n', b'name : "a"\n', b'name:  "a"\n', b'name: "a" \n',
    b'name: "a"  # c\n', b"\tname: 1\n", b"name: 1;\n", b"name: -  1\n", b"name: [1, 2]\n", b"attr{\n}\n",
    b"attr <\n>\n", b"attr: {\n}\n", b'name: "a"\r\n',
]
# Lines the grammar does not read at all.
INVALID = [
    b"9x: 1\n", b'name: "a\\q"\n', b"name: 1x\n", b"name: 'a\"\n", b'name: "\\ud800"\n', b"name: 08\n",
    b"name: 1.5.5\n", b'name: "a\x00"\n', b"name:\n", b": 1\n", b"-x: 1\n", b"}}\n",
]
NAMES = [b"name", b"s", b"key", b"input"]


def _lark(text: bytes) -> Optional[object]:
    """The field's value as the Lark parse reads it, or None if the grammar rejects ``text``."""
    try:
        msg = parse_text(text.decode("utf-8", "surrogateescape"))
    except PbtxtError:
        return None
    return msg[0].value if len(msg) == 1 else None


def _lines_at(k: int):  # type: ignore[no-untyped-def]
    """(line, its classification) for each value and name at indentation ``k``, an opener and a closer."""
    pad = b" " * k
    for name in NAMES:
        for v in VALUES:
            yield pad + name + b": " + v + b"\n", Line(k, FIELD, name, v)
        yield pad + name + b" {\n", Line(k, OPENER, name, None)
    yield pad + b"}\n", Line(k, CLOSER, None, None)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: v.decode("utf-8", "replace"))
def test_a_field_is_classified_and_read_as_the_grammar_reads_it(value: bytes) -> None:
    for k in (0, 2, 6):
        line = b" " * k + b"name: " + value + b"\n"
        assert classify(line) == Line(k, FIELD, b"name", value)
        want = _lark(line)
        assert want is not None, line
        assert layout._value(value) == want  # (the walk's reading of the raw value)
        assert _fast._value(value) == want  # (GE's)


@pytest.mark.parametrize("line", GRAMMAR_ONLY + INVALID, ids=lambda v: v.decode("utf-8", "replace"))
def test_a_line_out_of_the_layout_is_classified_as_none(line: bytes) -> None:
    assert classify(line) is None
    for d in (0, 1):
        assert _walk_groups(d, b"  " * d + line) is None  # (the walk hands it over)


def test_the_grammar_reads_the_lines_the_writers_never_write() -> None:
    # (so the fast path is stricter than the grammar there, never looser: the general scanner reads them)
    for line in GRAMMAR_ONLY:
        assert parse_text(line.decode()) is not None, line
    for line in INVALID:
        with pytest.raises(PbtxtError):
            parse_text(line.decode("utf-8", "surrogateescape"))


def _walk_groups(d: int, line: bytes):  # type: ignore[no-untyped-def]
    """The walk's reading of ``line`` at depth ``d``: (name, opener, scalar, closer), or None. (One
    regex for every depth; the indentation is checked against the depth, as ``_canonical`` does.)"""
    lre = layout.line_re()
    m = lre.match(line)
    if m is None or m.end() != len(line):
        return None
    spaces, name, opener, scalar, closer = m.group(*user_groups(lre))
    if len(spaces) != 2 * (d - 1 if closer is not None else d):
        return None
    return name, opener, scalar, closer


@pytest.mark.parametrize("d", [0, 1, 3])
def test_the_walk_classifies_each_line_as_the_classifier(d: int) -> None:
    for line, want in _lines_at(2 * d):
        if want.kind == CLOSER:
            line = line[2:]
        got = _walk_groups(d, line) if want.kind != CLOSER or d else None
        if want.kind == CLOSER and not d:
            continue  # (no message is open at depth 0)
        assert got is not None, line
        name, opener, scalar, closer = got
        assert classify(line) == (want if want.kind != CLOSER else want._replace(indent=2 * d - 2))
        if want.kind == FIELD:
            assert (name, opener, scalar, closer) == (want.name, None, want.raw, None), line
        elif want.kind == OPENER:
            assert name == want.name and opener is not None and scalar is None, line
        else:
            assert closer is not None and name is None, line


@pytest.mark.parametrize("dialect", sorted(_KEEP))
def test_ge_reads_each_verified_line_as_the_classifier(dialect: str) -> None:
    line_re = _fast._RES[dialect][0]
    kept = {n.encode() for kept in _KEEP[dialect].values() for n in kept}
    n = 0
    for k in (2, 4, 8):
        for line, want in _lines_at(k):
            m = line_re.search(b"\n" + line)
            if want.kind == CLOSER or (want.kind == FIELD and want.name not in kept):
                assert m is None, line
                continue
            assert m is not None, line
            ind, opener, name, raw = m.groups()
            assert len(ind) == want.indent
            assert (opener, None, None) == (want.name, name, raw) if want.kind == OPENER else (name, raw) == (want.name, want.raw)
            n += 1
    assert n > 100


def test_the_hood_reads_a_field_line_as_the_classifier() -> None:
    for k in (0, 2, 6):
        for line, want in _lines_at(k):
            if want.kind != FIELD or want.raw[:1] not in b"\"'":
                continue
            head = line[: line.index(b": ") + 2]  # (the hood reads a field line up to its value's quote)
            m = _hood._FIELD_LINE.match(head)
            assert m is not None and (len(m.group(1)), m.group(2)) == (k, want.name), line
    for line in INVALID + GRAMMAR_ONLY:
        if b": " in line and classify(line.split(b": ")[0] + b": 1\n") is None:
            assert _hood._FIELD_LINE.match(line[: line.index(b": ") + 2]) is None, line  # (no field name there)


def test_every_reader_is_built_from_the_grammars_pieces() -> None:
    # (the text of the pieces, spelt for a re with possessive repeats: an older Python's spelling
    # of the same pieces differs, and the readers' own regexes are compared below on this Python)
    ident, scalar = _lines.terms(native=True)
    assert TERMINALS["NUMBER"] in scalar and _lines.possessive(TERMINALS["STRING"], True) in scalar
    assert ident.startswith(TERMINALS["IDENT"][:-1]) and _lines.IDENT == TERMINALS["IDENT"]
    assert layout.terms is _lines.terms
    assert layout.line_re is _lines.line_re and _canonical.line_re is _lines.line_re  # (the walk's line: the classifier's)
    whole = _lines.line_re().pattern
    assert whole.startswith(b"( *") and whole.endswith(compile_bytes(_lines.classifier_text("", "")).pattern)
    for dialect, (line_re, _) in _fast._RES.items():
        names = sorted({n for kept in _KEEP[dialect].values() for n in kept})
        assert line_re.pattern == _lines.verified_line_text("|".join(re.escape(n) for n in names)).encode()
    assert _hood._FIELD_LINE.pattern == (_lines.FIELD_HEAD + "\\Z").encode()


@settings(max_examples=examples(0.3), deadline=None)
@given(st.integers(0, len(LINES) - 20), st.integers(1, 10), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(PIECES)), max_size=3))
@example(start=0, n=1, edits=[(0.0, b" ")])  # (an odd indent: no writer's line, to the classifier as to the walk)
def test_random_lines_classified_as_the_grammar_reads_them(start: int, n: int, edits: list) -> None:
    for line in edited(start, n, edits).splitlines(keepends=True):
        got = classify(line)
        k = len(line) - len(line.lstrip(b" "))
        assert got is None or got.indent == k
        if got is not None and got.kind == FIELD:
            want = _lark(line)
            assert want is not None and layout._value(got.raw) == want, line
            assert _fast._value(got.raw) == want, line
        if got is not None and got.kind == OPENER:
            assert _lark(line + b" " * k + b"}\n") is not None, line
        walked = _walk_groups(k // 2, line) if k % 2 == 0 else None
        if got is None:
            assert walked is None, line
        elif got.kind != CLOSER:
            assert walked is not None and walked[0] == got.name, line


# A node whose line names another node in a field the grammar does not read (a name cannot start
# with a digit) and one it reads but the writers never write: the hood's byte search cannot place
# such a hit, and hands the hop to the exact reading, which says what is wrong, as it does with no
# byte search at all.
@pytest.mark.parametrize("field", ["9x", "x y", "x"])
def test_the_hoods_search_reads_a_field_line_as_the_exact_reading(tmp_path, field: str) -> None:  # type: ignore[no-untyped-def]
    import pbtxt_scan
    from support.data import DATA
    from support.hood import naive_hood

    text = (DATA / "graphs" / "mlp_sgd.pbtxt").read_text()
    last = text.rindex("\nnode {\n") + len("\nnode {\n")
    p = tmp_path / "g.pbtxt"
    p.write_text(text[:last] + '  %s: "dense/MatMul"\n' % field + text[last:])

    def outcome(f):  # type: ignore[no-untyped-def]
        try:
            return f()
        except PbtxtError as e:
            return str(e)

    want = outcome(lambda: naive_hood(str(p), "dense/MatMul", 2, 2))
    assert isinstance(want, str) == (field != "x")  # (an error, but for a field the grammar reads)
    assert outcome(lambda: pbtxt_scan.neighbourhood(str(p), "dense/MatMul", 2, 2)) == want
