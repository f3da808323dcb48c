"""Whole-file commands on a binary graph (``nodes``, ``stats``, ``check``): folds that read only
what the command needs, and where a binary GraphDef may be cut for several processes.

A :class:`Fold` is handed every graph node in file order. The walk (``_wire_walk._graph``) gives
it the nodes held whole in the read buffer as one run (:meth:`Fold.bulk`): a tight loop over the
length prefixes that reads, of each node, its name and op (the first two fields, as every
serializer writes them: fields in number order) and skips the rest by the node's length. A node it
does not read that way (name or op not first, a long name, the node cut by the buffer's end) ends
the run and goes the usual way (:meth:`Fold.visit`: ``_wire_walk._block``, every field of the node
read, the same errors). So:

- ``nodes`` (``row`` given): ``offset<TAB>name<TAB>op`` rows formatted as bytes, decoded once per
  run. The node's other fields are not read (a listing needs name and op only); ``check`` reads them.
- ``stats``/``check`` (``validate``): the node count and the op histogram (keyed by the op's
  bytes, in first-seen order), and each node validated as ``check_node`` validates it, by
  ``_wire_check.node_ok`` (tags and lengths only; a node it does not pass goes the usual way,
  where ``check_node`` says what is wrong and where).

Split points (``graph._parallel``): a GraphDef's top level is a sequence of fields, almost all of
them ``node`` (field 1, length-delimited, tag ``0x0a``). :func:`split_finder` looks for a ``0x0a``
that starts a run of :data:`_RUN` nodes, each read through its length prefix and (up to
:data:`_SMALL` bytes) valid down to its attr values, with ``0x0a`` (its name) first. Bytes that
only look like that, inside a tensor's content, can still be picked: the chunk before such a
point then fails (its last node runs past its end), and the parent reads on alone from there.
"""
from __future__ import annotations

import re
from typing import Any, BinaryIO, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from .._model import Block
from ._wire_check import Seen, message_ok, node_ok
from ._wire_read import DEFAULT_CHUNK, _Reader
from ._wire_walk import _INLINE_MAX, Site, Visits, _block, _graph, _kind_of, _sites, _want, _which

_RUN = 4  # nodes a split point must start
# A node's name (a short one) and then its op, an identifier: what a library's FunctionDef (its
# OpDef first, whose name and ArgDefs read as a NodeDef's name and op) does not look like.
_OP = re.compile(rb"[A-Za-z_][A-Za-z0-9_>./-]*")
_SMALL = 1 << 16  # nodes up to this size are checked whole when a split point is verified
_LOOK = 1 << 16  # bytes read at a time when looking for a split point


class Fold:
    """What a whole-file command keeps of the nodes: ``nodes`` (how many), ``ops`` (op bytes ->
    count, first seen first; ``b""`` for a node without an op), ``rows`` (for ``nodes``: one
    ``bytes`` row each, taken by :meth:`take`), ``last`` (the end offset of the last node).

    ``row``: the rows' format for the nodes :meth:`bulk` leaves (it formats its own as
    ``offset<TAB>name<TAB>op``: ``graph._paths.row_tsv``; ``tsv=False``: ``row`` is another, and
    every node is read the usual way); ``None``: count. ``validate``: check every node down to
    its attr values (``check``, ``stats``). ``keep``: rows only for the nodes it keeps, asked with
    their name and op bytes (``graph._paths.NodeFilter.raw``; ``nodes`` counts every node)."""

    __slots__ = ("nodes", "ops", "rows", "row", "tsv", "validate", "seen", "last", "keep")

    def __init__(self, *, row: Optional[Callable[[Block], str]] = None, tsv: bool = True, validate: bool = False,
                 keep: Optional[Callable[[bytes, bytes], bool]] = None) -> None:
        self.keep = keep
        self.tsv = tsv  # (False: ``row`` is another format; every node is read the usual way)
        self.nodes = 0
        self.ops: Dict[bytes, int] = {}
        self.rows: List[bytes] = []
        self.row = row
        self.validate = validate
        self.seen = Seen()
        self.last = 0

    def histogram(self) -> Dict[str, int]:
        """The op histogram as ``stats`` has it (``?`` for a node without an op), first seen first."""
        out: Dict[str, int] = {}
        for k, v in self.ops.items():
            op = k.decode("utf-8", "surrogateescape") or "?"
            out[op] = out.get(op, 0) + v
        return out

    def take(self) -> str:
        """The rows so far, joined by newlines (and forgotten)."""
        text = b"\n".join(self.rows).decode("utf-8", "surrogateescape")
        self.rows = []
        return text

    def visit(self, r: _Reader, site: Site, off: int, p: int, q: int) -> None:
        """A node :meth:`bulk` left: read the usual way (``_wire_walk._block``)."""
        if self.validate:
            # check_node (in _block) only where node_ok does not pass the node: it says what is
            # wrong; nodes too big to hold are not checked inside, as for every listing
            n = q - p
            held = n <= len(r.buf) - r.i or (n <= _INLINE_MAX and r.fill(n) >= n)
            r.validate = held and not node_ok(r.buf, r.i, r.i, r.i + n, self.seen)
        b = _block(r, site, off, p, q)
        if self.row is None:
            op = b.op
            key = op.encode("utf-8", "surrogateescape") if op else b""
            self.ops[key] = self.ops.get(key, 0) + 1
        elif self.keep is None or self.keep(_raw(b.name), _raw(b.op)):
            self.rows.append(self.row(b).encode("utf-8", "surrogateescape"))
        self.nodes += 1
        self.last = q

    def bulk(self, buf: bytes, i: int, lim: int, base: int) -> int:
        """The nodes held whole in ``buf[i:lim]`` from the first, up to one it leaves; returns
        where it stopped. (One loop per command, written out: it runs once per node.)"""
        if not self.tsv:
            return i
        n = 0
        rows = self.rows if self.row is not None else None
        keep = self.keep
        ops = self.ops
        validate = self.validate
        seen = self.seen
        while i + 1 < lim:
            # 1. the node field's tag and length (up to three bytes: nodes under 2 MB)
            if buf[i] != 0x0A:
                break
            size = buf[i + 1]
            if size < 0x80:
                p = i + 2
            elif i + 2 < lim and buf[i + 2] < 0x80:
                size = (size & 0x7F) | buf[i + 2] << 7
                p = i + 3
            elif i + 3 < lim and buf[i + 3] < 0x80:
                size = (size & 0x7F) | (buf[i + 2] & 0x7F) << 7 | buf[i + 3] << 14
                p = i + 4
            else:
                break
            q = p + size
            if q > lim or size < 4:
                break
            # 2. name (0x0a) then op (0x12), each with a one-byte length, inside the node
            if buf[p] != 0x0A or buf[p + 1] >= 0x80:
                break
            e = p + 2 + buf[p + 1]
            if e + 2 > q or buf[e] != 0x12 or buf[e + 1] >= 0x80:
                break
            s = e + 2
            t = s + buf[e + 1]
            if t > q:
                break
            # 3. the command's part
            if validate and not node_ok(buf, p, t, q, seen):
                break
            if rows is None:
                op = buf[s:t]
                ops[op] = ops.get(op, 0) + 1
            elif keep is None or keep(buf[p + 2 : e], buf[s:t]):
                rows.append(b"%d\t%s\t%s" % (base + p, buf[p + 2 : e], buf[s:t]))
            n += 1
            i = q
        if n:
            self.nodes += n
            self.last = base + i
        return i


