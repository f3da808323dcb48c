"""One binary NodeDef as protobuf text format, printed the way ``tf.io.write_graph`` prints it.

That is ``google.protobuf.text_format.MessageToString(msg, float_format='')``: fields in field-number
order, two-space indents, map entries sorted by key as ``attr { key: ... value { ... } }``, strings
and bytes C-escaped (``\\n \\r \\t \\" \\' \\\\``, octal for other bytes under 0x20 or from 0x7f, so
UTF-8 prints as octal), enums by name (``type: DT_FLOAT``; a number TensorFlow's enum lacks is
printed as that number), float and double as the shortest ``repr`` of the double (a float32 0.1
prints ``0.10000000149011612``; ``inf``, ``-inf``, ``nan``), proto3 scalars left out when they
hold their default unless they sit in a ``oneof`` (``b: false`` in an ``AttrValue``). Unknown
fields are left out, as ``text_format`` does by default.

The mini-schema: every message and field number is from TensorFlow's ``.proto`` files (repo
``tensorflow/tensorflow`` and its mirror ``buildbuddy-io/tensorflow-proto``):
``tensorflow/core/framework/node_def.proto`` (NodeDef, NodeDef.ExperimentalDebugInfo),
``attr_value.proto`` (AttrValue, AttrValue.ListValue, NameAttrList), ``tensor.proto`` (TensorProto,
VariantTensorDataProto), ``tensor_shape.proto`` (TensorShapeProto, its Dim), ``resource_handle.proto``
(ResourceHandleProto, its DtypeAndShape), ``full_type.proto`` (FullTypeDef, FullTypeId) and
``types.proto`` (DataType). Newer ``FullTypeId`` values (``TFT_ENCODED`` 1004, ``TFT_SHAPE_TENSOR``
1005, ``TFT_ITERATOR`` 10104) are not in those copies: they are from a generated copy of TF's
``full_type.proto`` (netron's ``tf-proto.js``), and TF 2.15.1 writes 1005 where its text says
``TFT_SHAPE_TENSOR`` (``tests/data/binary``).
"""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Tuple, Union

from .._errors import PbtxtError
from ._wire_read import _varint_slow

# ---- enums ---------------------------------------------------------------------------------

_DT = (
    "INVALID FLOAT DOUBLE INT32 UINT8 INT16 INT8 STRING COMPLEX64 INT64 BOOL QINT8 QUINT8 QINT32 "
    "BFLOAT16 QINT16 QUINT16 UINT16 COMPLEX128 HALF RESOURCE VARIANT UINT32 UINT64"
).split()
DATA_TYPES: Dict[int, str] = {k: "DT_" + n for k, n in enumerate(_DT)}
DATA_TYPES.update({k + 100: "DT_%s_REF" % n for k, n in enumerate(_DT) if k})

FULL_TYPE_IDS: Dict[int, str] = {
    0: "TFT_UNSET", 1: "TFT_VAR", 2: "TFT_ANY", 3: "TFT_PRODUCT", 4: "TFT_NAMED", 20: "TFT_FOR_EACH",
    100: "TFT_CALLABLE", 1000: "TFT_TENSOR", 1001: "TFT_ARRAY", 1002: "TFT_OPTIONAL", 1003: "TFT_LITERAL",
    1004: "TFT_ENCODED", 1005: "TFT_SHAPE_TENSOR", 10104: "TFT_ITERATOR",
    200: "TFT_BOOL", 201: "TFT_UINT8", 202: "TFT_UINT16", 203: "TFT_UINT32", 204: "TFT_UINT64",
    205: "TFT_INT8", 206: "TFT_INT16", 207: "TFT_INT32", 208: "TFT_INT64", 209: "TFT_HALF",
    210: "TFT_FLOAT", 211: "TFT_DOUBLE", 212: "TFT_COMPLEX64", 213: "TFT_COMPLEX128", 214: "TFT_STRING",
    215: "TFT_BFLOAT16", 10102: "TFT_DATASET", 10103: "TFT_RAGGED", 10202: "TFT_MUTEX_LOCK",
    10203: "TFT_LEGACY_VARIANT",
}

# ---- the mini-schema -----------------------------------------------------------------------
# field -> (name, type, label); label: "1" singular, "o" singular in a oneof, "*" repeated,
# "map" (entries key = 1, value = 2). A type is a scalar name, ("enum", names) or a message name.

