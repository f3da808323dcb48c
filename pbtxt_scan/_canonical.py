"""Block scanning entry point: the canonical-layout fast path, falling back to the general scanner."""
from __future__ import annotations

from typing import BinaryIO, Dict, FrozenSet, Iterator, Optional, Tuple

from ._lexer import Lexer
from ._model import Block
from ._scan import scan


def scan_canonical(
    f: BinaryIO,
    path: Tuple[str, ...],
    heads: FrozenSet[str],
    chunk_size: int,
    name: str,
    end_state: Optional[Dict[str, int]] = None,
) -> Iterator[Block]:
    lx = Lexer(f, chunk_size, path=name)
    yield from scan(f, path, heads, lexer=lx)
    if end_state is not None:
        end = lx.base + len(lx.buf)
        end_state["bytes"] = end
        line, col = lx.linecol(end)
        end_state["lines"] = line - 1 if col == 1 else line
