"""Walking a binary graph down to its nodes: forward blocks, and backward through a sparse index.
The API and the conventions are described in :mod:`pbtxt_scan.wire._wire`."""
from __future__ import annotations

from typing import Any, BinaryIO, Callable, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from .._errors import PbtxtError
from .._model import Block, Head
from ._wire_read import _HEAD_FIELD, DEFAULT_CHUNK, FUNCTION_PATH, GRAPHDEF, HEADS, KINDS, METAGRAPH, NODE_PATH, SAVEDMODEL, SNIFF_BYTES, TRUNCATED_FILE, TRUNCATED_MSG, WireInfo, _Bad, _check_end, _error, _fields, _Reader, _seekable, _skip_value, _tag, _text, _varint_slow
from ._wire_sniff import sniff

_INLINE_MAX = 8 << 20  # nodes up to this size are read whole; bigger ones field by field


# --------------------------------------------------------------------------------------------
# walking the containers down to the nodes
# --------------------------------------------------------------------------------------------


def _kind_of(r: _Reader, kind: Optional[str]) -> str:
    if kind is not None:
        if kind not in KINDS:
            raise ValueError("unknown binary kind %r (choose from %s)" % (kind, ", ".join(KINDS)))
        return kind
    r.fill(SNIFF_BYTES)
    found = sniff(r.buf[r.i : r.i + SNIFF_BYTES])
    if found is None:
        raise _error("not a binary GraphDef, MetaGraphDef or SavedModel", r.tell())
    return found


class Site:
    """Where the node fields being walked sit: ``which`` (0: graph nodes, 1: function nodes),
    ``parent_end`` (the end of the enclosing GraphDef or FunctionDef, -1 for a GraphDef that runs
    to the end of the file) and ``fname`` (the function's name, once read)."""

    __slots__ = ("which", "parent_end", "fname")

    def __init__(self, which: int, parent_end: int, fname: Optional[str] = None) -> None:
        self.which = which
        self.parent_end = parent_end
        self.fname = fname


class Visits(NamedTuple):
    """What a walk visits: the graph's nodes (``nodes``), the functions' (``functions``), each
    node field by ``visit(r, site, tag offset, payload start, payload end)`` and, for a whole-file
    fold, runs of graph nodes by ``bulk(buf, i, limit, base)`` (see :func:`_sites`)."""

    nodes: bool
    functions: bool
    visit: Callable[[_Reader, Site, int, int, int], Any]
    bulk: Optional[Callable[[bytes, int, int, int], int]] = None


def _sites(r: _Reader, kind: str, which: Visits, meta_graph: Optional[int], info: Optional[Dict[str, Any]]) -> Iterator[Any]:
    """Walk to every node field of the wanted paths (``which.nodes`` graph nodes,
    ``which.functions`` function nodes) in file order, calling ``which.visit(r, site, tag offset,
    payload start, payload end)`` (``site``: a :class:`Site`) with the reader at the payload;
    yields what it returns unless ``None``. It may read the node; the walk skips what is left.
    ``which.bulk``, if given, is a whole-file fold's ``bulk(buf, i, limit, base)``: it takes the
    graph nodes held whole in ``buf[i:limit]`` (``buf[0]`` is at offset ``base``) up to the first
    it leaves to ``which.visit`` and returns where it stopped; the walk yields ``None`` after each
    such run."""
    end = None  # the top level runs to the end of the file (checked against ``r.size``)
    if kind == GRAPHDEF:
        _note(info, WireInfo(GRAPHDEF))
        yield from _graph(r, end, which)
    elif kind == METAGRAPH:
        _note(info, WireInfo(METAGRAPH))
        yield from _meta(r, end, which)
    else:
        yield from _saved(r, end, which, meta_graph, info)


def _note(info: Optional[Dict[str, Any]], what: WireInfo) -> None:
    if info is not None:
        info.update(what._asdict())


