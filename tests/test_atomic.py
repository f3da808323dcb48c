"""``_atomic``: the look-ahead rewrite of possessive repeats and atomic groups matches as they do.

Where ``re`` reads the native syntax (Python >= 3.11) both forms of every scanner regex are run on
the same text and must match the same span with the same groups. On every version the emulated
form must compile, keep no native syntax, and match in linear time where a plain greedy repeat in
its place backtracks exponentially.
"""
from __future__ import annotations

import re
import sys
import time
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.lines import LINES, PIECES, edited

from pbtxt_scan.text import _lexer
from pbtxt_scan.text import _layout as layout
from pbtxt_scan.language._atomic import compile_bytes, emulate, user_groups

NATIVE_OK = sys.version_info >= (3, 11)


def _scanner_patterns() -> List[str]:
    """The text of every regex the scanner compiles with possessive or atomic parts."""
    ident, scalar = layout.terms()
    names = ("name", "op", "input")
    out = [layout.line_re().pattern.decode()]
    for d in (0, 1, 3):
        out.append(layout.long_line_re(d).pattern.decode())
    for d in (0, 1):
        out.append(layout.field_re(d, names).pattern.decode())
        out.append(layout.block_re(d).pattern.decode())
    out.append(_lexer._string_body(ord('"')).pattern.decode())
    out.append(_lexer._master().pattern.decode())
    out.append(scalar)
    return out


def _old_python_strings() -> List[str]:
    """The string patterns as built below 3.11 (their escape loop is left greedy there)."""
    t = _lexer.terminal_patterns()["STRING"]
    return [_lexer._possessive(t, native=False), _lexer._possessive(t, native=False).join("()") + "\\n"]


def test_rewrite_shapes() -> None:
    # A group: a look-ahead, then a back-reference to what it matched.
    assert emulate("(?:ab)*+c") == "(?=(?P<_atomic0>(?:ab)*))(?P=_atomic0)c"
    assert emulate("(?>x|xy)z") == "(?=(?P<_atomic0>x|xy))(?P=_atomic0)z"
    # One character: a greedy repeat that may not stop before another one.
    assert emulate("a*+b") == "a*(?!a)b"
    assert emulate("[ab]++") == "[ab]+(?![ab])"
    assert emulate("x?+") == "(?:x|(?!x))"
    assert emulate("[a-z]{0,5}+") == "(?:[a-z]{0,4}(?![a-z])|[a-z]{5})"
    assert emulate("a{3}+") == "a{3}"
    # Nested: the inner one is rewritten inside the outer one's body.
    assert emulate("(?:[a-c]++(?>d|e))*+") == "(?=(?P<_atomic1>(?:[a-c]+(?![a-c])(?=(?P<_atomic0>d|e))(?P=_atomic0))*))(?P=_atomic1)"
    # Escapes and classes are atoms; a "]" first in a class or escaped is no end.
    assert emulate(r"\x41*+[]\]]?+") == r"\x41*(?!\x41)(?:[]\]]|(?![]\]]))"
    # Greedy and lazy repeats, groups and look-arounds are left as they are.
    assert emulate(r"(a)*(?:b)+?(?=c)(?!d)(?P<n>e)(?P=n)") == r"(a)*(?:b)+?(?=c)(?!d)(?P<n>e)(?P=n)"


@pytest.mark.parametrize("pattern", ["a*+", "a++", "a?+", "a{0,3}+", "a{2,}+", "a{1,2}+", "(?:a|ab)*+", "(?>a|ab)", "(?:ab?)++"])
@pytest.mark.parametrize("text", ["", "a", "aa", "aaa", "aaaa", "ab", "aab", "abab", "aba"])
@pytest.mark.parametrize("follow", ["", "a", "b", "$"])
def test_small_cases_as_native(pattern: str, text: str, follow: str) -> None:
    """Every small case, against Python 3.11's own possessive repeats where available, else
    against the definition (the longest match the repeat can make, never given back)."""
    full = pattern + (follow if follow != "$" else "\\Z")
    got = compile_bytes(full, native=False).match(text.encode())
    if NATIVE_OK:
        want = re.match(full.encode(), text.encode())
        assert (got and got.span()) == (want and want.span())
    else:
        first = re.match(pattern.replace("*+", "*").replace("++", "+").replace("?+", "?").replace("}+", "}").replace("(?>", "(?:").encode(), text.encode())
        rest = re.compile((follow if follow != "$" else "\\Z").encode()).match(text.encode(), first.end()) if first else None
        assert (got and got.span()) == ((0, rest.end()) if rest else None)


