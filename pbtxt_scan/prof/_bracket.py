"""What each iteration bracketed: the op that opened it (the first compute task at or after FP
Start) and the op that closed it (the last compute task ending at or before BP End), with GE's
trace-task gap beside each (GE inserts a profiler trace task on the op's stream just before the fp
op and just after the bp op, so the task id next to the op is missing from the task timeline; it is
claimed only where the stream's task ids go on past it)."""
from __future__ import annotations

import re
import statistics
from typing import Any, Dict, List, Optional

from ._run import Device
from ._tasks import Iteration, Task

#: Op types on the data side of a training step: an fp there brackets the input pipeline.
DATA_SIDE = frozenset({
    "Cast", "IteratorGetNext", "IteratorV2", "GetNext", "DynamicGetNext", "Data", "RefData", "AippData",
    "AnnData", "QueueDequeue", "QueueDequeueV2", "QueueDequeueMany", "QueueDequeueManyV2", "Unstage",
    "DecodeJpeg", "DecodeAndCropJpeg", "DecodeImage", "ParseExample", "ParseExampleV2", "ParseSingleExample",
    "OneHot", "StringToNumber", "Transpose", "TransData", "MakeIterator",
})


def op_type(t: Task) -> str:
    """The task's op type: its OP Type column, else its name's last part without GE/MindSpore's
    ``-opN`` / ``_N`` numbering (``.../Cast-op239`` -> ``Cast``)."""
    if t.op:
        return t.op
    last = t.name.rsplit("/", 1)[-1]
    return re.sub(r"(-op\d+|_\d+)+$", "", last)


def brackets(dev: Device) -> List[Dict[str, Any]]:
    """Per iteration: the step trace's times and the opener and closer tasks (None when the task
    timeline does not cover that iteration, or FP Start / BP End is 0)."""
    b = dev.tasks
    return [{
        "iteration": it.id, "fp_start": it.fp_start, "bp_end": it.bp_end,
        "fp_bp_time": fp_bp(it), "iteration_time": it.iteration_time,
        "opened_by": b.op(b.opener[n], -1, op_type), "closed_by": b.op(b.closer[n], +1, op_type), "where": it.where,
    } for n, it in enumerate(b.iterations)]


def fp_bp(it: Iteration) -> Optional[float]:
    """FP to BP time (µs): the profiler's, else BP End - FP Start; None when either is 0."""
    if not it.fp_start or not it.bp_end:
        return None
    return it.fp_bp_time if it.fp_bp_time is not None else it.bp_end - it.fp_start


def spread(values: List[Optional[float]]) -> Optional[Dict[str, Any]]:
    """Median, min, max and count of the known values (None when there are none)."""
    v = [x for x in values if x is not None]
    if not v:
        return None
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "count": len(v)}


def summary(dev: Device) -> Dict[str, Any]:
    """One device: its iterations' brackets, the times' spread, and the opener and closer most
    iterations agree on (None when no iteration is covered by tasks)."""
    rows = brackets(dev)

    def common(key: str) -> Optional[Dict[str, Any]]:
        seen = [r[key] for r in rows if r[key] is not None]
        if not seen:
            return None
        names = [s["name"] for s in seen]
        best = max(set(names), key=lambda n: (names.count(n), -names.index(n)))
        first = seen[names.index(best)]
        return dict(first, iterations=names.count(best))

    return {
        "device": dev.name, "files": dev.files, "iterations": rows,
        "fp_start_zero": sum(1 for r in rows if not r["fp_start"]),
        "bp_end_zero": sum(1 for r in rows if not r["bp_end"]),
        "fp_bp_time": spread([r["fp_bp_time"] for r in rows]),
        "iteration_time": spread([r["iteration_time"] for r in rows]),
        "opened_by": common("opened_by"), "closed_by": common("closed_by"),
    }


def agree(devices: List[Dict[str, Any]]) -> bool:
    """Every device was bracketed by the same ops (by name) and has the same FP/BP zeros."""
    def key(d: Dict[str, Any]) -> Any:
        return ((d["opened_by"] or {}).get("name"), (d["closed_by"] or {}).get("name"),
                bool(d["fp_start_zero"]), bool(d["bp_end_zero"]))
    return len({key(d) for d in devices}) <= 1
