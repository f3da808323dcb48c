"""The path-level API: each call opens its file once (or reads through a GraphFile given to it)."""
from __future__ import annotations

from typing import Callable, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

from .._kit import NamedTuple
from ._dialect import DIALECTS, NAME_AND_OP, TF_HEADS, Dialect, named
from ._filter import NodeFilter
from .._errors import PbtxtError
from ._input import GraphFile, Source, opened
from ..wire import WireLane
from .._model import FUNCTION_NODES, Block, Message
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


def row_tsv(b: Block) -> str:
    """The usual row of a listing: the block's line (binary: its byte offset), name and op,
    tab-separated. :func:`iter_rows` knows it: on a binary graph it formats these rows straight
    from the node's bytes."""
    return "%d\t%s\t%s" % (b.line or b.start, b.name, b.op)


def iter_rows(
    path: Source,
    row: Callable[[Block], str],
    *,
    dialect: Union[None, str, Dialect] = None,
    heads: FrozenSet[str] = NAME_AND_OP,
    jobs: Optional[int] = 1,
    on_progress: Optional[Callable[[int], None]] = None,
    schema: int = 1,
    where: Optional[NodeFilter] = None,
) -> Iterator[str]:
    """``row(block)`` for every operator block in file order, as texts of many rows joined by
    newlines (one write each: a write per row costs a second per GB). ``jobs`` > 1 (``None``: every
    usable core) formats the rows on that many processes where the file allows; the same text.
    ``where``: only the blocks it keeps (a :class:`NodeFilter`), tested as the scan yields them.

    A syntax error, or a schema error (``schema`` 1; 0: the grammar alone), raises
    :class:`PbtxtError` after the text of the rows before it."""
    from ..parallel._cores import usable_cores
    from . import _parallel

    n_jobs = usable_cores() if jobs is None else jobs
    with opened(path, spool=False) as g:
        d = g.dialect if dialect is None or dialect == "auto" else named(dialect)
        texts = _parallel.rows(
            g, d.path, heads, row, n_jobs, on_progress, tsv=row is row_tsv, schema=schema, where=where
        ) if n_jobs != 1 else None
        if texts is None and row is row_tsv and isinstance(g.lane, WireLane):
            texts = _wire_rows(g, d.path, heads, on_progress, where)
        if texts is not None:
            yield from texts
            return
        rows = []
        try:
            for b in g.blocks(d.path, heads, on_progress=on_progress, schema=schema, strict=False):  # (as _parallel.rows reads them)
                if where is not None and not where(b.name, b.op):
                    continue
                rows.append(row(b))
                if len(rows) >= 512:
                    yield "\n".join(rows)
                    rows = []
        except PbtxtError:
            if rows:  # the rows before the error first
                yield "\n".join(rows)
            raise
        if rows:
            yield "\n".join(rows)


class Found(NamedTuple):
    """A node found by name (:func:`find_node`): its block, the library function it is in
    (``None`` for a node of the graph itself, or of a GE dump), and the other functions that hold
    a node of that name (TF2 writes a layer's ops into the forward and the step function both)."""

    block: Block
    function: Optional[str]
    also: Tuple[str, ...] = ()


def find_node(
    path: Source, name: str, *, dialect: Union[None, str, Dialect] = None, function: Optional[str] = None
) -> Optional[Found]:
    """The first operator block named ``name``, or ``None``. A TensorFlow graph's own nodes are
    searched first, then its library functions' bodies (a TF2 step lives in a ``tf.function``), so
    a point answered "in function F" is found as it is printed; found in a function, the rest of
    the library is read for the other functions that hold the name. ``function`` looks in that
    function only; ``dialect`` (other than ``auto``) looks at that kind of block only."""
    with opened(path) as g:
        forced = dialect is not None and dialect != "auto"
        d = named(dialect) if dialect is not None and forced else g.dialect
        places = [d]
        if function is not None:
            places = [DIALECTS["function"]]
        elif not forced and d.name == "graphdef":
            places.append(DIALECTS["function"])
        for place in places:
            hit: Optional[Found] = None
            also: List[str] = []
            for b in g.blocks(place.path, NAME_AND_OP):
                if b.name != name:
                    continue
                fname = b.parents[-1] if place.path == FUNCTION_NODES and b.parents else None
                if function is not None and fname != function:
                    continue
                if hit is None:
                    hit = Found(b, fname)
                    if fname is None or function is not None:
                        return hit
                elif fname not in also and fname != hit.function:
                    also.append(fname or "?")
            if hit is not None:
                return hit._replace(also=tuple(also))
    return None


def _wire_rows(
    g: GraphFile, path: Sequence[str], heads: FrozenSet[str], on_progress: Optional[Callable[[int], None]], where: Optional[NodeFilter]
) -> Iterator[str]:
    """:func:`row_tsv` rows of a binary graph (those ``where`` keeps), a text per run of nodes
    (``wire._wire_whole``)."""
    from ..wire import Fold

    lane = g.lane
    assert isinstance(lane, WireLane)
    fold = Fold(row=row_tsv, keep=None if where is None else where.raw)
    try:
        for _ in lane.fold(path, fold, heads, on_progress=on_progress):
            if fold.rows:
                yield fold.take()
    except PbtxtError:
        if fold.rows:  # the rows before the error first
            yield fold.take()
        raise
    if fold.rows:
        yield fold.take()


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


__all__ = ["NAME_AND_OP", "Found", "NodeFilter", "find_node", "iter_blocks", "iter_nodes", "iter_rows", "row_tsv", "detect_dialect", "read_block_bytes", "parse_block"]