def test_user_groups_skip_the_added_ones() -> None:
    p = compile_bytes("(a)(?:b)*+(c(?>d))(e)", native=False)
    assert p.groups == 5
    assert user_groups(p) == (1, 3, 5)
    assert p.match(b"abbcde").group(*user_groups(p)) == (b"a", b"cd", b"e")


def test_no_backtracking_into_an_atomic_part() -> None:
    # "a*+a" can never match: the possessive repeat keeps every "a".
    assert compile_bytes("a*+a", native=False).match(b"aaaa") is None
    assert re.match(b"a*a", b"aaaa") is not None
    assert compile_bytes("(?>ab|a)b", native=False).match(b"ab") is None


def test_emulated_scanner_patterns_are_linear() -> None:
    """The block regex on a line that almost fits: greedy repeats would try every split."""
    block = layout.block_re(0)  # (emulated already below 3.11)
    if NATIVE_OK:
        block = compile_bytes(block.pattern.decode(), native=False)
    text = b"n {\n" + b"  a: 1\n" * 20000 + b"  b: \"x\n"  # not closed: the match must fail
    t = time.perf_counter()
    assert block.match(text) is None
    assert time.perf_counter() - t < 2.0


@pytest.mark.parametrize("i", range(len(_scanner_patterns())))
def test_every_scanner_pattern_compiles_emulated(i: int) -> None:
    text = _scanner_patterns()[i]
    if not NATIVE_OK:
        pytest.skip("on this Python the compiled patterns are already the emulated ones")
    out = emulate(text)
    assert "*+" not in out and "++" not in out and "?+" not in out and "}+" not in out and "(?>" not in out
    p = compile_bytes(text, native=False)
    assert len(user_groups(p)) == re.compile(text.encode()).groups


PAIRS = [(re.compile(p.encode()), compile_bytes(p, native=False)) for p in _scanner_patterns()] if NATIVE_OK else []
NATIVE_STRING = _lexer._possessive(_lexer.terminal_patterns()["STRING"], native=True)
PAIRS += [(re.compile(NATIVE_STRING.encode()), compile_bytes(p, native=False)) for p in _old_python_strings()[:1]] if NATIVE_OK else []
PAIRS += [(re.compile(NATIVE_STRING.join("()").encode() + b"\\n"), compile_bytes(p, native=False)) for p in _old_python_strings()[1:]] if NATIVE_OK else []


@pytest.mark.skipif(not NATIVE_OK, reason="the native syntax needs Python 3.11")
@settings(max_examples=examples(0.15), deadline=None)
@given(st.integers(0, len(LINES) - 40), st.integers(1, 30), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(PIECES)), max_size=3))
def test_emulated_matches_native(start: int, n: int, edits: list) -> None:
    text = edited(start, n, edits)
    for native, emulated in PAIRS:
        quotes = [i for i in range(len(text)) if text[i] in b"\"'"][:6]  # (where strings start)
        for pos in [0, text.find(b"\n") + 1] + quotes:
            a = native.match(text, pos)
            b = emulated.match(text, pos)
            assert (a is None) == (b is None), (native.pattern[:80], text[pos : pos + 80])
            if a is not None:
                assert a.span() == b.span()
                assert a.groups() == tuple(b.group(g) for g in user_groups(emulated))
                if a.lastgroup is not None:  # (a named group of the caller's: the master's kinds)
                    assert a.lastgroup == b.lastgroup
