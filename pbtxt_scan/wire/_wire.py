"""Streaming reader of binary TensorFlow graphs (protobuf wire format), without protobuf.

Reads a binary ``GraphDef`` (``.pb``), ``MetaGraphDef`` (``.meta``) or ``SavedModel``
(``saved_model.pb``) from a file object in constant memory and hands out the same
:class:`~pbtxt_scan._model.Block` objects as the text scanner.

API (everything is importable from here; the work lives in ``_wire_read`` (reader, errors),
``_wire_sniff`` (:func:`sniff`), ``_wire_walk`` (containers, nodes), ``_wire_index`` (the backward index) and
``_wire_text`` (rendering); the wire lane, ``_lane``, reads a GraphFile's binary graph through them):

- ``sniff(head: bytes) -> Optional[str]``: ``"graphdef"``, ``"metagraph"``, ``"savedmodel"`` or
  ``None`` (text format, or not a graph) from a file's first :data:`SNIFF_BYTES` bytes.
- ``iter_wire_blocks(f, paths=(NODE_PATH,), heads=HEADS, *, kind=None, meta_graph=None,
  chunk_size=DEFAULT_CHUNK, info=None, validate=False) -> Iterator[Block]``: the nodes in file
  order from a binary file object at offset 0, seekable or not (gzip, pipes). ``info`` (a dict)
  receives :class:`WireInfo`'s fields: the kind and, for a SavedModel, which MetaGraph was read and
  why (the one tagged ``train``, else the first; a stream cannot look ahead, so it takes the first
  and says so).
- ``build_index(f, path=NODE_PATH, *, kind=None, meta_graph=None, region=REGION) -> WireIndex`` and
  ``iter_wire_blocks_reversed(f, index, heads=HEADS) -> Iterator[Block]``: the same blocks
  last-first (seekable files: callers spool stdin and ungzip to a temporary file first).
  ``reread_block(f, block, heads) -> Block``: one node again with other heads. As for text, read
  backward with ``heads={"name", "op"}`` and fetch the inputs of the few candidates this way: a
  1 GB graph's ``init`` or ``save/SaveV2`` can hold 300,000 inputs (50 MB of heads).
- ``node_to_text(data, field="node", indent=0, base=0) -> str``: one NodeDef (the bytes
  ``[block.start, block.end)``) as ``text_format`` prints it; it parses with ``parse_text``.
  ``check_node(data, base=0)`` validates one NodeDef down to its attr values.
- ``_wire_whole.fold_wire(f, path, fold, heads)``: whole-file commands (``nodes``, ``stats``,
  ``check``): a :class:`~pbtxt_scan.wire._wire_whole.Fold` gets every node, read only as far as the
  command needs; ``_wire_whole.split_finder`` gives a GraphDef's split points for ``--jobs``.
- ``python -m pbtxt_scan.wire._wire [--backward] [--functions] FILE``: ``offset<TAB>name<TAB>op``.

Field numbers come from the schema tables (:mod:`pbtxt_scan.schema`, generated from TensorFlow
2.21's ``.proto`` files), looked up once at import (``_wire_read``'s ``F_*`` and ``T_*``): ``GraphDef``
node, library; ``NodeDef`` name, op, input, device, attr; ``FunctionDefLibrary`` function;
``FunctionDef`` signature, node_def; ``OpDef`` name; ``MetaGraphDef`` meta_info_def, graph_def, its
``MetaInfoDef`` tags; ``SavedModel`` meta_graphs. ``check`` and ``stats`` read every other field
against the same tables (``_wire_schema``: what protobuf's parser refuses, with the field path).
``_wire_text``'s rendering keeps its own mini-schema of a NodeDef's messages (the same numbers).

Conventions (binary has no lines):

- ``Block.line``, ``Block.column`` and every ``Head.line`` are ``0`` (text lines start at 1, so 0
  always means "binary"): callers print ``offset N`` with ``N = Block.start`` where text prints
  ``line N``.
- ``Block.start``/``Block.end`` delimit the serialized ``NodeDef`` message itself (after its tag and
  length prefix): ``read_block_bytes`` gives bytes that :func:`pbtxt_scan.wire._wire_text.node_to_text`
  renders. ``Block.path`` is ``("node",)`` or ``("library", "function", "node_def")`` (relative
  to the GraphDef, also inside a MetaGraphDef or SavedModel); ``parents`` is ``()`` for graph nodes
  and ``(None, function_name)`` for function nodes, as from text.
- Errors are :class:`PbtxtError` with ``offset`` (the byte where the bad field starts) and no line.

Memory: one read buffer (``chunk_size``, 1 MiB by default, plus one node when a node is larger
than that; nodes over ``_INLINE_MAX`` are read field by field) and the heads of one node. Every
field not needed (``attr`` tensors of any size, ``versions``, collections, signatures) is skipped by
its length: ``seek`` on seekable files, read-and-discard in ``chunk_size`` pieces otherwise (gzip,
pipes). Backward reading uses a sparse index (:class:`WireIndex`) built by one forward pass over the
length prefixes: one checkpoint (3 integers) per ``REGION`` (256 KiB) of nodes, i.e. about 100 KB
per GB of graph (``array('q')``s: a 100 GB graph would still need only 10 MB); each region is then
decoded forward and its blocks yielded last-first, so memory for a backward pass is the index plus
one region's blocks (256 KiB of nodes, or one bigger node's heads). Measured on a 1.1 GB binary
GraphDef of 6.1 million nodes: about 31 MB peak RSS forward and backward.
"""
from __future__ import annotations

