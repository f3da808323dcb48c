"""Whole-file commands (``stats``, ``check``, ``nodes``) on several cores: split, scan, merge.

The file is cut into chunks at top-level block boundaries; worker processes validate and fold the
chunks (count nodes and ops, or format ``nodes`` rows); the parent merges the results in file order.
The answer is the single-process one, byte for byte, errors included.

Why a split is correct
----------------------
A *split point* is a line start ``p`` (``p`` follows a ``\\n``) whose line is ``IDENT {`` or
``IDENT <`` alone (``OPENER``, the writer layout's column-0 opener that ``text._backward`` reads backward by).

1. ``p`` is a token boundary in any file: a string cannot hold a raw newline, a comment ends at
   one, and identifiers and numbers hold none. So the tokens of the file are those of the chunks,
   concatenated; UTF-8 is checked per chunk without cutting a character (``\\n`` is ASCII); a BOM
   can only be at offset 0, which is chunk 0's start.
2. Each chunk is scanned alone as a whole document: a sequence of complete top-level fields,
   starting and ending at depth 0. The grammar's top level is ``field*`` (separators optional), so
   if every chunk is valid, the concatenation, i.e. the file, is valid, and its top-level fields
   are the chunks' fields in order. Blocks at any path (``node``; ``library.function.node_def``;
   ``graph.op``) lie inside one top-level field, so inside one chunk, with the same heads and
   ``parents``. Offsets are absolute (each chunk is scanned with its start offset); so are the
   line numbers of ``nodes`` rows (each chunk's newlines are counted first, in the workers, and
   its first line passed in). ``stats``/``check`` need no line number but the total: each chunk
   is scanned from line 1 and their line counts add up (an error's line comes from (3)).
3. Where the file is invalid, or a split point was not at depth 0 (a layout without indentation,
   where a nested ``attr {`` sits in column 0), some chunk fails. Take the *first* failing chunk
   ``i``: chunks ``0..i-1`` are valid, so by (2) the file is at depth 0, between two fields, at
   ``i``'s start, which is exactly the state a fresh scan starts in (the next token is an
   identifier, accepted alike after a field and at the start of a file). So the single-process
   scan from ``i``'s start (with its first line) to the end of the file, in the parent, yields
   what the single-process scan of the whole file yields from there on: the same blocks, and the
   same first error, message, line and column alike; the results of chunks ``0..i-1`` are the
   blocks before. Chunks after ``i`` are ignored. The failing chunk's own error is never shown:
   it may come from the cut (the input "ended" inside a field at the chunk's end), and when it is
   real the sequential scan meets it again after at most one chunk.

Layouts: in the writer layout (``tf.io.write_graph``) every top-level ``node {`` is a split point,
so node-dense graphs split anywhere. A one-line file, a CRLF file (the opener line ends ``{\\r\\n``)
or a file with no column-0 openers has no split points and takes the single-process path. ``<>``
blocks split like ``{}`` ones. A layout where nested openers sit in column 0 splits wrongly and
fails by (3) into a sequential scan: correct, only slower. A GE dump is one top-level ``graph {``
block holding every ``op {``: no split point inside, so it takes the single-process path (its ops
are at depth 1; ``ge._split`` does split there for ``resolve``/``ge-auto``: each chunk reopens the
graph block with its label, and chunks are chained by their end states). ``--jobs 1``, streams
(stdin, pipes, gzip), platforms without ``fork`` and files under two chunks take the
single-process path itself.

Binary GraphDefs (``wire._wire_whole``): a split point is the tag of a top-level ``node`` field
(``0x0a``, then its length) that starts a run of nodes read through their length prefixes. The
same argument, in the wire format: a protobuf message is parsed left to right, field by field, so
if chunks ``0..i-1`` each parse as whole top-level fields ending exactly at their ends, the
file's own parse is at a field boundary at chunk ``i``'s start, and the single-process walk from
there (``_graph`` to the end of the file) is the file's walk from there: the same nodes, the same
first error at the same offset. A point that only looks like a node start (bytes inside a tensor's
content) makes the chunk before it fail (a field runs past its end), and the parent goes on alone.
Only a GraphDef splits (its top level is the nodes'); MetaGraphDefs, SavedModels, function nodes
and streams take the single-process path. Rows have no line numbers to count first.

The input is opened once: the parent's :class:`GraphFile` plans the chunks (``parallel._plan``);
the workers are forked from it (``parallel._pool``, serving a :class:`_Job`) and read their byte
ranges with ``os.pread`` on the inherited file descriptor (``pread`` does not move the shared file
offset, so workers never race on it). Nothing is reopened.

Memory: a worker holds the scanner's buffers (reads of ``DEFAULT_CHUNK``, 1 MiB; a block is
matched whole only below ``_canonical._BIG``, 4 MiB from Python 3.11 and 64 KiB before, else walked
by lines) and one chunk's result: an op histogram, or for ``nodes`` the chunk's rows as text (about
15 % of the chunk's bytes for names and ops, more with ``--jsonl`` inputs). Chunks are at most ``_plan.MAX_SPLIT`` (16 MiB), and the
parent keeps at most ``2 x jobs`` results in flight. So: per worker, the interpreter plus ~1 MiB
+ ``_BIG`` + one chunk's rows; in the parent, the interpreter plus 2 x jobs chunks' rows; in total
about (jobs + 1) interpreters + 3 x jobs x (one chunk's rows).
"""
from __future__ import annotations

