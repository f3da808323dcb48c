"""ARCHITECTURE.md is true to the tree: every module it names exists, every module is named in it,
and the rules it states that no other test checks are checked here.

How the file names modules (one regular form, so a parser can read it): the layer table's package
column names a package (``cli/``, ``pbtxt_scan`` for the root's public API) or root modules
(``__main__``, ``_model, _errors``), and its rows name the package's modules by their bare names
(``_input``, ``__init__``); prose names one as ``package._module`` or ``package/_module.py``.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pbtxt_scan

PKG = Path(pbtxt_scan.__file__).resolve().parent
DOC = PKG.parent / "ARCHITECTURE.md"
ROOT = ""  # the package of the root modules (pbtxt_scan/_api.py ...)

Module = Tuple[str, str]  # (package, module): ("graph", "_input"), ("", "_api")

_TABLE = re.compile(r"```text\n layer  package +its one job\n[- ]+\n(.*?)```", re.S)
_BARE = re.compile(r"(?<![\w./])(__init__|__main__|_[a-z][a-z0-9_]*)(?![\w(])")
_DOTTED = re.compile(r"(?<![\w./])(?:pbtxt_scan[./])?([a-z][a-z0-9_]*)[./](__init__|_[a-z][a-z0-9_]*)\b")


def tree_modules(root: Path = PKG) -> Set[Module]:
    """Every module of the package: each package's ``_x.py`` and ``__init__``, and the root's."""
    out = set()
    for p in root.rglob("*.py"):
        rel = p.relative_to(root)
        out.add((ROOT if len(rel.parts) == 1 else "/".join(rel.parts[:-1]), p.stem))
    return out


def packages(mods: Set[Module]) -> Set[str]:
    return {pkg for pkg, _ in mods if pkg}


def table_modules(text: str) -> Set[Module]:
    """The modules the layer table's rows name, under the package of their row."""
    m = _TABLE.search(text)
    assert m, "ARCHITECTURE.md has no layer table (```text, its header ' layer  package  its one job')"
    out: Set[Module] = set()
    pkg = None
    for line in m.group(1).splitlines():
        head, job = line[5:26].strip(), line[26:]  # (the layer number, then the package column)
        if head:
            if head.endswith("/"):
                pkg = head[:-1]
            else:  # the root's units: the public API, or modules named in the package column
                pkg = ROOT
                out.update((ROOT, name.strip()) for name in head.split(",") if name.strip() != "pbtxt_scan")
        assert pkg is not None, line
        out.update((pkg, name) for name in _BARE.findall(job))
    return out


def prose_modules(text: str, pkgs: Set[str]) -> Iterator[Tuple[str, Module]]:
    """``package._module`` and ``package/_module`` anywhere in the file: (as written, the module)."""
    for m in _DOTTED.finditer(text):
        pkg = ROOT if m.group(1) == "pbtxt_scan" else m.group(1)
        if pkg in pkgs or pkg == ROOT or m.group(0).startswith("pbtxt_scan"):
            yield m.group(0), (pkg, m.group(2))
        else:
            yield m.group(0), ("?" + m.group(1), m.group(2))  # no such package: stale (points._grep)


def drift(text: str, mods: Set[Module]) -> List[str]:
    """What the text says that the tree does not hold, and what the tree holds that it leaves out."""
    named = table_modules(text)
    bad = ["the layer table names %s, which does not exist" % "/".join(filter(None, m))
           for m in sorted(named - mods)]
    bad += ["%s is named nowhere in the layer table" % "/".join(filter(None, m)) for m in sorted(mods - named)]
    bad += ["%s names no module" % written for written, m in prose_modules(text, packages(mods)) if m not in mods]
    return bad


TEXT = DOC.read_text(encoding="utf-8")
TREE = tree_modules()


def test_the_tree_is_read_whole() -> None:
    assert ("graph", "_input") in TREE and ("", "__init__") in TREE and ("", "__main__") in TREE
    assert ("text", "__init__") in TREE and len(packages(TREE)) >= 10


def test_architecture_names_every_module_and_only_modules_that_exist() -> None:
    assert drift(TEXT, TREE) == []


