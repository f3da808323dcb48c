r"""The graph's own nodes by name on text (the text lane's ``find_named``): one ``grep -E`` over
the file for the name lines that may matter, each placed at its block by the writer's layout.

In the writer's layout (``tf.io.write_graph``) a message's ``name`` is the first line after its
opener, one level (two blanks) in: a node's ``  name: "X"`` right after its column-0 ``node {``,
the value plain (a node name holds no quote, backslash or byte a writer escapes). The search's
one regex has three parts:

1. the name lines, at any indent, whose value is a name asked for (or holds a needle);
2. the name lines at a node's indent that hold a piece of a name asked for, in any case (the
   close names);
3. every line where a ``name`` field, or a string value, is spelt otherwise than that: the
   field after other text on its line, no blank or two after its colon, a value that is not one
   plain double-quoted literal ending the line, a line that begins with a quote (an adjacent
   literal). A TensorFlow writer never writes one (inside its literals every quote is escaped).

A hit of the third kind raises :class:`Unplaced` (the rules read the blocks): so where the search
says a name is not there, no node has it, however the file spells it. A name line of the first
kind is a node's only right after a column-0 ``node {`` line; one at another indent is a library
function's node's right below a ``node_def {`` one level out, another message's (an attr's
``func``, an arg) below another opener, and else of a layout the search does not read (raised too).
"""
from __future__ import annotations

import re
from typing import Any, Iterator, List, Tuple

from .._model import Block
from ..parallel import _grep as _search
from ..parallel._grep import ere, folded
from ..source._lane import Named, NameQuery, Unplaced
from ._hood import _on_to

_ABOVE = 512  # (bytes read above a name line: its message's opener's line)
_OPENS = re.compile(rb"( *)([A-Za-z_][A-Za-z0-9_]*) \{\Z")
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
    odd = list(_ODD)
    if query.exact:
        # A name's proper prefixes too: where one is a name line's whole value, the line after it
        # is looked at (an adjacent literal there goes on with the name). Each of the other parts
        # holds ``name``, which grep then looks for first: twice as fast as with ``_ODD``'s last.
        heads = sorted({n[:i] for n in query.needles for i in range(1, len(n) + 1)})
        parts.append('^ *name: "(%s)?"$' % "|".join(ere(n) for n in heads))
        odd.pop()
    elif query.needles:
        parts.append('^ *name: "%s(%s)%s"$' % (_NOT_NAME, "|".join(ere(n) for n in query.needles), _NOT_NAME))
    else:
        parts.append('^ *name: "%s"$' % _NOT_NAME)
    if query.near:
        parts.append('^  name: "%s(%s)%s"$' % (_NOT_NAME, "|".join(folded(p) for p in query.near), _NOT_NAME))
    return "|".join(parts + odd)


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
                value, indent = _value(text)
                name = value.decode("utf-8", "surrogateescape")
                if wanted is not None and not query.keep(name) and any(n.startswith(name) for n in query.needles):
                    _not_continued(g, off + len(text) + 1)  # (a prefix of a name asked for: its first literal only?)
                if indent == 2 and not query.keep(name):
                    near += 1
                    if near > NEAR_MAX and query.near:
                        start, query = off + len(text) + 1, query._replace(near=())  # (the next line on, without them)
                        break
                    yield Named("near", name)
                    continue
                if indent != 2:  # (a name kept there: a function's node, another message's name, or another layout)
                    if query.keep(name) and _nested(g, off, indent) and query.exact:
                        yield Named("elsewhere", name)
                    continue
                yield Named("node", name, _placed(g, off))
                if wanted is not None:
                    wanted.discard(name)
                    if not wanted:
                        return
            else:
                return
        finally:
            close = getattr(hits, "close", None)
            if close is not None:
                close()


def _value(text: bytes) -> Tuple[bytes, int]:
    """A hit's name value and its line's indent; :class:`Unplaced` if it is no name line in the
    writer's layout (one of the third kind)."""
    body = text.lstrip(b" ")
    indent = len(text) - len(body)
    if not (body.startswith(b'name: "') and body.endswith(b'"') and len(body) > 7):
        raise Unplaced("a name spelt otherwise than the writer's layout spells it")
    value = body[7:-1]
    if b'"' in value or b"\\" in value:
        raise Unplaced("a name line with more than one literal")
    return value, indent


def _not_continued(g: Any, off: int) -> None:
    """:class:`Unplaced` if the line at ``off`` may go on with the string above it: it begins
    with a quote (an adjacent literal) or a comment (one may follow)."""
    if g.read_at(off, 256).lstrip(b" \t")[:1] in (b'"', b"'", b"#"):
        raise Unplaced("a name line whose literal may go on below")


def _nested(g: Any, off: int, indent: int) -> bool:
    """Whether the name line at ``off``, indented ``indent`` (not 2), is a library function's node's
    (True) or another message's (False), by the line above: its message's opener, one level out,
    in the writer's layout; :class:`Unplaced` where it is not (another layout: a graph's node,
    maybe)."""
    above = g.read_at(max(0, off - _ABOVE), min(off, _ABOVE))
    k = above.rfind(b"\n", 0, len(above) - 1)
    line = above[k + 1:-1] if above.endswith(b"\n") else b""
    m = _OPENS.match(line)
    if (k < 0 and off > _ABOVE) or m is None or len(m.group(1)) != indent - 2:
        raise Unplaced("a name line not right below its message's opener")
    if m.group(2) == b"node":
        raise Unplaced("a node's name in another layout")
    return m.group(2) == b"node_def"


def _placed(g: Any, off: int) -> Block:
    """The node whose name line starts at ``off``: right after a column-0 ``node {`` line, to the
    first column-0 closer after it."""
    if off < len(_OPENER) - 1:
        raise Unplaced("a name line before any node")
    before = g.read_at(off - len(_OPENER), len(_OPENER)) if off >= len(_OPENER) else b"\n" + g.read_at(0, off)
    if before != _OPENER:
        raise Unplaced("a name line that does not follow a node's opener")
    head = g.read_at(off, 4096)  # (most nodes end within it: 64 KiB read for each of thousands cost a second)
    k = head.find(_CLOSER)
    end = off + k if k >= 0 else _on_to(g, off, _CLOSER)
    if end is None:
        raise Unplaced("no closer below a node")
    return Block(("node",), off - len(_OPENER) + 1, end + 2, 0, 1, ())