import collections
import contextlib
import time
from typing import Callable, Dict, FrozenSet, Generator, Iterator, List, Optional, Set, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from ._filter import NodeFilter
from ._input import GraphFile
from .._model import Block
from ..parallel import _plan
from ..parallel._pool import Pool, PoolError, can_fork
from ..source._source import DEFAULT_CHUNK
from ..source._views import PRead
from ..text import OPENER
from ..wire import GRAPHDEF, NODE_PATH, Fold, WireLane, fold_wire, split_finder

_WINDOW = 1 << 20  # bytes searched after each target offset for a split point
_LINE = 512  # room for the opener line itself past the window

Row = Callable[[Block], str]
Progress = Optional[Callable[[int], None]]


class Chunk(NamedTuple):
    """One chunk's result: its node count and op histogram, or its rows as text."""

    start: int
    end: int
    nodes: int
    ops: Dict[str, int]
    text: str  # rows joined by newlines ("" when none)
    lines: int  # the lines it ends (its newlines, and a last line without one); 0 for a part
    bytes: int  # the offset its scan ended at (the file's size, for the last); 0 for a part
    tops: Tuple[str, ...] = ()  # the schema checked: the top-level singular fields it sets


# --- the plan (parent, before forking) --------------------------------------------------------


def plan(g: GraphFile, jobs: int, *, split_bytes: Optional[int] = None, path: Tuple[str, ...] = NODE_PATH) -> Optional[List[int]]:
    """Chunk boundaries ``[0, b1, ..., size]``, or None for the single-process path.
    ``split_bytes``: chunks of about this size (the tests' small files), not the planner's.
    A binary graph splits only as a GraphDef, at its nodes (``path``: ``node``; see the docstring)."""
    if jobs <= 1 or not g.regular or not g.size or g.base or not can_fork():  # (a graph in an event file: one process)
        return None
    if isinstance(g.lane, WireLane):
        if g.binary != GRAPHDEF or tuple(path) != NODE_PATH:
            return None
        return _plan.plan(g.size, jobs, split_finder(g.read_at, g.size), window=_WINDOW, split_bytes=split_bytes)
    if not g.lane.text:  # (a graph inside a text container: its blocks sit below the top level)
        return None

    def finder(t: int, limit: int) -> Optional[int]:
        return _plan.search(g.read_at, t, limit, _opener, over=_LINE)

    return _plan.plan(g.size, jobs, finder, window=_WINDOW, split_bytes=split_bytes)


