"""The C-speed string skip says "valid" exactly where the grammar's STRING terminal does."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples import examples

from pbtxt_scan.language._grammar import terminal_patterns
from pbtxt_scan.language._skip import body_end

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


@settings(max_examples=examples(3), deadline=None)
@given(body=bodies, quote=st.sampled_from(['"', "'"]), tail=st.sampled_from(["", "\n", " x\n", '"', "'"]))
def test_agrees_with_the_string_terminal(body: str, quote: str, tail: str) -> None:
    _check((quote + body + tail).encode("utf-8"), ord(quote))


@settings(max_examples=examples(0.5), deadline=None)
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


@pytest.mark.slow  # a 50 MB tensor
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


def _verdict(text: bytes) -> "tuple[int, bool]":
    return body_end(text, 1, len(text), text[0])


def test_every_byte_after_a_backslash_agrees_with_the_terminal() -> None:
    """The class map (``_skip._classes``) read exhaustively: every byte after a backslash, and every
    two-byte body, in both quotes, skipped exactly where the STRING terminal matches."""
    for q in b"\"'":
        for a in range(256):
            _check(bytes((q, 0x5C, a, q, 0x0A)), q)
            _check(bytes((q, 0x5C, 0x5C, a, q, 0x0A)), q)
            for b in range(256):
                _check(bytes((q, a, b, q, 0x0A)), q)


# Escapes that the class map sends to the grammar's own sub-pattern (the decoder stops at them).
_SPECIALS = ["\\x4", "\\x4f", "\\xA", "\\u00e9", "\\uFFFF", "\\U0001F600", "\\U0010FFFF", "\\U00000041"]


@settings(deadline=None)
@given(
    parts=st.lists(st.sampled_from(_PIECES + _SPECIALS + ["\\\\x41", "\\\\\\x41", "\\\\\\\\"]), max_size=60),
    quote=st.sampled_from(['"', "'"]),
)
def test_specials_are_checked_where_the_decoder_stops(parts: "list[str]", quote: str) -> None:
    _check((quote + "".join(parts) + quote + "\n").encode("utf-8"), ord(quote))


def test_valid_specials_stay_on_the_fast_path() -> None:
    """A body full of \\x, \\u and \\U escapes is still skipped whole (not declined to the slow
    road), so the decoder's message is read as expected on this Python."""
    body = (("ab\\x41\\\\\\u00e9c\\U0001F600\\x4 \\177" + "z" * 4000) * 20).encode("ascii")
    for q in b"\"'":
        text = bytes((q,)) + body + bytes((q, 0x0A))
        assert _verdict(text) == (len(text) - 2, True)
        # and an invalid escape at the very end is found after all those
        bad = bytes((q,)) + body + b"\\q" + bytes((q, 0x0A))
        assert _verdict(bad) == (1, False)
        # as is a bare quote after an escaped backslash
        bad = bytes((q,)) + body + b"\\\\" + bytes((q,)) + b"x" + bytes((q, 0x0A))
        assert _verdict(bad) == (1, False)


def test_the_decoder_speaks_as_expected() -> None:
    """The decoder's two errors that ``_skip`` reads (the same words on every supported Python)."""
    import codecs

    from pbtxt_scan.language._skip import _AT

    for s, pos in ((b"ab\\xg", 2), (b"\\x", 0), (b"\\\\\\xv", 2)):
        with pytest.raises(ValueError) as e:
            codecs.escape_decode(s)  # type: ignore[attr-defined]
        m = _AT.fullmatch(str(e.value))
        assert m is not None and int(m.group(1)) == pos
    with pytest.raises(ValueError) as e:
        codecs.escape_decode(b"ab\\")  # type: ignore[attr-defined]
    assert _AT.fullmatch(str(e.value)) is None


def test_dense_specials_are_left_to_the_regex() -> None:
    """Hex escapes the decoder does not take (one digit) on every byte: declined at once (the
    terminal's regex is faster there). Two-digit ones it decodes: skipped whole by its one pass."""
    text = b'"' + b"\\x4 \\x7g" * 20000 + b'"\n'
    assert _verdict(text) == (1, False)
    assert STRING.match(text).end() == len(text) - 1  # (valid all the same)
    text = b'"' + b"\\x41\\x7f" * 20000 + b'"\n'
    assert _verdict(text) == (len(text) - 2, True)


