"""Walking a binary graph down to its nodes: forward blocks, and backward through a sparse index.
The API and the conventions are described in :mod:`pbtxt_scan.wire._wire`."""
from __future__ import annotations

from typing import Any, BinaryIO, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from .._model import Block
from ._wire_read import F_FUNCTION, F_GRAPH_DEF, F_LIBRARY, F_META_GRAPHS, F_META_INFO, F_NODE, F_NODE_DEF, F_OP_NAME, F_SIGNATURE, F_TAGS, T_LIBRARY, T_NODE, DEFAULT_CHUNK, FUNCTION_PATH, GRAPHDEF, HEADS, KINDS, METAGRAPH, NODE_PATH, SAVEDMODEL, TRUNCATED_FILE, TRUNCATED_MSG, WireInfo, _check_end, _error, _fields, _Reader, _skip_value, _tag, _text
from ._wire_node import _PATHS, Site, _block, _want
from ._wire_stream import check_field, fields, join, named, segment
from ._wire_sniff import SNIFF_BYTES, sniff

# --------------------------------------------------------------------------------------------
# walking the containers down to the nodes
# --------------------------------------------------------------------------------------------


_GRAPH, _META = "tensorflow.GraphDef", "tensorflow.MetaGraphDef"


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


class Visits(NamedTuple):
    """What a walk visits: the graph's nodes (``nodes``), the functions' (``functions``), each
    node field by ``visit(r, site, tag offset, payload start, payload end)`` and, for a whole-file
    fold, runs of graph nodes by ``bulk(buf, i, limit, base, site)`` (see :func:`_sites`)."""

    nodes: bool
    functions: bool
    visit: Callable[[_Reader, Site, int, int, int], Any]
    bulk: Optional[Callable[[bytes, int, int, int, Site], int]] = None


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


def _graph(r: _Reader, end: Optional[int], which: Visits, site: Optional[Site] = None) -> Iterator[Any]:
    """The GraphDef level: the hot loop (millions of ``node`` fields), written out by hand.
    ``site``: where its nodes are (a GraphDef inside a MetaGraphDef: for the errors' paths)."""
    want_nodes, want_lib, visit = which.nodes, which.functions, which.visit
    bulk = which.bulk if want_nodes else None
    if site is None:
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
        if t == T_NODE:
            if bulk is not None:
                # 2a. a whole-file fold takes every node it can read straight from the buffer
                # (``_wire_whole``), and stops before any other: that one is read below
                j = bulk(buf, i, len(buf) if end is None else min(len(buf), end - r.base), r.base, site)
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
            if end is not None and q > end:  # (checking: named, inside a MetaGraphDef)
                raise named(_error(TRUNCATED_MSG, off), "%s[%d]" % (site.prefix, site.index) if r.validate else "")
            if r.size is not None and q > r.size:
                raise _error(TRUNCATED_FILE, off)
            r.i = i
            if want_nodes:
                got = visit(r, site, off, p, q)
                site.index += 1
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
        if r.validate and not (want_lib and buf[i] == T_LIBRARY):
            _graph_field(r, end, site)
            continue
        fn, wt, off = _tag(r)
        if fn == F_LIBRARY and wt == 2 and want_lib:
            n = r.varint()
            p = r.tell()
            _check_end(p + n, end, off, r)
            yield from _library(r, p + n, visit, join(site.prefix.rpartition(".")[0], "library"), site.depth)
            r.skip_to(p + n, off)
        else:
            _skip_value(r, fn, wt, off, end)


def _graph_field(r: _Reader, end: Optional[int], site: Site) -> None:
    """A validating walk's GraphDef field other than a node in the usual form: checked as protobuf
    parses it (the library, versions, debug_info; a node whose tag has more than one byte)."""
    path = site.prefix.rpartition(".")[0]
    try:
        fn, wt, off = _tag(r)
    except PbtxtError as e:
        raise named(e, path) from None
    here = path + segment(_GRAPH, fn, site.index if fn == F_NODE else 0)
    if wt == 4:
        raise named(_error("end-group tag without a group", off), path)
    try:
        if wt != 2:
            _skip_value(r, fn, wt, off, end)
            return
        n = r.varint()
        p = r.tell()
        _check_end(p + n, end, off, r)
    except PbtxtError as e:
        raise named(e, here) from None
    check_field(r, (_GRAPH, fn, site.index if fn == F_NODE else 0), p + n, off, path, site.depth - 1)
    r.skip_to(p + n, off)


def _library(r: _Reader, end: int, visit: Any, path: str = "library", depth: int = 1) -> Iterator[Any]:
    k = 0
    for fn, _off, p, q in _fields(r, end):
        if fn == F_FUNCTION:
            yield from _function(r, q, visit, Site(1, q, prefix="%s.function[%d].node_def" % (path, k), depth=depth + 2))
            k += 1


