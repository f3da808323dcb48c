"""Whole-file commands: validation and statistics, in one forward pass."""
from __future__ import annotations

import collections
import time
from typing import Any, Callable, Dict, Optional, Union

from .._kit import NamedTuple
from ._dialect import NAME_AND_OP, Dialect, named
from ._input import Source, opened
from ..parallel._cores import usable_cores
from ..source._source import DEFAULT_CHUNK
from ..wire import Fold, WireLane, describe


class Stats(NamedTuple):
    """``lines`` is ``None`` for a binary graph (``bytes`` counts its decompressed bytes), whose
    ``binary`` says what it is (``graphdef``, ``metagraph``, ``savedmodel``; ``None`` for text)."""

    path: str
    format: str
    bytes: int
    lines: Optional[int]
    nodes: int
    ops: Dict[str, int]
    seconds: float
    binary: Optional[str] = None

    @property
    def kind(self) -> str:
        """What the file is, in words: ``text format``, ``binary GraphDef``, ``binary SavedModel``..."""
        return describe(self.binary) if self.binary else "text format"

    def to_json(self, top: Optional[int] = None) -> Dict[str, Any]:
        d = self._asdict()
        # Most common first, ties by name (as the CLI lists them): Counter.most_common breaks ties
        # by first appearance, which differs between a file and its parts read in parallel.
        ops = sorted(self.ops.items(), key=lambda kv: (-kv[1], kv[0]))
        d["ops"] = dict(ops if top is None else ops[:top])
        return d


# ``check --all``: the schema errors listed at most, the rest counted ("and N more").
ALL_ERRORS = 1000


def check(
    path: Source, chunk_size: int = DEFAULT_CHUNK, on_progress: Optional[Callable[[int], None]] = None, jobs: Optional[int] = 1,
    *, every: bool = False,
) -> Stats:
    """Validate the whole file against the grammar and the schema of what it is (a GraphDef, a
    MetaGraphDef, a SavedModel, a GE ge_onnx dump: ``pbtxt_scan.schema``); raise
    :class:`PbtxtError` at the first error, or with ``every`` a :class:`SchemaErrors` listing every
    schema error (up to ``ALL_ERRORS``; a syntax error ends the list). (An event file: its framing
    and every record's data CRC, then the graph read.)"""
    t0 = time.perf_counter()
    jobs = usable_cores() if jobs is None else jobs
    with opened(path, spool=False) as g:
        g.check_records(every=True, jobs=jobs)  # (an event file: every record's CRC)
        return _stats(g, None, chunk_size, on_progress, jobs, t0, schema=ALL_ERRORS if every else 1)


def stats(
    path: Source,
    dialect: Union[None, str, Dialect] = None,
    chunk_size: int = DEFAULT_CHUNK,
    on_progress: Optional[Callable[[int], None]] = None,
    jobs: Optional[int] = 1,
) -> Stats:
    """Bytes, lines, node count and op histogram, validating the whole file on the way (the
    grammar and the schema, as :func:`check`: the first error raised).

    ``jobs`` > 1: on that many processes where the file allows (``_parallel``), the same result;
    ``None``: on every core this process may use."""
    t0 = time.perf_counter()
    jobs = usable_cores() if jobs is None else jobs
    with opened(path, spool=False) as g:
        g.check_records(every=False)  # (an event file: its graph record's CRC, if opening did not check it)
        return _stats(g, dialect, chunk_size, on_progress, jobs, t0, schema=1)


def _stats(
    g: Any, dialect: Union[None, str, Dialect], chunk_size: int, on_progress: Optional[Callable[[int], None]], jobs: int,
    t0: float, *, schema: int,
) -> Stats:
    """:func:`stats` of an open input whose event-file CRCs (if any) were checked (``schema``: the lane's)."""
    d = g.dialect if dialect is None or dialect == "auto" else named(dialect)
    if jobs != 1:
        from . import _parallel

        got = _parallel.stats(g, d.path, NAME_AND_OP, jobs, on_progress, schema=schema)
        if got is not None:
            n, counted, nbytes, lines = got
            return Stats(g.name, d.name, nbytes, lines, n, counted, time.perf_counter() - t0, g.binary)
    end_state: Dict[str, int] = {}
    if isinstance(g.lane, WireLane):
        # A binary graph: node count, op histogram and validation from one fold over the
        # length prefixes (``wire._wire_whole``), no block made for most nodes.
        fold = Fold(validate=True)
        for _ in g.lane.fold(d.path, fold, NAME_AND_OP, on_progress=on_progress, end_state=end_state):
            pass
        return Stats(g.name, d.name, end_state["bytes"], None, fold.nodes, fold.histogram(), time.perf_counter() - t0, g.binary)
    ops: Dict[str, int] = collections.Counter()
    n = 0
    for b in g.blocks(d.path, NAME_AND_OP, chunk_size, on_progress, end_state, validate=True, schema=schema):
        n += 1
        ops[b.op or "?"] += 1
    return Stats(g.name, d.name, end_state["bytes"], end_state["lines"], n, dict(ops), time.perf_counter() - t0, g.binary)