def _graph(r: _Reader, end: Optional[int], which: Visits) -> Iterator[Any]:
    """The GraphDef level: the hot loop (millions of ``node`` fields), written out by hand."""
    want_nodes, want_lib, visit = which.nodes, which.functions, which.visit
    bulk = which.bulk if want_nodes else None
    site = Site(0, end if end is not None else -1)
    while True:
        # 1. the next tag, a single byte for every field GraphDef has
        buf = r.buf
        i = r.i
        if len(buf) - i < 20:
            r.fill(20)
            buf = r.buf
            i = r.i
        if i >= len(buf) or (end is not None and r.base + i >= end):
            if end is not None and r.base + i > end:
                raise _error(TRUNCATED_MSG, r.base + i)
            if end is not None and r.base + i < end:
                raise _error(TRUNCATED_FILE, r.base + i)
            return
        t = buf[i]
        # 2. node (field 1, length-delimited), by far the most common: its length, then yield
        if t == 0x0A:
            if bulk is not None:
                # 2a. a whole-file fold takes every node it can read straight from the buffer
                # (``_wire_whole``), and stops before any other: that one is read below
                j = bulk(buf, i, len(buf) if end is None else min(len(buf), end - r.base), r.base)
                if j != i:
                    r.i = j
                    yield None
                    continue
            off = r.base + i
            n = buf[i + 1] if i + 1 < len(buf) else 0x80
            if n < 0x80:
                i += 2
            else:
                r.i = i + 1
                n = r.varint()
                i = r.i
            p = r.base + i
            q = p + n
            if end is not None and q > end:
                raise _error(TRUNCATED_MSG, off)
            if r.size is not None and q > r.size:
                raise _error(TRUNCATED_FILE, off)
            r.i = i
            if want_nodes:
                got = visit(r, site, off, p, q)
                if got is not None:
                    yield got
            j = q - r.base
            if j <= len(r.buf):
                r.i = j
            else:
                r.skip_to(q, off)
            continue
        # 3. anything else: library (descend when function nodes are wanted) or skip
        r.i = i
        fn, wt, off = _tag(r)
        if fn == 2 and wt == 2 and want_lib:
            n = r.varint()
            p = r.tell()
            _check_end(p + n, end, off, r)
            yield from _library(r, p + n, visit)
            r.skip_to(p + n, off)
        else:
            _skip_value(r, fn, wt, off, end)


def _library(r: _Reader, end: int, visit: Any) -> Iterator[Any]:
    for fn, _off, p, q in _fields(r, end):
        if fn == 1:
            yield from _function(r, q, visit)


def _function(r: _Reader, end: int, visit: Any) -> Iterator[Any]:
    site = Site(1, end)
    for fn, off, p, q in _fields(r, end):
        if fn == 3:
            got = visit(r, site, off, p, q)  # (the visit reads the site now: the name as read so far)
            if got is not None:
                yield got
        elif fn == 1:  # signature (OpDef): its name = 1
            for fn2, off2, p2, q2 in _fields(r, q):
                if fn2 == 1:
                    site.fname = _text(r.take(q2 - p2, off2))


def _meta(r: _Reader, end: Optional[int], which: Visits) -> Iterator[Any]:
    for fn, _off, p, q in _fields(r, end):
        if fn == 2:  # graph_def
            yield from _graph(r, q, which)


def _tags_of_meta(r: _Reader, end: int) -> Tuple[str, ...]:
    tags: List[str] = []
    for fn, _off, p, q in _fields(r, end):
        if fn == 1:  # meta_info_def
            for fn2, off2, p2, q2 in _fields(r, q):
                if fn2 == 4:
                    tags.append(_text(r.take(q2 - p2, off2)))
    return tuple(tags)


