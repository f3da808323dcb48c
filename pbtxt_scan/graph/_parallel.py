"""Whole-file commands (``stats``, ``check``, ``nodes``) on several cores: split, scan, merge.

The file is cut into chunks at top-level block boundaries; worker processes validate and fold the
chunks (count nodes and ops, or format ``nodes`` rows); the parent merges the results in file order.
The answer is the single-process one, byte for byte, errors included.

Why a split is correct
----------------------
A *split point* is a line start ``p`` (``p`` follows a ``\\n``) whose line is ``IDENT {`` or
``IDENT <`` alone (``_OPENER``, the writer layout's column-0 opener, as in ``_reverse``).

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
graph block with its label, and chunks are chained by their end states). ``--jobs 1``, streams (stdin, pipes, gzip), platforms without ``fork`` and
files under two chunks take the single-process path itself.

The input is opened once: the parent's :class:`GraphFile` plans the chunks; the workers are forked
from it and read their byte ranges with ``os.pread`` on the inherited file descriptor (``pread``
does not move the shared file offset, so workers never race on it). Nothing is reopened.

Memory: a worker holds the scanner's buffers (reads of ``DEFAULT_CHUNK``, 1 MiB; a block is
matched whole only below ``_canonical._BIG``, 4 MiB from Python 3.11 and 64 KiB before, else
walked by lines) and one chunk's result:
an op histogram, or for ``nodes`` the chunk's rows as text (about 15 % of the chunk's bytes for
names and ops, more with ``--jsonl`` inputs). Chunks are at most ``MAX_SPLIT`` (16 MiB), and the
parent keeps at most ``2 x jobs`` results in flight. So: per worker, the interpreter plus ~1 MiB
+ ``_BIG`` + one chunk's rows; in the parent, the interpreter plus 2 x jobs chunks' rows; in total
about (jobs + 1) interpreters + 3 x jobs x (one chunk's rows).
"""
from __future__ import annotations

import collections
import os
import re
import sys
from typing import Any, Callable, Deque, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Tuple

from .._errors import PbtxtError
from ._input import GraphFile
from .._model import Block
from ..source._source import DEFAULT_CHUNK

_OPENER = re.compile(rb"\n([A-Za-z_][A-Za-z0-9_]*) [{<]\n")  # (the one _reverse uses)

MIN_SPLIT = 1 << 20  # chunks are at least this big (smaller ones cost more to hand out than to scan)
MAX_SPLIT = 16 << 20  # ... and at most this big (a chunk's result is held whole)
CHUNKS_PER_JOB = 8  # enough chunks that the last one to finish leaves little idle time
_WINDOW = 1 << 20  # bytes searched after each target offset for a split point
_LINE = 512  # room for the opener line itself past the window

# Private knob for tests: force this chunk size (bytes), so small fixtures really split.
SPLIT_BYTES: Optional[int] = None

# Timings of the serial parts of the last run (seconds), for the benchmark's Amdahl model.
PROFILE: Dict[str, float] = {}

Fold = Callable[[Block], str]


class Chunk(NamedTuple):
    """One chunk's result: its node count and op histogram, or its rows as text."""

    start: int
    end: int
    nodes: int
    ops: Dict[str, int]
    text: str  # rows joined by newlines ("" when none)
    lines: int  # the lines it ends (its newlines, and a last line without one); 0 for a part
    bytes: int  # the offset its scan ended at (the file's size, for the last); 0 for a part


# --- the plan (parent, before forking) --------------------------------------------------------


