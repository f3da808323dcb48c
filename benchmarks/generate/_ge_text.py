"""GE messages in the C++ ``TextFormat::Print`` layout of ``ge.proto``: OpDef (``op {``), TensorDesc
and GE's list attributes, and the attributes GE and FE put on ops (kernel lib, original op names).
Used by the ``ge`` kind; imports ``_text`` only.
"""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from ._text import Fields, attr_entries, av_b, av_i, av_s, q

AIC = "AIcoreEngine"
AICPU = "aicpu_ascend_kernel"
GE_LOCAL = "DNN_VM_GE_LOCAL_OP_STORE"


def ge_list_s(xs: Sequence[str]) -> Fields:
    return [("list", [("s", q(x)) for x in xs] + [("val_type", "VT_LIST_STRING")])]


def ge_list_i(xs: Sequence[int]) -> Fields:
    return [("list", [("i", str(x)) for x in xs] + [("val_type", "VT_LIST_INT")])]


def ge_desc(dims: Sequence[int], dtype: str = "DT_FLOAT", layout: str = "ND", origin: Optional[str] = None,
            name: Optional[str] = None) -> Fields:
    f: Fields = []
    if name:
        f.append(("name", q(name)))
    f.append(("dtype", dtype))
    f.append(("shape", [("dim", str(d)) for d in dims]))
    f.append(("layout", q(layout)))
    attrs = {"origin_format": av_s(layout), "origin_shape": ge_list_i(dims),
             "origin_data_type": av_s(dtype[3:])}
    if origin:
        attrs["_datadump_origin_name"] = av_s(origin)
        attrs["_datadump_origin_output_index"] = av_i(0)
    f += attr_entries(attrs)
    f.append(("has_out_attr", "true"))
    nbytes = 4 if dtype in ("DT_FLOAT", "DT_INT32") else (2 if dtype == "DT_FLOAT16" else 8)
    f.append(("size", str(max(1, _prod(dims)) * nbytes)))
    f.append(("device_type", q("NPU")))
    if dims:
        f.append(("real_dim_cnt", str(len(dims))))
    return f


def _prod(xs: Sequence[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def ge_op(name: str, typ: str, inputs: Sequence[str], attrs: Dict[str, Fields], op_id: Optional[str], *,
          in_descs: Sequence[Tuple[str, Fields]] = (), out_descs: Sequence[Fields] = (),
          stream: Optional[str] = None, subgraphs: Sequence[str] = ()) -> Fields:
    f: Fields = [("name", q(name)), ("type", q(typ))]
    f += [("input", q(i)) for i in inputs]
    f += attr_entries(attrs)
    f.append(("has_out_attr", "true"))
    if op_id is not None:
        f.append(("id", op_id))
    if stream is not None:
        f.append(("stream_id", stream))
    f += [("input_name", q(n)) for n, _ in in_descs]
    srcs = [i.rsplit(":", 1) for i in inputs if ":" in i and not i.endswith(":-1")]
    f += [("src_name", q(s)) for s, _ in srcs]
    f += [("src_index", i) for _, i in srcs]
    f += [("input_desc", d) for _, d in in_descs]
    f += [("output_desc", d) for d in out_descs]
    f += [("subgraph_name", q(s)) for s in subgraphs]
    return [("op", f)]


def ge_attrs(lib: Optional[str], orig: Optional[Sequence[str]] = None, orig_types: Optional[Sequence[str]] = None,
              extra: Optional[Dict[str, Fields]] = None, no_task: bool = False) -> Dict[str, Fields]:
    a: Dict[str, Fields] = {}
    if lib is not None:
        a["_ge_attr_op_kernel_lib_name"] = av_s(lib)
    if orig is not None:
        a["_datadump_original_op_names"] = ge_list_s(orig)
    if orig_types is not None:
        a["_datadump_original_op_types"] = ge_list_s(orig_types)
    if no_task:
        a["_no_task"] = av_b(True)
    if lib == AIC:
        a["_fe_imply_type"] = av_i(6)
    a.update(extra or {})
    return a

