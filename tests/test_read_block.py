"""A block in the writer layout read line by line (``_layout.read_block``) is the grammar's parse.

``GraphFile.parse`` reads such blocks without the Lark parser (fp's placeholder, ``show``, GE
ops): every block of every fixture, and random blocks in the layout, must give exactly the
``Message`` that ``parse_text`` gives (fields, values, lines, columns); anything out of the layout
must be declined (None), never read another way.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.marks import slow_if_big

from pbtxt_scan._errors import PbtxtError
from pbtxt_scan.language._grammar import parse_text
from pbtxt_scan.graph._input import GraphFile
from pbtxt_scan.text._layout import read_block
from pbtxt_scan._model import Message

from support.messages import PERTURB, _fields, _print

DATA = Path(__file__).parent / "data"
FIXTURES = sorted(list((DATA / "graphs").glob("*.pbtxt")) + [p for p in (DATA / "ge").glob("*_Build.*") if p.suffix != ".json"])
PATHS = [("node",), ("library", "function", "node_def"), ("graph", "op"), ("graph", "node")]


def _lark(raw: bytes, d: int, line: int) -> Optional[Message]:
    try:
        return parse_text(" " * (2 * d) + raw.decode("utf-8", "surrogateescape"), first_line=line)
    except PbtxtError:
        return None


@pytest.mark.parametrize("fixture", slow_if_big(FIXTURES), ids=lambda p: p.name)
def test_every_fixture_block_reads_as_the_grammar_parses_it(fixture: Path) -> None:
    n = 0
    with GraphFile.open(fixture) as g:
        for path in PATHS:
            for b in g.blocks(path):
                raw = g.read(b)
                got = read_block(raw, b.column // 2, b.line)
                assert got is not None, (b.name, b.line)  # (the writers' layout: never declined)
                assert got == _lark(raw, b.column // 2, b.line), (b.name, b.line)
                n += 1
    assert n > 0


@settings(max_examples=examples(0.3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3), _fields(4))
def test_random_blocks_read_as_the_grammar_parses_them(d: int, fields: list) -> None:
    inner = _print(fields, d + 1)
    raw = b"node {\n" + inner + b"  " * d + b"}"
    got = read_block(raw, d, 7)
    assert got is not None
    assert got == _lark(raw, d, 7)


@settings(max_examples=examples(0.4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fields(3, ascii=True), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(PERTURB), st.booleans()), min_size=1, max_size=3))
def test_out_of_layout_is_declined_or_read_alike(fields: list, edits: list) -> None:
    raw = b"node {\n" + _print(fields, 1) + b"}"
    for where, what, replace in edits:
        i = int(where * len(raw))
        raw = raw[:i] + what + raw[i + (1 if replace else 0) :]
    got = read_block(raw, 0, 1)
    if got is not None:
        assert got == _lark(raw, 0, 1)


@pytest.mark.parametrize(
    "raw",
    [
        b'node {\n  name: "a"\n}\nnode {\n}',  # two blocks
        b'name: "a"',  # a scalar field
        b'node {\n  name: "a"\n    "b"\n}',  # adjacent literals
        b"node {\n  x: -" + b"9" * 5000 + b"\n}",  # a number Python keeps as text, negated
        b'node {\n  name: "a" }',
        b"node {\n  a: 1\r\n}",
    ],
)
def test_what_the_lines_cannot_say_goes_to_lark(raw: bytes) -> None:
    assert read_block(raw, 0, 1) is None


def test_fp_on_a_fed_graph_builds_no_lark_parser() -> None:
    """The placeholder's role is read from its block: fp imports no Lark (0.14 s)."""
    graph = DATA / "graphs" / "mlp_sgd.pbtxt"
    code = (
        "import sys\n"
        "from pbtxt_scan.fpbp._rules import find_fp\n"
        "ans = find_fp(sys.argv[1])\n"
        "print(ans.point.name, 'lark' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(graph)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["dense/MatMul", "False"]