def _opener(data: bytes) -> int:
    m = OPENER.search(data)
    return -1 if m is None else m.start()


# --- the job: what the workers serve, and the parent's own scans ----------------------------------


class _Job:
    """One command over one file: what every worker needs (made before the fork, so nothing of it
    is pickled per task), and the scans the parent makes itself."""

    __slots__ = ("g", "path", "heads", "row", "on_progress", "wire", "tsv", "schema", "where")

    def __init__(self, g: GraphFile, path: Tuple[str, ...], heads: FrozenSet[str], row: Optional[Row], on_progress: Progress, *,
                 tsv: bool = False, schema: int = 0, where: Optional[NodeFilter] = None) -> None:
        self.where = where  # rows only for the blocks it keeps (``_paths.NodeFilter``)
        self.g = g
        self.path = tuple(path)
        self.heads = heads
        self.row = row  # None: count nodes and ops; else format each block as a row
        self.on_progress = on_progress  # (the parent's only: a worker never calls it)
        self.wire = isinstance(g.lane, WireLane)  # a binary GraphDef: chunks are folded by wire._wire_whole
        self.tsv = tsv  # ``row`` is ``_paths.row_tsv``, which the wire fold formats itself
        self.schema = schema  # the lane's ``schema``: 0 none, 1 the first error, more: all (a chunk with one: see ``chunks``)

    # In the workers.

    def count(self, rng: Tuple[int, int]) -> int:
        """The newlines in bytes ``[start, end)``."""
        f = PRead(self.g.fileno(), rng[0], rng[1])
        n = 0
        while True:
            data = f.read(8 * DEFAULT_CHUNK)
            if not data:
                return n
            n += data.count(b"\n")

    def scan(self, task: Tuple[int, int, int]) -> Optional[Chunk]:
        """Validate and fold one chunk ``(start, end, first line)``; None if it is not valid alone."""
        from ..text import scan_canonical

        start, end, line = task
        if self.wire:
            try:
                return list(self.wire_fold(start, end))[0]
            except PbtxtError:
                return None
        end_state: Dict[str, int] = {}
        f = PRead(self.g.fileno(), start, end)
        watch = self.g.lane.watch(self.schema)
        blocks = scan_canonical(f, self.path, self.heads, chunk_size=DEFAULT_CHUNK, display=self.g.name, end_state=end_state,
                                start_offset=start, start_line=line, validate=self.row is None,  # (a listing: as --jobs 1 reads)
                                watch=watch)
        try:
            got = list(self.fold(blocks, start, end, line, end_state))[0]
        except PbtxtError:
            return None  # (the parent scans again from the chunk's start)
        if watch is not None and getattr(watch.checker, "warned", None):
            return None  # (a warning, a ge_proto dump's field not seen: the parent's to say, at its line)
        return got if watch is None else got._replace(tops=watch.checker.root_set())

    # In either.

    def fold(self, blocks: Iterator[Block], start: int, end: int, line: int, end_state: Dict[str, int], *, batch: int = 0,
             progress: bool = False) -> Iterator[Chunk]:
        """The blocks' counts or rows: a result per ``batch`` rows (0: one for all), the last one
        with the line and byte counts; a scan error is raised after the result of the blocks
        before it. ``progress``: report each block's end (the parent's scans)."""
        row, where = self.row, self.where
        on_progress = self.on_progress if progress else None
        n = 0
        ops: Dict[str, int] = collections.Counter()
        rows: List[str] = []
        try:
            for b in blocks:
                n += 1
                if row is None:
                    ops[b.op or "?"] += 1
                elif where is None or where(b.name, b.op):
                    rows.append(row(b))
                    if len(rows) == batch:
                        yield Chunk(start, end, n, {}, "\n".join(rows), 0, 0)
                        n = 0
                        rows = []
                if on_progress is not None:
                    on_progress(b.end)
        except PbtxtError:
            yield Chunk(start, end, n, dict(ops), "\n".join(rows), 0, 0)
            raise
        yield Chunk(start, end, n, dict(ops), "\n".join(rows), end_state["lines"] - line + 1, end_state["bytes"])

    def wire_fold(self, start: int, end: Optional[int], index: int = 0) -> Iterator[Chunk]:
        """A binary GraphDef's top-level fields from the split point ``start`` to ``end`` (None: the
        end of the file) folded (``wire._wire_whole``): the whole chunk as one result, or (``end``
        None, the parent's) a result per run of nodes. Lines: none (binary); a split file's size is known."""
        row = self.row
        fold = Fold(row=row, tsv=row is None or self.tsv, validate=row is None, index=index,
                    keep=None if self.where is None else self.where.raw)
        f = self.g.reader(0, end)
        f.seek(start)
        at = start
        for _ in fold_wire(f, self.path, fold, self.heads, chunk=True, end=end):
            if end is None and fold.rows:
                yield Chunk(at, fold.last, fold.nodes, {}, fold.take(), 0, 0)
                at, fold.nodes = fold.last, 0
        yield Chunk(at, end if end is not None else -1, fold.nodes, fold.histogram(), fold.take(), 0, end if end is not None else self.g.size or 0)

    # In the parent.

    def sequential(self, start: int, line: int, nodes: int = 0, tops: Tuple[str, ...] = ()) -> Iterator[Chunk]:
        """The file from ``start`` (at depth 0, line ``line``, after ``nodes`` blocks) to its end in
        this process, as results of at most 512 rows each (the single-process path's batches);
        ``tops``: the top-level singular fields set before ``start``."""
        from ..text import scan_canonical

        g = self.g
        if self.wire:
            try:
                for c in self.wire_fold(start, None, nodes):
                    yield c
                    if self.on_progress is not None and c.end > 0:
                        self.on_progress(c.end)
            except PbtxtError as e:
                raise (g.changed() or e.with_path(g.name)) from None
            return
        end_state: Dict[str, int] = {}
        watch = g.lane.watch(self.schema)
        if watch is not None:
            watch.checker.seed(tops)
        blocks = scan_canonical(g.reader(start), self.path, self.heads, chunk_size=DEFAULT_CHUNK, display=g.name, end_state=end_state,
                                start_offset=start, start_line=line, validate=self.row is None, watch=watch)
        try:
            yield from self.fold(blocks, start, -1, line, end_state, batch=512, progress=True)
        except PbtxtError as e:
            raise (g.changed() or e.with_path(g.name)) from None

    def line_at(self, pos: int) -> int:
        """The line number of offset ``pos`` (a line start), counted in this process."""
        n = 1
        at = 0
        while at < pos:
            data = self.g.read_at(at, min(8 * DEFAULT_CHUNK, pos - at))
            if not data:
                break
            n += data.count(b"\n")
            at += len(data)
        return n


