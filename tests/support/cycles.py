"""Import graphs: where a relative import points, and finding a circle (tests/test_imports.py for the package, test_benchmarks_layout.py for benchmarks/)."""
from __future__ import annotations

import ast
from typing import Dict, List, Set


def resolve_from(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    """The module ``from ... import`` in module ``mod`` (a package if ``is_pkg``) names."""
    if not node.level:
        return node.module or ""
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


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
