"""A run's rows and the bracket found while the tasks stream past, in bounded memory.

:class:`Bracketer` is given the step trace's iterations first, then each task once: it keeps per
iteration only the best opener (the first compute task at or after FP Start) and closer (the last
compute task ending at or before BP End) so far, and one bit per (stream, task id) for the trace-task
gap check (task ids are 16-bit in the runtime: 8 KiB per stream; larger ids go to a set). So memory
follows the iterations and streams, not the task count.
"""
from __future__ import annotations

import bisect
from typing import Any, Dict, List, Optional, Set, Tuple

from .._kit import NamedTuple


class Iteration(NamedTuple):
    id: int
    fp_start: float  # µs; 0: the fp point was not matched
    bp_end: float  # µs; 0: the bp point was not matched
    iteration_end: Optional[float]
    iteration_time: Optional[float]  # µs
    fp_bp_time: Optional[float]  # µs, as the profiler wrote it (else BP End - FP Start)
    where: str  # file:line (CSV) or file (JSON) it came from


class Task(NamedTuple):
    start: float
    end: float
    stream: Optional[int]
    task_id: Optional[int]
    name: str
    op: Optional[str]
    task_type: Optional[str]


#: Task types that are not an op's computation (synchronisation, copies, collectives, traces).
NOT_COMPUTE = frozenset({
    "NOTIFY_WAIT", "NOTIFY_RECORD", "EVENT_RECORD", "EVENT_WAIT", "EVENT_RESET", "MEMCPY_ASYNC", "MEMCPY",
    "REDUCE_ASYNC", "REDUCE_ASYNC_V2", "HCCL", "PROFILER_TRACE", "PROFILER_TRACE_EX", "MODEL_END_GRAPH",
    "STARS_COMMON", "CAPTURE_RECORD", "CAPTURE_WAIT", "WRITE_VALUE", "LABEL_SET", "LABEL_SWITCH", "LABEL_GOTO",
})


def is_compute(t: Task) -> bool:
    return t.task_type is None or t.task_type.upper() not in NOT_COMPUTE


class Bracketer:
    """Per iteration the opener and closer, fed one task at a time (:meth:`add`)."""

    def __init__(self, iterations: List[Iteration]) -> None:
        self.iterations = sorted(iterations, key=lambda i: i.id)
        its = self.iterations
        self._hi: List[Optional[float]] = [
            i.iteration_end or (its[n + 1].fp_start if n + 1 < len(its) else None) for n, i in enumerate(its)]
        self._lo: List[Optional[float]] = [(its[n - 1].iteration_end or its[n - 1].bp_end) if n else None for n in range(len(its))]
        fps = sorted((i.fp_start, n) for n, i in enumerate(its) if i.fp_start)
        bps = sorted((i.bp_end, n) for n, i in enumerate(its) if i.bp_end)
        self._fp_at, self._fp_n = [f for f, _ in fps], [n for _, n in fps]
        self._bp_at, self._bp_n = [b for b, _ in bps], [n for _, n in bps]
        self.opener: List[Optional[Task]] = [None] * len(its)
        self.closer: List[Optional[Task]] = [None] * len(its)
        self._bits: Dict[int, bytearray] = {}
        self._big: Set[Tuple[int, int]] = set()
        self._big_span: Dict[int, Tuple[int, int]] = {}  # per stream, the least and greatest id in _big
        self.count = 0
        self.first: Optional[Task] = None  # the first task read (for tests and messages)

    def add(self, t: Task) -> None:
        self.count += 1
        if self.first is None:
            self.first = t
        if t.task_id is not None:
            s = -1 if t.stream is None else t.stream
            if 0 <= t.task_id < 65536:
                b = self._bits.get(s)
                if b is None:
                    b = self._bits[s] = bytearray(8192)
                b[t.task_id >> 3] |= 1 << (t.task_id & 7)
            else:
                self._big.add((s, t.task_id))
                least, most = self._big_span.get(s, (t.task_id, t.task_id))
                self._big_span[s] = (min(least, t.task_id), max(most, t.task_id))
        if not is_compute(t):
            return
        k = bisect.bisect_right(self._fp_at, t.start) - 1
        if k >= 0:
            n = self._fp_n[k]
            it, hi = self.iterations[n], self._hi[n]
            if (hi is None or t.start <= hi) and (not it.bp_end or t.start <= it.bp_end):
                o = self.opener[n]
                if o is None or t.start < o.start:
                    self.opener[n] = t
        k = bisect.bisect_left(self._bp_at, t.end)
        if k < len(self._bp_at):
            n = self._bp_n[k]
            it, lo = self.iterations[n], self._lo[n]
            if (not it.fp_start or t.end >= it.fp_start) and (lo is None or t.start >= lo):
                c = self.closer[n]
                if c is None or t.end >= c.end:
                    self.closer[n] = t

    def has(self, stream: Optional[int], task_id: int) -> bool:
        s = -1 if stream is None else stream
        if 0 <= task_id < 65536:
            b = self._bits.get(s)
            return b is not None and bool(b[task_id >> 3] & (1 << (task_id & 7)))
        return (s, task_id) in self._big

    def beyond(self, stream: Optional[int], task_id: int, step: int) -> bool:
        """The stream has a task id past ``task_id`` in direction ``step`` (-1: below, +1: above)."""
        s = -1 if stream is None else stream
        span = self._big_span.get(s)
        if span is not None and (span[0] < task_id if step < 0 else span[1] > task_id):
            return True
        b = self._bits.get(s)
        if b is None:
            return False
        if task_id >= 65536:
            return step < 0 and b.count(0) < len(b)
        k, bit = task_id >> 3, task_id & 7
        if step < 0:
            return bool(b[k] & ((1 << bit) - 1)) or b.count(0, 0, k) < k
        return bool(b[k] >> (bit + 1)) or b.count(0, k + 1) < len(b) - k - 1

    def op(self, t: Optional[Task], step: int, op_type: Any) -> Optional[Dict[str, Any]]:
        if t is None:
            return None
        gap: Optional[Dict[str, Any]] = None
        if t.task_id is not None:
            nxt = t.task_id + step
            if nxt < 0:
                gap = {"task_id": None, "missing": None}
            elif self.has(t.stream, nxt):
                gap = {"task_id": nxt, "missing": False}
            else:  # skipped only if the stream's timeline goes on past it; else it may just start there
                gap = {"task_id": nxt, "missing": True if self.beyond(t.stream, nxt, step) else None}
        return {"name": t.name, "op": op_type(t), "task_type": t.task_type, "stream": t.stream, "task_id": t.task_id,
                "start": t.start, "end": t.end, "trace_gap": gap}