# --- the one decoder pass over the body itself (``_skip._tf_escapes``, step 5) ---------------------

# What TensorFlow's CEscape writes for each byte (both printers: octal, \n \r \t \" \' \\).
_TF_NAMED = {9: b"\\t", 10: b"\\n", 13: b"\\r", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}
_TF_ESC = [_TF_NAMED.get(b) or (bytes((b,)) if 32 <= b < 127 else b"\\%03o" % b) for b in range(256)]
# and the forms that decode to a newline or that the decoder does not know as the grammar does
_ODD = ["\\012", "\\x0a", "\\x0A", "\\12", "\\?", "\\v", "n", "\\\\n", "\\\\\\n", "\\777", "\\400"]


def _tf_body(raw: bytes) -> bytes:
    return b"".join(_TF_ESC[b] for b in raw)


@settings(max_examples=examples(3), deadline=None)
@given(parts=st.lists(st.sampled_from(_PIECES + _SPECIALS + _ODD), max_size=40), quote=st.sampled_from(['"', "'"]))
def test_the_one_pass_check_says_valid_only_where_the_terminal_does(parts: "list[str]", quote: str) -> None:
    from pbtxt_scan.language._skip import _tf_escapes

    body = "".join(parts).replace("\n", "").replace("\x00", "").encode("utf-8")  # (the caller's part)
    q = quote.encode("ascii")
    if _tf_escapes(body, ord(quote)):
        assert STRING.fullmatch(q + body + q), body


@settings(max_examples=examples(1), deadline=None)
@given(raw=st.binary(max_size=300), cuts=st.lists(st.integers(0, 1300), min_size=2, max_size=6),
       quote=st.sampled_from(['"', "'"]))
def test_the_one_pass_check_takes_what_tensorflow_writes_wherever_it_is_cut(
        raw: bytes, cuts: "list[int]", quote: str) -> None:
    """TF's escaping of any bytes passes it whole (so real tensors stay on the fast step), and a
    window cut anywhere, inside an escape too, passes only where it is a valid body alone."""
    from pbtxt_scan.language._skip import _tf_escapes

    body = _tf_body(raw)
    q = quote.encode("ascii")
    assert _tf_escapes(body, ord(quote))
    cuts = sorted(min(c, len(body)) for c in cuts)
    for a, b in zip(cuts, cuts[1:]):
        piece = body[a:b]
        if _tf_escapes(piece, ord(quote)):
            assert STRING.fullmatch(q + piece + q), piece


def test_the_one_pass_check_reads_every_byte_after_a_backslash_as_the_terminal() -> None:
    """Exhaustive over one and two escapes: ``\\a``, ``\\\\a``, ``\\ab`` for every byte a, b."""
    from pbtxt_scan.language._skip import _tf_escapes

    import random

    every = bytes(range(256)) + bytes(random.Random(5).getrandbits(8) for _ in range(4096))
    for q in b"\"'":
        assert _tf_escapes(_tf_body(every), q)  # (what TF writes for every byte stays on it)
        qb = bytes((q,))
        for a in range(256):
            for body in (bytes((0x5C, a)), bytes((0x5C, 0x5C, a)), bytes((a, 0x5C, a))):
                if 0x0A in body or 0 in body:
                    continue
                if _tf_escapes(body, q):
                    assert STRING.fullmatch(qb + body + qb), body


@settings(max_examples=examples(2), deadline=None)
@given(parts=st.lists(st.sampled_from(_PIECES + _SPECIALS + _ODD + ["\\400", "\\777", "\\1", "\\12a"]), max_size=80),
       pad=st.integers(0, 300))
def test_unescape_reads_long_bodies_as_its_loop(parts: "list[str]", pad: int) -> None:
    """``_grammar.unescape``'s C road for long bodies gives the bytes its escape loop gives."""
    from pbtxt_scan.language._values import _unescape, unescape

    body = "a" * pad + "".join(parts).replace("\n", "")
    try:
        want = _unescape(body)
    except ValueError:  # (\U00110000: beyond Unicode; the grammar never lets it through)
        return
    assert unescape(body) == want, body
