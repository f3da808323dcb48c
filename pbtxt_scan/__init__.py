"""pbtxt-scan: stream TF graphs (graph.pbtxt, binary .pb/.meta/saved_model.pb) and GE dumps in constant memory.

Public API (everything else is private and may change):

- :func:`iter_nodes` / :func:`iter_blocks`: blocks with byte offsets, lines and head fields
- :func:`parse_block` / :func:`parse_text`: the Lark grammar's parse into plain data
- :func:`iter_rows`: a text row per operator block, formatted on several cores where the file allows
  (:func:`row_tsv`: the listing's usual row, made straight from a binary node's bytes;
  :class:`NodeFilter`: only the blocks of these ops and names, tested in the scan)
- :func:`check`, :func:`stats`: whole-file validation and statistics
- :func:`iter_events`: a TensorBoard event file's records (or those of every event file under a
  logdir, with its run), each an :class:`Event`
- :func:`points`, :func:`find_fp`, :func:`find_bp` with :class:`Options`: the profiler's fp_point and
  bp_point, each as an :class:`Answer` (a :class:`Point`, or why none; :func:`explain` gives its
  trail as lines), both at once as :class:`Points`. They take a path, the bytes of a serialized
  GraphDef or MetaGraphDef, or a binary file object (a training script has the graph, not a file);
  :data:`RULES` names the rules, :func:`profiling_options` builds Ascend's PROFILING_OPTIONS
  (:data:`AIC_METRICS`, :data:`TASK_TRACE`: the values it takes)
- :func:`neighbourhood`: a node's producers and consumers a few hops away, as a :class:`Hood` of
  :class:`HoodNode` and :class:`HoodEdge` (what ``show --context`` prints); :func:`neighbourhoods`:
  several at once, around names or answers' points, sharing their byte search (the report's)
- :func:`look_up`: nodes by name in one byte search, with the names close to a missing one (a
  :class:`Lookup`); :func:`iter_named`: every node whose name a filter keeps (a glob, a regex)
- :class:`GraphFile`: one input opened once (a path, ``-``, a pipe or ``.gz``; text format, or a binary
  GraphDef, MetaGraphDef or SavedModel told by content), read through by every layer
- :class:`PbtxtError`: the one error type (``line``, ``column``, ``path``); :class:`SchemaErrors`, one of
  them holding every schema error of a file (``check(..., every=True)``)
"""
from __future__ import annotations

__version__ = "0.2.0.dev0"

from typing import TYPE_CHECKING, Any

from ._errors import IncompleteInputError, PbtxtError, SchemaErrors

if TYPE_CHECKING:  # (what these names are; at run time each loads on first use, as the rules' do)
    from ._api import (
        DIALECTS,
        NAME_AND_OP,
        Event,
        Found,
        GraphFile,
        Lookup,
        NodeFilter,
        Stats,
        check,
        detect_dialect,
        find_node,
        iter_blocks,
        iter_events,
        iter_named,
        iter_nodes,
        iter_rows,
        look_up,
        row_tsv,
        parse_block,
        read_block_bytes,
        stats,
    )
    from ._model import Block, Field, Head, Hood, HoodEdge, HoodNode, Message
    from .language._grammar import parse_text

# Every name loads on first use (PEP 562), from the module that defines it (``_api.HOMES``): a
# command imports what it uses and no more (`pbtxt-scan fp` neither the whole-file folds nor bp's
# modules: tests/test_startup.py), and the rules (``_api_points``) load with the first of theirs.
_RULES_API = (
    "AIC_METRICS", "Answer", "Options", "Point", "Points", "RULES", "TASK_TRACE", "explain", "find_bp", "find_fp",
    "neighbourhood", "neighbourhoods", "points", "profiling_options",
)


def __getattr__(name: str) -> Any:
    import importlib

    from ._api import HOMES

    home = "._api_points" if name in _RULES_API else HOMES.get(name)
    if home is None:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    return getattr(importlib.import_module(home, __name__), name)


def __dir__() -> Any:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "__version__",
    "AIC_METRICS",
    "DIALECTS",
    "NAME_AND_OP",
    "RULES",
    "Answer",
    "Block",
    "Event",
    "Field",
    "Found",
    "GraphFile",
    "Head",
    "Lookup",
    "Hood",
    "HoodEdge",
    "HoodNode",
    "IncompleteInputError",
    "Message",
    "NodeFilter",
    "Options",
    "PbtxtError",
    "SchemaErrors",
    "Point",
    "Points",
    "Stats",
    "TASK_TRACE",
    "check",
    "detect_dialect",
    "explain",
    "find_bp",
    "find_fp",
    "find_node",
    "iter_blocks",
    "iter_events",
    "iter_named",
    "look_up",
    "neighbourhood",
    "neighbourhoods",
    "iter_nodes",
    "iter_rows",
    "row_tsv",
    "parse_block",
    "parse_text",
    "points",
    "profiling_options",
    "read_block_bytes",
    "stats",
]
