"""TF name -> the GE ops it became, ranked (tests/data/README.md "## ge/", ge.md §3.3)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Union

from ..graph._input import Source
from ._load import GeBuild, GeOp, load_build

#: Resolve kinds, most trusted first.
KINDS = ("exact", "original_op_names", "origin_name", "suffix", "fused")
_RANK = {k: i for i, k in enumerate(KINDS)}


def _match_kind(op: GeOp, tf: str) -> Optional[str]:
    if op.name == tf:
        return "exact"
    if tf in op.original_names:
        return "original_op_names"
    if tf in op.origin_names:
        return "origin_name"
    return name_match(op.name, tf)


def name_match(ge: str, tf: str) -> Optional[str]:
    """The kind by which the GE name ``ge`` is the TF name ``tf`` on the names alone (``exact``,
    ``suffix``, ``fused``; None: only a dump's original names could tell): what a profiler's
    timeline, which names GE's ops, says without the dump."""
    if ge == tf:
        return "exact"
    n = len(tf)
    if ge.startswith(tf) and len(ge) > n + 1 and ge[n] == "_" and ge[n + 1:].isdigit():
        return "suffix"
    if tf and _contains_whole(ge, tf):
        return "fused"
    return None


def _contains_whole(ge: str, tf: str) -> bool:
    """``tf`` is a whole member of the fused name ``ge``: not a scope above or below another op.

    UB fusion glues member names together (``a/Conv2Db/FusedBatchNormV3_Reduce``) and other passes
    add prefixes and suffixes (``PartitionedCall_x_2``, ``_Reduce``); a ``/`` right before or
    after the match would instead make it a different op in a scope (``gradients/x_grad/...``,
    ``x/shape``), which GE did not make from ``tf``.
    """
    i = ge.find(tf)
    while i >= 0:
        j = i + len(tf)
        if (i == 0 or ge[i - 1] != "/") and (j == len(ge) or ge[j] != "/"):
            return True
        i = ge.find(tf, i + 1)
    return False


def resolve(build: Union[GeBuild, Source], names: Sequence[str]) -> List[Dict[str, Any]]:
    """For each TF name, the GE ops it became, most trusted first.

    Each result: ``{"tf_name", "matches": [{"ge_name", "kind", "line", "type", "id", "graph",
    "task"}], "accepted_as_is", "accepted_via"}``. Kinds, in trust order: ``exact``,
    ``original_op_names`` (GE's ``IsProfPoint`` accepts the TF name as is), ``origin_name``
    (an ``output_desc`` ``_datadump_origin_name``), ``suffix`` (``<name>_<digits>``), ``fused``
    (the GE name contains the TF name). Each op is listed once, under its best kind; within a kind,
    in file order. ``accepted_as_is``: a task-generating op has the name exactly or in its original
    names, so ``fp_point``/``bp_point`` may be set to the TF name unchanged.
    """
    b = build if isinstance(build, GeBuild) else load_build(build)
    out = []
    for tf in names:
        hits = []
        if tf:
            for op in b.ops:
                k = _match_kind(op, tf)
                if k is not None:
                    hits.append((_RANK[k], op.line, k, op))
        hits.sort(key=lambda h: (h[0], h[1]))
        matches = [
            {"ge_name": op.name, "kind": k, "line": op.line, "type": op.type, "id": op.id, "graph": op.graph,
             "task": op.has_task}
            for _, _, k, op in hits
        ]
        via = next((m for m in matches if m["kind"] in ("exact", "original_op_names") and m["task"]), None)
        out.append({
            "tf_name": tf,
            "matches": matches,
            "accepted_as_is": via is not None,
            "accepted_via": via["ge_name"] if via else None,
            "file": b.path,
        })
    return out


def best_match(result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The match to configure: the most trusted one that generates a task, else the most trusted."""
    ms = result["matches"]
    if not ms:
        return None
    return next((m for m in ms if m["task"]), ms[0])


