"""A node's neighbourhood (``show --context``, the report's drawing): the producers ``up`` hops
above it and the consumers ``down`` hops below it, and the edges among them, as a :class:`Hood`.

Found without the graph in memory, by a breadth-first walk (:func:`walk`): each hop asks for the
blocks *named* like the frontier's inputs (producers) and the blocks whose inputs *name* the
frontier (consumers). The searches are the lane's (``Lane.find_blocks``, ``Lane.read_near``: on
text in the writer's layout and on a binary GraphDef in a regular file, a fixed-string grep; a
lane that offers none has its blocks read). Where the lane offers both, the walk runs over the
blocks near the centres, and one search for every name it asked for proves the rest of the file
adds nothing, or adds what it found (``_hood_near``: ``show --context 2`` is the centre's search
and one more; the report's two drawings share one). Else it goes hop by hop: each hop one search
(``_hood_find``: the blocks it places read here), or one forward reading of the blocks. All give
the same Hood (``tests/test_hood.py``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Set, Tuple

from .._model import FUNCTION_NODES, TF_HEADS, Hood, HoodEdge, HoodNode
from ._hood_find import UNCOUNTED, Finder, Rec, grep_finder, lane_finder, pass_finder, producer, rec_of, searched_centre, stopping
from ._hood_near import WINDOW, Centre, near_hoods

if TYPE_CHECKING:
    from ..graph._input import GraphFile


def walk(
    centre: Rec, up: int, down: int, find: Finder, *, max_nodes: int, function: Optional[str] = None, g: "Optional[GraphFile]" = None,
) -> Hood:
    """Breadth first, a hop at a time each way (``find`` does the reading): producers by the
    frontier's inputs, consumers by the frontier's names. A node reached both ways keeps its
    nearer side (producers on a tie). At ``max_nodes`` the rest of a hop is dropped and the Hood
    says ``truncated``. ``function``: the one the nodes are in; ``g``: the input whose lane counts
    the lines of blocks found by a search (``UNCOUNTED``)."""
    recs: Dict[str, Rec] = {centre.name: centre}
    du: Dict[str, int] = {centre.name: 0}
    dd: Dict[str, int] = {centre.name: 0}
    up_front: List[str] = [centre.name]
    down_front: List[str] = [centre.name]
    truncated = False
    for k in range(1, max(up, down) + 1):
        want: Set[str] = set()
        if k <= up:
            for n in up_front:
                want.update(producer(i) for i in recs[n].inputs)
            want.difference_update(du)
        cons = frozenset(down_front) if k <= down else frozenset()
        new_up: List[str] = []
        new_down: List[str] = []
        known = [n for n in sorted(want) if n in recs]  # (reached the other way already: no search)
        for n in known:
            du[n] = k
            new_up.append(n)
        want.difference_update(known)
        if cons:
            # A node drawn already consumes the frontier or not by its own block's inputs: a later
            # block of the same name is not the node (as in a walk over the whole graph).
            for n, r in recs.items():
                if n not in dd and any(producer(i) in cons for i in r.inputs):
                    dd[n] = k
                    new_down.append(n)
        if want or cons:
            # Only new nodes are taken from the search, in file order; the first one past
            # ``max_nodes`` ends the hop, and the search with it (a lazy finder reads no further:
            # a node with 150,000 consumers costs the first few of them, not all).
            with stopping(find(frozenset(want), cons)) as found:
                for r in found:
                    if r.name in recs:
                        continue  # (drawn already, or a later block of a name drawn)
                    is_up = r.name in want
                    is_down = any(producer(i) in cons for i in r.inputs)
                    if not (is_up or is_down):
                        continue
                    if len(recs) >= max_nodes:
                        truncated = True
                        break
                    recs[r.name] = r
                    if is_up:
                        du[r.name] = k
                        new_up.append(r.name)
                    if is_down:
                        dd[r.name] = k
                        new_down.append(r.name)
        up_front, down_front = new_up, new_down
        if not up_front and not down_front:
            break
    counted = g.lane.lines_of(r.offset for r in recs.values() if r.line == UNCOUNTED) if g is not None else {}
    nodes = []
    for n, r in recs.items():
        if r.line == UNCOUNTED and r.offset in counted:
            r = recs[n] = r._replace(line=counted[r.offset])
        u, d = du.get(n), dd.get(n)
        hops = -u if u is not None and (d is None or u <= d) else d
        assert hops is not None
        nodes.append(HoodNode(n, r.op, hops, r.line, None if r.line else r.offset, function))
    nodes.sort(key=lambda h: (h.hops, recs[h.name].offset))
    edges = set()
    for r in recs.values():
        for i in r.inputs:
            src = producer(i)
            if src in recs:
                edges.add(HoodEdge(src, r.name, i.startswith("^")))
    return Hood(centre.name, up, down, tuple(nodes), tuple(sorted(edges)), truncated)


def neighbourhood(
    g: "GraphFile", name: str, up: int = 2, down: int = 2, *, function: Optional[str] = None, max_nodes: int = 64,
    search: bool = True, window: int = WINDOW,
) -> Hood:
    """The :class:`Hood` of the node ``name`` (found as :func:`find_node` finds it: the graph's
    own nodes first, then its library functions; ``function``: in that function only).
    Raises :class:`LookupError` if no node has that name. ``window``: the bytes read on each side
    of the centre before the one byte search (``_hood_near``)."""
    return neighbourhoods(g, [(name, up, down, function)], max_nodes=max_nodes, search=search, window=window)[0]


Ask = Tuple[Any, int, int, Optional[str]]  # (a node's name or an answer's Point, hops up, hops down, its function)


def neighbourhoods(
    g: "GraphFile", asks: Sequence[Ask], *, max_nodes: int = 64, search: bool = True, window: int = WINDOW,
) -> List[Hood]:
    """The :class:`Hood` of each ask: a node's name (found as :func:`neighbourhood` finds it), or
    an answer's :class:`Point` (read at its offset, in its function). Where the input allows, the
    graph's own nodes of a text graph are read near their centres and proved complete by one byte
    search for them all (``_hood_near``); else hop by hop, each on its own."""
    for _, up, down, _ in asks:
        if up < 0 or down < 0:
            raise ValueError("up and down count hops: 0 or more")
    max_nodes = max(1, max_nodes)
    near: Dict[int, Centre] = {}
    hits: Dict[int, Any] = {}  # (a centre searched for already: not searched again hop by hop)
    if search and lane_finder(g, ("node",)) is not None and tuple(g.dialect.path) == ("node",):
        for k, (what, up, down, fn) in enumerate(asks):
            if isinstance(what, str) and fn is None:
                hits[k] = hit = searched_centre(g, what)
                if hit is not None:
                    near[k] = Centre(what, hit.start, None, up, down, rec_of(hit))
            elif not isinstance(what, str) and what.function is None and (what.line is not None or g.lane.unit != "line"):
                near[k] = Centre(what.name, what.offset, what.line, up, down)
    hoods: Dict[int, Hood] = {}
    if near:
        got = near_hoods(
            g, list(near.values()), lambda c, u, d, f: walk(c, u, d, f, max_nodes=max_nodes), window=window,
            limit=max(1 << 12, 16 * max_nodes * len(near)),
        )
        if got is not None:
            hoods = dict(zip(near, got))
    return [hoods[k] if k in hoods else _hop_by_hop(g, ask, max_nodes, search, hits.get(k, ())) for k, ask in enumerate(asks)]


def _hop_by_hop(g: "GraphFile", ask: Ask, max_nodes: int, search: bool, hit: Any = ()) -> Hood:
    """An ask's neighbourhood searched (or read) a hop at a time (``hit``: the centre's search made already)."""
    from ..graph._paths import find_node

    what, up, down, function = ask
    if isinstance(what, str):
        name = what
    else:
        name, function = what.name, what.function
    if hit == ():
        hit = searched_centre(g, name) if search and function is None else None  # (one byte search, not a reading)
    if hit is not None:
        fn: Optional[str] = None
        block = hit
    else:
        found = find_node(g, name, function=function)
        if found is None:
            raise LookupError("no node named %r%s" % (name, " in function %s" % function if function else ""))
        fn = found.function
        again = g.rescan(found.block, TF_HEADS)  # (found with its name and op only)
        if not again:
            raise LookupError("node %r could not be read again" % name)
        block = again[0]
    path = FUNCTION_NODES if fn is not None else g.dialect.path
    centre = rec_of(block)
    find: Optional[Finder] = None
    if search:
        find = grep_finder(g, path, fn, block)
    if find is None:
        find = pass_finder(g, path, fn)
    return walk(centre, up, down, find, max_nodes=max_nodes, function=fn, g=g)