_ENUM_DT = ("enum", DATA_TYPES)
SCHEMA: Dict[str, Dict[int, Tuple[str, Any, str]]] = {
    "NodeDef": {
        1: ("name", "string", "1"), 2: ("op", "string", "1"), 3: ("input", "string", "*"),
        4: ("device", "string", "1"), 5: ("attr", ("string", "AttrValue"), "map"),
        6: ("experimental_debug_info", "NodeDef.ExperimentalDebugInfo", "1"),
        7: ("experimental_type", "FullTypeDef", "1"),
    },
    "NodeDef.ExperimentalDebugInfo": {1: ("original_node_names", "string", "*"), 2: ("original_func_names", "string", "*")},
    "FullTypeDef": {
        1: ("type_id", ("enum", FULL_TYPE_IDS), "1"), 2: ("args", "FullTypeDef", "*"),
        3: ("s", "string", "o"), 4: ("i", "int64", "o"),
    },
    "AttrValue": {
        1: ("list", "AttrValue.ListValue", "o"), 2: ("s", "bytes", "o"), 3: ("i", "int64", "o"),
        4: ("f", "float", "o"), 5: ("b", "bool", "o"), 6: ("type", _ENUM_DT, "o"),
        7: ("shape", "TensorShapeProto", "o"), 8: ("tensor", "TensorProto", "o"),
        9: ("placeholder", "string", "o"), 10: ("func", "NameAttrList", "o"),
    },
    "AttrValue.ListValue": {
        2: ("s", "bytes", "*"), 3: ("i", "int64", "*"), 4: ("f", "float", "*"), 5: ("b", "bool", "*"),
        6: ("type", _ENUM_DT, "*"), 7: ("shape", "TensorShapeProto", "*"), 8: ("tensor", "TensorProto", "*"),
        9: ("func", "NameAttrList", "*"),
    },
    "NameAttrList": {1: ("name", "string", "1"), 2: ("attr", ("string", "AttrValue"), "map")},
    "TensorShapeProto": {2: ("dim", "TensorShapeProto.Dim", "*"), 3: ("unknown_rank", "bool", "1")},
    "TensorShapeProto.Dim": {1: ("size", "int64", "1"), 2: ("name", "string", "1")},
    "TensorProto": {
        1: ("dtype", _ENUM_DT, "1"), 2: ("tensor_shape", "TensorShapeProto", "1"),
        3: ("version_number", "int32", "1"), 4: ("tensor_content", "bytes", "1"),
        5: ("float_val", "float", "*"), 6: ("double_val", "double", "*"), 7: ("int_val", "int32", "*"),
        8: ("string_val", "bytes", "*"), 9: ("scomplex_val", "float", "*"), 10: ("int64_val", "int64", "*"),
        11: ("bool_val", "bool", "*"), 12: ("dcomplex_val", "double", "*"), 13: ("half_val", "int32", "*"),
        14: ("resource_handle_val", "ResourceHandleProto", "*"),
        15: ("variant_val", "VariantTensorDataProto", "*"), 16: ("uint32_val", "uint32", "*"),
        17: ("uint64_val", "uint64", "*"),
    },
    "ResourceHandleProto": {
        1: ("device", "string", "1"), 2: ("container", "string", "1"), 3: ("name", "string", "1"),
        4: ("hash_code", "uint64", "1"), 5: ("maybe_type_name", "string", "1"),
        6: ("dtypes_and_shapes", "ResourceHandleProto.DtypeAndShape", "*"),
    },
    "ResourceHandleProto.DtypeAndShape": {1: ("dtype", _ENUM_DT, "1"), 2: ("shape", "TensorShapeProto", "1")},
    "VariantTensorDataProto": {
        1: ("type_name", "string", "1"), 2: ("metadata", "bytes", "1"), 3: ("tensors", "TensorProto", "*"),
    },
}

# the wire type each scalar is written with (packed repeated ones also come length-delimited)
_WIRE = {"int64": 0, "int32": 0, "uint64": 0, "uint32": 0, "bool": 0, "enum": 0, "float": 5, "double": 1, "string": 2, "bytes": 2}
_MAX_DEPTH = 64


def _escape_table() -> Dict[int, str]:
    named = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}
    return {b: named.get(b, "\\%03o" % b) for b in range(256) if b in named or b < 0x20 or b >= 0x7F}


_ESCAPES = _escape_table()


