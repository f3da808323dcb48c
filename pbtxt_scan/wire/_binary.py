"""Binary graphs (``.pb``, ``.meta``, ``saved_model.pb``) behind the same :class:`GraphFile` methods.

``GraphFile.open`` tells a binary GraphDef, MetaGraphDef or SavedModel from text by its content
(:func:`pbtxt_scan.wire._wire.sniff`); from then on every layer reads it through the methods it already
uses for text, and each of them hands over to a function here:

=====================  =====================================================================
``g.blocks``           :func:`blocks`: ``_wire.iter_wire_blocks``, forward, in constant memory
``reverse_blocks``     :func:`reverse_blocks`: ``_wire.build_index`` (one pass over the length
                       prefixes; cached like the text index), then ``_wire.iter_wire_blocks_reversed``
``g.read``             :func:`node_text`: the NodeDef as text format (``_wire_text.node_to_text``)
``g.parse``            the grammar's parse of that text (so ``show --json``, the placeholder rule
                       and everything that reads attrs work unchanged)
``g.rescan``           :func:`rescan`: the NodeDef's heads read again
=====================  =====================================================================

The rules, the GE mapping and the CLI see the same :class:`Block` objects as from text. Binary
has no lines: a block's ``line`` is ``0`` and its position is its byte ``offset`` (``Block.start``,
the first byte of the serialized NodeDef, counted in the decompressed file); answers print
``offset N`` where text prints ``line N``, and JSON has ``"line": null`` beside ``"offset"``.
"""
from __future__ import annotations

import json
from array import array
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from . import _wire
from .._errors import PbtxtError
from .._model import Block

# The GraphFile (``_input``) calls down into this module, never the other way: ``g`` is typed
# loosely here to keep the import graph one-way (tests/test_imports.py).
GraphFile = Any

SNIFF_BYTES = _wire.SNIFF_BYTES
SAVEDMODEL = _wire.SAVEDMODEL

KIND_NAMES = {
    _wire.GRAPHDEF: "binary GraphDef",
    _wire.METAGRAPH: "binary MetaGraphDef",
    _wire.SAVEDMODEL: "binary SavedModel",
}


def sniff(head: bytes) -> Optional[str]:
    """The binary kind of a file starting with ``head``, or ``None`` (text, or not a graph)."""
    return _wire.sniff(head[:SNIFF_BYTES])


def blocks(
    g: GraphFile,
    block_path: Sequence[str],
    heads: FrozenSet[str],
    chunk_size: int,
    on_progress: Optional[Callable[[int], None]],
    end_state: Optional[Dict[str, Any]],
    validate: bool = False,
) -> Iterator[Block]:
    """Every NodeDef at ``block_path`` in file order (``g.blocks`` on a binary graph); ``validate``:
    every node down to its last attr value too (``check``, ``stats``)."""
    _paths(g, block_path)
    src = g.reader()
    it = _wire.iter_wire_blocks(
        src, [tuple(block_path)], heads, kind=g.binary, chunk_size=chunk_size, info=g.wire, validate=validate
    )
    try:
        for b in it:
            _note(g)
            yield b
            if on_progress is not None:
                on_progress(b.end)
    except PbtxtError as e:
        raise (g.changed() or e.with_path(g.name)) from None
    _note(g)
    err = g.changed()
    if err is not None:
        raise err
    if end_state is not None:
        end_state["bytes"] = g.bytes_read()
        end_state["lines"] = None


def reverse_blocks(
    g: GraphFile,
    block_path: Sequence[str],
    heads: FrozenSet[str],
    cached: Callable[[], Optional[bytes]] = lambda: None,
    cache: Callable[[bytes], None] = lambda data: None,
) -> Iterator[Block]:
    """The NodeDefs at ``block_path`` last-first: an index of node offsets built in one forward
    pass over the length prefixes (about 100 KB per GB), then regions decoded forward.
    ``cached``/``cache`` read and write the index's bytes (``_reverse`` keeps them in the user's
    cache, as it keeps the text index)."""
    _paths(g, block_path)
    g.whole()  # a stream is spooled to its end: backward reading needs every offset
    try:
        index = _load_index(cached(), tuple(block_path))
        if index is None:
            index = _wire.build_index(g.reader(), tuple(block_path), kind=g.binary)
            cache(_dump_index(index))
        g.wire.update(index.info._asdict())
        _note(g)
        for b in _wire.iter_wire_blocks_reversed(g.reader(), index, heads):
            yield b
    except PbtxtError as e:
        raise (g.changed() or e.with_path(g.name)) from None


def _dump_index(ix: "_wire.WireIndex") -> bytes:
    head = {"path": list(ix.path), "fnames": list(ix.fnames), "nodes": ix.nodes, "size": ix.size,
            "info": list(ix.info), "n": len(ix.offs)}
    return json.dumps(head).encode() + b"\n" + ix.offs.tobytes() + ix.ends.tobytes() + ix.fids.tobytes()


def _load_index(data: Optional[bytes], path: Tuple[str, ...]) -> "Optional[_wire.WireIndex]":
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
        return _wire.WireIndex(path, arrays[0], arrays[1], arrays[2], tuple(head["fnames"]), int(head["nodes"]),
                               head["size"], _wire.WireInfo(*info))
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def node_bytes(g: GraphFile, block: Block) -> bytes:
    """The serialized NodeDef of ``block``."""
    data = g.read_at(block.start, block.end - block.start)
    if len(data) != block.end - block.start:
        raise PbtxtError("the file ends inside this node", path=g.name, offset=block.start)
    return data


def node_text(g: GraphFile, block: Block) -> str:
    """The NodeDef as text format, as ``tf.io.write_graph`` would print it (``g.read``)."""
    from ._wire_text import node_to_text

    try:
        return node_to_text(node_bytes(g, block), field=block.path[-1], base=block.start)
    except PbtxtError as e:
        raise e.with_path(g.name) from None


def rescan(g: GraphFile, block: Block, heads: FrozenSet[str]) -> List[Block]:
    """``block`` with the heads ``heads`` (read again from its bytes: ``_wire.reread_block``);
    ``[]`` on failure, as for text."""
    try:
        return [_wire.reread_block(g.reader(), block, heads)]
    except PbtxtError:
        return []


def describe(kind: Optional[str]) -> str:
    """``binary GraphDef``, ``binary MetaGraphDef``, ``binary SavedModel``."""
    return KIND_NAMES.get(kind or "", "binary graph")


def _note(g: GraphFile) -> None:
    """Say once, through ``g.on_note``, which MetaGraph of a SavedModel is read, and why."""
    info = g.wire
    if g.noted or info.get("kind") != SAVEDMODEL or info.get("meta_graph") is None:
        return
    g.noted = True
    if g.on_note is None:
        return
    n = info.get("meta_graphs")
    tags = ", ".join(info.get("tags") or ()) or "none"
    g.on_note(
        "%s: SavedModel: reading MetaGraph %d%s (tags: %s): %s"
        % (g.name, info["meta_graph"], " of %d" % n if n else "", tags, info.get("why") or "")
    )


def _paths(g: GraphFile, block_path: Sequence[str]) -> None:
    if tuple(block_path) not in (_wire.NODE_PATH, _wire.FUNCTION_PATH):
        raise PbtxtError(
            "a %s has nodes at node and library.function.node_def, not %s (--format graphdef or function)"
            % (describe(g.binary), ".".join(block_path)),
            path=g.name,
        )
