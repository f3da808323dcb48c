"""A GE dump on several processes: cut inside its graph block at the op openers, load, merge.

A GE dump is one top-level ``graph {`` block (or a few) holding every op, so ``_parallel``'s
top-level split points do not cut it. Here a *split point* is a line ``  op {`` alone (``node``
for ``ge_onnx``): in the writer layout, an op opener inside a graph block. The records are the
single-process ones, errors included, for any file:

1. A split point is a token boundary in any file (as in ``_parallel``: no string holds a raw
   newline and a comment ends at one).
2. Chunk 0 is scanned from the file's start, as the single process does. Chunk ``i`` > 0 is
   scanned from *inside* one open ``graph`` message whose label (its ``name``) is already known,
   up to its end, where the scanner keeps its open messages instead of failing. The label is a
   placeholder, ``_INHERITED``, never ``None``: a later ``name`` does not relabel it, as in the
   real scan. (Labels reach nothing but a block's ``parents``; ge_onnx records do not use them,
   so there the label may also be unknown.) Each worker reports its records (lines counted from
   its start), how many of them sit in the inherited graph, and its *end state*: "top level",
   "inside one graph message labelled X, or still the inherited one", or nothing usable (any
   other stack, an error, or the general scanner took over and met the chunk's end).
3. The parent takes the chunks in order, knowing the true state at chunk ``i``'s start (the
   state at the end of chunk ``i - 1``, which was scanned from its true state). Chunk ``i`` is
   used when its assumption was the truth (inside a graph with a known label) and its end state
   is usable: its records are then the single scan's, with the placeholder replaced by the label
   and lines shifted by the lines before it. At the first chunk that is not used, the parent
   scans from that chunk's start to the end of the file itself, from the true state (the
   frames rebuilt: none, or one graph message with its label): the same records, and the same
   first error, as the single scan from there.

Every worker scans with the fast path (``_fast.Walker``): its states at a chunk's start and end
are a frame stack; after-field state and the last field name do not matter there, as the next
token, ``op``, is a field name in any state and resets both.

The cut is placed at op openers about equal in walk cost (bytes, plus :data:`LINE_COST` a
line: a dump's weights are few long lines, its small ops many short ones), its sizes are
``parallel._plan``'s, and the workers are forked by ``parallel._pool``, serving a
:class:`_Job` (the file, dialect and settings, made before the fork: nothing is pickled).

Memory: per worker, the scanner's buffers and one chunk's records; in the parent, the records
(which the single process keeps too) and at most ``2 x jobs`` chunks' results in flight.
"""
from __future__ import annotations

import bisect
from typing import Any, List, Optional, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from ..text import ANCESTOR, Frame
from ..graph._input import GraphFile
from ..parallel import _plan
from ..parallel._pool import Pool, PoolError, can_fork
from ..source._source import DEFAULT_CHUNK
from ._fast import walk
from ..graph._strict import is_node, op_head
from ._ops import _op_attrs, _record, ops_from


# The walk's cost is mostly per line, not per byte: a weight's long line is passed at C speed, an
# op's short lines one Python step each. Measured on the ge benchmark (40 MB: 24 weight-laden
# layers, then 181 small optimizer and gradient ops in its last 0.5 MB, 28 K of its 50 K lines):
# about 31 ms a MB of weights and 14 us a line, so a line counts as 512 bytes. Cut by bytes, that
# dump's last chunk held more than half the work, alone on one worker at the end (--jobs 2 was
# slower than one process); cut by this cost, the tail is shared out like the rest.
LINE_COST = 512
_SLICE = 1 << 16  # the cost is summed per slice of the file (the cut is placed to within one)
_READ = 4 << 20


class _Inherited(str):
    """The placeholder label of the graph a chunk starts inside (never ``None``, so a ``name``
    in the chunk does not relabel it, as in the single scan where the label is already known)."""


_INHERITED = _Inherited("")


class _End(NamedTuple):
    """A chunk's usable end state: at the top level, or inside one graph message."""

    inside: bool  # inside a graph message
    label: Optional[str]  # its label (None: not known yet, or the inherited one)
    inherited: bool  # the label is the inherited one (the chunk never read the graph's name)


class _Result(NamedTuple):
    ops: List[Any]  # GeOp records, lines counted from the chunk's first line
    inherited: int  # the first this many records sit in the inherited graph
    end: Optional[_End]  # None: not usable
    lines: int  # the newlines in the chunk