def test_a_module_added_without_a_line_is_caught() -> None:
    assert drift(TEXT, TREE | {("graph", "_new")}) == ["graph/_new is named nowhere in the layer table"]
    assert drift(TEXT, TREE | {("newpkg", "__init__")}) == ["newpkg/__init__ is named nowhere in the layer table"]


def test_a_module_removed_or_renamed_is_caught() -> None:
    assert drift(TEXT, TREE - {("source", "_store")}) == [
        "the layer table names source/_store, which does not exist",
        "source._store names no module",
        "source._store names no module",
    ]
    stale = TEXT + "\nfp's grep searches (`points._grep`) and `wire/_gone.py`.\n"
    assert drift(stale, TREE) == ["points._grep names no module", "wire/_gone names no module"]


def test_the_parser_reads_a_real_tree(tmp_path: Path) -> None:
    # On a copy of the tree's shape: a module added on disk is found, and reported until it has a line.
    for pkg, mod in TREE:
        (tmp_path / pkg).mkdir(parents=True, exist_ok=True)
        (tmp_path / pkg / (mod + ".py")).write_text("")
    assert tree_modules(tmp_path) == TREE and drift(TEXT, tree_modules(tmp_path)) == []
    (tmp_path / "fpbp" / "_extra.py").write_text("")
    assert drift(TEXT, tree_modules(tmp_path)) == ["fpbp/_extra is named nowhere in the layer table"]
    with_line = TEXT.replace("        ge/ ", "                             _extra: a new module\n        ge/ ", 1)
    assert drift(with_line, tree_modules(tmp_path)) == []


# -- The rules ARCHITECTURE.md states that no other test checks ---------------------------------------

def _trees() -> Iterator[Tuple[str, ast.AST]]:
    return iter(_parsed())


@functools.lru_cache(maxsize=None)
def _parsed() -> Tuple[Tuple[str, ast.AST], ...]:
    """The package's modules, parsed once for all the rules below (which only read the trees)."""
    return tuple((p.relative_to(PKG).as_posix(), ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(PKG.rglob("*.py")))


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef]:
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield n  # type: ignore[misc]


def _is_command(f: ast.FunctionDef) -> bool:
    """A typer command (``@command(...)``, ``@app.command(...)``): its options are its parameters."""
    for d in f.decorator_list:
        d = d.func if isinstance(d, ast.Call) else d
        if (isinstance(d, ast.Name) and d.id == "command") or (isinstance(d, ast.Attribute) and d.attr == "command"):
            return True
    return False


def over_six_positionals(trees: Iterator[Tuple[str, ast.AST]]) -> Set[str]:
    out = set()
    for path, tree in trees:
        for f in _functions(tree):
            pos = [a.arg for a in getattr(f.args, "posonlyargs", []) + f.args.args]
            if pos[:1] in (["self"], ["cls"]):
                pos = pos[1:]
            if len(pos) > 6 and not _is_command(f):
                out.add("%s:%s" % (path, f.name))
    return out


def test_no_function_takes_more_than_six_positionals() -> None:
    assert over_six_positionals(_trees()) == set()


def test_the_positional_count_sees_one() -> None:
    tree = ast.parse("def f(a, b, c, d, e, f, g): pass\nclass C:\n    def m(self, a, b, c, d, e, f): pass\n"
                     "@app.command()\ndef cmd(a, b, c, d, e, f, g): pass\n")
    assert over_six_positionals(iter([("x.py", tree)])) == {"x.py:f"}


# -- Sizes (issue 36): a module a reader holds in mind, a function a screen shows -----------------------

MAX_MODULE_LINES, MAX_FUNCTION_LINES, MAX_TYPE_IGNORES = 400, 80, 15


def long_modules(root: Path = PKG) -> Set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*.py")
            if p.read_text(encoding="utf-8").count("\n") > MAX_MODULE_LINES}


def _last_line(f: ast.FunctionDef) -> int:
    """Where ``f`` ends (Python 3.7's ast has no ``end_lineno``: there, its last node's first line)."""
    return getattr(f, "end_lineno", None) or max(getattr(n, "lineno", f.lineno) for n in ast.walk(f))


