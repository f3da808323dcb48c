"""``_layout``'s two spellings of the layout regexes: native (3.11+) and old ``re``.

Before 3.11 the layout regexes are plain greedy repeats where the native ones are possessive,
and NUMBER is a plain group where it is atomic (the reasons are in ``_layout``). That is sound
only if (1) they match exactly what the native ones match, and (2) on text they do not match they
still fail in linear time: a greedy repeat backtracks, and two ways to read one line would make
it read everything after that line again for each of them. (1) is checked against the native
spelling where ``re`` reads it (3.11+), (2) and the NUMBER argument on every version; the
canonical agreement tests (``test_canonical``) run the fast path itself on every version.
"""
from __future__ import annotations

import re
import sys
import time
from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.examples import examples

from pbtxt_scan.text import _layout as layout
from pbtxt_scan.language._atomic import compile_bytes, user_groups
from pbtxt_scan.language._grammar import terminal_patterns

from support.lines import LINES, PIECES, edited

NATIVE_OK = sys.version_info >= (3, 11)
EDITS = PIECES + [b"\x00", b"\t", b"0x", b"'"]
NAMES = ("name", "op", "input", "id")


def _old_patterns() -> List[Tuple[str, "re.Pattern[bytes]"]]:
    """(native text, or "" below 3.11; old pattern) for every regex the fast path compiles both ways."""

    def native(f, *args) -> str:  # type: ignore[no-untyped-def]
        return f(*args, True).pattern.decode() if NATIVE_OK else ""

    out = [(native(layout.line_re), layout.line_re(False))]
    for d in (0, 1, 3):
        out.append((native(layout.long_line_re, d), layout.long_line_re(d, False)))
        out.append((native(layout.scalars_re, d, NAMES), layout.scalars_re(d, NAMES, False)))
    for d in (0, 1):
        for names in (NAMES, ()):
            out.append((native(layout.field_re, d, names), layout.field_re(d, names, False)))
        out.append((native(layout.block_re, d), layout.block_re(d, False)))
    return out


OLD = _old_patterns()


def test_old_spelling_needs_no_emulation() -> None:
    for _, old in OLD:
        text = old.pattern.decode()
        assert "*+" not in text and "++" not in text and "?+" not in text and "}+" not in text and "(?>" not in text
        assert "_atomic" not in text


@pytest.mark.skipif(not NATIVE_OK, reason="the native spelling needs Python 3.11")
@settings(max_examples=examples(0.15), deadline=None)
@given(st.integers(0, len(LINES) - 40), st.integers(1, 30), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(EDITS)), max_size=3))
def test_old_spelling_matches_native(start: int, n: int, edits: list) -> None:
    text = edited(start, n, edits)
    starts = [0] + [i + 1 for i in range(len(text)) if text[i] == 10][:8]
    for native_text, old in OLD:
        native = re.compile(native_text.encode())
        for pos in starts:
            for end in (len(text), text.rfind(b"\n") + 1):
                a = native.match(text, pos, end)
                b = old.match(text, pos, end)
                assert (a is None) == (b is None), (native_text[:80], text[pos : pos + 80])
                if a is not None:
                    assert a.span() == b.span()
                    assert a.groups() == tuple(b.group(g) for g in user_groups(old))


# Every kind of scalar, each read one way only; then blocks inside blocks.
KINDS = [b'"abc"', b"'abc'", b'"a\\001b"', b"'a\\'b'", b'""', b"0", b"12", b"-1.5e3f", b".5", b"1.", b"1e5", b"5f", b"0x1F", b"017", b"DT_FLOAT", b"-inf"]


def _body(k: int, depth: int) -> bytes:
    ind = b"  " * depth
    out = b""
    for _ in range(k):
        for v in KINDS:
            out += ind + b"f: " + v + b"\n"
        out += ind + b"b {\n" + ind + b"  x: 1\n" + ind + b'  s: "q"\n' + ind + b"}\n"
    return out


@pytest.mark.parametrize("native", [False, True] if NATIVE_OK else [False])
def test_failing_blocks_fail_in_linear_time(native: bool) -> None:
    """A block that fails on its last line, 40 times every kind of line long: a line that the
    old spelling could read two ways would double the work per such line (2**40)."""
    good = b'n {\n  name: "x"\n' + _body(40, 1) + b"  m {\n" + _body(40, 2) + b"  }\n}\n"
    bad = good[:-8] + b'  z: "x\n' + good[-8:]
    for rx in (layout.block_re(0, native), layout.field_re(0, NAMES, native), layout.field_re(0, (), native)):
        assert rx.fullmatch(good) is not None
        t = time.perf_counter()
        assert rx.fullmatch(bad) is None
        assert time.perf_counter() - t < 1.0
    run = layout.scalars_re(1, NAMES, native)
    lines = b"".join(b"  f: " + v + b"\n" for v in KINDS) * 40
    assert run.match(lines).end() == len(lines)


NUMBER = terminal_patterns()["NUMBER"]
NUM_ATOMIC = compile_bytes("-?(?>%s)\\n" % NUMBER, native=False)  # (emulated on every version)
NUM_PLAIN = re.compile(("-?(?:%s)\\n" % NUMBER).encode())


@settings(max_examples=examples(0.4), deadline=None)
@given(st.text(alphabet="0123456789.eE+-fFxXaAbB_", max_size=12))
def test_number_needs_no_atomic_group_at_a_line_end(s: str) -> None:
    """The lexer takes NUMBER's first alternative that matches; the old spelling takes any that
    reaches the newline. Followed by a newline they agree, so the group need not be atomic."""
    text = s.encode() + b"\n"
    a = NUM_ATOMIC.match(text)
    b = NUM_PLAIN.match(text)
    assert (a and a.span()) == (b and b.span())


def test_number_cases() -> None:
    for s in ("0", "01.5", "0x1e-5", "1.5e", "1e+5", "0.5", ".5", "5.", "1f", "0x1F", "017", "08", "1e5f", "-0", "1..2"):
        text = s.encode() + b"\n"
        a = NUM_ATOMIC.match(text)
        b = NUM_PLAIN.match(text)
        assert (a and a.span()) == (b and b.span()), s


def test_a_huge_block_of_short_lines_takes_little_memory() -> None:
    """Old ``re`` keeps backtracking state for every line a greedy repeat has taken (about 1 KB a
    line): blocks longer than ``_canonical._BIG`` are entered, not matched whole, so that state
    stays a few MB. (150,000 lines of 7 bytes: about 150 MB if matched whole before 3.11.)"""
    import io
    import tracemalloc

    from pbtxt_scan.text._canonical import scan_canonical

    data = b'node {\n  name: "big"\n  op: "NoOp"\n' + b"  a: 1\n" * 150000 + b"}\nnode {\n  name: \"b\"\n}\n"
    tracemalloc.start()
    try:
        blocks = list(scan_canonical(io.BytesIO(data), ("node",), frozenset({"name", "op"}), display="t"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [b.name for b in blocks] == ["big", "b"]
    assert peak < 30 << 20, peak >> 20