# --- the parent ------------------------------------------------------------------------------


def chunks(job: _Job, bounds: List[int], jobs: int, *, profile: Optional[Dict[str, float]] = None) -> Generator[Chunk, None, None]:
    """The chunks' results in file order (see the module's docstring). A syntax error is raised
    after the result of the text before it (the rows before the error), as the single-process
    scan raises it. ``profile``: filled with the timings of the serial parts (seconds), and
    ``sequential_from``, the offset the parent went on alone from.

    Rows carry line numbers, so for them each chunk's first line is counted first (in the workers,
    one ``bytes.count`` pass); counts alone do not need it: each chunk is scanned from line 1 and
    says how many lines it holds."""
    prof: Dict[str, float] = {} if profile is None else profile
    t0 = time.perf_counter()
    ranges = list(zip(bounds, bounds[1:]))
    lines: Optional[List[int]] = None
    done = nodes = 0  # chunks whose results are out, and their blocks (an error names a binary node by its index)
    tops: Set[str] = set()  # the schema's top-level singular fields set so far
    try:
        with Pool(min(jobs, len(ranges)), [job.count, job.scan]) as pool:
            prof["fork"] = time.perf_counter() - t0
            if job.row is not None and not job.wire:
                t0 = time.perf_counter()
                lines = [1]
                for n in pool.map(job.count, ranges, ahead=len(ranges)):
                    lines.append(lines[-1] + n)
                prof["count"] = time.perf_counter() - t0
            merge = 0.0
            tasks = [(s, e, lines[i] if lines else 1) for i, (s, e) in enumerate(ranges)]
            for got in pool.map(job.scan, tasks, ahead=2 * jobs):
                if got is None or tops.intersection(got.tops):  # (a top-level field set twice: read on alone)
                    break
                tops.update(got.tops)
                t0 = time.perf_counter()
                yield got
                done, nodes = done + 1, nodes + got.nodes
                if job.on_progress is not None:
                    job.on_progress(got.end)
                merge += time.perf_counter() - t0
            prof["merge"] = merge
    except PoolError:  # no worker could start, one died (killed, out of memory) or failed: go on alone
        pass
    if done < len(ranges):
        # Chunk `done` is not valid alone, or its worker died. The chunks before it are valid, so
        # the file is at depth 0 at its start: the single-process scan from there gives the answer
        # (the same error, or the rest of the file when the split was wrong).
        start = ranges[done][0]
        prof["sequential_from"] = start
        yield from job.sequential(start, lines[done] if lines else 0 if job.wire else job.line_at(start), nodes, tuple(tops))
    err = job.g.changed()
    if err is not None:
        raise err


