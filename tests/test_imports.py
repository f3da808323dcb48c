"""The package's modules import one another one way only: down the layers, and in no circle.

Every module under pbtxt_scan/ is parsed with ``ast``; every intra-package import, at module level
or inside a function, is an edge; the graph must have no cycle. (A circle that only works because one
side imports at the bottom or inside a function is still a circle: it breaks as soon as someone moves
an import.) A module that imports a package depends on its ``__init__`` (the package itself is not an
edge from its own submodules' point of view: ``from . import x`` names the submodule x).
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Dict, List, Set

import pbtxt_scan
from support.cycles import find_cycle, import_graph as graph_of, modules

ROOT = Path(pbtxt_scan.__file__).parent
PKG = "pbtxt_scan"


def _modules() -> Dict[str, Path]:
    mods = modules(ROOT)
    assert PKG in mods and len(mods) > 5
    return mods


def import_graph() -> Dict[str, Set[str]]:
    """The package's import graph, a copy of its one reading (the package is parsed once)."""
    return {mod: set(targets) for mod, targets in _graph().items()}


@functools.lru_cache(maxsize=None)
def _graph() -> Dict[str, Set[str]]:
    return graph_of(ROOT)


# The layers, lowest first (ARCHITECTURE.md says what each one does). A module imports its own
# unit and the units of lower layers only; units of one layer never import each other. A unit is a
# package under pbtxt_scan, or a module at its root; the public API (``__init__``, ``_api``,
# ``_api_points``, ``_api_ge``) is one unit.
LAYERS = [
    {"pbtxt_scan._kit"},
    {"pbtxt_scan._errors", "pbtxt_scan._model"},
    {"pbtxt_scan.language", "pbtxt_scan.source", "pbtxt_scan.parallel", "pbtxt_scan.report", "pbtxt_scan.prof",
     "pbtxt_scan.schema"},
    {"pbtxt_scan.text", "pbtxt_scan.wire"},
    {"pbtxt_scan.graph"},
    {"pbtxt_scan.fpbp", "pbtxt_scan.ge"},
    {"pbtxt_scan"},
    {"pbtxt_scan.cli"},
    {"pbtxt_scan.__main__"},
]
PLAIN_DATA = LAYERS[0] | LAYERS[1]
# What the command line may import besides itself: the public API, the public ge package, the
# report's renderer (plain data in, a page out) and prof (a profiling run's output, for verify).
CLI_MAY_IMPORT = {"pbtxt_scan", "pbtxt_scan.ge", "pbtxt_scan.report", "pbtxt_scan.prof",
                  "pbtxt_scan._kit"}  # (and the NamedTuple every layer declares its tuples with)


def _unit(mod: str) -> str:
    parts = mod.split(".")
    if len(parts) > 2 or (len(parts) == 2 and (ROOT / parts[1]).is_dir()):
        return ".".join(parts[:2])
    if mod in PLAIN_DATA or mod == "pbtxt_scan.__main__":
        return mod
    return "pbtxt_scan"


def _rank(unit: str) -> int:
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    raise AssertionError("%s is in no layer: add it to LAYERS (and to ARCHITECTURE.md)" % unit)


def layer_violations(graph: Dict[str, Set[str]]) -> List[str]:
    bad = []
    for mod, targets in sorted(graph.items()):
        for t in sorted(targets):
            a, b = _unit(mod), _unit(t)
            if a == b:
                continue
            if _rank(a) <= _rank(b):
                bad.append("%s imports %s" % (mod, t))
            elif a == "pbtxt_scan.cli" and t not in CLI_MAY_IMPORT:
                bad.append("%s imports %s (the command line goes through the public API)" % (mod, t))
    return bad


def test_every_module_is_in_a_layer():
    for mod in import_graph():
        _rank(_unit(mod))


