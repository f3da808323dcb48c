"""pbtxt-scan: stream TF graphs (graph.pbtxt, binary .pb/.meta/saved_model.pb) and GE dumps in constant memory.

Public API (everything else is private and may change):

- :func:`iter_nodes` / :func:`iter_blocks`: blocks with byte offsets, lines and head fields
- :func:`parse_block` / :func:`parse_text`: the Lark grammar's parse into plain data
- :func:`check`, :func:`stats`: whole-file validation and statistics
- :class:`GraphFile`: one input opened once (a path, ``-``, a pipe or ``.gz``; text format, or a binary
  GraphDef, MetaGraphDef or SavedModel told by content), read through by every layer
- :class:`PbtxtError`: the one error type (``line``, ``column``, ``path``)
"""
from __future__ import annotations

__version__ = "0.1.0"

from ._api import DIALECTS, GraphFile, Stats, check, detect_dialect, iter_blocks, iter_nodes, parse_block, read_block_bytes, stats
from ._errors import IncompleteInputError, PbtxtError
from .language._grammar import parse_text
from ._model import Block, Field, Head, Message

__all__ = [
    "__version__",
    "DIALECTS",
    "Block",
    "Field",
    "GraphFile",
    "Head",
    "IncompleteInputError",
    "Message",
    "PbtxtError",
    "Stats",
    "check",
    "detect_dialect",
    "iter_blocks",
    "iter_nodes",
    "parse_block",
    "parse_text",
    "read_block_bytes",
    "stats",
]