def long_functions(trees: Iterator[Tuple[str, ast.AST]]) -> Set[str]:
    return {"%s:%s" % (path, f.name) for path, tree in trees for f in _functions(tree)
            if _last_line(f) - f.lineno + 1 > MAX_FUNCTION_LINES}


def type_ignores(root: Path = PKG) -> int:
    return sum(len(re.findall(r"#\s*type:\s*ignore", p.read_text(encoding="utf-8"))) for p in root.rglob("*.py"))


def broad_excepts(trees: Iterator[Tuple[str, ast.AST]], under: str = "fpbp/") -> Set[str]:
    """``except:``, ``except Exception`` or ``except BaseException`` (alone or in a tuple) under ``under``."""
    out = set()
    for path, tree in trees:
        for n in ast.walk(tree):
            if path.startswith(under) and isinstance(n, ast.ExceptHandler):
                kinds = n.type.elts if isinstance(n.type, ast.Tuple) else [n.type]
                if any(k is None or (isinstance(k, ast.Name) and k.id in ("Exception", "BaseException")) for k in kinds):
                    out.add("%s:%d" % (path, n.lineno))
    return out




def test_no_module_is_over_400_lines() -> None:
    assert long_modules() == set()


def test_no_function_is_over_80_lines() -> None:
    assert long_functions(_trees()) == set()


def test_type_ignores_are_few() -> None:
    assert type_ignores() <= MAX_TYPE_IGNORES


def test_the_rules_catch_no_broad_exception() -> None:
    assert broad_excepts(_trees()) == set()


def test_the_size_checks_see_one(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1) + "y = 2  # type: ignore\n")
    (tmp_path / "small.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    assert long_modules(tmp_path) == {"big.py"} and type_ignores(tmp_path) == 1
    body = "".join("    x%d = %d\n" % (i, i) for i in range(MAX_FUNCTION_LINES - 1))
    tree = ast.parse("def long():\n%s\ndef short():\n%s" % (body + "    pass\n", body))
    assert long_functions(iter([("x.py", tree)])) == {"x.py:long"}
    tree = ast.parse("try:\n    pass\nexcept (ValueError, Exception):\n    pass\nexcept:\n    pass\n"
                     "except ValueError:\n    pass\n")
    assert broad_excepts(iter([("fpbp/x.py", tree)])) == {"fpbp/x.py:3", "fpbp/x.py:5"}
    assert broad_excepts(iter([("cli/x.py", tree)])) == set()


_MUTATORS = {"append", "extend", "update", "setdefault", "add", "pop", "clear", "insert", "remove", "discard", "popitem"}
# Memos set once on first use (the answer never changes after): what ``global`` may assign.
MEMOS = {"source/_crc32c.py:_extend", "cli/_output.py:_dumps"}


def globals_changed(trees: Iterator[Tuple[str, ast.AST]]) -> Set[str]:
    """Module globals a function rebinds (``global``), sets an item or attribute of, or mutates."""
    out = set()
    for path, tree in trees:
        names = set()
        for n in tree.body:  # type: ignore[attr-defined]
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        for f in _functions(tree):
            local = {a.arg for a in f.args.args + f.args.kwonlyargs}
            for n in ast.walk(f):
                if isinstance(n, ast.Global):
                    out.update("%s:%s" % (path, name) for name in n.names)
                hit = None
                if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MUTATORS:
                    hit = n.func.value
                elif isinstance(n, (ast.Assign, ast.AugAssign)):
                    for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                        if isinstance(t, (ast.Subscript, ast.Attribute)):
                            hit = t.value
                if isinstance(hit, ast.Name) and hit.id in names and hit.id not in local:
                    out.add("%s:%s" % (path, hit.id))
    return out


def test_no_module_global_is_changed_at_run_time_but_memos() -> None:
    assert globals_changed(_trees()) == MEMOS


def test_the_global_check_sees_a_change() -> None:
    tree = ast.parse("SEEN = {}\nN = 0\nLIMIT = []\n"
                     "def f(k):\n    SEEN[k] = 1\ndef g():\n    global N\n    N += 1\n"
                     "def h(LIMIT):\n    LIMIT.append(1)\ndef i():\n    LIMIT.append(1)\n")
    assert globals_changed(iter([("x.py", tree)])) == {"x.py:SEEN", "x.py:N", "x.py:LIMIT"}


_STARTS = {"os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp", "os.system", "os.popen",
           "subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
           "subprocess.check_output", "multiprocessing.Process", "multiprocessing.Pool"}


def process_starters(trees: Iterator[Tuple[str, ast.AST]]) -> Set[str]:
    starts = {ast.dump(ast.parse(s, mode="eval").body) for s in _STARTS}
    return {path for path, tree in trees for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.dump(n.func) in starts}


def test_only_parallel_pool_starts_processes() -> None:
    assert process_starters(_trees()) == {"parallel/_pool.py"}
    assert process_starters(iter([("x.py", ast.parse("import os\nos.fork()\n"))])) == {"x.py"}


def allocator_setters(trees: Iterator[Tuple[str, ast.AST]]) -> Set[str]:
    return {path for path, tree in trees for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and n.attr == "mallopt"}


def test_only_a_worker_sets_allocator_options() -> None:
    assert allocator_setters(_trees()) == {"parallel/_pool.py"}
    child = [f for _, tree in _trees() for f in _functions(tree) if any(isinstance(n, ast.Call) and
             isinstance(n.func, ast.Attribute) and n.func.attr == "mallopt" for n in ast.walk(f))]
    assert [f.name for f in child] == ["_child"]  # (the forked child's own start, never the host)


def format_tests(trees: Iterator[Tuple[str, ast.AST]]) -> Dict[str, int]:
    """In ``fpbp/``: how often a rule asks the format (``.binary``, ``.is_binary``, ``.lane.text``)."""
    out: Dict[str, int] = {}
    for path, tree in trees:
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute) and path.startswith("fpbp/") and (
                    n.attr in ("binary", "is_binary") or (n.attr == "text" and isinstance(n.value, ast.Attribute) and n.value.attr == "lane")):
                out[path] = out.get(path, 0) + 1
    return out


