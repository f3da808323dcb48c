"""The binary kinds: telling a binary GraphDef, MetaGraphDef or SavedModel from text by its first
bytes (:func:`sniff`), and naming them (:func:`describe`). Reading them is the wire lane's
(:class:`pbtxt_scan.wire._lane.WireLane`)."""
from __future__ import annotations

from typing import Optional

from . import _wire

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


def describe(kind: Optional[str]) -> str:
    """``binary GraphDef``, ``binary MetaGraphDef``, ``binary SavedModel``."""
    return KIND_NAMES.get(kind or "", "binary graph")
