"""points with --ge: the two answers mapped onto GE's names, and a point GE will not find.

Such a point is not printed as usable: the profiling options leave it ``""`` (GE picks its own),
stderr says so in one line, and ``points`` exits 1 (as ``resolve`` does for a name with no match).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import typer

# The profiler's values (pbtxt_scan.AIC_METRICS / TASK_TRACE), named here so --help lists them
# without loading the rules.
AIC_METRICS = (
    "ArithmeticUtilization", "PipeUtilization", "Memory", "MemoryL0", "ResourceConflictRatio", "MemoryUB",
    "L2Cache", "MemoryAccess", "PipelineExecuteUtilization",
)
TASK_TRACE = ("on", "off", "l0", "l1")


def on_ge(fp_name: Optional[str], bp_name: Optional[str], ge: str) -> Tuple[Any, Optional[str], Optional[str], bool]:
    """The points mapped onto a GE dump: (the mapping, the names GE knows, whether a point is one
    GE will not find). Such a point becomes ``None`` (profiling: ``""``): GE then picks its own,
    where the TF name would trace nothing."""
    from .. import ge as _ge

    mapped = _ge.map_points(fp_name, bp_name, ge)
    auto = mapped.get("ge_auto") or {}
    names = {"fp": fp_name, "bp": bp_name}
    unusable = False
    for kind in ("fp", "bp"):
        m = mapped.get(kind) or {}
        tf_name = names[kind]
        own = (auto.get(kind) or {}).get("name")
        if tf_name and not m.get("ge_name"):
            unusable = True
            names[kind] = None
            typer.echo("%s: no GE op matches %s: GE will not find this point (is it the training graph's dump?); "
                       "%s_point is left \"\" so GE picks its own%s" % (kind, tf_name, kind, " (%s)" % own if own else ""), err=True)
            continue
        if m.get("ge_name") and m.get("ge_name") != tf_name:
            typer.echo("%s: GE renamed %s to %s (%s)" % (kind, tf_name, m["ge_name"], m.get("kind")), err=True)
        if own and m.get("ge_name") and own != m.get("ge_name"):
            typer.echo("note: GE's own automatic %s would be %s, not %s" % (kind, own, m["ge_name"]), err=True)
        names[kind] = m.get("ge_name") or tf_name
    return mapped, names["fp"], names["bp"], unusable


__all__ = ["AIC_METRICS", "TASK_TRACE", "on_ge"]