def test_the_rules_never_ask_the_format() -> None:
    assert format_tests(_trees()) == {}
    assert format_tests(iter([("fpbp/x.py", ast.parse("if g.lane.text or g.binary: pass\n"))])) == {"fpbp/x.py": 2}


def test_the_graph_counts_are_the_folders() -> None:
    real = len(list((PKG.parent / "tests" / "data" / "graphs").glob("*.pbtxt")))
    readme = (PKG.parent / "README.md").read_text(encoding="utf-8")
    said = re.findall(r"On (\d+) real TensorFlow graphs|answer on all (\d+)", TEXT)
    said += re.findall(r"answers on (\d+) real graphs()", readme)
    assert len(said) == 3 and {int(a or b) for a, b in said} == {real}


def bench_unnamed(root: Path, table: str) -> List[str]:
    """Files under benchmarks/ (but results/ and each ``__init__.py``) the module table names neither as
    ``name.py`` nor, as it names the generator's kinds, as ``name``."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and p.suffix in (".py", ".sh", ".txt") and p.name != "__init__.py"
                  and "__pycache__" not in p.parts and not re.search(r"(?<![\w/])%s\b|`%s`" % (re.escape(p.name), re.escape(p.stem)), table))


def test_the_benchmarks_module_table_names_every_file(tmp_path: Path) -> None:
    bench = PKG.parent / "benchmarks"
    table = re.match(r"[^|]*((?:\|.*\n)+)", (bench / "README.md").read_text(encoding="utf-8")).group(1)
    assert "| `run.py` |" in table and bench_unnamed(bench, table) == []
    (tmp_path / "generate").mkdir()
    (tmp_path / "generate" / "_new.py").write_text("")
    (tmp_path / "run.py").write_text("")
    assert bench_unnamed(tmp_path, table) == ["generate/_new.py"]
