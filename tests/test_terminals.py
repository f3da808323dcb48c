"""``_terminals`` is the grammar's own terminals, and scanning never builds the Lark parser.

The scanner's regexes come from ``pbtxt_scan/_terminals.py``, a static file generated from
``grammar/pbtxt.lark`` (``python tools/gen_terminals.py --write``). The grammar stays the one
definition: these tests fail as soon as the two differ.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pbtxt_scan.language import _grammar, _terminals

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "tests" / "data" / "graphs" / "mlp_sgd.pbtxt"


def test_static_terminals_are_the_grammars() -> None:
    derived = _grammar.grammar_terminals()
    assert set(derived) >= {"IDENT", "NUMBER", "STRING", "WS", "COMMENT"}
    assert _terminals.TERMINALS == derived


def test_static_file_is_what_the_generator_writes() -> None:
    # (Regenerate with: python tools/gen_terminals.py --write)
    assert Path(_terminals.__file__).read_text(encoding="utf-8") == _grammar.render_terminals()


def test_generator_prints_the_file() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_terminals.py")], cwd=str(ROOT), stdout=subprocess.PIPE, check=True
    ).stdout.decode("utf-8")
    assert out == _grammar.render_terminals()


_PROBE = """
import json, sys
from pbtxt_scan.language import _grammar
built = []
orig = _grammar._lark
def spy(*a, **k):
    built.append(a)
    return orig(*a, **k)
_grammar._lark = spy
from pbtxt_scan.cli import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
sys.stdout.flush()
print(json.dumps({"built": bool(built), "imported": "lark" in sys.modules}))
"""


@pytest.mark.parametrize("args", [["--version"], ["fp", str(MLP)]], ids=["version", "fp"])
def test_scanning_does_not_build_lark(args: list) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE] + args, cwd=str(ROOT), stdout=subprocess.PIPE, check=True
    ).stdout.decode("utf-8")
    lines = out.strip().splitlines()
    if args[0] == "fp":
        assert lines[0] == "dense/MatMul"  # the answer is still given
    assert json.loads(lines[-1]) == {"built": False, "imported": False}