def _function(r: _Reader, end: int, visit: Any, site: Site) -> Iterator[Any]:
    for fn, off, p, q in _fields(r, end):
        if fn == F_NODE_DEF:
            got = visit(r, site, off, p, q)  # (the visit reads the site now: the name as read so far)
            site.index += 1
            if got is not None:
                yield got
        elif fn == F_SIGNATURE:  # (an OpDef: its name)
            for fn2, off2, p2, q2 in _fields(r, q):
                if fn2 == F_OP_NAME:
                    site.fname = _text(r.take(q2 - p2, off2))


def _meta(r: _Reader, end: Optional[int], which: Visits, path: str = "", depth: int = 0) -> Iterator[Any]:
    """A MetaGraphDef's graph (``path``, ``depth``: the MetaGraphDef's, for the errors); a
    validating walk checks its other fields too."""
    if not r.validate:
        for fn, _off, p, q in _fields(r, end):
            if fn == F_GRAPH_DEF:
                yield from _graph(r, q, which)
        return
    for fn, k, off, p, q in fields(r, end, _META, path):
        if fn == F_GRAPH_DEF:
            yield from _graph(r, q, which, Site(0, q, prefix=join(path, "graph_def.node"), depth=depth + 2))
        else:
            check_field(r, (_META, fn, k), q, off, path, depth)


def _tags_of_meta(r: _Reader, end: int, path: str) -> Tuple[str, ...]:
    tags: List[str] = []
    for fn, _k, _off, p, q in fields(r, end, _META, path):
        if fn == F_META_INFO:
            for fn2, _k2, off2, p2, q2 in fields(r, q, _META + ".MetaInfoDef", path + ".meta_info_def"):
                if fn2 == F_TAGS:
                    tags.append(_text(r.take(q2 - p2, off2)))
    return tuple(tags)


def _saved(r: _Reader, end: Optional[int], which: Visits, meta_graph: Optional[int], info: Optional[Dict[str, Any]]) -> Iterator[Any]:
    if r.seekable:
        # 1. a first pass over the MetaGraphs' tags (their graphs are skipped by seeking)
        start = r.tell()
        metas: List[Tuple[int, int, Tuple[str, ...]]] = []
        for fn, k, _off, p, q in fields(r, end, "tensorflow.SavedModel", ""):
            if fn == F_META_GRAPHS:
                metas.append((p, q, _tags_of_meta(r, q, "meta_graphs[%d]" % k)))
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
        if r.validate:
            yield from _saved_checked(r, start, end, which, k)
            return
        r.seek(p)
        yield from _meta(r, q, which)
        return
    # A stream cannot go back: the first MetaGraph (or the one asked for), tags read on the way.
    k = -1
    want = 0 if meta_graph is None else meta_graph
    for fn, off, p, q in _fields(r, end):
        if fn != F_META_GRAPHS:
            continue
        k += 1
        if k != want:
            if r.validate:  # (checking: every MetaGraph, as protobuf parses them)
                check_field(r, ("tensorflow.SavedModel", F_META_GRAPHS, k), q, off, "", 0)
            continue
        why = "as asked" if meta_graph is not None else "the first (the input is not seekable: later ones were not checked for a train tag)"
        tags: List[str] = []
        _note(info, WireInfo(SAVEDMODEL, k, (), None, why))
        for fn2, off2, p2, q2 in _fields(r, q):
            if fn2 == F_META_INFO:
                for fn3, off3, p3, q3 in _fields(r, q2):
                    if fn3 == F_TAGS:
                        tags.append(_text(r.take(q3 - p3, off3)))
                if info is not None:
                    info["tags"] = tuple(tags)
            elif fn2 == F_GRAPH_DEF:
                yield from _graph(r, q2, which, Site(0, q2, prefix="meta_graphs[%d].graph_def.node" % k, depth=3))
    if k < want:
        raise _error("this SavedModel has %d MetaGraphs, no MetaGraph %d" % (k + 1, want), r.tell())
    if info is not None:
        info["meta_graphs"] = k + 1



def _saved_checked(r: _Reader, start: int, end: Optional[int], which: Visits, chosen: int) -> Iterator[Any]:
    """A SavedModel walked again from ``start``, every field checked, MetaGraph ``chosen``'s
    graph walked (``check``: protobuf parses every MetaGraph)."""
    r.seek(start)
    for fn, k, off, p, q in fields(r, end, "tensorflow.SavedModel", ""):
        if fn == F_META_GRAPHS and k == chosen:
            yield from _meta(r, q, which, "meta_graphs[%d]" % k, 1)
        else:
            check_field(r, ("tensorflow.SavedModel", fn, k), q, off, "", 0)


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
