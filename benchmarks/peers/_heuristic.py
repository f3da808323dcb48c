"""The fp/bp heuristic the naive and protobuf peers share: fp is the first compute op that is not
part of an initializer, the input pipeline or a gradient; bp the last op under ``gradients/`` that
is not a pass-through."""

from __future__ import annotations

from typing import Iterable, Optional, Tuple

COMPUTE = {"MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2", "Conv2D", "Conv3D",
           "DepthwiseConv2dNative", "Conv2DBackpropInput", "Einsum"}
SKIP = ("Initializer/", "gradients/", "IteratorGetNext", "normalize_element", "save/", "input")
PASS = {"Identity", "NoOp", "Const"}


def fp_bp(pairs: Iterable[Tuple[str, str]]) -> Tuple[Optional[str], Optional[str]]:
    """``(fp, bp)`` over ``(name, op)`` pairs in file order."""
    fp = bp = None
    for name, op in pairs:
        if fp is None and op in COMPUTE and not any(s in name for s in SKIP):
            fp = name
        if name.startswith("gradients/") and op not in PASS:
            bp = name
    return fp, bp