def plan(g: GraphFile, jobs: int) -> Optional[List[int]]:
    """Chunk boundaries ``[0, b1, ..., size]``, or None for the single-process path."""
    if jobs <= 1 or not g.regular or not g.size or not g.lane.text or not _can_fork():  # (binary: no text to split)
        return None
    size = g.size
    split = SPLIT_BYTES or max(MIN_SPLIT, min(MAX_SPLIT, size // (jobs * CHUNKS_PER_JOB)))
    window = min(split, _WINDOW)
    import time

    t0 = time.perf_counter()
    bounds = [0]
    t = split
    while t < size:
        b = _split_point(g, t, window)
        if b is None:
            t += split
            continue
        if b >= size:
            break
        bounds.append(b)
        t = b + split
    PROFILE.clear()
    PROFILE["plan"] = time.perf_counter() - t0
    if len(bounds) < 2:
        return None
    bounds.append(size)
    return bounds


def _split_point(g: GraphFile, t: int, window: int) -> Optional[int]:
    """The first split point in ``[t, t + window]`` (a node-dense file has one within 1 KB: look
    at 64 KB first)."""
    for size in sorted({min(window, 1 << 16), window}):
        m = _OPENER.search(g.read_at(t - 1, size + 1 + _LINE))
        if m is not None and m.start() <= size:
            return t + m.start()
    return None


def _can_fork() -> bool:
    return hasattr(os, "fork")


# --- workers ------------------------------------------------------------------------------------


class _Job(NamedTuple):
    """What every worker needs, set before the fork (so nothing of it is pickled per task)."""

    fd: int
    name: str
    path: Tuple[str, ...]
    heads: FrozenSet[str]
    row: Optional[Fold]  # None: count nodes and ops; else format each block as a row


_JOB: Optional[_Job] = None

#: More worker tasks by name: other modules' chunk functions (``ge._split``), registered when
#: those modules are imported, so before any worker is forked.
TASKS: Dict[str, Callable[[Any], Any]] = {}


class _PRead:
    """Bytes ``[start, end)`` of a file descriptor, read with ``os.pread`` (no shared offset)."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd = fd
        self._start = start
        self._pos = start
        self._end = end

    def read(self, n: int = -1) -> bytes:
        left = self._end - self._pos
        if n is None or n < 0 or n > left:
            n = left
        if n <= 0:
            return b""
        data = os.pread(self._fd, n, self._pos)
        self._pos += len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            import io

            raise io.UnsupportedOperation("seek")
        self._pos = self._start + offset
        return offset

    def tell(self) -> int:
        return self._pos - self._start


class _Workers:
    """``n`` forked worker processes, each fed tasks through its own pipe. (Not
    ``multiprocessing.Pool``: its ``terminate`` can hang while tasks are still queued, and a worker
    that dies leaves its ``get`` waiting forever. Here a dead worker is an end of file on its pipe.)
    """

    def __init__(self, n: int) -> None:
        from multiprocessing.connection import Pipe

        self.conns: List[Any] = []
        self.pids: List[int] = []
        try:
            for _ in range(n):
                parent, child = Pipe()
                pid = os.fork()
                if pid == 0:  # pragma: no cover - (the child: measured by the parent's tests)
                    parent.close()
                    _serve(child, self.conns)
                self.pids.append(pid)
                child.close()
                self.conns.append(parent)
        except BaseException:
            self.close()
            raise

    def map(self, fn: str, tasks: List[Any], window: int) -> Iterator[Any]:
        """``fn(task)`` for each task, in the workers, results in task order; at most ``window``
        tasks handed out and not yet consumed. EOFError or OSError if a worker died, _WorkerFailed
        if a task raised."""
        from multiprocessing.connection import wait

        busy: Dict[Any, Deque[int]] = {c: collections.deque() for c in self.conns}
        done: Dict[int, Any] = {}
        todo = 0  # the next task to hand out
        want = 0  # the next result to yield
        while want < len(tasks):
            # Hand out tasks: to the least busy worker, two at most each (one queued behind the
            # running one, so no worker waits for the parent), within the window.
            while todo < len(tasks) and todo - want < window:
                c = min(self.conns, key=lambda k: len(busy[k]))
                if len(busy[c]) >= 2:
                    break
                c.send((fn, tasks[todo]))
                busy[c].append(todo)
                todo += 1
            while want not in done:
                for c in wait([c for c in self.conns if busy[c]]):
                    ok, value = c.recv()  # (EOFError, ConnectionResetError: the worker died)
                    if not ok:
                        raise _WorkerFailed(value)
                    done[busy[c].popleft()] = value
            yield done.pop(want)
            want += 1

    def close(self) -> None:
        import signal

        for c in self.conns:
            c.close()
        for pid in self.pids:
            try:
                os.kill(pid, signal.SIGKILL)  # (a worker holds nothing that needs cleaning up)
                os.waitpid(pid, 0)
            except OSError:
                pass
        self.conns = []
        self.pids = []


class _WorkerFailed(Exception):
    """A task raised in a worker (a bug): the parent goes on alone, and meets it itself."""


def _serve(conn: Any, others: List[Any]) -> None:  # pragma: no cover - (runs in the child)
    """A worker's life: tasks in, results out, until the pipe closes. Never returns."""
    import signal
    import traceback

    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the workers
        for c in others:  # (the pipes of the workers forked before: the parent's, not ours)
            c.close()
        # Inherited stdout/stderr buffers must never be flushed twice: the worker writes nothing.
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        fns = dict(TASKS, count=_count_newlines, scan=_scan_chunk)
        while True:
            try:
                fn, task = conn.recv()
            except EOFError:
                break
            try:
                result = (True, fns[fn](task))
            except Exception:
                result = (False, traceback.format_exc())
            conn.send(result)
    except BaseException:
        code = 1
    finally:
        os._exit(code)  # (never the parent's cleanup: no atexit, no flush, no finally above)


def _count_newlines(rng: Tuple[int, int]) -> int:
    assert _JOB is not None
    f = _PRead(_JOB.fd, rng[0], rng[1])
    n = 0
    while True:
        data = f.read(8 * DEFAULT_CHUNK)
        if not data:
            return n
        n += data.count(b"\n")


def _scan_chunk(task: Tuple[int, int, int]) -> Optional[Chunk]:
    """Validate and fold one chunk; None if it is not valid alone."""
    from ..text._canonical import scan_canonical

    assert _JOB is not None
    start, end, line = task
    job = _JOB
    end_state: Dict[str, int] = {}
    blocks = scan_canonical(_PRead(job.fd, start, end), job.path, job.heads, DEFAULT_CHUNK, job.name, end_state, start, line)
    try:
        return list(_fold(blocks, start, end, line, job.row, end_state))[0]
    except PbtxtError:
        return None  # (the parent scans again from the chunk's start)


def _fold(
    blocks: Iterator[Block], start: int, end: int, line: int, row: Optional[Fold], end_state: Dict[str, int],
    batch: int = 0, on_progress: Optional[Callable[[int], None]] = None,
) -> Iterator[Chunk]:
    """The blocks' counts or rows: a result per ``batch`` rows (0: one for all), the last one
    with the line and byte counts; a scan error is raised after the result of the blocks before it."""
    n = 0
    ops: Dict[str, int] = collections.Counter()
    rows: List[str] = []
    try:
        for b in blocks:
            n += 1
            if row is None:
                ops[b.op or "?"] += 1
            else:
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


# --- the parent ------------------------------------------------------------------------------


def chunks(
    g: GraphFile,
    bounds: List[int],
    path: Tuple[str, ...],
    heads: FrozenSet[str],
    jobs: int,
    row: Optional[Fold] = None,
    on_progress: Optional[Callable[[int], None]] = None,
) -> Iterator[Chunk]:
    """The chunks' results in file order (see the module's docstring). A syntax error is raised
    after the result of the text before it (the rows before the error), as the single-process
    scan raises it.

    Rows carry line numbers, so for them each chunk's first line is counted first (in the workers,
    one ``bytes.count`` pass); counts alone do not need it: each chunk is scanned from line 1 and
    says how many lines it holds."""
    import time

    global _JOB
    t0 = time.perf_counter()
    ranges = list(zip(bounds, bounds[1:]))
    _JOB = _Job(g.fileno(), g.name, tuple(path), heads, row)
    sys.stdout.flush()  # (a forked worker must not inherit unwritten output)
    sys.stderr.flush()
    try:
        workers = _Workers(min(jobs, len(ranges)))
    except OSError:  # (no more processes allowed: one will do)
        _JOB = None
        yield from sequential(g, 0, 1, path, heads, row, on_progress)
        changed = g.changed()
        if changed is not None:
            raise changed
        return
    lines: Optional[List[int]] = None
    done = 0  # chunks whose results are out
    try:
        PROFILE["fork"] = time.perf_counter() - t0
        if row is not None:
            t0 = time.perf_counter()
            lines = [1]
            for n in workers.map("count", ranges, len(ranges)):
                lines.append(lines[-1] + n)
            PROFILE["count"] = time.perf_counter() - t0
        merge = 0.0
        tasks = [(s, e, lines[i] if lines else 1) for i, (s, e) in enumerate(ranges)]
        for got in workers.map("scan", tasks, 2 * jobs):
            if got is None:
                break
            t0 = time.perf_counter()
            yield got
            done += 1
            if on_progress is not None:
                on_progress(got.end)
            merge += time.perf_counter() - t0
        PROFILE["merge"] = merge
    except (EOFError, OSError, _WorkerFailed):  # a worker died (killed, out of memory): go on alone
        pass
    finally:
        workers.close()
        _JOB = None
    if done < len(ranges):
        # Chunk `done` is not valid alone, or its worker died. The chunks before it are valid, so
        # the file is at depth 0 at its start: the single-process scan from there gives the answer
        # (the same error, or the rest of the file when the split was wrong).
        start = ranges[done][0]
        PROFILE["sequential_from"] = start
        yield from sequential(g, start, lines[done] if lines else _line_at(g, start), path, heads, row, on_progress)
    err = g.changed()
    if err is not None:
        raise err


def _line_at(g: GraphFile, pos: int) -> int:
    """The line number of offset ``pos`` (a line start), counted in this process."""
    n = 1
    at = 0
    while at < pos:
        data = g.read_at(at, min(8 * DEFAULT_CHUNK, pos - at))
        if not data:
            break
        n += data.count(b"\n")
        at += len(data)
    return n


def sequential(
    g: GraphFile,
    start: int,
    line: int,
    path: Tuple[str, ...],
    heads: FrozenSet[str],
    row: Optional[Fold],
    on_progress: Optional[Callable[[int], None]],
) -> Iterator[Chunk]:
    """The file from ``start`` (at depth 0, line ``line``) to its end in this process, as results
    of at most 512 rows each (the single-process path's batches)."""
    from ..text._canonical import scan_canonical

    end_state: Dict[str, int] = {}
    blocks = scan_canonical(g.reader(start), tuple(path), heads, DEFAULT_CHUNK, g.name, end_state, start, line)
    try:
        yield from _fold(blocks, start, -1, line, row, end_state, 512, on_progress)
    except PbtxtError as e:
        raise (g.changed() or e.with_path(g.name)) from None


# --- the commands -----------------------------------------------------------------------------


def stats(
    g: GraphFile, path: Tuple[str, ...], heads: FrozenSet[str], jobs: int, on_progress: Optional[Callable[[int], None]] = None
) -> Optional[Tuple[int, Dict[str, int], int, int]]:
    """(nodes, op histogram, bytes, lines) on ``jobs`` processes; None: take the single-process path."""
    bounds = plan(g, jobs)
    if bounds is None:
        return None
    n = 0
    ops: Dict[str, int] = collections.Counter()
    lines = size = 0
    for c in chunks(g, bounds, path, heads, jobs, None, on_progress):
        n += c.nodes
        for k, v in c.ops.items():
            ops[k] += v
        lines += c.lines
        size = max(size, c.bytes)
    return n, dict(ops), size, lines


def rows(
    g: GraphFile, path: Tuple[str, ...], heads: FrozenSet[str], row: Fold, jobs: int,
    on_progress: Optional[Callable[[int], None]] = None,
) -> Optional[Iterator[str]]:
    """The rows ``row(block)`` of every block at ``path`` in file order, as texts of many rows
    joined by newlines; None: take the single-process path."""
    bounds = plan(g, jobs)
    if bounds is None:
        return None
    return _texts(chunks(g, bounds, path, heads, jobs, row, on_progress))


def _texts(results: Iterator[Chunk]) -> Iterator[str]:
    import contextlib

    with contextlib.closing(results):  # (closed early, e.g. by `| head`: the workers stop at once)
        for c in results:
            if c.text:
                yield c.text