def _saved(r: _Reader, end: Optional[int], which: Visits, meta_graph: Optional[int], info: Optional[Dict[str, Any]]) -> Iterator[Any]:
    if r.seekable:
        # 1. a first pass over the MetaGraphs' tags (their graphs are skipped by seeking)
        start = r.tell()
        metas: List[Tuple[int, int, Tuple[str, ...]]] = []
        for fn, _off, p, q in _fields(r, end):
            if fn == 2:
                metas.append((p, q, _tags_of_meta(r, q)))
        if not metas:
            raise _error("this SavedModel has no MetaGraph", start)
        # 2. the choice: asked for, else the one tagged train, else the first
        if meta_graph is not None:
            if not 0 <= meta_graph < len(metas):
                raise _error("this SavedModel has %d MetaGraphs, no MetaGraph %d" % (len(metas), meta_graph), start)
            k, why = meta_graph, "as asked"
        else:
            train = [k for k, m in enumerate(metas) if "train" in m[2]]
            k, why = (train[0], "tagged train") if train else (0, "the first (none is tagged train)")
        p, q, meta_tags = metas[k]
        _note(info, WireInfo(SAVEDMODEL, k, meta_tags, len(metas), why))
        r.seek(p)
        yield from _meta(r, q, which)
        return
    # A stream cannot go back: the first MetaGraph (or the one asked for), tags read on the way.
    k = -1
    want = 0 if meta_graph is None else meta_graph
    for fn, off, p, q in _fields(r, end):
        if fn != 2:
            continue
        k += 1
        if k != want:
            continue
        why = "as asked" if meta_graph is not None else "the first (the input is not seekable: later ones were not checked for a train tag)"
        tags: List[str] = []
        _note(info, WireInfo(SAVEDMODEL, k, (), None, why))
        for fn2, off2, p2, q2 in _fields(r, q):
            if fn2 == 1:
                for fn3, off3, p3, q3 in _fields(r, q2):
                    if fn3 == 4:
                        tags.append(_text(r.take(q3 - p3, off3)))
                if info is not None:
                    info["tags"] = tuple(tags)
            elif fn2 == 2:
                yield from _graph(r, q2, which)
    if k < want:
        raise _error("this SavedModel has %d MetaGraphs, no MetaGraph %d" % (k + 1, want), r.tell())
    if info is not None:
        info["meta_graphs"] = k + 1



# --------------------------------------------------------------------------------------------
# nodes: heads from the NodeDef bytes
# --------------------------------------------------------------------------------------------


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
            if t == 0x2A:
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
        data = r.buf[i : i + n] if r.validate else b""
        try:
            heads = _node_fast(r.buf, i, i + n, want)
        except _Bad:
            heads = _node_careful(r, start, end, want)
        if r.validate:
            from ._wire_text import check_node

            check_node(data, start)
    else:
        heads = _node_careful(r, start, end, want)
    which = site.which
    return _new(Block, (_PATHS[which], start, end, 0, 0, tuple(heads), _NO_PARENTS if which == 0 else (None, site.fname)))


def _which(paths: Sequence[Sequence[str]]) -> Tuple[bool, bool]:
    ps = [tuple(p) for p in paths]
    for p in ps:
        if p not in _PATHS:
            raise ValueError("binary graphs have nodes at %s, not %s" % (" and ".join(".".join(x) for x in _PATHS), ".".join(p)))
    return NODE_PATH in ps, FUNCTION_PATH in ps


def iter_wire_blocks(
    f: BinaryIO,
    paths: Sequence[Sequence[str]] = (NODE_PATH,),
    heads: FrozenSet[str] = HEADS,
    *,
    kind: Optional[str] = None,
    meta_graph: Optional[int] = None,
    chunk_size: int = DEFAULT_CHUNK,
    info: Optional[Dict[str, Any]] = None,
    validate: bool = False,
) -> Iterator[Block]:
    """The node blocks of a binary graph in file order, in constant memory.

    ``f`` is a binary file object at offset 0 (seekable or not). ``paths``: ``("node",)`` and/or
    ``("library", "function", "node_def")``. ``heads``: which of name, op, input, device to read.
    ``kind`` is sniffed from the first bytes unless given; ``meta_graph`` picks a SavedModel's
    MetaGraph (default: the one tagged ``train``, else the first). ``info``, if given, is filled
    with the :class:`WireInfo` fields (which MetaGraph was read, and why).
    Raises :class:`PbtxtError` (with ``offset``) on malformed input: the containers walked, each
    node's own fields, and with ``validate`` (for ``check``) every node up to ``_INLINE_MAX``
    bytes down to its last nested value (slower: it decodes the attrs the listing skips).
    """
    r = _Reader(f, chunk_size)
    k = _kind_of(r, kind)
    r.want = _want(heads)
    r.validate = validate
    nodes, functions = _which(paths)
    yield from _sites(r, k, Visits(nodes, functions, _block), meta_graph, info)


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
