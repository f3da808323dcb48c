"""Peer ``protobuf``: protobuf's ``text_format.Parse`` of the whole file into a ``GraphDef`` whose
types are built from ``descriptor_pb2`` at run time (no TensorFlow), then the shared fp/bp
heuristic over its nodes. ``python -m benchmarks.peers.protobuf_text FILE``

Needs ``pip install -r benchmarks/requirements.txt``. ``library { ... }`` (FunctionDefLibrary) is
not modelled: it is skipped as an unknown field.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

from benchmarks.peers._heuristic import fp_bp

F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
T = ".tensorflow."
_DTYPES = ["INVALID", "FLOAT", "DOUBLE", "INT32", "UINT8", "INT16", "INT8", "STRING", "COMPLEX64",
           "INT64", "BOOL", "QINT8", "QUINT8", "QINT32", "BFLOAT16", "QINT16", "QUINT16", "UINT16",
           "COMPLEX128", "HALF", "RESOURCE", "VARIANT", "UINT32", "UINT64", "FLOAT8_E5M2",
           "FLOAT8_E4M3FN", "INT4", "UINT4"]


def _get_cls(desc: Any) -> Any:
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory().GetPrototype(desc)


def _fld(m: Any, name: str, num: int, typ: int, label: int = OPT, type_name: Optional[str] = None, *,
         packed: Optional[bool] = None) -> Any:
    f = m.field.add(name=name, number=num, type=typ, label=label)
    if type_name:
        f.type_name = type_name
    if packed is not None:
        f.options.packed = packed
    return f


def _map_field(m: Any, name: str, num: int, value_type_name: str) -> None:
    entry = m.nested_type.add(name=name[0].upper() + name[1:] + "Entry")
    entry.options.map_entry = True
    _fld(entry, "key", 1, F.TYPE_STRING)
    _fld(entry, "value", 2, F.TYPE_MESSAGE, type_name=value_type_name)
    _fld(m, name, num, F.TYPE_MESSAGE, REP, ".tensorflow.%s.%s" % (m.name, entry.name))


def _tensor_messages(fd: Any) -> None:
    """DataType, TensorShapeProto, TensorProto."""
    dt = fd.enum_type.add(name="DataType")
    for i, n in enumerate(_DTYPES):
        dt.value.add(name="DT_" + n, number=i)
    for i, n in enumerate(_DTYPES[1:], 1):
        dt.value.add(name="DT_%s_REF" % n, number=100 + i)
    shp = fd.message_type.add(name="TensorShapeProto")
    dim = shp.nested_type.add(name="Dim")
    _fld(dim, "size", 1, F.TYPE_INT64)
    _fld(dim, "name", 2, F.TYPE_STRING)
    _fld(shp, "dim", 2, F.TYPE_MESSAGE, REP, T + "TensorShapeProto.Dim")
    _fld(shp, "unknown_rank", 3, F.TYPE_BOOL)
    ten = fd.message_type.add(name="TensorProto")
    _fld(ten, "dtype", 1, F.TYPE_ENUM, type_name=T + "DataType")
    _fld(ten, "tensor_shape", 2, F.TYPE_MESSAGE, type_name=T + "TensorShapeProto")
    _fld(ten, "version_number", 3, F.TYPE_INT32)
    _fld(ten, "tensor_content", 4, F.TYPE_BYTES)
    _fld(ten, "float_val", 5, F.TYPE_FLOAT, REP, packed=True)
    _fld(ten, "double_val", 6, F.TYPE_DOUBLE, REP, packed=True)
    _fld(ten, "int_val", 7, F.TYPE_INT32, REP, packed=True)
    _fld(ten, "string_val", 8, F.TYPE_BYTES, REP)
    _fld(ten, "int64_val", 10, F.TYPE_INT64, REP, packed=True)
    _fld(ten, "bool_val", 11, F.TYPE_BOOL, REP, packed=True)
    _fld(ten, "half_val", 13, F.TYPE_INT32, REP, packed=True)


def _attr_messages(fd: Any) -> None:
    """NameAttrList and AttrValue (with its ListValue and the ``value`` oneof)."""
    nal = fd.message_type.add(name="NameAttrList")
    _fld(nal, "name", 1, F.TYPE_STRING)
    _map_field(nal, "attr", 2, T + "AttrValue")
    av = fd.message_type.add(name="AttrValue")
    lv = av.nested_type.add(name="ListValue")
    _fld(lv, "s", 2, F.TYPE_BYTES, REP)
    _fld(lv, "i", 3, F.TYPE_INT64, REP, packed=True)
    _fld(lv, "f", 4, F.TYPE_FLOAT, REP, packed=True)
    _fld(lv, "b", 5, F.TYPE_BOOL, REP, packed=True)
    _fld(lv, "type", 6, F.TYPE_ENUM, REP, T + "DataType", packed=True)
    _fld(lv, "shape", 7, F.TYPE_MESSAGE, REP, T + "TensorShapeProto")
    _fld(lv, "tensor", 8, F.TYPE_MESSAGE, REP, T + "TensorProto")
    _fld(lv, "func", 9, F.TYPE_MESSAGE, REP, T + "NameAttrList")
    av.oneof_decl.add(name="value")
    for name, num, typ, tn in (("list", 1, F.TYPE_MESSAGE, T + "AttrValue.ListValue"),
                               ("s", 2, F.TYPE_BYTES, None), ("i", 3, F.TYPE_INT64, None),
                               ("f", 4, F.TYPE_FLOAT, None), ("b", 5, F.TYPE_BOOL, None),
                               ("type", 6, F.TYPE_ENUM, T + "DataType"),
                               ("shape", 7, F.TYPE_MESSAGE, T + "TensorShapeProto"),
                               ("tensor", 8, F.TYPE_MESSAGE, T + "TensorProto"),
                               ("placeholder", 9, F.TYPE_STRING, None),
                               ("func", 10, F.TYPE_MESSAGE, T + "NameAttrList")):
        _fld(av, name, num, typ, type_name=tn).oneof_index = 0


def graphdef_class() -> Any:
    """The ``tensorflow.GraphDef`` message class (NodeDef, VersionDef and what they hold)."""
    fd = descriptor_pb2.FileDescriptorProto(name="bench_tf_graph.proto", package="tensorflow", syntax="proto3")
    _tensor_messages(fd)
    _attr_messages(fd)
    nd = fd.message_type.add(name="NodeDef")
    _fld(nd, "name", 1, F.TYPE_STRING)
    _fld(nd, "op", 2, F.TYPE_STRING)
    _fld(nd, "input", 3, F.TYPE_STRING, REP)
    _fld(nd, "device", 4, F.TYPE_STRING)
    _map_field(nd, "attr", 5, T + "AttrValue")
    vd = fd.message_type.add(name="VersionDef")
    _fld(vd, "producer", 1, F.TYPE_INT32)
    _fld(vd, "min_consumer", 2, F.TYPE_INT32)
    _fld(vd, "bad_consumers", 3, F.TYPE_INT32, REP, packed=True)
    gd = fd.message_type.add(name="GraphDef")
    _fld(gd, "node", 1, F.TYPE_MESSAGE, REP, T + "NodeDef")
    _fld(gd, "version", 3, F.TYPE_INT32)
    _fld(gd, "versions", 4, F.TYPE_MESSAGE, type_name=T + "VersionDef")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return _get_cls(pool.FindMessageTypeByName("tensorflow.GraphDef"))


def main(argv: Optional[Sequence[str]] = None) -> int:
    path = (sys.argv[1:] if argv is None else argv)[0]
    g = graphdef_class()()
    with open(path, encoding="utf-8") as f:
        text_format.Parse(f.read(), g, allow_unknown_field=True)
    fp, bp = fp_bp((n.name, n.op) for n in g.node)
    print(fp)
    print(bp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
