"""Ascend profiling options (``PROFILING_OPTIONS`` / ``profiling_options``, ge.md §4.1) for both
``points`` paths (TF names alone, or mapped onto a GE dump)."""
from __future__ import annotations

from typing import Dict, Optional

# The values the profiler takes. aic_metrics: CANN's ProfilingAicoreMetrics (the GE API) and the
# TF adapter's PROFILING_OPTIONS page (the first six on every product; L2Cache, MemoryAccess and
# PipelineExecuteUtilization on the newer ones). task_trace: on/off as PROFILING_OPTIONS
# documents it (any other value is read as off, silently: hence the check), and the l0/l1 levels
# of the newer task-time switch.
AIC_METRICS = (
    "ArithmeticUtilization", "PipeUtilization", "Memory", "MemoryL0", "ResourceConflictRatio", "MemoryUB",
    "L2Cache", "MemoryAccess", "PipelineExecuteUtilization",
)
TASK_TRACE = ("on", "off")  # (the PROFILING_OPTIONS pages document these; another value reads as off)
TRAINING_TRACE = ("on", "off")


def profiling_options(
    fp: Optional[str],
    bp: Optional[str],
    *,
    output: str = "/tmp/profiling",
    training_trace: str = "on",
    task_trace: str = "on",
    aic_metrics: str = "PipeUtilization",
) -> Dict[str, str]:
    """The ``PROFILING_OPTIONS`` JSON object (ge.md §4.1); ``None`` fp/bp become ``""`` (GE auto).
    A value the profiler does not take (``aic_metrics``: :data:`AIC_METRICS`; ``task_trace``:
    :data:`TASK_TRACE`; ``training_trace``: on/off) raises ``ValueError`` naming the valid ones."""
    for key, value, valid in (("aic_metrics", aic_metrics, AIC_METRICS), ("task_trace", task_trace, TASK_TRACE),
                              ("training_trace", training_trace, TRAINING_TRACE)):
        if value not in valid:
            raise ValueError("%s %r: choose from %s" % (key, value, ", ".join(valid)))
    return {
        "output": output,
        "training_trace": training_trace,
        "task_trace": task_trace,
        "fp_point": fp or "",
        "bp_point": bp or "",
        "aic_metrics": aic_metrics,
    }
