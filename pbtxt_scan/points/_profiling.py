"""Ascend profiling options (``PROFILING_OPTIONS`` / ``profiling_options``, ge.md §4.1) for both
``points`` paths (TF names alone, or mapped onto a GE dump)."""
from __future__ import annotations

from typing import Dict, Optional


def profiling_options(
    fp: Optional[str],
    bp: Optional[str],
    *,
    output: str = "/tmp/profiling",
    training_trace: str = "on",
    task_trace: str = "on",
    aic_metrics: str = "PipeUtilization",
) -> Dict[str, str]:
    """The ``PROFILING_OPTIONS`` JSON object (ge.md §4.1); ``None`` fp/bp become ``""`` (GE auto)."""
    return {
        "output": output,
        "training_trace": training_trace,
        "task_trace": task_trace,
        "fp_point": fp or "",
        "bp_point": bp or "",
        "aic_metrics": aic_metrics,
    }