# --- the commands -----------------------------------------------------------------------------


def stats(
    g: GraphFile, path: Tuple[str, ...], heads: FrozenSet[str], jobs: int, on_progress: Progress = None, *,
    split_bytes: Optional[int] = None, profile: Optional[Dict[str, float]] = None, schema: int = 0,
) -> Optional[Tuple[int, Dict[str, int], int, Optional[int]]]:
    """(nodes, op histogram, bytes, lines) on ``jobs`` processes; None: take the single-process
    path. (``split_bytes``: see :func:`plan`; ``profile``: see :func:`chunks`; ``schema``: the lane's.)"""
    bounds = plan(g, jobs, split_bytes=split_bytes, path=path)
    if bounds is None:
        return None
    n = 0
    ops: Dict[str, int] = collections.Counter()
    lines = size = 0
    for c in chunks(_Job(g, path, heads, None, on_progress, schema=schema), bounds, jobs, profile=profile):
        n += c.nodes
        for k, v in c.ops.items():
            ops[k] += v
        lines += c.lines
        size = max(size, c.bytes)
    return n, dict(ops), size, None if g.binary else lines


def rows(
    g: GraphFile, path: Tuple[str, ...], heads: FrozenSet[str], row: Row, jobs: int, on_progress: Progress = None, *,
    split_bytes: Optional[int] = None, profile: Optional[Dict[str, float]] = None, tsv: bool = False, schema: int = 0,
    where: Optional[NodeFilter] = None,
) -> Optional[Iterator[str]]:
    """The rows ``row(block)`` of every block at ``path`` (that ``where`` keeps) in file order, as
    texts of many rows joined by newlines; None: take the single-process path. (``tsv``: ``row``
    is ``_paths.row_tsv``; the other keywords: as for :func:`stats`.)"""
    bounds = plan(g, jobs, split_bytes=split_bytes, path=path)
    if bounds is None:
        return None
    return _texts(chunks(_Job(g, path, heads, row, on_progress, tsv=tsv, schema=schema, where=where), bounds, jobs, profile=profile))


def _texts(results: Generator[Chunk, None, None]) -> Iterator[str]:
    with contextlib.closing(results):  # (closed early, e.g. by `| head`: the workers stop at once)
        for c in results:
            if c.text:
                yield c.text
