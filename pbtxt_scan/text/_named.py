r"""The graph's own nodes by name on text (the text lane's ``find_named``): one ``grep -E`` over
the file for the name lines that may matter, each placed at its block by the writer's layout.

In the writer's layout (``tf.io.write_graph``) a node's name is the first line after its column-0
``node {``: ``  name: "X"``, the value plain (a node name holds no quote, backslash or byte a
writer escapes). The search's one regex has three parts:

1. the name lines at a node's indent whose value is a name asked for (or holds a needle, or a
   piece of a name asked for, in any case: the close names);
2. the same at a library function's node indent (6): an exact name there is ``elsewhere``;
3. every line where a ``name`` field, or a string value, is spelt otherwise than that: the
   field after other text on its line, no space or two after its colon, a value that is not one
   plain double-quoted literal ending the line, a line that begins with a quote (an adjacent
   literal). A TensorFlow writer never writes one (inside its literals every quote is escaped).

A hit of the third kind raises :class:`Unplaced` (the rules read the blocks): so where the search
says a name is not there, no node has it, however the file spells it. A name line of the first
kind is a node's only right after a column-0 ``node {`` line; else the layout is another (raised
too)."""
from __future__ import annotations

from typing import Any, Iterator, List

from .._model import Block
from ..parallel import _grep as _search
from ..parallel._grep import ere, folded
from ..source._lane import Named, NameQuery, Unplaced
from ._hood import _on_to

_HEAD = b'  name: "'
_FN_HEAD = b'      name: "'
_OPENER = b"\nnode {\n"
_CLOSER = b"\n}\n"
_NOT_NAME = '[^"\\\\]*'  # (a plain value's bytes)

# (3) A name field or a string spelt otherwise than the writer's ``<indent>name: "plain"``.
_ODD = (
    '^ *[^ ](.*[^A-Za-z0-9_])?name[ \t]*(:[ \t]*["\']|:?[ \t]*$)',  # after other text on its line
    '^ *name[ \t]*([^:A-Za-z0-9_ \t]|$|:[ \t]*$)',  # no colon and value on the line
    '^ *name[ \t]+:',  # a blank before the colon
    '^ *name:([^ ]| [ \t])',  # no blank, or two, after it
    '^ *name: [^"]',  # not a double-quoted literal
    '^ *name: "[^"]*\\\\',  # an escape in it
    '^ *name: "[^"\\\\]*(".|$)',  # more after its closing quote, or none
    '^[ \t]*["\']',  # an adjacent literal on a line of its own
)


def pattern(query: NameQuery) -> str:
    """The search's one regex (see the module docstring)."""
    parts: List[str] = []
    if query.exact:
        names = "|".join(ere(n) for n in query.needles)
        parts.append('^  name: "(%s)"$' % names)
        parts.append('^      name: "(%s)"$' % names)
    elif query.needles:
        parts.append('^  name: "%s(%s)%s"$' % (_NOT_NAME, "|".join(ere(n) for n in query.needles), _NOT_NAME))
    else:
        parts.append('^  name: "%s"$' % _NOT_NAME)
    if query.near:
        parts.append('^  name: "%s(%s)%s"$' % (_NOT_NAME, "|".join(folded(p) for p in query.near), _NOT_NAME))
    return "|".join(parts + list(_ODD))


NEAR_MAX = 1 << 15  # close names read at most (then the search goes on without their pieces: a piece met in every name)


def named_blocks(g: Any, grep: str, query: NameQuery) -> Iterator[Named]:
    """The search of :meth:`TextLane.find_named <pbtxt_scan.text._lane.TextLane.find_named>`:
    each node named as ``query`` keeps (its place: line and heads left to the reader), each
    close name (the first :data:`NEAR_MAX`), and each exact name met in a library function, in
    file order."""
    wanted = set(query.needles) if query.exact else None
    opts = ("-E", "--line-buffered") if query.exact else ("-E",)  # (an exact name: the search stops when all are met)
    start, near = 0, 0
    while True:
        hits = _search._grep(grep, g, start, pattern(query), opts=opts)
        try:
            for off, text in hits:
                if text.startswith(_HEAD) and text.endswith(b'"') and len(text) > len(_HEAD):
                    value = text[len(_HEAD):-1]
                    if b'"' in value or b"\\" in value:
                        raise Unplaced("a name line with more than one literal")
                    name = value.decode("utf-8", "surrogateescape")
                    if not query.keep(name):
                        near += 1
                        if near > NEAR_MAX and query.near:
                            start, query = off + len(text) + 1, query._replace(near=())  # (the next line on, without them)
                            break
                        yield Named("near", name)
                        continue
                    yield Named("node", name, _placed(g, off))
                    if wanted is not None:
                        wanted.discard(name)
                        if not wanted:
                            return
                elif text.startswith(_FN_HEAD) and text.endswith(b'"') and query.exact:
                    yield Named("elsewhere", text[len(_FN_HEAD):-1].decode("utf-8", "surrogateescape"))
                else:
                    raise Unplaced("a name spelt otherwise than the writer's layout spells it")
            else:
                return
        finally:
            close = getattr(hits, "close", None)
            if close is not None:
                close()


def _placed(g: Any, off: int) -> Block:
    """The node whose name line starts at ``off``: right after a column-0 ``node {`` line, to the
    first column-0 closer after it."""
    if off < len(_OPENER) - 1:
        raise Unplaced("a name line before any node")
    before = g.read_at(off - len(_OPENER), len(_OPENER)) if off >= len(_OPENER) else b"\n" + g.read_at(0, off)
    if before != _OPENER:
        raise Unplaced("a name line that does not follow a node's opener")
    end = _on_to(g, off, _CLOSER)
    if end is None:
        raise Unplaced("no closer below a node")
    return Block(("node",), off - len(_OPENER) + 1, end + 2, 0, 1, ())
