"""Reading the blocks of an open input from the last to the first (for bp), in bounded memory.

The input's lane does it (``Lane.backward``): text through ``text._backward`` (the writer layout's
column-0 openers, else an index of block offsets), binary through ``wire._lane`` (an index of node
offsets). Either keeps its index and line count in the user's cache folder (``_cache``), keyed on
this file so that an in-place edit misses, and each block passes ``_strict`` (a node without a
name or an op refused, or skipped): what this module adds.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, FrozenSet, Iterator, Tuple

from . import _cache
from ._strict import checked, op_head
from .._model import Block

if TYPE_CHECKING:
    from ._input import GraphFile


def reverse_blocks(g: "GraphFile", block_path: Tuple[str, ...], heads: FrozenSet[str]) -> Iterator[Block]:
    """The blocks at ``block_path`` from last to first, with lines (text) and heads.

    Text: top-level blocks (``("node",)``) take the backward shortcut when the layout allows;
    nested ones (GE's ``("graph", "op")``, inside one huge ``graph`` block) always take the index
    path. A stream (stdin, a pipe, gzip) is read backward from its spool.
    """
    op = op_head(g.dialect.heads)
    yield from checked(g, g.lane.backward(block_path, heads | {"name", op}, _cache.Handle(_cache.key_of(g))), op)
