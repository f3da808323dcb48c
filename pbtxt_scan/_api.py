"""The Python API, gathered from the modules that do the work (this module only re-exports).

The pipeline: bytes (``_source``) -> one input object per command (``_input.GraphFile``) ->
blocks with lines and heads (``_canonical`` fast path, else ``_scan``; backward: ``_reverse``) ->
parsed messages on demand (``_grammar``, Lark) -> rules (``_rules``) and GE (``ge``).
"""
from __future__ import annotations

from .graph._dialect import DIALECTS, NAME_AND_OP, Dialect, dialect_of_head
from .graph._input import GraphFile, opened
from .graph._logdir import Event, iter_events
from .graph._paths import Found, detect_dialect, find_node, iter_blocks, iter_nodes, iter_rows, parse_block, read_block_bytes, row_tsv
from .graph._stats import Stats, check, stats

__all__ = [
    "DIALECTS",
    "NAME_AND_OP",
    "Dialect",
    "Event",
    "Found",
    "GraphFile",
    "Stats",
    "check",
    "detect_dialect",
    "find_node",
    "dialect_of_head",
    "iter_blocks",
    "iter_events",
    "iter_nodes",
    "iter_rows",
    "row_tsv",
    "opened",
    "parse_block",
    "read_block_bytes",
    "stats",
]
