"""The few op attributes GE logic needs, and how to read them from a parsed or skimmed op."""
from __future__ import annotations

from typing import Any, Dict, List

from .._model import Message

_LIB = "_ge_attr_op_kernel_lib_name"
_ORIG_NAMES = "_datadump_original_op_names"
_ORIGIN_NAME = "_datadump_origin_name"
_ONNX_ORIGIN = "output_desc_attr__datadump_origin_name:"
_WANTED = frozenset({_ORIG_NAMES, "_no_task", _LIB, "original_type", "_parent_node_index"})
_ONNX_WANTED = _WANTED | {"id", "stream_id"}


def _truthy(v: Any) -> bool:
    return v in ("true", "True", "t", 1)


def _int(v: Any, default: int = 0) -> int:
    if isinstance(v, int):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _attrs_of(op: Message, dialect: str) -> Dict[str, Any]:
    """The attributes GE logic needs, from a parsed (or skimmed) op message."""
    out: Dict[str, Any] = {"lib": "", "no_task": False, "original_type": "", "original_names": (),
                           "origin_names": (), "parent_index": None}
    origin: List[str] = []
    if dialect == "ge_onnx":
        for a in op.all("attribute"):
            key = a.get("name")
            if not isinstance(key, str):
                continue
            if key.startswith(_ONNX_ORIGIN):
                s = a.get("s")
                if isinstance(s, str) and s not in origin:
                    origin.append(s)
            elif key == _LIB:
                out["lib"] = a.get("s", "") or ""
            elif key == "_no_task":
                out["no_task"] = _truthy(a.get("i", 0)) or _truthy(a.get("b"))
            elif key == "original_type":
                out["original_type"] = a.get("s", "") or ""
            elif key == "_parent_node_index":
                out["parent_index"] = _int(a.get("i", 0))
            elif key == _ORIG_NAMES:
                out["original_names"] = tuple(s for s in a.all("strings") if isinstance(s, str))
            elif key in ("id", "stream_id"):
                out[key] = _int(a.get("i", 0))
        out["origin_names"] = tuple(origin)
        return out
    for a in op.all("attr"):
        key = a.get("key")
        if key not in _WANTED:
            continue
        v = a.get("value")
        if not isinstance(v, Message):
            continue
        if key == _LIB:
            out["lib"] = v.get("s", "") or ""
        elif key == "_no_task":
            out["no_task"] = _truthy(v.get("b"))
        elif key == "original_type":
            out["original_type"] = v.get("s", "") or ""
        elif key == "_parent_node_index":
            out["parent_index"] = _int(v.get("i", 0))
        elif key == _ORIG_NAMES:
            lst = v.get("list")
            out["original_names"] = tuple(s for s in lst.all("s") if isinstance(s, str)) if isinstance(lst, Message) else ()
    for od in op.all("output_desc"):
        if not isinstance(od, Message):
            continue
        for a in od.all("attr"):
            if a.get("key") == _ORIGIN_NAME:
                v = a.get("value")
                s = v.get("s") if isinstance(v, Message) else None
                if isinstance(s, str) and s not in origin:
                    origin.append(s)
    out["origin_names"] = tuple(origin)
    return out