def plan(g: GraphFile, path: Tuple[str, ...], jobs: int, *, split_bytes: Optional[int] = None) -> Optional[List[int]]:
    """Chunk boundaries ``[0, b1, ..., size]`` at op openers, about equal in walk cost (bytes
    plus :data:`LINE_COST` a line), or None for one process. ``split_bytes``: chunks of about this
    many bytes instead (the tests' small files)."""
    if jobs <= 1 or len(path) != 2 or not g.regular or not g.size or not g.lane.text or not g.offset_free or not can_fork():
        return None
    opener = b"\n  " + path[1].encode("ascii") + b" {\n"
    size = g.size

    def finder(t: int, limit: int) -> Optional[int]:  # (an op may be megabytes long: window by window)
        return _plan.search(g.read_at, t, limit, lambda data: data.find(opener), over=len(opener))

    if split_bytes is not None:
        return _plan.plan(size, jobs, finder, split_bytes=split_bytes)
    costs = costs_of(g)
    split = _plan.chunk_bytes(costs[-1], jobs)  # (in cost units: the planner's sizes, as if every line were a byte)
    bounds = [0]
    want = split
    while True:
        k = bisect.bisect_left(costs, want)  # the first slice whose end reaches the target
        if k >= len(costs):
            break
        b = finder(max(k * _SLICE, bounds[-1] + 1), size)
        if b is None:
            break
        bounds.append(b)
        want = costs[b // _SLICE] + split
    if len(bounds) < 2:
        return None
    bounds.append(size)
    return bounds


def costs_of(g: GraphFile) -> List[int]:
    """The walk's cost from the file's start to the end of each :data:`_SLICE` bytes: one pass at
    memory speed (a newline count), which also brings the file into the page cache the workers read."""
    out: List[int] = []
    total = pos = 0
    while True:
        data = g.read_at(pos, _READ)
        for i in range(0, len(data), _SLICE):
            total += min(_SLICE, len(data) - i) + LINE_COST * data.count(b"\n", i, i + _SLICE)
            out.append(total)
        if len(data) < _READ:
            return out or [0]
        pos += len(data)


def _graph_frame(name: str, label: Optional[str]) -> Frame:
    f = Frame(name, ANCESTOR, None)
    f.label = label
    return f


class _Job:
    """What every worker needs, made before the fork."""

    __slots__ = ("g", "d", "full_parse_max")

    def __init__(self, g: GraphFile, d: Any, full_parse_max: int) -> None:
        self.g = g
        self.d = d
        self.full_parse_max = full_parse_max

    def load(self, task: Tuple[int, int, int]) -> Optional[_Result]:  # (runs in a worker)
        """Scan and load chunk ``(i, start, end)``; None if it is not valid alone."""
        g, d = self.g, self.d
        i, start, end = task
        outer = [_graph_frame(d.path[0], _INHERITED)] if i else None
        stop = end if end < (g.size or 0) else None  # (the last chunk: the file's end, where open messages are an error)
        from ..text import top_fields

        top, skipped = top_fields(d.path, g, d), g.strict.skipped
        w, blocks = walk(g.reader(start, end), d.path, d.heads, chunk_size=DEFAULT_CHUNK, display=g.name, start_offset=start, outer=outer,
                         stop=stop, top=top)
        ops = []
        inherited = 0
        op = op_head(d.heads)
        try:
            for b in blocks:
                if not is_node(b, op):
                    return None  # (an op without a name or a type: the parent reads the chunk again, and refuses it at its line)
                if b.parents and b.parents[0] is _INHERITED:
                    inherited += 1
                    b = b._replace(parents=(None,) + b.parents[1:])
                ops.append(_record(b, _op_attrs(g, b, d.name, self.full_parse_max, canonical=not w.general), d.name))
        except PbtxtError:
            return None  # (the parent scans again from the chunk's start)
        if getattr(top, "warned", None) or g.strict.skipped != skipped:
            return None  # (a graph's field it has not, warned of or skipped: the parent reads the chunk again, and says so)
        end_state: Optional[_End] = None
        frames = w.open_frames
        if frames is None:  # the chunk ends at the top level
            end_state = _End(False, None, False)
        elif len(frames) == 1:
            f = frames[0]
            if f.name == d.path[0] and f.kind == ANCESTOR and f.block is None and f.closer == "}" and not f.in_list:
                end_state = _End(True, None if f.label is _INHERITED else f.label, f.label is _INHERITED)
        return _Result(ops, inherited, end_state, w.end_state["lines"])


def load(g: GraphFile, d: Any, jobs: int, full_parse_max: int, *, split_bytes: Optional[int] = None) -> Optional[List[Any]]:
    """The op records of the dump on ``jobs`` processes (see the module's docstring); None:
    take the single-process path. ``split_bytes``: see :func:`plan`."""
    bounds = plan(g, d.path, jobs, split_bytes=split_bytes)
    if bounds is None:
        return None
    ranges = list(zip(bounds, bounds[1:]))
    job = _Job(g, d, full_parse_max)
    try:
        pool = Pool(min(jobs, len(ranges)), [job.load])
    except PoolError:  # (no more processes allowed: one will do)
        return None
    ops: List[Any] = []
    line = 1  # the first line of the next chunk
    in_graph, label = False, None  # the true state at the next chunk's start
    done = 0
    # Labels reach the records only as a ge_proto op's graph (a ge_onnx record has none; nothing
    # else in the scan depends on them): for ge_onnx, whose graph names its ops at its end, a
    # chunk may start inside a graph not labelled yet.
    labels = d.name == "ge_proto"
    try:
        with pool:
            tasks = [(i, s, e) for i, (s, e) in enumerate(ranges)]
            for r in pool.map(job.load, tasks, ahead=2 * jobs):
                if r is None or r.end is None or (done and not (in_graph and (label is not None or not labels))):
                    break
                shift = line - 1
                for k, op in enumerate(r.ops):
                    if k < r.inherited and labels:
                        ops.append(op.shifted(shift, graph=label))
                    else:
                        ops.append(op.shifted(shift))
                line += r.lines
                in_graph, label = r.end.inside, (label if r.end.inherited else r.end.label)
                done += 1
    except PoolError:  # a worker died: go on alone
        pass
    if done < len(ranges):
        start = ranges[done][0]
        outer = [_graph_frame(d.path[0], label)] if in_graph else None
        ops.extend(ops_from(g, d, full_parse_max, start=start, line=line, outer=outer))
    else:
        err = g.changed()
        if err is not None:
            raise err
    return ops
