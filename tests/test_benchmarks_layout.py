"""benchmarks/ is a small registry: one generator module per kind, shared pieces that never import a
kind, peers as real modules, no import circle, no module over 400 lines, no code inside strings.

Every module under benchmarks/ is parsed with ``ast`` (the import-graph rules of test_imports.py:
every import, at module level or inside a function, is an edge; ``from . import x`` names the
submodule x; a module depends on the ``__init__`` of the packages it imports from, but not on its own
package's).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

from support.cycles import find_cycle, import_graph

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
GENERATE = "benchmarks.generate"
COMMON = ("_text", "_stamp", "_tf", "_ge_text")  # shared by the kinds: they import no kind module


def _kinds() -> List[str]:
    sys.path.insert(0, str(ROOT))
    from benchmarks.generate import GENERATORS

    return list(GENERATORS)


def test_the_graph_sees_a_circle(tmp_path):
    pkg = tmp_path / "benchmarks"
    (pkg / "generate").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "generate" / "__init__.py").write_text("from . import dense\n")
    (pkg / "generate" / "_text.py").write_text("def f():\n    from .dense import g\n")
    (pkg / "generate" / "dense.py").write_text("from ._text import f\n")
    graph = import_graph(pkg)
    assert graph["benchmarks.generate._text"] == {"benchmarks.generate.dense"}
    cycle = find_cycle(graph)
    assert cycle[0] == cycle[-1] and set(cycle) == {"benchmarks.generate._text", "benchmarks.generate.dense"}


def test_no_import_circle_in_benchmarks():
    graph = import_graph(BENCH)
    assert "benchmarks.generate.dense" in graph["benchmarks.generate"]  # the registry sees its kinds
    cycle = find_cycle(graph)
    assert not cycle, "import circle: " + " -> ".join(cycle)


def test_common_modules_import_no_kind():
    graph = import_graph(BENCH)
    kinds = {"%s.%s" % (GENERATE, k) for k in _kinds()}
    for common in COMMON:
        bad = graph["%s.%s" % (GENERATE, common)] & kinds
        assert not bad, "%s imports the kind module(s) %s" % (common, sorted(bad))


def test_one_module_per_kind():
    files = {p.stem for p in (BENCH / "generate").glob("*.py") if not p.stem.startswith("_")}
    assert files == set(_kinds())


def test_the_command_line_lists_every_kind():
    out = subprocess.run([sys.executable, "-m", GENERATE, "--help"], cwd=str(ROOT), stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=60).stdout.decode()
    choices = out[out.index("{") + 1 : out.index("}")].split(",")
    assert choices == _kinds() and len(choices) == 8
    for opt in ("--size", "--seed", "-o", "--output", "--const-line", "--json"):
        assert opt in out


def test_no_module_over_400_lines():
    big = ["%s: %d" % (p.relative_to(ROOT), p.read_text(encoding="utf-8").count("\n"))
           for p in BENCH.rglob("*.py") if p.read_text(encoding="utf-8").count("\n") > 400]
    assert not big, big


def _text(n: ast.AST) -> Optional[str]:
    """The text of a string literal node (``ast.Constant``; ``ast.Str`` on Python 3.7)."""
    value = getattr(n, "value", None) if isinstance(n, ast.Constant) else getattr(n, "s", None) if type(n).__name__ == "Str" else None
    return value if isinstance(value, str) else None


def _code_in_strings(path: Path) -> List[int]:
    """Lines of string constants (docstrings aside) that hold several lines of Python with an import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and _text(n.body[0].value) is not None}
    found = []
    for n in ast.walk(tree):
        text = _text(n)
        if text is not None and id(n) not in docs and text.count("\n") >= 2:
            try:
                inner = ast.parse(text)
            except SyntaxError:
                continue
            if any(isinstance(x, (ast.Import, ast.ImportFrom)) for x in ast.walk(inner)):
                found.append(n.lineno)
    return found


def test_no_code_in_strings(tmp_path):
    bad = tmp_path / "run.py"
    bad.write_text('"""doc"""\nNAIVE = r\'\'\'\nimport re, sys\nprint(sys.argv)\n\'\'\'\n')
    assert len(_code_in_strings(bad)) == 1  # (its line: where the string starts, or on 3.7 where it ends)
    found = {str(p.relative_to(ROOT)): _code_in_strings(p) for p in BENCH.rglob("*.py")}
    assert not {k: v for k, v in found.items() if v}


def test_versions_table_gives_medians_and_ratios_without_the_cold_round():
    sys.path.insert(0, str(ROOT))
    from benchmarks.versions_table import table

    rows = [
        "1\tdense\tfp\tbase\t9.00 9.00 0.00 1024\tx\n", "1\tdense\tfp\tnow\t9.00 9.00 0.00 1024\tx\n",  # (cold: left out)
        "2\tdense\tfp\tbase\t2.00 1.00 0.50 2048\tx\n", "2\tdense\tfp\tnow\t1.00 0.50 0.25 2048\tx\n",
        "3\tdense\tfp\tbase\t4.00 2.00 1.00 4096\tx\n", "3\tdense\tfp\tnow\t3.00 1.00 0.50 4096\tx\n",
    ]
    got = table(rows).splitlines()[-1]
    assert got == "| `fp` dense | 3.00 s | 2.00 s | 0.67 | 2.25 s | 1.12 s | 0.50 | 3 / 3 MB |"
    jobs = table([r.replace("\tfp\t", "\tcheck:2\t") for r in rows]).splitlines()[-1]  # (versions.sh's CMD:N)
    assert jobs == got.replace("`fp`", "`check --jobs 2`")