def cescape(data: bytes) -> str:
    """Bytes as a text-format string body (protobuf's ``CEscape``)."""
    return data.decode("latin-1").translate(_ESCAPES)


def node_to_text(data: bytes, field: Optional[str] = "node", indent: int = 0, base: int = 0) -> str:
    """The serialized NodeDef ``data`` as text format.

    ``field`` names the enclosing block (``node``, ``node_def``; ``None``: the fields alone).
    ``base`` is the file offset of ``data[0]``, for the offsets of errors (:class:`PbtxtError`).
    """
    out: List[str] = []
    pad = " " * indent
    if field is None:
        _Printer(out, base).message(data, 0, len(data), "NodeDef", indent, 0)
    else:
        out.append(pad + field + " {\n")
        _Printer(out, base).message(data, 0, len(data), "NodeDef", indent + 2, 0)
        out.append(pad + "}\n")
    return "".join(out)


def check_node(data: bytes, base: int = 0) -> None:
    """Raise :class:`PbtxtError` (with the offset) unless the NodeDef ``data`` is well-formed down to
    the last nested value (``attr`` values, tensors, shapes) that the mini-schema knows."""
    _Printer([], base).message(data, 0, len(data), "NodeDef", 0, 0)


def _fields(data: bytes, i: int, end: int, base: int) -> List[Tuple[int, int, Any]]:
    """``(field, wire type, value)`` of one message; a length-delimited value is ``(start, end)``."""
    got: List[Tuple[int, int, Any]] = []
    v: Union[int, Tuple[int, int], bytes]  # (a varint, a length-delimited value's range, or 8 or 4 bytes)
    while i < end:
        off = base + i
        t, i = _varint(data, i, end, base)
        fn, wt = t >> 3, t & 7
        if fn == 0:
            raise PbtxtError("field number 0 is not valid", offset=off)
        if wt == 0:
            v, i = _varint(data, i, end, base)
        elif wt == 2:
            n, i = _varint(data, i, end, base)
            if i + n > end:
                raise PbtxtError("truncated: a field runs past the end of its enclosing message", offset=off)
            v = (i, i + n)
            i += n
        elif wt == 1 or wt == 5:
            n = 8 if wt == 1 else 4
            if i + n > end:
                raise PbtxtError("truncated: a field runs past the end of its enclosing message", offset=off)
            v = data[i : i + n]
            i += n
        elif wt == 3:
            i = _skip_group(data, i, end, base, fn, off)
            continue
        else:
            raise PbtxtError("wire type %d is not valid" % wt if wt > 5 else "end-group tag without a group", offset=off)
        got.append((fn, wt, v))
    return got


def _skip_group(data: bytes, i: int, end: int, base: int, fn: int, off: int) -> int:
    depth = [fn]
    while depth:
        if i >= end:
            raise PbtxtError("truncated: a group has no end tag", offset=off)
        o = base + i
        t, i = _varint(data, i, end, base)
        f2, w2 = t >> 3, t & 7
        if w2 == 0:
            _, i = _varint(data, i, end, base)
        elif w2 == 2:
            n, i = _varint(data, i, end, base)
            i += n
        elif w2 == 1 or w2 == 5:
            i += 8 if w2 == 1 else 4
        elif w2 == 3:
            depth.append(f2)
        elif w2 == 4:
            if depth.pop() != f2:
                raise PbtxtError("end-group tag %d does not match its group" % f2, offset=o)
        else:
            raise PbtxtError("wire type %d is not valid" % w2, offset=o)
    if i > end:
        raise PbtxtError("truncated: a field runs past the end of its enclosing message", offset=off)
    return i


def _varint(data: bytes, i: int, end: int, base: int) -> Tuple[int, int]:
    if i < end and data[i] < 0x80:
        return data[i], i + 1
    v, j = _varint_slow(data[:end], i, base + i)
    return v, j


