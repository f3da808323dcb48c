"""Kinds of graph file: where their operator blocks are, and how to tell them apart by content."""
from __future__ import annotations

import re
from typing import Dict, FrozenSet, Optional, Tuple, Union

from .._kit import NamedTuple
from .._model import FUNCTION_NODES, METAGRAPH_PREFIX, SAVEDMODEL_PREFIX, TF_HEADS
from ..source._source import BOM

# Enough to name a node and its op: what listings need. A NoOp such as `init` can carry 100,000+
# control inputs; leaving `input` out keeps those commands' memory flat.
NAME_AND_OP = frozenset({"name", "op", "type", "op_type"})


class Dialect(NamedTuple):
    """Where the operator blocks of a kind of file are, and which of their fields are heads."""

    name: str
    path: Tuple[str, ...]
    heads: FrozenSet[str]
    what: str


DIALECTS: Dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("graphdef", ("node",), TF_HEADS, "TensorFlow GraphDef: top-level node blocks"),
        Dialect(
            "function",
            FUNCTION_NODES,
            TF_HEADS,
            "TensorFlow GraphDef: the node_def blocks of library functions (tf.function bodies)",
        ),
        Dialect(
            "ge_proto",
            ("graph", "op"),
            frozenset({"name", "type", "input", "id", "stream_id", "subgraph_name"}),
            "GE ge_proto dump: op blocks of every graph block",
        ),
        Dialect(
            "ge_onnx",
            ("graph", "node"),
            frozenset({"name", "op_type", "input", "output"}),
            "GE ge_onnx dump: node blocks of the graph",
        ),
    )
}

HEAD_BYTES = 1 << 16  # what detection looks at: the first fields of any of these files fit
_FIRST_FIELD = re.compile(rb"\A(?:\s|#[^\n]*)*([A-Za-z_][A-Za-z0-9_]*)")
_ONNX_FIRST = (b"ir_version", b"producer_name", b"producer_version", b"opset_import", b"model_version")


def dialect_of_head(head: bytes) -> Dialect:
    """Tell a TF GraphDef from a GE ge_proto or ge_onnx dump by its first fields."""
    m = _FIRST_FIELD.match(head[len(BOM):] if head.startswith(BOM) else head)
    first = m.group(1) if m else b""
    if first in _ONNX_FIRST:
        return DIALECTS["ge_onnx"]
    if first == b"graph":
        if re.search(rb"\n\s*op\s*[{<]", head):
            return DIALECTS["ge_proto"]
        if re.search(rb"\bop_type\s*:", head) or re.search(rb"\n\s*node\s*[{<]", head):
            return DIALECTS["ge_onnx"]
        return DIALECTS["ge_proto"]
    return DIALECTS["graphdef"]


_SAVEDMODEL_FIRST = (b"saved_model_schema_version", b"meta_graphs")
_METAGRAPH_FIRST = (b"meta_info_def", b"graph_def", b"saver_def", b"collection_def", b"signature_def", b"asset_file_def", b"object_graph_def")


def container_of_head(head: bytes) -> Optional[Tuple[str, ...]]:
    """Where a text SavedModel's or MetaGraphDef's graph is (its first field tells), ``None`` for
    a GraphDef or a GE dump (whose blocks are at the top level)."""
    m = _FIRST_FIELD.match(head[len(BOM):] if head.startswith(BOM) else head)
    first = m.group(1) if m else b""
    if first in _SAVEDMODEL_FIRST:
        return SAVEDMODEL_PREFIX
    if first in _METAGRAPH_FIRST:
        return METAGRAPH_PREFIX
    return None


def named(dialect: Union[str, Dialect]) -> Dialect:
    """A dialect given by name (``--format``) or as itself."""
    if isinstance(dialect, Dialect):
        return dialect
    try:
        return DIALECTS[dialect]
    except KeyError:
        raise ValueError("unknown format %r (choose from %s)" % (dialect, ", ".join(DIALECTS))) from None


def operator_layout(d: Dialect) -> Tuple[Tuple[str, ...], FrozenSet[str]]:
    """Where fp/bp look: a TF file's top-level ``node`` blocks (its functions are searched apart),
    or a GE dump's ``graph.op`` / ``graph.node`` blocks."""
    return (("node",), TF_HEADS) if d.name in ("graphdef", "function") else (d.path, d.heads)
