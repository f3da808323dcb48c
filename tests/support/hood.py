"""The naive neighbourhood: the whole graph parsed (``pbtxt_scan.iter_blocks``), then a plain
breadth-first walk over its edges each way. What ``neighbourhood()`` must equal (test_hood)."""
from __future__ import annotations

from collections import deque
from typing import Dict, List, Optional, Set, Tuple

import pbtxt_scan

FUNCTION_NODES = ("library", "function", "node_def")


def _src(inp: str) -> str:
    return inp.lstrip("^").split(":")[0]


def whole_graph(path: str, function: Optional[str]) -> Dict[str, Tuple[str, Optional[int], int, List[str]]]:
    """name -> (op, line or None, offset, inputs): the graph's own nodes, or one function's."""
    where = FUNCTION_NODES if function is not None else ("node",)
    out: Dict[str, Tuple[str, Optional[int], int, List[str]]] = {}
    for b in pbtxt_scan.iter_blocks(path, where):
        if function is not None and b.parents[-1] != function:
            continue
        out.setdefault(b.name, (b.op, b.line or None, b.start, b.inputs))
    return out


def _bfs(start: str, step: Dict[str, Set[str]], limit: int) -> Dict[str, int]:
    seen = {start: 0}
    todo = deque([start])
    while todo:
        n = todo.popleft()
        if seen[n] == limit:
            continue
        for m in sorted(step.get(n, ())):
            if m not in seen:
                seen[m] = seen[n] + 1
                todo.append(m)
    return seen


def naive_hood(path: str, name: str, up: int, down: int, function: Optional[str] = None) -> pbtxt_scan.Hood:
    g = whole_graph(path, function)
    feeds: Dict[str, Set[str]] = {}  # node -> its producers (that exist)
    eats: Dict[str, Set[str]] = {}  # node -> its consumers
    for n, (_, _, _, inputs) in g.items():
        for i in inputs:
            s = _src(i)
            if s in g:
                feeds.setdefault(n, set()).add(s)
                eats.setdefault(s, set()).add(n)
    du = _bfs(name, feeds, up)
    dd = _bfs(name, eats, down)
    nodes = []
    for n in set(du) | set(dd):
        op, line, off, _ = g[n]
        u, d = du.get(n), dd.get(n)
        hops = -u if u is not None and (d is None or u <= d) else d
        nodes.append(pbtxt_scan.HoodNode(n, op, hops, line, None if line else off, function))
    nodes.sort(key=lambda h: (h.hops, g[h.name][2]))
    keep = {h.name for h in nodes}
    edges = {
        pbtxt_scan.HoodEdge(_src(i), n, i.startswith("^")) for n in keep for i in g[n][3] if _src(i) in keep
    }
    return pbtxt_scan.Hood(name, up, down, tuple(nodes), tuple(sorted(edges)), False)