class _Printer:
    """Text format of one NodeDef into ``out`` (``base``: the file offset of its first byte, for
    the offsets of errors)."""

    __slots__ = ("out", "base")

    def __init__(self, out: List[str], base: int) -> None:
        self.out = out
        self.base = base

    def message(self, data: bytes, i: int, end: int, schema: str, indent: int, depth: int) -> None:
        out, base = self.out, self.base
        if depth > _MAX_DEPTH:
            raise PbtxtError("messages nested more than %d deep" % _MAX_DEPTH, offset=base + i)
        spec = SCHEMA[schema]
        by_field: Dict[int, List[Tuple[int, Any]]] = {}
        for fn, wt, v in _fields(data, i, end, base):
            if fn in spec:
                by_field.setdefault(fn, []).append((wt, v))
        pad = " " * indent
        for fn in sorted(by_field):
            name, typ, label = spec[fn]
            vals = by_field[fn]
            if label == "map":
                self.map(data, vals, name, typ, indent, depth)
            elif isinstance(typ, str) and typ in SCHEMA:
                spans = [v for wt, v in vals if wt == 2]
                if label != "*" and len(spans) > 1:  # a singular message given twice: they merge
                    merged = b"".join(data[s:e] for s, e in spans)
                    spans = [(0, len(merged))]
                    sub = merged  # (offsets of errors inside are approximate)
                else:
                    sub = data
                for s, e in spans:
                    out.append(pad + name + " {\n")
                    self.message(sub, s, e, typ, indent + 2, depth + 1)
                    out.append(pad + "}\n")
            else:
                scalars = _scalars(data, vals, typ)
                if label != "*":
                    scalars = scalars[-1:]
                    if label == "1" and scalars and scalars[0][1]:  # proto3 default: not printed
                        continue
                for text, _default in scalars:
                    out.append(pad + name + ": " + text + "\n")

    def map(self, data: bytes, vals: List[Tuple[int, Any]], name: str, typ: Tuple[str, str], indent: int, depth: int) -> None:
        out, base = self.out, self.base
        entries: Dict[bytes, Tuple[bytes, Optional[Tuple[int, int]]]] = {}
        for wt, v in vals:
            if wt != 2:
                continue
            key = b""
            value: Optional[Tuple[int, int]] = None
            for fn, wt2, v2 in _fields(data, v[0], v[1], base):
                if fn == 1 and wt2 == 2:
                    key = data[v2[0] : v2[1]]
                elif fn == 2 and wt2 == 2:
                    value = v2
            entries[key] = (key, value)  # a repeated key: the last one wins
        pad = " " * indent
        for key in sorted(entries):
            _, value = entries[key]
            out.append(pad + name + " {\n")
            out.append(pad + '  key: "' + cescape(key) + '"\n')
            out.append(pad + "  value {\n")
            if value is not None:
                self.message(data, value[0], value[1], typ[1], indent + 4, depth + 1)
            out.append(pad + "  }\n")
            out.append(pad + "}\n")


def _scalars(data: bytes, vals: List[Tuple[int, Any]], typ: Any) -> List[Tuple[str, bool]]:
    """Each value as (text, is the proto3 default)."""
    kind = typ[0] if isinstance(typ, tuple) else typ
    native = _WIRE[kind]
    out: List[Tuple[str, bool]] = []
    for wt, v in vals:
        if wt == native and wt != 2:
            items = [v]
        elif wt == 2 and native != 2:  # packed
            items = _unpack(data, v, native)
        elif wt == 2 and native == 2:
            raw = data[v[0] : v[1]]
            out.append(('"' + cescape(raw) + '"', not raw))
            continue
        else:
            continue  # a wire type this field does not have: an unknown field
        for x in items:
            out.append(_scalar(x, kind, typ))
    return out


def _unpack(data: bytes, span: Tuple[int, int], native: int) -> List[Any]:
    s, e = span
    if native == 5:
        return [data[k : k + 4] for k in range(s, e - 3, 4)]
    if native == 1:
        return [data[k : k + 8] for k in range(s, e - 7, 8)]
    items = []
    while s < e:
        x, s = _varint(data, s, e, 0)
        items.append(x)
    return items


def _scalar(x: Any, kind: str, typ: Any) -> Tuple[str, bool]:
    if kind == "float":
        f = struct.unpack("<f", x)[0]
        return repr(f), f == 0 and str(f)[0] != "-"
    if kind == "double":
        f = struct.unpack("<d", x)[0]
        return repr(f), f == 0 and str(f)[0] != "-"
    if kind == "bool":
        return ("true" if x else "false"), not x
    if kind == "enum":
        if x >= 1 << 63:
            x -= 1 << 64
        return typ[1].get(x, str(x)), x == 0
    if kind in ("int64", "int32"):
        if x >= 1 << 63:
            x -= 1 << 64
        if kind == "int32":
            x = (x + (1 << 31)) % (1 << 32) - (1 << 31)
        return str(x), x == 0
    if kind == "uint32":
        x &= 0xFFFFFFFF
    return str(x), x == 0
