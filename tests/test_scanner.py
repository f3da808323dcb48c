"""The general scanner (``_scan.scan`` over ``_lexer.Lexer``) against the Lark grammar.

The scanner is a hand-written reading of ``grammar/pbtxt.lark``; these tests prove that it accepts
exactly what Lark accepts and finds the same blocks, lines and heads: on the conformance corpus, on
every fixture, at every chunk size, on random messages printed in many layouts, and on fuzzed input.
"""
from __future__ import annotations

import io
import json
import os
import re
import time
from pathlib import Path
from typing import Any, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples import examples, fuzz_examples
from support.marks import slow_if_big

from pbtxt_scan import Block, Field, Message, PbtxtError, parse_text
from pbtxt_scan.language._grammar import _number
from pbtxt_scan.text._lexer import Lexer
from pbtxt_scan.text._scan import scan_tokens
from pbtxt_scan.source._source import DEFAULT_CHUNK

DATA = Path(__file__).parent / "data"
CORPUS_FILES = sorted((DATA / "_external").glob("*.jsonl"))
GRAPHS = sorted((DATA / "graphs").glob("*.pbtxt"))
GE = sorted(p for p in (DATA / "ge").rglob("*") if p.suffix in (".txt", ".pbtxt"))
assert CORPUS_FILES and GRAPHS

CHUNKS = (1, 7, 4096, DEFAULT_CHUNK)
TF_HEADS = frozenset({"name", "op", "input", "device"})
BOM = "\ufeff"


# --- the two readers ----------------------------------------------------------------------------