from typing import Any, BinaryIO, Dict, Optional, Sequence, cast

from .._errors import PbtxtError
from ._wire_read import DEFAULT_CHUNK, FUNCTION_PATH, GRAPHDEF, HEADS, KINDS, METAGRAPH, NODE_PATH, SAVEDMODEL, WireInfo
from ._wire_sniff import SNIFF_BYTES
from ._wire_sniff import sniff
from ._wire_text import check_node, node_to_text
from ._wire_index import WireIndex, build_index, iter_wire_blocks_reversed
from ._wire_node import reread_block
from ._wire_walk import iter_wire_blocks

__all__ = [
    "DEFAULT_CHUNK", "FUNCTION_PATH", "GRAPHDEF", "HEADS", "KINDS", "METAGRAPH", "NODE_PATH", "SAVEDMODEL",
    "SNIFF_BYTES", "WireIndex", "WireInfo", "build_index", "check_node", "iter_wire_blocks",
    "iter_wire_blocks_reversed", "node_to_text", "reread_block", "sniff",
]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m pbtxt_scan.wire._wire [--backward] [--functions] FILE``: ``offset<TAB>name<TAB>op``
    per node, and which MetaGraph was read on stderr: a debugging and benchmarking tool."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m pbtxt_scan.wire._wire", description=main.__doc__)
    p.add_argument("file")
    p.add_argument("--backward", action="store_true", help="last node first (index pass, then regions)")
    p.add_argument("--functions", action="store_true", help="library function nodes instead of graph nodes")
    a = p.parse_args(argv)
    path = FUNCTION_PATH if a.functions else NODE_PATH
    name_op = frozenset({"name", "op"})
    out = sys.stdout
    try:
        with open(a.file, "rb") as raw:
            f: BinaryIO = raw
            if raw.peek(2)[:2] == b"\x1f\x8b":
                import gzip

                f = cast(BinaryIO, gzip.GzipFile(fileobj=raw))  # (reads as a BinaryIO; typing's is a class, not GzipFile's base)
            info: Dict[str, Any] = {}
            if a.backward:
                ix = build_index(f, path)
                info = ix.info._asdict()
                blocks = iter_wire_blocks_reversed(f, ix, name_op)
            else:
                blocks = iter_wire_blocks(f, [path], name_op, info=info)
            for b in blocks:
                out.write("%d\t%s\t%s\n" % (b.start, b.name, b.op))
    except PbtxtError as e:
        e.with_path(a.file)
        sys.stderr.write("%s:offset %s: %s\n" % (a.file, e.offset, e.msg))
        return 2
    except BrokenPipeError:
        return 0
    sys.stderr.write("%s\n" % ", ".join("%s=%s" % kv for kv in info.items() if kv[1] not in (None, (), "")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
