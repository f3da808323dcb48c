"""Import graphs: where a relative import points, and finding a circle (tests/test_imports.py for the package, test_benchmarks_layout.py for benchmarks/)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set


def resolve_from(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    """The module ``from ... import`` in module ``mod`` (a package if ``is_pkg``) names."""
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def modules(top: Path) -> Dict[str, Path]:
    """Every module of the package at ``top``, by dotted name."""
    out = {}
    for p in top.rglob("*.py"):
        parts = list(p.relative_to(top.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = p
    return out


def import_graph(top: Path) -> Dict[str, Set[str]]:
    """Module -> the package's modules it imports (module level or in a function, relative or not)."""
    mods = modules(top)
    graph: Dict[str, Set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = resolve_from(mod, is_pkg, node)
                for a in node.names:  # `from . import x` imports submodule x; `from .m import f` imports m
                    sub = "%s.%s" % (base, a.name)
                    targets.append(sub if sub in mods else base)
            for t in targets:
                while t and t not in mods and "." in t:  # pkg.x.func -> the module that holds it
                    t = t.rsplit(".", 1)[0]
                if t in mods and t != mod:
                    graph[mod].add(t)
                    # importing a.b.c runs a/__init__ and a/b/__init__ first
                    parent = t.rsplit(".", 1)[0] if "." in t else ""
                    while parent and parent != mod and not mod.startswith(parent + "."):
                        graph[mod].add(parent)
                        parent = parent.rsplit(".", 1)[0] if "." in parent else ""
    return graph


def find_cycle(graph: Dict[str, Set[str]]) -> List[str]:
    """One cycle as a path [a, b, ..., a], or [] if none (iterative DFS, colours)."""
    colour = {m: 0 for m in graph}  # 0 new, 1 on the stack, 2 done
    for start in sorted(graph):
        if colour[start]:
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        colour[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                colour[node] = 2
                stack.pop()
                path.pop()
            elif colour[nxt] == 1:
                return path[path.index(nxt):] + [nxt]
            elif colour[nxt] == 0:
                colour[nxt] = 1
                stack.append((nxt, iter(sorted(graph[nxt]))))
                path.append(nxt)
    return []