def test_the_layer_check_sees_an_upward_import():
    graph = {"pbtxt_scan.text._lexer": {"pbtxt_scan.fpbp._fp"}, "pbtxt_scan.fpbp._fp": {"pbtxt_scan.text._lexer"}}
    assert layer_violations(graph) == ["pbtxt_scan.text._lexer imports pbtxt_scan.fpbp._fp"]
    assert layer_violations({"pbtxt_scan.ge._load": {"pbtxt_scan.fpbp._fp"}}) == ["pbtxt_scan.ge._load imports pbtxt_scan.fpbp._fp"]
    assert layer_violations({"pbtxt_scan.cli._app": {"pbtxt_scan.graph._input"}}) == [
        "pbtxt_scan.cli._app imports pbtxt_scan.graph._input (the command line goes through the public API)"
    ]
    assert layer_violations({"pbtxt_scan.cli._app": {"pbtxt_scan", "pbtxt_scan.ge", "pbtxt_scan.cli._help"}}) == []


def test_imports_go_down_the_layers():
    bad = layer_violations(import_graph())
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_function_level_and_relative_imports():
    g = import_graph()
    assert any(g.values())
    assert "pbtxt_scan._errors" in g["pbtxt_scan._api"] or any("pbtxt_scan._errors" in v for v in g.values())


def test_no_import_circle():
    cycle = find_cycle(import_graph())
    assert not cycle, "import circle: " + " -> ".join(cycle)


def test_no_test_module_imports_another():
    """Shared test code lives in tests/support/, so each test module can be read (and run) alone."""
    tests = Path(__file__).parent
    bad = []
    for path in sorted(tests.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            bad += ["%s imports %s" % (path.name, n) for n in names if n.split(".")[0].startswith(("test_", "conftest"))]
    assert not bad, "\n".join(bad)


def test_the_public_api_is_whole_and_the_rules_load_on_first_use():
    import subprocess
    import sys

    code = (
        "import sys, pbtxt_scan as ps\n"
        "assert 'pbtxt_scan.fpbp._fp' not in sys.modules\n"
        "missing = [n for n in ps.__all__ if not hasattr(ps, n)]\n"
        "assert not missing and set(ps.__all__) <= set(dir(ps)), missing\n"
        # find_fp, find_bp and points are the public API's wrappers (they take bytes and file
        # objects too), and the rules they call load with them.
        "assert ps.find_fp.__module__ == ps.points.__module__ == 'pbtxt_scan._api_points'\n"
        "assert 'pbtxt_scan.fpbp._fp' in sys.modules and callable(ps.points)\n"
        "from pbtxt_scan.fpbp import _rules\n"
        "assert ps.points.__name__ == 'points' and _rules.find_fp.__module__ == 'pbtxt_scan.fpbp._fp'\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT.parent))
    assert out.stdout.strip() == "ok", out.stderr


# text/ and wire/ have faces: what other layers use is named in their __init__ (``__all__``), and
# no module outside them imports one of their private modules (the format stays behind the lanes).
FACED = ("pbtxt_scan.text", "pbtxt_scan.wire")


def private_reaches(graph: Dict[str, Set[str]]) -> List[str]:
    bad = []
    for mod, targets in sorted(graph.items()):
        for t in sorted(targets):
            for pkg in FACED:
                if t.startswith(pkg + "._") and not (mod == pkg or mod.startswith(pkg + ".")):
                    bad.append("%s imports %s (use %s's face)" % (mod, t, pkg))
    return bad


def test_the_face_check_sees_a_private_import():
    graph = {"pbtxt_scan.fpbp._fp": {"pbtxt_scan.wire._wire_seek", "pbtxt_scan.wire"}, "pbtxt_scan.wire._lane": {"pbtxt_scan.wire._wire"}}
    assert private_reaches(graph) == ["pbtxt_scan.fpbp._fp imports pbtxt_scan.wire._wire_seek (use pbtxt_scan.wire's face)"]


def test_no_module_reaches_past_the_text_and_wire_faces():
    bad = private_reaches(import_graph())
    assert not bad, "imports of private modules of text/ or wire/:\n" + "\n".join(bad)


def test_text_and_wire_faces_name_what_they_hand_on():
    import importlib

    for pkg in FACED:
        face = importlib.import_module(pkg)
        names = getattr(face, "__all__", None)
        assert names, "%s has no __all__" % pkg
        missing = [n for n in names if getattr(face, n, None) is None]
        assert not missing, "%s names %s but has none" % (pkg, missing)
