"""A node of a binary graph as a :class:`~pbtxt_scan._model.Block`: its heads read from the
NodeDef's bytes (fast, else field by field), checked as protobuf parses it when the walk
validates (``check``, ``stats``: :mod:`pbtxt_scan.wire._wire_schema`), and read again with other
heads. The API and the conventions are described in :mod:`pbtxt_scan.wire._wire`."""
from __future__ import annotations

from typing import BinaryIO, Dict, FrozenSet, List, Optional, Tuple

from .._errors import PbtxtError
from .._model import Block, Head
from ._wire_schema import error, spec, walk
from ._wire_read import T_ATTR, _HEAD_FIELD, DEFAULT_CHUNK, FUNCTION_PATH, HEADS, NODE_PATH, _Bad, _fields, _Reader, _seekable, _text, _varint_slow

NODE = "tensorflow.NodeDef"
_INLINE_MAX = 8 << 20  # nodes up to this size are read whole; bigger ones field by field


class Site:
    """Where the node fields being walked sit: ``which`` (0: graph nodes, 1: function nodes),
    ``parent_end`` (the end of the enclosing GraphDef or FunctionDef, -1 for a GraphDef that runs
    to the end of the file), ``fname`` (the function's name, once read); for the errors of a
    validating walk, ``prefix`` (the path of the nodes' field, ``graph_def.node``), ``depth`` (the
    messages above a node) and ``index`` (the node's among them)."""

    __slots__ = ("which", "parent_end", "fname", "prefix", "depth", "index")

    def __init__(self, which: int, parent_end: int, fname: Optional[str] = None, *, prefix: str = "node", depth: int = 1) -> None:
        self.which = which
        self.parent_end = parent_end
        self.fname = fname
        self.prefix = prefix
        self.depth = depth
        self.index = 0


def _node_fast(buf: bytes, i: int, end: int, want: Dict[int, str]) -> List[Head]:
    """Heads of a NodeDef held whole in ``buf[i:end]`` (``want``: tag byte -> head name); raises
    :class:`_Bad` on anything unusual (the careful path then says what and where)."""
    heads: List[Head] = []
    try:
        while i < end:
            # 1. every field NodeDef has is length-delimited with a one-byte tag: read its length
            t = buf[i]
            n = buf[i + 1]
            if n < 0x80:
                s = i + 2
            else:
                n, s = _varint_slow(buf, i + 1, 0)
            j = s + n
            # 2. attr (0x2a), the most common field, is skipped; then the heads
            if t == T_ATTR:
                if j > end:
                    raise _Bad
                i = j
                continue
            name = want.get(t)
            if name is not None:
                if j > end:
                    raise _Bad
                heads.append(_new(Head, (name, buf[s:j].decode("utf-8", "surrogateescape"), 0)))
                i = j
                continue
            # 3. anything else, by its wire type
            if t >= 0x80 or t < 8:
                raise _Bad  # a field number over 15, or 0
            wt = t & 7
            if wt == 2:
                if j > end:
                    raise _Bad
                i = j
            elif wt == 0:
                i += 1
                k = i
                while buf[i] >= 0x80:
                    i += 1
                if i - k > 9:
                    raise _Bad
                i += 1
            elif wt == 1:
                i += 9
            elif wt == 5:
                i += 5
            else:
                raise _Bad
    except (IndexError, PbtxtError):
        raise _Bad from None
    if i != end:
        raise _Bad
    return heads


def _node_careful(r: _Reader, start: int, end: int, want: Dict[int, str]) -> List[Head]:
    """Heads of the NodeDef at ``[start, end)``, read field by field (any size; precise errors)."""
    heads: List[Head] = []
    for fn, off, p, q in _fields(r, end):
        name = want.get(fn << 3 | 2)
        if name is not None:
            heads.append(Head(name, _text(r.take(q - p, off)), 0))
    return heads


def _want(heads: FrozenSet[str]) -> Dict[int, str]:
    """Head names by their tag (field << 3 | wire type 2)."""
    return {_HEAD_FIELD[h] << 3 | 2: h for h in heads if h in _HEAD_FIELD}


_PATHS = (NODE_PATH, FUNCTION_PATH)
_NO_PARENTS: Tuple[Optional[str], ...] = ()


_new = tuple.__new__  # a NamedTuple without its keyword handling: the hot path makes millions


def _block(r: _Reader, site: Site, off: int, start: int, end: int) -> Block:
    """The block of the NodeDef at ``[start, end)``, the reader at ``start`` (heads: ``r.want``)."""
    want = r.want
    n = end - start
    i = r.i
    if n <= len(r.buf) - i or (n <= _INLINE_MAX and r.fill(n) >= n):
        i = r.i
        # (the node's bytes taken now: the careful path below may refill r.buf, and i would then
        # point at other bytes)
        if r.validate:  # (first: the error then names the field, and its path)
            data = r.buf[i : i + n]
            e = walk(data, 0, n, spec(NODE), site.depth)
            if e is not None:
                raise error(data, e, NODE, start, "%s[%d]" % (site.prefix, site.index))
        try:
            heads = _node_fast(r.buf, i, i + n, want)
        except _Bad:
            heads = _node_careful(r, start, end, want)
    elif r.validate:
        from ._wire_stream import check_message

        heads = check_message(r, end, NODE, "%s[%d]" % (site.prefix, site.index), site.depth, want)
    else:
        heads = _node_careful(r, start, end, want)
    which = site.which
    return _new(Block, (_PATHS[which], start, end, 0, 0, tuple(heads), _NO_PARENTS if which == 0 else (None, site.fname)))


def reread_block(f: BinaryIO, block: Block, heads: FrozenSet[str] = HEADS) -> Block:
    """``block`` again from the seekable ``f``, with other ``heads``: read the nodes backward with
    name and op only (a NoOp such as ``init`` can have 100,000+ inputs), then the inputs of the
    few candidates."""
    if not _seekable(f):
        raise PbtxtError("reading a node again needs a seekable file (copy the stream to a file first)")
    r = _Reader(f, max(64, min(block.end - block.start, DEFAULT_CHUNK)))
    r.seek(block.start)
    r.want = _want(heads)
    site = Site(0 if tuple(block.path) == NODE_PATH else 1, -1, block.parents[-1] if block.parents else None)
    return _block(r, site, -1, block.start, block.end)
