#!/usr/bin/env python3
"""Write TensorFlow's .proto files under ``tools/protos/`` from the descriptors its wheel compiled in
(a maintainer tool: run it where TensorFlow is installed, never in the project's own environment).

    python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tools/render_tf_protos.py

The wheel ships no .proto sources, only the ``*_pb2`` modules, each holding its file's descriptor
(every message, field, number, label, type, oneof, map entry, enum and reserved range the protoc
of TensorFlow's build saw). This renders each file of the closure of ``graph.proto``,
``meta_graph.proto`` and ``saved_model.proto`` back as .proto text: the schema exactly, the
comments not (they were never compiled in). ``tools/gen_schema.py`` reads the result.
"""
import os
import sys

from google.protobuf import descriptor_pb2

from tensorflow import __version__ as TF_VERSION  # noqa: F401  (loads TensorFlow's descriptors)
from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protos")
HEADER = """\
// Rendered by tools/render_tf_protos.py from the descriptor compiled into the tensorflow-cpu %s
// wheel (PyPI), %s; the schema as TensorFlow's build compiled it, without the comments.
// Source: tensorflow/tensorflow, %s at tag v%s.
// Copyright The TensorFlow Authors. Licensed under the Apache License, Version 2.0
// (http://www.apache.org/licenses/LICENSE-2.0).
"""

_T = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    _T.TYPE_DOUBLE: "double", _T.TYPE_FLOAT: "float", _T.TYPE_INT64: "int64", _T.TYPE_UINT64: "uint64",
    _T.TYPE_INT32: "int32", _T.TYPE_FIXED64: "fixed64", _T.TYPE_FIXED32: "fixed32", _T.TYPE_BOOL: "bool",
    _T.TYPE_STRING: "string", _T.TYPE_BYTES: "bytes", _T.TYPE_UINT32: "uint32", _T.TYPE_SFIXED32: "sfixed32",
    _T.TYPE_SFIXED64: "sfixed64", _T.TYPE_SINT32: "sint32", _T.TYPE_SINT64: "sint64",
}


def closure():
    seen = []

    def walk(fd):
        if fd.name not in [s.name for s in seen]:
            for d in fd.dependencies:
                walk(d)
            seen.append(fd)

    for mod in (graph_pb2, meta_graph_pb2, saved_model_pb2):
        walk(mod.DESCRIPTOR)
    return seen


def type_of(f):
    return SCALARS.get(f.type) or f.type_name


def field_options(f):
    opts = []
    if f.options.HasField("packed"):
        opts.append("packed = %s" % str(f.options.packed).lower())
    if f.options.deprecated:
        opts.append("deprecated = true")
    if f.HasField("default_value"):
        v = f.default_value
        opts.append("default = %s" % ('"%s"' % v if f.type in (_T.TYPE_STRING, _T.TYPE_BYTES) else v))
    return " [%s]" % ", ".join(opts) if opts else ""


def render_enum(e, ind):
    out = ["%senum %s {" % (ind, e.name)]
    if e.options.allow_alias:
        out.append("%s  option allow_alias = true;" % ind)
    for r in e.reserved_range:
        out.append("%s  reserved %s;" % (ind, r.start if r.start == r.end else "%d to %d" % (r.start, r.end)))
    if e.reserved_name:
        out.append("%s  reserved %s;" % (ind, ", ".join('"%s"' % n for n in e.reserved_name)))
    for v in e.value:
        out.append("%s  %s = %d%s;" % (ind, v.name, v.number, " [deprecated = true]" if v.options.deprecated else ""))
    out.append("%s}" % ind)
    return out


def render_message(m, ind, syntax, maps):
    out = ["%smessage %s {" % (ind, m.name)]
    entries = {n.name: n for n in m.nested_type if n.options.map_entry}
    for r in m.reserved_range:
        end = r.end - 1
        out.append("%s  reserved %s;" % (ind, r.start if r.start == end else "%d to %s" % (r.start, "max" if end >= 536870911 else end)))
    if m.reserved_name:
        out.append("%s  reserved %s;" % (ind, ", ".join('"%s"' % n for n in m.reserved_name)))
    for e in m.enum_type:
        out += render_enum(e, ind + "  ")
    for n in m.nested_type:
        if not n.options.map_entry:
            out += render_message(n, ind + "  ", syntax, maps)
    synthetic = {f.oneof_index for f in m.field if f.proto3_optional}
    done = set()
    for f in m.field:
        if f.HasField("oneof_index") and f.oneof_index not in synthetic:
            k = f.oneof_index
            if k in done:
                continue
            done.add(k)
            out.append("%s  oneof %s {" % (ind, m.oneof_decl[k].name))
            for g in m.field:
                if g.HasField("oneof_index") and g.oneof_index == k:
                    out.append("%s    %s %s = %d%s;" % (ind, type_of(g), g.name, g.number, field_options(g)))
            out.append("%s  }" % ind)
            continue
        short = f.type_name.rsplit(".", 1)[-1]
        if f.label == _T.LABEL_REPEATED and short in entries:
            kf, vf = entries[short].field
            out.append("%s  map<%s, %s> %s = %d%s;" % (ind, type_of(kf), type_of(vf), f.name, f.number, field_options(f)))
            continue
        label = ""
        if f.label == _T.LABEL_REPEATED:
            label = "repeated "
        elif syntax == "proto2":
            label = "required " if f.label == _T.LABEL_REQUIRED else "optional "
        elif f.proto3_optional:
            label = "optional "
        out.append("%s  %s%s %s = %d%s;" % (ind, label, type_of(f), f.name, f.number, field_options(f)))
    out.append("%s}" % ind)
    return out


def render(fd):
    p = descriptor_pb2.FileDescriptorProto()
    fd.CopyToProto(p)
    syntax = p.syntax or "proto2"
    module = fd.name.replace(".proto", "_pb2.py")
    out = [HEADER % (TF_VERSION, module, fd.name, TF_VERSION) if fd.name.startswith("tensorflow/") else
           "// Rendered by tools/render_tf_protos.py from the descriptor in the protobuf package TensorFlow\n"
           "// %s loads (%s). Copyright Google Inc. Licensed under the BSD 3-Clause License.\n" % (TF_VERSION, fd.name)]
    out.append('syntax = "%s";' % syntax)
    out.append("")
    out.append("package %s;" % p.package)
    out.append("")
    out += ['import "%s";' % d for d in p.dependency]
    if p.dependency:
        out.append("")
    for e in p.enum_type:
        out += render_enum(e, "") + [""]
    for m in p.message_type:
        out += render_message(m, "", syntax, {}) + [""]
    return "\n".join(out)


def main():
    for fd in closure():
        path = os.path.join(OUT, fd.name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(render(fd))
        print(path, file=sys.stderr)


if __name__ == "__main__":
    main()
