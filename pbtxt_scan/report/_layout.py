"""A layered DAG layout of a neighbourhood, in pure Python (a few dozen nodes).

1. Layers: each node starts at its ``hops`` (producers negative, consumers positive); then, as in a
   longest-path layering, a consumer moves right of every producer it has among the drawn nodes,
   and a producer left of every consumer it feeds (the centre stays at 0). Passes are bounded by
   the node count, so a cycle (a while loop's NextIteration) cannot make it loop.
2. Order within a layer: barycentre sweeps (each node at the mean position of its neighbours in the
   layer before, then in the layer after), a few times each way; ties keep the file order.
3. Coordinates: one column per layer, left to right; rows spread evenly, each column centred.
"""
from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from .._kit import NamedTuple
from .._model import Hood, HoodNode

COL_W = 230  # px between column starts
NODE_W = 190
NODE_H = 34
ROW_H = 46
PAD = 16
SWEEPS = 4


class Layout(NamedTuple):
    """Where each node goes: ``pos[name] = (x, y)`` of its box's top left; ``width``/``height`` of
    the drawing; ``layers[name]`` its column (0 for the centre)."""

    pos: Dict[str, Tuple[int, int]]
    layers: Dict[str, int]
    width: int
    height: int


def _layers(nodes: Sequence[HoodNode], edges: Sequence[Tuple[str, str]], centre: str) -> Dict[str, int]:
    layer = {n.name: n.hops for n in nodes}
    for _ in range(len(nodes)):
        changed = False
        for s, d in edges:
            if s not in layer or d not in layer or s == d or layer[d] > layer[s]:
                continue
            # d must be right of s: move the side away from the centre.
            if d != centre and layer[d] >= 0:
                layer[d] = layer[s] + 1
            elif s != centre and layer[s] <= 0:
                layer[s] = layer[d] - 1
            else:
                continue
            changed = True
        if not changed:
            break
    return layer


def _order(columns: Dict[int, List[str]], edges: Sequence[Tuple[str, str]]) -> None:
    ins: Dict[str, List[str]] = {}
    outs: Dict[str, List[str]] = {}
    for s, d in edges:
        outs.setdefault(s, []).append(d)
        ins.setdefault(d, []).append(s)
    keys = sorted(columns)
    for sweep in range(SWEEPS * 2):
        forward = sweep % 2 == 0
        seq = keys[1:] if forward else list(reversed(keys[:-1]))
        for k in seq:
            prev = columns.get(k - 1 if forward else k + 1, [])
            where = {name: i for i, name in enumerate(prev)}
            mine = columns[k]
            near = ins if forward else outs

            def centre_of(item: Tuple[int, str]) -> Tuple[float, int]:
                i, name = item
                ps = [where[p] for p in near.get(name, ()) if p in where]
                return (sum(ps) / len(ps) if ps else float(i), i)

            columns[k] = [name for _, name in sorted(enumerate(mine), key=centre_of)]


def layout(hood: Hood) -> Layout:
    """The positions of ``hood``'s nodes (file order breaks ties, so the same hood gives the same picture)."""
    nodes = sorted(hood.nodes, key=lambda n: (n.hops, n.offset if n.offset is not None else -1, n.name))
    edges = [(e.src, e.dst) for e in hood.edges]
    layer = _layers(nodes, edges, hood.centre)
    columns: Dict[int, List[str]] = {}
    for n in nodes:
        columns.setdefault(layer[n.name], []).append(n.name)
    _order(columns, edges)
    keys = sorted(columns)
    tallest = max((len(c) for c in columns.values()), default=1)
    height = PAD * 2 + tallest * ROW_H
    pos: Dict[str, Tuple[int, int]] = {}
    for ci, k in enumerate(keys):
        col = columns[k]
        top = PAD + (tallest - len(col)) * ROW_H // 2
        for ri, name in enumerate(col):
            pos[name] = (PAD + ci * COL_W, top + ri * ROW_H)
    width = PAD * 2 + max(len(keys) - 1, 0) * COL_W + NODE_W
    return Layout(pos, layer, width, height)