def lark_parse(data: bytes) -> Message:
    """The Lark side, given bytes the way the scanner gets them (UTF-8, an optional BOM)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PbtxtError("invalid UTF-8", offset=e.start) from None
    return parse_text(text[1:] if text.startswith(BOM) else text)


def scan_blocks(
    data: bytes,
    path: Sequence[str],
    heads: FrozenSet[str] = TF_HEADS,
    chunk_size: int = DEFAULT_CHUNK,
    long_token: Optional[int] = None,
    keep: Optional[int] = None,
) -> List[Block]:
    f = io.BytesIO(data)
    kw: Dict[str, int] = {}
    if long_token is not None:
        kw = {"long_token": long_token, "keep": keep or 16}
    lx = Lexer(f, chunk_size, **kw)
    return list(scan_tokens(lx, tuple(path), heads))


def verdict(fn: Any, *args: Any) -> Tuple[bool, Optional[PbtxtError]]:
    try:
        fn(*args)
    except PbtxtError as e:
        return False, e
    return True, None


# --- what the blocks must be, from the Lark parse --------------------------------------------------


def fields_at(msg: Message, path: Sequence[str]) -> List[Field]:
    """The message fields at ``path`` in file order (list items included), from the Lark parse."""
    out: List[Field] = []
    for f in msg:
        if f.name == path[0] and isinstance(f.value, Message):
            if len(path) == 1:
                out.append(f)
            else:
                out.extend(fields_at(f.value, path[1:]))
    return out


def _same_scalar(head_text: str, value: Any) -> bool:
    if isinstance(value, str):
        return head_text == value
    neg = head_text.startswith("-")
    v = _number(head_text[1:] if neg else head_text)
    return (-v if neg else v) == value


def _char_at(text: str, line: int, col: int) -> str:
    return text.split("\n")[line - 1][col - 1]


def assert_blocks_match(data: bytes, blocks: List[Block], msg: Message, path: Sequence[str],
                        heads: FrozenSet[str], check_heads: bool = True) -> None:
    """Blocks equal the Lark parse: count, order, line/column, byte span and head fields."""
    text = data.decode("utf-8")
    if text.startswith(BOM):  # offsets count the BOM's 3 bytes; lines and columns do not
        text = text[1:]
    want = fields_at(msg, path)
    assert len(blocks) == len(want), (len(blocks), len(want))
    for b, f in zip(blocks, want):
        opener = _char_at(text, b.line, b.column)
        if opener in "{<":  # an item of a [..] list starts at its "{": after the list's name
            assert (f.line, f.column) < (b.line, b.column)
        else:
            assert (b.line, b.column) == (f.line, f.column), (b, f)
        # The byte span holds exactly this message: Lark parses it to the same data.
        span = data[b.start : b.end].decode("utf-8")
        if span[:1] in "{<":
            span = f.name + " " + span
        again = parse_text(span)
        assert [g.name for g in again] == [f.name]
        assert again[0].value.to_data() == f.value.to_data()
        if check_heads:
            want_heads = [(g.name, g.value, g.line) for g in f.value if g.name in heads and not isinstance(g.value, Message)]
            got = [(h.name, h.value, h.line) for h in b.heads]
            assert [(n, ln) for n, _, ln in got] == [(n, ln) for n, _, ln in want_heads]
            for (_, hv, _), (_, wv, _) in zip(got, want_heads):
                assert _same_scalar(hv, wv), (hv, wv)


# --- the conformance corpus ------------------------------------------------------------------------


def _corpus() -> List[Any]:
    out = []
    for f in CORPUS_FILES:
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            out.append(pytest.param(json.loads(line), id="%s:%d" % (f.stem, i)))
    return out


def _message_paths(msg: Message, prefix: Tuple[str, ...] = (), depth: int = 2) -> List[Tuple[str, ...]]:
    paths: List[Tuple[str, ...]] = []
    for f in msg:
        if isinstance(f.value, Message):
            p = prefix + (f.name,)
            if p not in paths:
                paths.append(p)
            if depth > 1:
                paths += [q for q in _message_paths(f.value, p, depth - 1) if q not in paths]
    return paths


def _all_names(msg: Message) -> FrozenSet[str]:
    names = set()
    for f in msg:
        names.add(f.name)
        if isinstance(f.value, Message):
            names |= _all_names(f.value)
    return frozenset(names)


@pytest.mark.parametrize("case", _corpus())
def test_corpus_scanner_agrees_with_lark(case: Dict[str, Any]) -> None:
    data = case["input"].encode("utf-8")
    ok, err = verdict(lark_parse, data)
    assert ok == case["valid"]
    for chunk in (1, DEFAULT_CHUNK):
        sok, serr = verdict(scan_blocks, data, ("a",), TF_HEADS, chunk)
        assert sok == ok, (err, serr)
        if not ok:
            assert serr.line == err.line, (err, serr)  # type: ignore[union-attr]
            assert serr.column == err.column, (err, serr)  # type: ignore[union-attr]
    if ok:
        msg = lark_parse(data)
        heads = _all_names(msg)
        for path in _message_paths(msg):
            for chunk in (1, 7, DEFAULT_CHUNK):
                assert_blocks_match(data, scan_blocks(data, path, heads, chunk), msg, path, heads)


# --- real files ----------------------------------------------------------------------------------


def _dialect_paths(p: Path) -> List[Tuple[Tuple[str, ...], FrozenSet[str]]]:
    head = p.read_text(encoding="utf-8")[:4000]
    if p.parent.name == "graphs":
        return [(("node",), TF_HEADS), (("library", "function", "node_def"), TF_HEADS)]
    if head.lstrip().startswith("graph") and re.search(r"\n\s*op\s*\{", head):
        return [(("graph", "op"), frozenset({"name", "type", "input", "id", "stream_id"}))]
    return [(("graph", "node"), frozenset({"name", "op_type", "input", "output"}))]


_PARSED: Dict[Path, Message] = {}


def _parsed(p: Path) -> Message:
    if p not in _PARSED:
        _PARSED[p] = lark_parse(p.read_bytes())
    return _PARSED[p]


# Chunk size 7 puts a chunk edge inside almost every token; on the larger fixtures it is slow, and
# the small ones (and the corpus, at chunk size 1) already cover every kind of edge.
_REAL = [(p, c) for p in GRAPHS + GE for c in (4096, DEFAULT_CHUNK)]
_REAL += [(p, 7) for p in GRAPHS + GE if p.stat().st_size < 60_000]


@pytest.mark.parametrize("p, chunk", slow_if_big(_REAL, lambda pc: pc[0]), ids=["%s-%d" % (p.name, c) for p, c in _REAL])
def test_real_files_scan_like_lark(p: Path, chunk: int) -> None:
    data = p.read_bytes()
    msg = _parsed(p)
    for path, heads in _dialect_paths(p):
        blocks = scan_blocks(data, path, heads, chunk)
        assert_blocks_match(data, blocks, msg, path, heads)
        if path in (("node",), ("graph", "op"), ("graph", "node")):
            assert blocks, p


def test_real_files_chunk_size_one() -> None:
    # chunk_size=1 is slow on 200 KB files: the smallest graph and one GE dump are enough.
    for p in [GRAPHS[0].parent / "inference_no_gradients.pbtxt"] + GE[:1]:
        data = p.read_bytes()
        for path, heads in _dialect_paths(p):
            assert scan_blocks(data, path, heads, 1) == scan_blocks(data, path, heads)


@pytest.mark.parametrize("p", slow_if_big(GRAPHS + GE), ids=lambda p: p.name)
def test_real_files_long_token_streaming(p: Path) -> None:
    """With long_token=64 every long string (tensor_content, long names) takes the streaming path:
    block boundaries and lines stay the same; heads are truncated only when they are long."""
    data = p.read_bytes()
    for path, heads in _dialect_paths(p):
        want = scan_blocks(data, path, heads)
        for chunk in (7, 4096):
            got = scan_blocks(data, path, heads, chunk, long_token=64, keep=16)
            assert [(b.start, b.end, b.line, b.column) for b in got] == [(b.start, b.end, b.line, b.column) for b in want]
            for g, w in zip(got, want):
                assert [(h.name, h.line) for h in g.heads] == [(h.name, h.line) for h in w.heads]
                for gh, wh in zip(g.heads, w.heads):
                    if len(wh.value.encode("utf-8")) < 12:  # short: the whole literal was kept
                        assert gh.value == wh.value


def test_long_string_streaming_exercised() -> None:
    long = "x" * 5000
    data = ('node { name: "n" op: "Const" attr { key: "v" value { s: "%s" } } }\nnode { name: "%s" }\n' % (long, long)).encode()
    for chunk in (1, 7, 64, 4096):
        got = scan_blocks(data, ("node",), TF_HEADS, chunk, long_token=64, keep=16)
        assert [(b.line, b.column, b.head("op")) for b in got] == [(1, 1, "Const"), (2, 1, None)]
        assert got[0].name == "n"
        assert got[1].name == "x" * 15  # a streamed string keeps its first `keep` bytes, quote included
        assert data[got[1].start : got[1].end] == ('node { name: "%s" }' % long).encode()


@pytest.mark.parametrize(
    "bad, line, col, msg",
    [
        ('"' + "x" * 300, 1, 4, "unterminated string at end of input"),
        ('"' + "x" * 300 + "\n}", 1, 4, "unterminated string (a string cannot span lines)"),
        # A streamed string's own errors point at the bad byte (the whole literal is not held).
        ('"' + "x" * 300 + "\\q\"", 1, 305, "invalid escape '\\q' in string"),
        ('"' + "x" * 300 + "\x00\"", 1, 305, "NUL character inside a string"),
        ('"' + "x" * 300 + "\xff\"", 1, 305, "invalid UTF-8 byte 0xff (is this a text file?)"),
    ],
    ids=["eof", "newline", "escape", "nul", "utf8"],
)
def test_long_string_errors(bad: str, line: int, col: int, msg: str) -> None:
    data = ("s: " + bad).encode("latin-1")
    for chunk in (1, 7, 4096):
        with pytest.raises(PbtxtError) as ei:
            scan_blocks(data, ("a",), TF_HEADS, chunk, long_token=64, keep=16)
        assert (ei.value.line, ei.value.column, ei.value.msg) == (line, col, msg)


# --- random messages in many layouts -------------------------------------------------------------


class Scalar(NamedTuple):
    kind: str  # "str", "num", "ident"
    text: str  # the unsigned token text (num/ident), or the string's value (str)
    neg: bool = False


class Layout(NamedTuple):
    indent: str = "  "  # "" for one line
    pointy: bool = False
    colon_msg: bool = False
    comments: bool = False
    sep: str = ""
    lists: bool = False
    split_strings: bool = False
    single_quotes: bool = False
    escape_all: bool = False
    space_after_neg: bool = False
    crlf: bool = False
    bom: bool = False


LAYOUTS = {
    "canonical": Layout(),
    "one_line": Layout(indent=""),
    "pointy": Layout(pointy=True),
    "colon": Layout(colon_msg=True),
    "comments": Layout(comments=True),
    "semicolons": Layout(sep=";"),
    "commas_one_line": Layout(indent="", sep=","),
    "lists": Layout(lists=True),
    "lists_one_line_pointy": Layout(indent="", lists=True, pointy=True),
    "split_strings": Layout(split_strings=True, single_quotes=True),
    "escaped": Layout(escape_all=True, space_after_neg=True),
    "crlf_bom": Layout(crlf=True, bom=True, comments=True),
}

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b",
          "\f": "\\f", "\v": "\\v"}


def _escape(s: str, quote: str, escape_all: bool, salt: int) -> str:
    out = []
    for i, ch in enumerate(s):
        o = ord(ch)
        k = (salt + i * 7 + o) % 5
        if ch in _NAMED and (ch in "\n\\\"'" or escape_all or k < 2):
            if ch in "\"'" and ch != quote and not escape_all:
                out.append(ch)
            else:
                out.append(_NAMED[ch])
        elif ch == "\x00" or (escape_all and (o < 0x20 or o >= 0x7F or k == 0)):
            b = ch.encode("utf-8")
            if k % 2:
                out.append("".join("\\%03o" % c for c in b))  # always 3 digits: "\0" + "1" is "\01"
            elif o < 0x10000 and k == 2:
                out.append("\\u%04x" % o)
            elif k == 4:
                out.append("\\U%08x" % o)
            else:
                out.append("".join("\\x%02x" % c for c in b))  # always 2 digits
        elif ch == "?" and k == 3:
            out.append("\\?")
        else:
            out.append(ch)
    return "".join(out)


def _string(s: str, lay: Layout, salt: int) -> str:
    q = "'" if lay.single_quotes and salt % 2 else '"'
    if lay.split_strings and len(s) > 1:
        cut = 1 + salt % (len(s) - 1)
        q2 = '"' if q == "'" else "'"
        return "%s%s%s %s%s%s" % (q, _escape(s[:cut], q, lay.escape_all, salt), q, q2, _escape(s[cut:], q2, lay.escape_all, salt), q2)
    if lay.split_strings:
        return '""%s%s%s' % (q, _escape(s, q, lay.escape_all, salt), q)
    return q + _escape(s, q, lay.escape_all, salt) + q


def _scalar(v: Scalar, lay: Layout, salt: int) -> str:
    if v.kind == "str":
        return _string(v.text, lay, salt)
    return ("- " if lay.space_after_neg else "-") * v.neg + v.text


def print_message(msg: List[Tuple[str, Any]], lay: Layout) -> str:
    """Print a generated message ([(name, Scalar | list)]) in a layout; lines end with "\\n"."""
    out: List[str] = []
    nl = "\n" if lay.indent else " "
    op, cl = ("<", ">") if lay.pointy else ("{", "}")

    def emit(fields: List[Tuple[str, Any]], depth: int) -> None:
        pad = lay.indent * depth
        i = 0
        while i < len(fields):
            name, val = fields[i]
            j = i + 1
            if lay.lists:  # a run of same-kind fields of one name becomes one [..] list
                while j < len(fields) and fields[j][0] == name and isinstance(fields[j][1], list) == isinstance(val, list):
                    j += 1
            run = [v for _, v in fields[i:j]]
            salt = depth * 31 + i
            if isinstance(val, list):
                colon = ":" if lay.colon_msg else ""
                if len(run) > 1:
                    out.append("%s%s%s [" % (pad, name, colon))
                    for k, item in enumerate(run):
                        out.append("%s%s%s" % ("," if k else "", op, nl))
                        emit(item, depth + 1)
                        out.append(pad + cl)
                    out.append("]")
                else:
                    out.append("%s%s%s %s%s" % (pad, name, colon, op, nl))
                    emit(val, depth + 1)
                    out.append(pad + cl)
            else:
                if len(run) > 1:
                    out.append("%s%s: [%s]" % (pad, name, ", ".join(_scalar(v, lay, salt + k) for k, v in enumerate(run))))
                else:
                    out.append("%s%s: %s" % (pad, name, _scalar(val, lay, salt)))
            out.append(lay.sep)
            if lay.comments and salt % 3 == 0:
                out.append("  # c %d {'\"<\n" % salt)
                out.append(pad + "# whole-line comment\n" if salt % 2 else "")
            else:
                out.append(nl)
            i = j

    emit(msg, 0)
    text = "".join(out)
    if lay.crlf:
        text = text.replace("\n", "\r\n")
    return (BOM if lay.bom else "") + text


NAMES = ["node", "name", "op", "input", "device", "attr", "x", "_y1", "[ext.name]"]
MSG_NAMES = ["node", "graph", "op", "attr", "value", "[type.googleapis.com/pkg.M]"]

_num = st.one_of(
    st.integers(0, 2**70).map(str),
    st.integers(0, 2**40).map(lambda i: "0x%X" % i),
    st.integers(1, 2**30).map(lambda i: "0%o" % i),
    st.floats(allow_nan=False, allow_infinity=False, min_value=0).map(repr),
    st.sampled_from(["1.5f", "10F", ".5", "1.", "1e5", "2.5E-3", "0", "00"]),
)
_scalars = st.one_of(
    st.builds(Scalar, st.just("str"), st.text(max_size=12)),
    st.builds(Scalar, st.just("str"), st.text(st.characters(max_codepoint=0x7F), max_size=8)),
    st.builds(Scalar, st.just("num"), _num, st.booleans()),
    st.builds(Scalar, st.just("ident"), st.sampled_from(["true", "False", "inf", "nan", "DT_FLOAT", "x_1"]), st.booleans()),
)


def _fields(children: Any) -> Any:
    scalar_field = st.tuples(st.sampled_from(NAMES), _scalars)
    msg_field = st.tuples(st.sampled_from(MSG_NAMES), children)
    return st.lists(st.one_of(scalar_field, scalar_field, msg_field), max_size=6)


messages = st.recursive(st.just([]), _fields, max_leaves=25).map(lambda m: m if isinstance(m, list) else [])
_layouts = st.builds(
    Layout,
    indent=st.sampled_from(["  ", "", "\t", " "]),
    pointy=st.booleans(),
    colon_msg=st.booleans(),
    comments=st.booleans(),
    sep=st.sampled_from(["", ";", ","]),
    lists=st.booleans(),
    split_strings=st.booleans(),
    single_quotes=st.booleans(),
    escape_all=st.booleans(),
    space_after_neg=st.booleans(),
    crlf=st.booleans(),
    bom=st.booleans(),
)
PROPERTY = settings(max_examples=examples(0.12), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def test_printer_sanity() -> None:
    m = [("node", [("name", Scalar("str", 'a"\n\\é')), ("op", Scalar("num", "0x1F", True))]), ("x", Scalar("ident", "inf", True))]
    assert print_message(m, LAYOUTS["canonical"]) == 'node {\n  name: "a\\"\\n\\\\é"\n  op: -0x1F\n}\nx: -inf\n'
    assert print_message(m, LAYOUTS["one_line"]) == 'node { name: "a\\"\\n\\\\é" op: -0x1F } x: -inf '
    for lay in LAYOUTS.values():
        assert lark_parse(print_message(m, lay).encode()).to_data() == {"node": [{"name": ['a"\n\\é'], "op": [-31]}], "x": ["-inf"]}


@PROPERTY
@given(messages, _layouts)
def test_layouts_parse_and_scan_alike(msg: List[Tuple[str, Any]], extra: Layout) -> None:
    base = print_message(msg, LAYOUTS["canonical"]).encode("utf-8")
    want = lark_parse(base)
    want_data = want.to_data()
    reference = None
    for name, lay in list(LAYOUTS.items()) + [("random", extra)]:
        data = print_message(msg, lay).encode("utf-8")
        got = lark_parse(data)
        assert got.to_data() == want_data, (name, data)
        for path in (("node",), ("graph", "op"), ("node", "attr", "value")):
            blocks = scan_blocks(data, path)
            assert_blocks_match(data, blocks, got, path, TF_HEADS)
            summary = [(b.path, [(h.name, h.value) for h in b.heads]) for b in blocks]
            if path == ("node",):
                if reference is None:
                    reference = summary
                assert summary == reference, name  # same blocks and heads in every layout
        for chunk in (1, 7):  # chunk edges anywhere: same blocks as one big chunk
            assert scan_blocks(data, ("node",), TF_HEADS, chunk) == scan_blocks(data, ("node",))


# --- fuzz: random and mutated input --------------------------------------------------------------

# The default run is short and the same every time; a long local run (PBTXT_SCAN_FUZZ_EXAMPLES=N)
# draws new inputs each time, so repeated runs keep exploring.
FUZZ_EXAMPLES = fuzz_examples(0.15)
FUZZ = settings(max_examples=FUZZ_EXAMPLES, deadline=None, derandomize="PBTXT_SCAN_FUZZ_EXAMPLES" not in os.environ, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
_SEEDS = [p.read_bytes()[:3000] for p in (DATA / "graphs" / "inference_no_gradients.pbtxt", GE[0] if GE else GRAPHS[0])]
_SEEDS.append(b'a { b: "x\\001y" c: [1, -2.5f, inf] [e.x]: <d: \'q\'> } # c\nm [{}, <>]; z: 0x1F,')
_SPECIAL = b'{}<>[]"\'\\#\n:;,-./\x00\xff\r'


@st.composite
def mutated(draw: Any) -> bytes:
    data = bytearray(draw(st.sampled_from(_SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "insert", "delete", "truncate", "dup"]))
        i = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[i] = draw(st.integers(0, 255))
        elif op == "insert":
            data[i:i] = draw(st.sampled_from([bytes([c]) for c in _SPECIAL] + [b"\\x", b"\\u12", b"\xe4\xb8", b"1e", b"- "]))
        elif op == "delete":
            del data[i : i + draw(st.integers(1, 8))]
        elif op == "truncate":
            del data[i:]
        else:
            data[i:i] = data[i : i + draw(st.integers(1, 40))]
    return bytes(data)


fuzz_inputs = st.one_of(mutated(), st.binary(max_size=200), st.text(alphabet=_SPECIAL.decode("latin-1") + "ab1 ", max_size=60).map(lambda s: s.encode("utf-8")))

_REGRESSIONS = sorted((DATA / "hostile").glob("fuzz_*.bin")) if (DATA / "hostile").is_dir() else []


def check_agreement(data: bytes) -> None:
    t0 = time.perf_counter()
    ok, err = verdict(lark_parse, data)
    for chunk in (3, DEFAULT_CHUNK):
        sok, serr = verdict(scan_blocks, data, ("node",), TF_HEADS, chunk)  # only PbtxtError may escape
        assert sok == ok, (data, err, serr)
        if not ok and err is not None and err.line is not None:
            assert (serr.line, serr.column) == (err.line, err.column), (data, err, serr)  # type: ignore[union-attr]
    if ok:
        msg = lark_parse(data)
        for path in (("node",), ("a",), ("node", "attr")):
            assert_blocks_match(data, scan_blocks(data, path, TF_HEADS, 5), msg, path, TF_HEADS)
    assert time.perf_counter() - t0 < 5.0


@FUZZ
@given(fuzz_inputs)
def test_fuzz_lark_and_scanner_agree(data: bytes) -> None:
    check_agreement(data)


@pytest.mark.parametrize("p", _REGRESSIONS, ids=lambda p: p.name)
def test_fuzz_regressions(p: Path) -> None:
    check_agreement(p.read_bytes())
