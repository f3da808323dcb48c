"""Scanner costs that must grow linearly with the input (issue 11's scanner items).

Time is compared as a ratio between two inputs measured in the same process (robust to a busy
machine); memory with tracemalloc.
"""
from __future__ import annotations

import io
import time
import tracemalloc
from typing import Callable

import pytest

from pbtxt_scan.language._grammar import lexical_error_message
from pbtxt_scan.text._scan import scan

HEADS = frozenset({"name", "op"})


def _cpu(fn: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(2):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def _nodes(sep: bytes, n: int) -> bytes:
    return sep.join(b'node { name: "n%d" op: "Add" input: "a" input: "b" }' % i for i in range(n)) + b"\n"


@pytest.mark.slow
def test_columns_on_a_long_line_cost_no_more_than_on_many_lines() -> None:
    """Lexer.linecol counted a column from the line start at every ask: quadratic on one long line
    (700 KB: 5.1 s against 0.48 s one node per line)."""
    n = 12000  # about 700 KB, held whole by the default chunk size
    one_line, many_lines = _nodes(b" ", n), _nodes(b"\n", n)

    def run(data: bytes) -> Callable[[], object]:
        return lambda: sum(1 for _ in scan(io.BytesIO(data), ("node",), HEADS))

    blocks = list(scan(io.BytesIO(one_line), ("node",), HEADS))
    assert len(blocks) == n and blocks[-1].column == one_line.rfind(b"node {") + 1  # (columns still right)
    assert _cpu(run(one_line)) < 3 * _cpu(run(many_lines)) + 0.05


def test_error_message_for_many_hex_escapes_is_linear() -> None:
    """lexical_error_message sliced the rest of the line at every \\x escape (160k: 1.7 s)."""

    def line(n: int) -> str:
        return '"' + "\\x41" * n + '\\q"'

    small, big = line(20000), line(200000)
    assert lexical_error_message(big, 0) == "invalid escape '\\q' in string"
    assert _cpu(lambda: lexical_error_message(big, 0)) < 30 * _cpu(lambda: lexical_error_message(small, 0)) + 0.05


def test_adjacent_literals_outside_heads_are_not_held() -> None:
    """Adjacent string literals were joined for every field, not only the heads needed (check on
    30 MB of them peaked at 140 MB)."""
    piece = b'"' + b"\\001" * 60 + b'"\n'
    data = b'node {\n  name: "a"\n  op: "Const"\n  attr { key: "value" value { tensor { tensor_content: ' + piece * 40000 + b"} } }\n}\n"
    assert len(data) > 9_000_000
    tracemalloc.start()
    try:
        blocks = list(scan(io.BytesIO(data), ("node",), HEADS, chunk_size=1 << 16))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(h.name, h.value) for h in blocks[0].heads] == [("name", "a"), ("op", "Const")]
    assert peak < 3_000_000, peak


def test_adjacent_literals_of_a_head_are_still_joined() -> None:
    data = b'node {\n  name: "a" \'b\'\n  "c"\n  op: "X"\n}\n'
    (b,) = list(scan(io.BytesIO(data), ("node",), HEADS))
    assert [(h.name, h.value) for h in b.heads] == [("name", "abc"), ("op", "X")]
    assert b.parents == ()
