"""Import graphs: finding a circle (tests/test_imports.py for the package, test_benchmarks_layout.py for benchmarks/)."""
from __future__ import annotations

from typing import Dict, List, Set


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
