"""The C-speed string skip says "valid" exactly where the grammar's STRING terminal does."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtxt_scan._grammar import terminal_patterns
from pbtxt_scan._skip import body_end

STRING = re.compile(terminal_patterns()["STRING"].encode("ascii"))

# Bodies built from the pieces that make strings hard: escapes of every kind and their broken
# forms, backslash runs, both quotes, newlines, NUL, hex digits after \x/\u/\U, surrogates.
_PIECES = [
    "a", "Z", " ", "\\\\", "\\", '\\"', "\\'", "\\n", "\\q", "\\8", "\\0", "\\07", "\\377", "\\400", "\\x", "\\x4",
    "\\x4f", "\\xg", "\\u", "\\u12", "\\u00e9", "\\uD800", "\\udfff", "\\U0010FFFF", "\\U00110000", "\\U0000D800",
    "\\U0001F600", '"', "'", "\n", "\x00", "\r", "7", "f", "\u00e9",
]
bodies = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


def _check(text: bytes, quote: int) -> None:
    m = STRING.match(text)
    j, closed = body_end(text, 1, len(text), quote)
    prefix_ok = STRING.fullmatch(bytes((quote,)) + text[1:j] + bytes((quote,)))
    assert prefix_ok, (text, j)  # whatever it skips is a valid body
    if closed:
        assert m is not None and m.end() == j + 1, (text, j)
    elif m is not None and text[m.end() : m.end() + 1] == b"\n":
        # a valid literal that ends its line (the writer layout) is always skipped
        pytest.fail("valid literal %r not skipped (stopped at %d)" % (text, j))


@settings(max_examples=3000, deadline=None)
@given(body=bodies, quote=st.sampled_from(['"', "'"]), tail=st.sampled_from(["", "\n", " x\n", '"', "'"]))
def test_agrees_with_the_string_terminal(body: str, quote: str, tail: str) -> None:
    _check((quote + body + tail).encode("utf-8"), ord(quote))


@settings(max_examples=500, deadline=None)
@given(body=bodies, quote=st.sampled_from(['"', "'"]), cut=st.integers(1, 200))
def test_windows_resume_where_no_escape_is_cut(body: str, quote: str, cut: int) -> None:
    """Fed in windows, as the scanner reads: each stop is a valid prefix, and a literal that ends
    its line is skipped to the same end however the windows fall."""
    text = (quote + body + quote + "\n").encode("utf-8")
    m = STRING.match(text)
    ends_line = m is not None and m.end() == len(text) - 1
    i, lim = 1, min(len(text), cut)
    while True:
        j, closed = body_end(text, i, lim, ord(quote))
        assert STRING.fullmatch(text[:1] + text[1:j] + text[:1])
        if closed:
            assert m is not None and j == m.end() - 1
            return
        if lim == len(text):
            assert not ends_line, "declined a literal that ends its line"
            return
        if j > i:
            i = j
        lim = min(len(text), lim + cut)


def _conformance_strings() -> "list[bytes]":
    out = []
    for p in sorted((Path(__file__).parent / "data" / "_external").glob("*.jsonl")):
        for line in p.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            text = (case.get("input") or case.get("text") or "")
            for m in re.finditer(r"[\"']", text):
                out.append(text[m.start() : m.start() + 200].encode("utf-8", "surrogateescape"))
    assert len(out) > 100
    return out


def test_agrees_on_every_literal_of_the_conformance_corpus() -> None:
    for text in _conformance_strings():
        _check(text, text[0])


def test_a_50mb_escaped_tensor_is_skipped_in_windows() -> None:
    import random

    rng = random.Random(3)
    esc = [b"\\%03o" % b if not 32 <= b < 127 or b in (34, 39, 92) else bytes((b,)) for b in range(256)]
    body = b"".join(esc[rng.getrandbits(8)] for _ in range(1 << 16)) * 200
    text = b'"' + body + b'"\n'
    i, lim, windows = 1, 1 << 20, 0
    while True:
        j, closed = body_end(text, i, min(lim, len(text)), 0x22)
        windows += 1
        if closed:
            break
        assert j > i
        i, lim = j, j + (1 << 20)
    assert j == len(text) - 2 and windows > 10
