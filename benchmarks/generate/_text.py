"""Protobuf text format as the C++ and Python printers write it: CEscape escaping, float32 values,
messages as ``(field, value)`` lists rendered with 2-space indents, and the TF AttrValue / NodeDef
helpers every kind builds its nodes from.

A common module: it imports no kind module (nor ``_stamp`` or ``_tf``).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Sequence, Tuple

# --------------------------------------------------------------------------------------------
# escaping and scalar formatting (protobuf text_format / absl::CEscape)
# --------------------------------------------------------------------------------------------


def _make_escape_table() -> Dict[int, str]:
    table: Dict[int, str] = {}
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    for b in range(256):
        if b in named:
            table[b] = named[b]
        elif b < 0x20 or b >= 0x7F:
            table[b] = "\\%03o" % b
    return table


_ESC_TABLE = _make_escape_table()
# the same as a 256-entry list (``str.translate`` reads a list faster than a dict)
ESC_LIST = [_ESC_TABLE.get(b, chr(b)) for b in range(256)]


def cescape(data: bytes) -> str:
    """Escape bytes exactly like protobuf's CEscape (octal for bytes < 0x20, 0x7f, >= 0x80)."""
    return data.decode("latin-1").translate(_ESC_TABLE)


def q(s: str) -> str:
    """Quoted, escaped string literal."""
    return '"' + cescape(s.encode("utf-8")) + '"'


def f32(x: float) -> str:
    """A float32 value as ``MessageToString(float_format='')`` prints it (repr of the double)."""
    return repr(struct.unpack("<f", struct.pack("<f", x))[0])


# --------------------------------------------------------------------------------------------
# generic message rendering: a message is a list of (field, value); value is a preformatted
# scalar string or a nested list (sub-message).
# --------------------------------------------------------------------------------------------

Fields = List[Tuple[str, Any]]


def _render(fields: Fields, indent: int, out: List[str]) -> None:
    pad = " " * indent
    for name, val in fields:
        if isinstance(val, list):
            out.append(pad + name + " {")
            _render(val, indent + 2, out)
            out.append(pad + "}")
        else:
            out.append(pad + name + ": " + val)


def render(fields: Fields, indent: int = 0) -> str:
    out: List[str] = []
    _render(fields, indent, out)
    return "\n".join(out) + "\n"


# ---- TF AttrValue helpers ----------------------------------------------------------------


def av_type(t: str) -> Fields:
    return [("type", t)]


def av_b(v: bool) -> Fields:
    return [("b", "true" if v else "false")]


def av_s(s: str) -> Fields:
    return [("s", q(s))]


def av_i(i: int) -> Fields:
    return [("i", str(i))]


def av_list_s(xs: Sequence[str]) -> Fields:
    return [("list", [("s", q(x)) for x in xs])]


def av_list_type(ts: Sequence[str]) -> Fields:
    return [("list", [("type", t) for t in ts])]


def shape_msg(dims: Sequence[int]) -> Fields:
    # proto3: a zero size is the default and is not printed (``dim {`` + ``}``)
    return [("dim", [("size", str(d))] if d != 0 else []) for d in dims]


def av_shape(dims: Sequence[int]) -> Fields:
    return [("shape", shape_msg(dims))]


def av_list_shape(shapes: Sequence[Sequence[int]]) -> Fields:
    return [("list", [("shape", shape_msg(d)) for d in shapes])]


def av_tensor(dtype: str, dims: Sequence[int], vals: Fields) -> Fields:
    return [("tensor", [("dtype", dtype), ("tensor_shape", shape_msg(dims))] + list(vals))]


def av_func(name: str) -> Fields:
    return [("func", [("name", q(name))])]


def attr_entries(attrs: Optional[Dict[str, Fields]]) -> Fields:
    out: Fields = []
    for k in sorted(attrs or {}):
        out.append(("attr", [("key", q(k)), ("value", attrs[k])]))  # type: ignore[index]
    return out


def tf_node(name: str, op: str, inputs: Sequence[str] = (), attrs: Optional[Dict[str, Fields]] = None,
            extra: Fields = ()) -> Fields:  # type: ignore[assignment]
    f: Fields = [("name", q(name)), ("op", q(op))]
    f += [("input", q(i)) for i in inputs]
    f += attr_entries(attrs)
    f += list(extra)
    return [("node", f)]


def nodes_text(*node_lists: Fields) -> str:
    flat: Fields = []
    for n in node_lists:
        flat += n
    return render(flat, 0)

