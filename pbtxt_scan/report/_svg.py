"""A neighbourhood's layout as inline SVG.

Each node is a ``<g class="node ...">`` holding its box, its (shortened) name and op, and a
``<title>`` with the full name, op, position, and for a node the search skipped its reason (the
browser shows it on hover); each edge is a ``<path class="edge">`` with a ``<title>``. Data
attributes (``data-name``, ``data-src``, ``data-dst``) carry the exact names, so a test can read the
drawing back from the browser's DOM. Every graph string is escaped: names can hold anything.
"""
from __future__ import annotations

from html import escape
from typing import Dict, Mapping, Optional, Tuple

from .._model import Hood, HoodNode
from ._layout import NODE_H, NODE_W, Layout

# a mark: (css class, the sentence for the title), e.g. ("skip", "skip: a Cast of the input batch")
Mark = Tuple[str, str]
LABEL_CHARS = 26


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def short(text: str, n: int = LABEL_CHARS) -> str:
    """The end of a long name (its last scopes say most), with an ellipsis in front."""
    return text if len(text) <= n else "\u2026" + text[-(n - 1):]


def _where(n: HoodNode) -> str:
    where = "line %d" % n.line if n.line is not None else "offset %d" % n.offset if n.offset is not None else "?"
    return where + (" in function %s" % n.function if n.function else "")


def _node(n: HoodNode, xy: Tuple[int, int], mark: Optional[Mark], centre: bool) -> str:
    x, y = xy
    cls = "node" + (" centre" if centre else "") + (" " + mark[0] if mark else "")
    title = "%s (%s, %s, %+d hops)" % (n.name, n.op, _where(n), n.hops)
    if mark:
        title += "\n" + mark[1]
    return (
        '<g class="%s" data-name="%s" data-op="%s" data-hops="%d" data-line="%s" data-offset="%s"%s>'
        '<title>%s</title>'
        '<rect x="%d" y="%d" width="%d" height="%d" rx="6"/>'
        '<text x="%d" y="%d" class="n">%s</text>'
        '<text x="%d" y="%d" class="o">%s</text></g>'
    ) % (
        cls, esc(n.name), esc(n.op), n.hops, "" if n.line is None else n.line, "" if n.offset is None else n.offset,
        ' data-centre="1"' if centre else "", esc(title),
        x, y, NODE_W, NODE_H,
        x + 8, y + 14, esc(short(n.name)),
        x + 8, y + 28, esc(short(n.op or "?", 30)),
    )


def _function(hood: Hood) -> str:
    """The library function that holds the centre ("" for the graph's own nodes)."""
    return next((n.function or "" for n in hood.nodes if n.name == hood.centre), "")


def svg(hood: Hood, lay: Layout, marks: Mapping[str, Mark], *, label: str) -> str:
    """The drawing of ``hood`` laid out as ``lay``; ``marks[name]`` greys or flags a node."""
    parts = [
        '<svg class="hood" role="img" aria-label="%s" data-centre="%s" '
        'data-function="%s" data-up="%d" data-down="%d" data-truncated="%s" viewBox="0 0 %d %d" width="%d" height="%d">'
        % (esc(label), esc(hood.centre), esc(_function(hood)), hood.up, hood.down, "1" if hood.truncated else "0",
           lay.width, lay.height, lay.width, lay.height),
        '<defs><marker id="arr-%s" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L8,4 L0,8 z" class="arrow"/></marker></defs>' % esc(label),
    ]
    pos: Dict[str, Tuple[int, int]] = lay.pos
    for e in hood.edges:
        if e.src not in pos or e.dst not in pos:
            continue
        (x1, y1), (x2, y2) = pos[e.src], pos[e.dst]
        ax, ay = x1 + NODE_W, y1 + NODE_H // 2
        bx, by = x2, y2 + NODE_H // 2
        if bx <= ax:  # same column or backwards (a loop): go round below
            ax, bx = x1 + NODE_W // 2, x2 + NODE_W // 2
            ay, by = y1 + NODE_H, y2 + NODE_H
            d = "M%d,%d C%d,%d %d,%d %d,%d" % (ax, ay, ax, ay + 40, bx, by + 40, bx, by)
        else:
            mid = (ax + bx) // 2
            d = "M%d,%d C%d,%d %d,%d %d,%d" % (ax, ay, mid, ay, mid, by, bx, by)
        parts.append(
            '<path class="edge%s" data-src="%s" data-dst="%s" data-control="%d" d="%s" marker-end="url(#arr-%s)">'
            "<title>%s%s \u2192 %s</title></path>"
            % (" control" if e.control else "", esc(e.src), esc(e.dst), 1 if e.control else 0, d, esc(label),
               "control: " if e.control else "", esc(e.src), esc(e.dst))
        )
    for n in hood.nodes:
        if n.name in pos:
            parts.append(_node(n, pos[n.name], marks.get(n.name), n.name == hood.centre))
    parts.append("</svg>")
    return "".join(parts)
