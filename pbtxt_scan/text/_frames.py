"""The scanner's frame stack: open messages, and the rules that turn them into Blocks.

Both readers of the text keep one ``Frame`` per open message: the general scanner (``_scan``,
token by token) and the layout fast path (``_canonical``, line by line). The fast path hands over
to the general scanner by giving it its stack, so the rules that fill a frame (its label, its
heads) and close it (the Block with its lines and parents) are written here once.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from .._model import Block, Head

# What an open message is to the requested path: on the way to it, one of its blocks, or neither.
ANCESTOR, TARGET, OTHER = 0, 1, 2


class BlockStart:
    """Where a block at the path opened, and the heads read in it so far."""

    __slots__ = ("start", "line", "column", "heads")

    def __init__(self, start: int, line: int, column: int, heads: List[Head]) -> None:
        self.start = start
        self.line = line
        self.column = column
        self.heads = heads


class Frame:
    """An open message: its field name, how it closes, and the block it is (if at the path)."""

    __slots__ = ("name", "kind", "block", "closer", "in_list", "label", "sig")

    def __init__(self, name: str, kind: int, block: Optional[BlockStart], closer: str = "}", in_list: bool = False) -> None:
        self.name = name
        self.kind = kind
        self.block = block  # while this frame is a block at the path
        self.closer = closer
        self.in_list = in_list  # an item of a "[...]" list: its field name comes back at the close
        self.label: Optional[str] = None  # its first `name` scalar (or its signature's), for parents
        self.sig = name == "signature"


def take_label(stack: List[Frame], value: str) -> None:
    """A ``name`` scalar inside ``stack[-1]``: a message's first ``name`` labels it; a signature's
    name also labels the message holding the signature (a ``library.function``)."""
    top = stack[-1]
    if top.label is None:
        top.label = value
    if top.sig and len(stack) >= 2 and stack[-2].label is None:
        stack[-2].label = value


def parents(stack: Sequence[Frame]) -> Tuple[Optional[str], ...]:
    return tuple([f.label for f in stack])


def close_block(path: Tuple[str, ...], b: BlockStart, end: int, stack: Sequence[Frame]) -> Block:
    """The Block for ``b`` (a closing frame's, at the path), closed at ``end``, under the open ``stack``."""
    return Block(path, b.start, end, b.line, b.column, tuple(b.heads), parents(stack))
