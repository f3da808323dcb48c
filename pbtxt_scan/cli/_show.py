"""show: one node's own text (with its lines, or its parsed block as JSON), or its neighbourhood
(rows, JSON or Graphviz DOT); the node found by name, a tensor name or close names, and of a node
in several function bodies the copy ``points`` names. Loaded by ``show`` when it runs."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, NoReturn, Optional, Sequence

import typer

from .._kit import NamedTuple
from .. import PbtxtError
if TYPE_CHECKING:
    from .. import GraphFile, Lookup
from ._output import EXIT_NOT_FOUND, Console, emit, listed, out, plural
from ._checks import node_hint
from ._suggest import Closest, tensor_node

ANY_SIZE = 1 << 62  # show --json: no bound of its own on the block (the lane keeps Lark's)
PAD_MAX = 4096  # show: a block's first line is indented to its column up to this (a display rule: the CLI may not
# import language, whose parse pad has the same bound, language._grammar.PAD_MAX)
JSON_DEPTH = 100  # show --json: messages nested deeper are not printed (protobuf's binary parser stops at 100 too)


def show_hood(
    g: "GraphFile", name: str, *, hops: int, max_nodes: int, shape: str, f: Optional[str], function: Optional[str], con: Console
) -> None:
    """``show --context``: the neighbourhood of ``name``, ``hops`` each way, at most ``max_nodes``,
    as ``shape`` (text rows, json or dot); ``f``: the --input-kind dialect (None: told by content)."""
    from .. import neighbourhood, neighbourhoods

    also: Any = ()
    lookup = look_up_names(g, [name], f, function)
    try:  # (the node by one byte search where the file allows; the names close to it only when it is not there)
        if lookup is not None and not elsewhere(lookup.found, name):
            found = looked_up(g, lookup, name, con=con, miss="hood" if shape == "json" else None)
            hood = neighbourhoods(g, [(_At(found.block), hops, hops)], max_nodes=max_nodes)[0]  # (the search's node, read where it is)
        else:
            hood = neighbourhood(g, name, hops, hops, function=function, max_nodes=max_nodes)
    except LookupError:
        found = _found(g, name, f, function, con=con, miss="hood" if shape == "json" else None)  # (a tensor name: its node; else exit 1 with close names)
        also = found.also
        hood = neighbourhood(g, found.block.name or name, hops, hops, function=found.function, max_nodes=max_nodes)
    fn = next(n.function for n in hood.nodes if n.hops == 0)
    why = ""
    if fn is not None and function is None and not also:  # (in several bodies? the copy points names, as plain show)
        found = _found(g, hood.centre, f, None, con=con)
        if found.also:
            found, why = _points_copy(g, found, f)
            also = found.also
            if found.function != fn:
                hood = neighbourhood(g, hood.centre, hops, hops, function=found.function, max_nodes=max_nodes)
                fn = found.function
    said: List[str] = []
    if fn is not None:
        more = " (also in %s: --function NAME picks one)" % listed(also) if also else ""
        said.append("%s: %s is in library function %s%s%s" % (g.name, hood.centre, fn, why, more))
    if hood.truncated:
        said.append("%s: cut at %s: --max-nodes N shows more" % (g.name, plural(max_nodes, "node")))
    con.notes(g, said)
    if shape == "json":
        from ._json import hood_object

        emit(hood_object(hood, g.name))
    elif shape == "dot":
        out(hood_dot(hood))
    else:
        for line in hood_text(hood, g.name):
            out(line)


def hood_text(hood: Any, file: str) -> List[str]:
    """The neighbourhood as rows: hop, line (binary: @offset), op, name, and the inputs it takes
    from the other rows (^: a control input); the centre marked with '*'."""
    centre = next(n for n in hood.nodes if n.hops == 0)
    where = "line %d" % centre.line if centre.line else "offset %d" % centre.offset
    fn = ", in function %s" % centre.function if centre.function else ""
    head = "# %s: %s (%s, %s%s): %s up, %s down" % (
        file, hood.centre, centre.op, where, fn, plural(hood.up, "hop"), plural(hood.down, "hop"))
    feeds: Dict[str, List[str]] = {}
    for e in hood.edges:
        feeds.setdefault(e.dst, []).append(("^" if e.control else "") + e.src)
    rows = [("hop", "line" if centre.line else "offset", "op", "name", "inputs here")]
    for n in hood.nodes:
        rows.append((
            "%+d" % n.hops if n.hops else "0", str(n.line) if n.line else "@%d" % n.offset, n.op,
            ("* " if n.hops == 0 else "  ") + n.name, ", ".join(feeds.get(n.name, ())) or "-",
        ))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [head]
    for r in rows:
        lines.append("%*s  %*s  %-*s  %-*s  %s" % (widths[0], r[0], widths[1], r[1], widths[2], r[2], widths[3], r[3], r[4]))
    return lines


def _dot_esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _dot_id(s: str) -> str:
    return '"%s"' % _dot_esc(s)


def hood_dot(hood: Any) -> str:
    """The neighbourhood as Graphviz DOT: a box a node (name, op, line or offset; the tooltip
    gives its hop), the centre filled and bold, control edges dashed."""
    lines = ["digraph hood {", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica", fontsize=10];']
    for n in hood.nodes:
        where = "line %d" % n.line if n.line else "offset %d" % n.offset
        attrs = ['label="%s\\n%s\\n%s"' % (_dot_esc(n.name), _dot_esc(n.op), where), "tooltip=%s" % _dot_id("hop %d" % n.hops)]
        if n.hops == 0:
            attrs += ['style="filled,bold"', 'fillcolor="#ffd966"', "penwidth=2"]
        lines.append("  %s [%s];" % (_dot_id(n.name), ", ".join(attrs)))
    for e in hood.edges:
        lines.append("  %s -> %s%s;" % (_dot_id(e.src), _dot_id(e.dst), " [style=dashed]" if e.control else ""))
    lines.append("}")
    return "\n".join(lines)


def _found(g: "GraphFile", name: str, f: Optional[str], function: Optional[str], *, con: Console, miss: Optional[str] = None) -> Any:
    """The node ``name`` names (a tensor name: the node that makes it), or exit 1 with close names
    (``miss``: under --json, the shape of the one object that says so, ``show`` or ``hood``)."""
    from .. import DIALECTS, find_node

    found = find_node(g, name, dialect=f, function=function)
    node = tensor_node(name)  # `dense/MatMul:0` names a tensor: show the node that makes it
    if found is None and node is not None:
        found = find_node(g, node, dialect=f, function=function)
        if found is not None:
            con.note("%s: %r names output %s of node %s: showing that node" % (g.name, name, name.rsplit(":", 1)[1], node))
    if found is None:
        d = g.dialect if f is None else DIALECTS[f]
        _miss(g, name, function, node_hint(g, d.path, name), con=con, miss=miss)
    return found


def _miss(g: "GraphFile", name: str, function: Optional[str], hint: str, *, con: Console, miss: Optional[str]) -> NoReturn:
    """Say that no node is named ``name`` (``hint``: the close names), exit 1."""
    con.notes(g)
    where = " in function %s" % function if function else ""
    reason = "no node named %r%s%s" % (name, where, hint)
    typer.echo("%s: %s" % (g.name, reason), err=True)
    if miss is not None:
        from ._json import miss_object

        emit(miss_object(miss, g.name, function, reason))
    raise typer.Exit(EXIT_NOT_FOUND)


def show_node(g: "GraphFile", name: str, *, as_json: bool, f: Optional[str], function: Optional[str], con: Console) -> None:
    """``show``: the node's own text with its line numbers (binary: as text format, after its
    offset), or with ``as_json`` its parsed block."""
    found = _found(g, name, f, function, con=con, miss="show" if as_json else None)
    why = ""
    if found.also:  # (in several function bodies: the copy the points name, if they name one)
        found, why = _points_copy(g, found, f)
    print_node(g, found, why, as_json=as_json, con=con)


def print_node(g: "GraphFile", found: Any, why: str, *, as_json: bool, con: Console, notes: bool = True) -> None:
    """A node found (:class:`~pbtxt_scan.Found`) as ``show`` prints it (``why``: why this copy;
    ``notes``: the input's notes too, before the first node)."""
    hit = found.block
    said: List[str] = []
    if found.function is not None:
        also = " (also in %s: --function NAME picks one)" % listed(found.also) if found.also else ""
        said.append("%s: %s is in library function %s%s%s" % (g.name, hit.name, found.function, why, also))
    if not notes:
        for text in said:
            con.note(text)
        said = []
    if as_json:
        # Any size, as the text: memory is bounded by the block (the writer layout's lines, or
        # Lark on all but its long strings, each parsed apart), never by Lark's tree of it.
        msg = g.parse(hit, max_bytes=ANY_SIZE)
        obj = {"name": hit.name, "op": hit.op, "line": hit.line or None, "offset": hit.start, "file": g.name, "function": found.function,
               "reason": None}
        # JSON is written by recursion (ours and json's): bounded by a depth counted first, never by
        # catching RecursionError, whose recovery depends on the stack the command runs on (Python
        # 3.8 aborts when handling it needs more than 50 frames past the limit).
        if msg[0].value.depth(JSON_DEPTH + 1) > JSON_DEPTH:
            raise PbtxtError("nested too deeply to print as JSON (use show without --json)", hit.line, hit.column, g.name)
        obj["block"] = msg[0].value.to_data(lines=True)
        text = json.dumps(obj, ensure_ascii=False)
        del msg, obj  # (a big block's values, before its JSON is written)
        if notes:
            con.notes(g, said)
        out(text)
        return
    text = g.read(hit).decode("utf-8", "replace")
    if notes:
        con.notes(g, said)
    if hit.binary:  # text format made from the NodeDef: no file lines to number
        out("# %s offset %d (%s, a %d-byte NodeDef)" % (g.name, hit.start, g.binary, hit.end - hit.start))
        out(text.rstrip("\n"))
        return
    width = len(str(hit.line + text.count("\n")))
    for i, line in enumerate(text.split("\n")):
        prefix = " " * (hit.column - 1) if i == 0 and hit.column - 1 <= PAD_MAX else ""  # (not a one-line file's)
        out("%*d  %s%s" % (width, hit.line + i, prefix, line))


def _points_copy(g: "GraphFile", found: Any, f: Optional[str]) -> Any:
    """``(found, why)``: of a node in several function bodies, the copy ``points`` names when fp or
    bp is this node (``why`` then says so, and ``also`` lists the other bodies); else the first."""
    from .. import PbtxtError, find_bp, find_fp, find_node

    name = found.block.name
    for find in (find_fp, find_bp):
        try:
            p = find(g).point
        except PbtxtError:  # (the rules stop at a fault the node's own block does not have: keep the first)
            return found, ""
        if p is None or p.name != name or p.function not in (found.function,) + tuple(found.also):
            continue
        if p.function == found.function:
            return found, ", the copy points names"
        hit = find_node(g, name, dialect=f, function=p.function)
        if hit is None:
            break
        others = tuple(x for x in (found.function,) + tuple(found.also) if x != p.function)
        return hit._replace(also=others), ", the copy points names"
    return found, ""


# --- a name by one byte search (``_named``: several names, globs and regexes) ---------------


def look_up_names(g: "GraphFile", names: Sequence[str], f: Optional[str], function: Optional[str]) -> "Optional[_Looked]":
    """``names`` (and the nodes their tensor names name) by the lane's one byte search, with the
    close names of each met on the way; ``None`` where the search is not made (a --function, an
    --input-kind, a lane without one, a name it cannot tell)."""
    from .. import look_up

    if function is not None or f is not None:
        return None
    near = {n: Closest(n) for n in names}
    asked = set(names) | {t for t in map(tensor_node, names) if t is not None}

    def offer(x: str) -> None:
        for c in near.values():
            c.offer(x)

    got = look_up(g, sorted(asked), near=offer)
    return None if got is None else _Looked(got, near)


class _Looked(NamedTuple):
    """What the search found (``found``: a :class:`~pbtxt_scan.Lookup`) and each name's close names."""

    found: "Lookup"
    near: Dict[str, Closest]


def elsewhere(lookup: "Lookup", name: str) -> bool:
    """Whether ``name`` (or its tensor's node) may be a library function's: read for it."""
    node = tensor_node(name)
    return name not in lookup.found and (name in lookup.elsewhere or (node is not None and node in lookup.elsewhere))


def looked_up(g: "GraphFile", looked: Any, name: str, *, con: Console, miss: Optional[str]) -> Any:
    """The graph's own node ``name`` the search found (a tensor name: its node), or exit 1 with
    the close names the same search met."""
    from .. import Found

    lookup, near = looked if isinstance(looked, _Looked) else (looked, None)
    hit = lookup.found.get(name)
    node = tensor_node(name)
    if hit is None and node is not None and node in lookup.found:
        con.note("%s: %r names output %s of node %s: showing that node" % (g.name, name, name.rsplit(":", 1)[1], node))
        hit = lookup.found[node]
    if hit is None:
        hint = near[name].hint() if near is not None else ""
        _miss(g, name, None, " (%s)" % hint if hint else "", con=con, miss=miss)
    return Found(hit, None)


class _At(NamedTuple):
    """A node found by the search, as a neighbourhood's centre is asked for (``neighbourhoods``)."""

    block: Any

    @property
    def name(self) -> str:
        return self.block.name or ""

    @property
    def offset(self) -> int:
        return int(self.block.start)

    @property
    def line(self) -> Optional[int]:
        return self.block.line or None

    @property
    def function(self) -> None:
        return None
