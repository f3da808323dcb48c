"""The Python API, gathered from the modules that do the work (this module only re-exports).

The pipeline: bytes (``_source``) -> one input object per command (``_input.GraphFile``) ->
blocks with lines and heads (``_canonical`` fast path, else ``_scan``; backward: ``_reverse``) ->
parsed messages on demand (``_grammar``, Lark) -> rules (``_rules``) and GE (``ge``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Dict

if TYPE_CHECKING:
    from .graph._dialect import DIALECTS, NAME_AND_OP, Dialect, dialect_of_head
    from .graph._filter import NodeFilter
    from .graph._input import GraphFile, opened
    from .graph._logdir import Event, iter_events
    from .graph._named import Lookup, iter_named, look_up
    from .graph._paths import Found, detect_dialect, find_node, iter_blocks, iter_nodes, iter_rows, parse_block, read_block_bytes, row_tsv
    from .graph._stats import Stats, check, stats

# Each name's home, imported when the name is first asked for (``pbtxt_scan.__getattr__``).
HOMES: Dict[str, str] = dict(
    [(n, ".graph._dialect") for n in ("DIALECTS", "NAME_AND_OP", "Dialect", "dialect_of_head")]
    + [("NodeFilter", ".graph._filter")]
    + [(n, ".graph._input") for n in ("GraphFile", "opened")]
    + [(n, ".graph._logdir") for n in ("Event", "iter_events")]
    + [(n, ".graph._named") for n in ("Lookup", "iter_named", "look_up")]
    + [(n, ".graph._paths") for n in (
        "Found", "detect_dialect", "find_node", "iter_blocks", "iter_nodes", "iter_rows", "parse_block",
        "read_block_bytes", "row_tsv")]
    + [(n, ".graph._stats") for n in ("Stats", "check", "stats")]
    + [(n, "._model") for n in ("Block", "Field", "Head", "Hood", "HoodEdge", "HoodNode", "Message")]
    + [("parse_text", ".language._grammar")]
)

__all__ = [
    "DIALECTS",
    "NAME_AND_OP",
    "Dialect",
    "Event",
    "Found",
    "GraphFile",
    "NodeFilter",
    "Lookup",
    "Stats",
    "check",
    "detect_dialect",
    "find_node",
    "dialect_of_head",
    "iter_blocks",
    "iter_events",
    "iter_named",
    "iter_nodes",
    "iter_rows",
    "row_tsv",
    "look_up",
    "opened",
    "parse_block",
    "read_block_bytes",
    "stats",
]
