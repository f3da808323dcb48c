"""The binary kinds: telling a binary GraphDef, MetaGraphDef or SavedModel from text by its first
bytes (:func:`sniff`), and naming them (:func:`describe`). Reading them is the wire lane's
(:class:`pbtxt_scan.wire._lane.WireLane`)."""
from __future__ import annotations

from typing import Optional, Tuple

from . import _wire_sniff  # (not ``_wire``, nor its reader: telling text from binary loads neither)

SNIFF_BYTES = _wire_sniff.SNIFF_BYTES
SAVEDMODEL = _wire_sniff.SAVEDMODEL

KIND_NAMES = {
    _wire_sniff.GRAPHDEF: "binary GraphDef",
    _wire_sniff.METAGRAPH: "binary MetaGraphDef",
    _wire_sniff.SAVEDMODEL: "binary SavedModel",
}


def sniff(head: bytes) -> Optional[str]:
    """The binary kind of a file starting with ``head``, or ``None`` (text, or not a graph)."""
    return _wire_sniff.sniff(head[:SNIFF_BYTES])


def broken(head: bytes, *, complete: bool) -> Optional[Tuple[str, int, str]]:
    """A binary graph whose first bytes ``head`` break the wire format before :func:`sniff` could
    tell its kind: ``(kind, offset, why)``; ``None`` if the bytes are no such graph."""
    return _wire_sniff.broken(head[:SNIFF_BYTES], complete=complete)


def describe(kind: Optional[str]) -> str:
    """``binary GraphDef``, ``binary MetaGraphDef``, ``binary SavedModel``."""
    return KIND_NAMES.get(kind or "", "binary graph")
