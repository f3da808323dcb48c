"""Protocol buffers wire format (binary ``.pb``, ``.meta``, ``saved_model.pb``), streamed without
protobuf: the reader (``_wire_read``), a graph's kind by its first bytes (``_wire_sniff``), the
walk to the nodes (``_wire_walk``) and its sparse backward index (``_wire_index``), where a byte
offset lies by the length prefixes (``_wire_seek``), a NodeDef printed as text format
(``_wire_text``), the wire lane (``_lane``), whole-file folds and split points (``_wire_whole``,
with ``_wire_check``: a node's validity without rendering it) and telling the kinds apart
(``_binary``).

``binary`` (the kinds), ``events``, ``events_split`` (where an event file's graphs are), ``events_pick``
(which one is read) and ``events_list`` (its records, listed) are modules handed on whole.
"""
from __future__ import annotations

from typing import Any


# The face (PEP 562: each name loads its module on first use, so importing the package costs nothing):
# what other layers use, and the module that holds it. Nothing outside this package imports one of
# its private modules (``tests/test_imports.py``).
_FACE = {
    "Fold": ("._wire_whole", "Fold"),
    "GRAPHDEF": ("._wire_read", "GRAPHDEF"),
    "HEADER": ("._tfrecord", "HEADER"),
    "Malformed": ("._wire_seek", "Malformed"),
    "NAME": ("._wire_seek", "NAME"),
    "NODE": ("._wire_seek", "NODE"),
    "NODE_PATH": ("._wire_read", "NODE_PATH"),
    "Record": ("._tfrecord", "Record"),
    "SPLIT_MIN": ("._wire_marks", "SPLIT_MIN"),
    "TopWalk": ("._wire_seek", "TopWalk"),
    "WireLane": ("._lane", "WireLane"),
    "binary": ("._binary", None),
    "check_data": ("._tfrecord", "check_data"),
    "check_every": ("._tfrecord", "check_every"),
    "check_graph_record": ("._tfrecord", "check_graph_record"),
    "describe": ("._binary", "describe"),
    "events": ("._events", None),
    "events_list": ("._events_list", None),
    "events_pick": ("._events_pick", None),
    "events_split": ("._events_split", None),
    "far_marks": ("._wire_marks", "far_marks"),
    "fold_wire": ("._wire_whole", "fold_wire"),
    "load_index": ("._wire_index", "load_index"),
    "node_field": ("._wire_seek", "node_field"),
    "op_pattern": ("._ahead", "op_pattern"),
    "name_pattern": ("._ahead", "name_pattern"),
    "verified_ops": ("._ahead", "_verified"),
    "split_finder": ("._wire_whole", "split_finder"),
}


def __getattr__(name: str) -> Any:
    where = _FACE.get(name)
    if where is None:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    import importlib

    mod = importlib.import_module(where[0], __name__)
    return mod if where[1] is None else getattr(mod, where[1])


def __dir__() -> Any:
    return sorted(set(globals()) | set(_FACE))


__all__ = sorted(_FACE)