def _raw(value: Optional[str]) -> bytes:
    """A node's name or op as the bytes :meth:`Fold.bulk` would have read (``b""`` when absent)."""
    return (value or "").encode("utf-8", "surrogateescape")


def fold_wire(
    f: BinaryIO,
    path: Sequence[str],
    fold: Fold,
    heads: FrozenSet[str],
    *,
    kind: Optional[str] = None,
    chunk_size: int = DEFAULT_CHUNK,
    info: Optional[Dict[str, Any]] = None,
    chunk: bool = False,
    end: Optional[int] = None,
) -> Iterator[None]:
    """Hand ``fold`` every node at ``path`` of the binary graph ``f`` (at offset 0; ``heads``: for
    the nodes read the usual way), yielding after each run of nodes (take the rows then).

    ``chunk``: ``f`` is at a split point of a GraphDef (see the module docstring), and what
    follows, up to ``end`` (``None``: the end of the file), is read as the GraphDef's top-level
    fields, ending there (or :class:`PbtxtError` is raised). From a split point the file's own
    walk has reached, this is that walk: the same nodes, the same first error."""
    r = _Reader(f, chunk_size)
    r.want = _want(heads)
    r.validate = fold.validate
    if not chunk:
        nodes, functions = _which([tuple(path)])
        yield from _sites(r, _kind_of(r, kind), Visits(nodes, functions, fold.visit, fold.bulk), None, info)
    else:
        yield from _graph(r, end, Visits(True, False, fold.visit, fold.bulk))


# --- split points --------------------------------------------------------------------------


def split_finder(read_at: Callable[[int, int], bytes], size: int) -> Callable[[int, int], Optional[int]]:
    """``finder(t, limit)``: the first split point in ``[t, limit)`` of the binary GraphDef of
    ``size`` bytes read by ``read_at(offset, n)`` (for ``parallel._plan.plan``), or None."""

    def finder(t: int, limit: int) -> Optional[int]:
        at = t
        while at < limit:
            data = read_at(at, min(_LOOK, limit - at))
            if not data:
                return None
            k = data.find(b"\x0a")
            while k >= 0:
                if _starts_nodes(read_at, at + k, size):
                    return at + k
                k = data.find(b"\x0a", k + 1)
            at += len(data)
        return None

    return finder


def _starts_nodes(read_at: Callable[[int, int], bytes], p: int, size: int) -> bool:
    """Whether :data:`_RUN` node fields start at ``p`` (or fewer, then the file's end or another
    GraphDef field), each walked through its length prefix."""
    nodes = 0
    while nodes < _RUN:
        if p == size:
            return nodes > 0
        head = read_at(p, 12)
        if not head:
            return False
        if head[0] != 0x0A:
            return nodes > 0 and head[0] in (0x12, 0x18, 0x22, 0x2A)  # library, version, versions, debug_info
        n, k = _length(head, 1)
        if n < 2 or p + k + n > size:
            return False
        body = read_at(p + k, min(n, _SMALL))
        if not _named(body) or (n <= _SMALL and not message_ok(body, 0, n, "NodeDef", 0)):
            return False
        nodes += 1
        p += k + n
    return True


def _named(body: bytes) -> bool:
    """Whether a NodeDef's bytes start with a name (under 128 bytes) and then an op name."""
    if body[:1] != b"\x0a" or len(body) < 2 or body[1] >= 0x80:
        return False
    e = 2 + body[1]
    if body[e : e + 1] != b"\x12" or len(body) < e + 2:
        return False
    return _OP.fullmatch(body, e + 2, e + 2 + body[e + 1]) is not None and body[e + 1] < 0x80


def _length(buf: bytes, i: int) -> Tuple[int, int]:
    """The varint at ``buf[i]`` (a length) and the index after it; ``(-1, -1)`` if not one."""
    n = shift = 0
    for j in range(i, min(len(buf), i + 10)):
        b = buf[j]
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n, j + 1
        shift += 7
    return -1, -1
