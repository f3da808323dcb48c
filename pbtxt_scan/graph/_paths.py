"""The path-level API: each call opens its file once (or reads through a GraphFile given to it)."""
from __future__ import annotations

from typing import Callable, FrozenSet, Iterator, Optional, Sequence, Union

from ._dialect import NAME_AND_OP, TF_HEADS, Dialect, named
from .._errors import PbtxtError
from ._input import GraphFile, Source, opened
from .._model import Block, Message
from ..source._source import DEFAULT_CHUNK, display_name

def iter_blocks(
    path: Source,
    block_path: Sequence[str],
    heads: FrozenSet[str] = TF_HEADS,
    chunk_size: int = DEFAULT_CHUNK,
    on_progress: Optional[Callable[[int], None]] = None,
) -> Iterator[Block]:
    """Every message at ``block_path`` (e.g. ``("graph", "op")``) in file order, in constant memory.

    The whole stream is validated as it is read; a syntax error met on the way raises
    :class:`PbtxtError` with the file, line and column.
    """
    with opened(path, spool=False) as g:
        yield from g.blocks(block_path, heads, chunk_size, on_progress)


def iter_nodes(
    path: Source,
    dialect: Union[None, str, Dialect] = None,
    chunk_size: int = DEFAULT_CHUNK,
    on_progress: Optional[Callable[[int], None]] = None,
    heads: Optional[FrozenSet[str]] = None,
) -> Iterator[Block]:
    """The operator blocks of a graph file: TF ``node``, GE ``graph.op`` or ONNX ``graph.node``.

    ``dialect`` is detected from the file's first fields unless given (see :data:`DIALECTS`);
    ``heads`` narrows the head fields read (default: the dialect's, inputs included).
    """
    with opened(path, spool=False) as g:
        d = g.dialect if dialect is None or dialect == "auto" else named(dialect)
        yield from g.blocks(d.path, d.heads if heads is None else heads, chunk_size, on_progress)


def detect_dialect(path: Source) -> Dialect:
    """Tell a TF GraphDef from a GE ge_proto or ge_onnx dump by its first fields."""
    with opened(path, spool=False) as g:
        return g.dialect


def _refuse_stdin(path: Source) -> None:
    if not isinstance(path, GraphFile) and str(path) == "-":
        raise PbtxtError("cannot read stdin a second time: pass a file", path=display_name(path))


def read_block_bytes(path: Source, block: Block) -> bytes:
    """The block's own bytes, read again from the file."""
    _refuse_stdin(path)
    with opened(path) as g:
        return g.read(block)


def parse_block(path: Source, block: Block, max_bytes: Optional[int] = None) -> Message:
    """Parse one block with the Lark grammar (see :meth:`GraphFile.parse`)."""
    _refuse_stdin(path)
    with opened(path) as g:
        return g.parse(block, max_bytes)


__all__ = ["NAME_AND_OP", "iter_blocks", "iter_nodes", "detect_dialect", "read_block_bytes", "parse_block"]
