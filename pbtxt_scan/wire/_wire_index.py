"""Reading a binary graph backward: a sparse index of node offsets built in one forward pass over
the length prefixes, then regions decoded forward and handed out last-first; and the index's bytes
for the user's cache. The API and the conventions are described in :mod:`pbtxt_scan.wire._wire`."""
from __future__ import annotations

import json
from array import array
from typing import Any, BinaryIO, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from .._model import Block
from ._wire_read import DEFAULT_CHUNK, HEADS, NODE_PATH, WireInfo, _check_end, _Reader, _seekable, _skip_value, _tag
from ._wire_node import Site, _block, _want
from ._wire_walk import Visits, _kind_of, _sites, _which

REGION = 256 << 10  # bytes of nodes per backward-index checkpoint


class WireIndex(NamedTuple):
    """Checkpoints of one forward pass over the length prefixes, for reading nodes backward.

    ``offs[k]`` is the tag offset of a node field, ``ends[k]`` the end of its enclosing message
    (GraphDef or FunctionDef), ``fids[k]`` its function (index in ``fnames``, -1 for graph nodes).
    A checkpoint starts every :data:`REGION` bytes (or as asked) and at each new enclosing message.
    """

    path: Tuple[str, ...]
    offs: "array[int]"
    ends: "array[int]"
    fids: "array[int]"
    fnames: Tuple[Optional[str], ...]
    nodes: int
    size: Optional[int]
    info: WireInfo


def build_index(
    f: BinaryIO,
    path: Sequence[str] = NODE_PATH,
    *,
    kind: Optional[str] = None,
    meta_graph: Optional[int] = None,
    chunk_size: int = DEFAULT_CHUNK,
    region: int = REGION,
) -> WireIndex:
    """One forward pass over ``f`` (seekable) reading only length prefixes; a checkpoint every
    ``region`` bytes of nodes."""
    r = _Reader(f, chunk_size)
    k = _kind_of(r, kind)
    nodes, functions = _which([path])
    info: Dict[str, Any] = {}
    offs, ends, fids = array("q"), array("q"), array("q")
    fnames: List[Optional[str]] = []
    state = [-region, -2, 0]  # last checkpoint offset, its enclosing end (-2: none yet; -1 is a GraphDef's to the file's end), nodes

    def visit(r: _Reader, site: Site, off: int, p: int, q: int) -> None:
        state[2] += 1
        parent_end = site.parent_end
        if off - state[0] >= region or parent_end != state[1]:
            in_function = site.which == 1
            if in_function and parent_end != state[1]:
                fnames.append(site.fname)
            offs.append(off)
            ends.append(parent_end)
            fids.append(len(fnames) - 1 if in_function else -1)
            state[0], state[1] = off, parent_end

    for _ in _sites(r, k, Visits(nodes, functions, visit), meta_graph, info):
        pass
    return WireIndex(tuple(path), offs, ends, fids, tuple(fnames), state[2], r.size, WireInfo(**info))


def iter_wire_blocks_reversed(
    f: BinaryIO,
    index: WireIndex,
    heads: FrozenSet[str] = HEADS,
    chunk_size: int = 1 << 16,
) -> Iterator[Block]:
    """The blocks of ``index.path`` last-first: the same blocks :func:`iter_wire_blocks` gives."""
    if not _seekable(f):
        raise PbtxtError("reading backward needs a seekable file (copy the stream to a file first)")
    r = _Reader(f, chunk_size)
    r.want = _want(heads)
    which = 0 if tuple(index.path) == NODE_PATH else 1
    field = 1 if which == 0 else 3
    offs, ends, fids = index.offs, index.ends, index.fids
    for k in range(len(offs) - 1, -1, -1):
        stop = ends[k] if ends[k] >= 0 else (index.size if index.size is not None else 1 << 62)
        if k + 1 < len(offs) and offs[k + 1] < stop:
            stop = offs[k + 1]
        site = Site(which, ends[k], index.fnames[fids[k]] if fids[k] >= 0 else None)
        region: List[Block] = []
        r.seek(offs[k])
        while r.tell() < stop:
            fn, wt, off = _tag(r)
            if fn == field and wt == 2:
                n = r.varint()
                p = r.tell()
                _check_end(p + n, ends[k] if ends[k] >= 0 else None, off, r)
                region.append(_block(r, site, off, p, p + n))
                r.seek(p + n)
            else:
                _skip_value(r, fn, wt, off, stop)
        for b in reversed(region):
            yield b


def dump_index(ix: WireIndex) -> bytes:
    """The index as bytes, for the cache (:func:`load_index` reads them back)."""
    head = {"path": list(ix.path), "fnames": list(ix.fnames), "nodes": ix.nodes, "size": ix.size,
            "info": list(ix.info), "n": len(ix.offs)}
    return json.dumps(head).encode() + b"\n" + ix.offs.tobytes() + ix.ends.tobytes() + ix.fids.tobytes()


def load_index(data: Optional[bytes], path: Tuple[str, ...]) -> Optional[WireIndex]:
    """A cached index (``None`` when missing or not this one's: it is built again)."""
    if not data:
        return None
    try:
        nl = data.index(b"\n")
        head = json.loads(data[:nl].decode())
        n = int(head["n"])
        arrays = []
        for k in range(3):
            a = array("q")
            a.frombytes(data[nl + 1 + 8 * n * k : nl + 1 + 8 * n * (k + 1)])
            if len(a) != n:
                return None
            arrays.append(a)
        info = head["info"]
        info[2] = tuple(info[2])
        if tuple(head["path"]) != path:
            return None
        return WireIndex(path, arrays[0], arrays[1], arrays[2], tuple(head["fnames"]), int(head["nodes"]),
                         head["size"], WireInfo(*info))
    except (ValueError, KeyError, TypeError, IndexError):
        return None
