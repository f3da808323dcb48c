#!/usr/bin/env python3
"""Make tests/data/schema_wire/cases.json: binary graphs with one change each, and protobuf's verdict
on each (a maintainer tool; run it with a Python that has TensorFlow 2.21's protobuf modules):

    /tmp/s16-tfvenv/bin/python tools/make_wire_corpus.py          # print the cases
    /tmp/s16-tfvenv/bin/python tools/make_wire_corpus.py --write  # write them

Each case is a fixture of tests/data/binary and a patch, a few ``[offset, bytes replaced, new
bytes (hex)]`` hunks (the change and the length prefixes around it), applied at test time. The
verdict is protobuf's: ``graph_pb2.GraphDef.FromString`` (``meta_graph_pb2.MetaGraphDef``,
``saved_model_pb2.SavedModel``) accepts the bytes or raises, and its message is kept. For a
reject the case also says where pbtxt-scan must point: the offset of the bad field's tag and its
field path (``node[12].attr["T"].type``), worked out here from the change made.

Only the generated ``*_pb2`` modules and protobuf are imported (not ``tensorflow/__init__``).
"""
from __future__ import annotations

import glob
import json
import os
import sys
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "binary")
OUT = os.path.join(ROOT, "tests", "data", "schema_wire", "cases.json")


def _protobuf() -> Dict[str, Any]:
    """The root message classes, by kind, without running TensorFlow's ``__init__``."""
    import importlib.util

    spec = importlib.util.find_spec("google.protobuf")
    assert spec is not None and spec.origin, "no protobuf in this Python"
    site = os.path.dirname(os.path.dirname(os.path.dirname(spec.origin)))
    tf = types.ModuleType("tensorflow")
    tf.__path__ = [os.path.join(site, "tensorflow")]  # type: ignore[attr-defined]
    sys.modules.setdefault("tensorflow", tf)
    from tensorflow.core.framework import graph_pb2  # type: ignore
    from tensorflow.core.protobuf import meta_graph_pb2, saved_model_pb2  # type: ignore

    return {"graphdef": graph_pb2.GraphDef, "metagraph": meta_graph_pb2.MetaGraphDef, "savedmodel": saved_model_pb2.SavedModel}


# --- the wire format, with the descriptors ---------------------------------------------------


def varint(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(data: bytes, i: int) -> Tuple[int, int]:
    v = shift = 0
    while True:
        b = data[i]
        v |= (b & 0x7F) << shift
        i += 1
        if b < 0x80:
            return v, i
        shift += 7


class Field:
    """One field met in the walk: ``path`` (as pbtxt-scan names it), ``fd`` (its descriptor),
    ``tag`` (offset), ``wt``, ``lp`` (the offset of its length prefix), ``start``/``end``
    (payload), ``parents`` (the enclosing fields, outermost first), ``depth``."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def walk(data: bytes, i: int, end: int, desc: Any, path: str, parents: List[Field], depth: int, out: List[Field],
         value_path: Optional[str] = None) -> None:
    """Every field of the message ``data[i:end]`` (of ``desc``, at ``path``) into ``out``, in file
    order, descending into known message fields. ``value_path``: the message is a map entry,
    whose value is named by its key (``attr["T"]``)."""
    counts: Dict[int, int] = {}
    while i < end:
        tag_at = i
        t, i = read_varint(data, i)
        fn, wt = t >> 3, t & 7
        k = counts.get(fn, 0)
        counts[fn] = k + 1
        fd = desc.fields_by_number.get(fn)
        lp = -1
        if wt == 0:
            _, i = read_varint(data, i)
            s = e = i
        elif wt == 2:
            lp = i
            n, s = read_varint(data, i)
            e = i = s + n
        elif wt in (1, 5):
            s = i
            i = e = i + (8 if wt == 1 else 4)
        else:
            raise ValueError("a fixture with a group")
        name = fd.name if fd is not None else "#%d" % fn
        seg = "%s[%d]" % (name, k) if fd is not None and fd.is_repeated else name
        here = value_path if value_path is not None and fn == 2 else path + "." + seg if path else seg
        f = Field(path=here, fd=fd, tag=tag_at, wt=wt, lp=lp, start=s, end=e, parents=parents, depth=depth)
        out.append(f)
        if fd is not None and wt == 2 and fd.message_type is not None:
            vp = None
            if fd.message_type.GetOptions().map_entry:
                vp = "%s[%s]" % (path + "." + name if path else name, _entry_key(data, s, e))
            walk(data, s, e, fd.message_type, here, parents + [f], depth + 1, out, vp)


def _entry_key(data: bytes, i: int, end: int) -> str:
    key: Any = None
    while i < end:
        t, i = read_varint(data, i)
        if t & 7 == 2:
            n, i = read_varint(data, i)
            if t >> 3 == 1:
                key = data[i : i + n]
            i += n
        else:
            v, i = read_varint(data, i)
            if t >> 3 == 1:
                key = v
    if isinstance(key, int):
        return str(key)
    return '"%s"' % (key or b"").decode("utf-8", "backslashreplace").replace('"', '\\"')


# --- changes ---------------------------------------------------------------------------------

Hunk = Tuple[int, int, bytes]


def replace(f: Field, a: int, b: int, new: bytes) -> List[Hunk]:
    """Replace ``data[a:b]`` inside field ``f``'s payload (or its own bytes) with ``new``, and
    every enclosing length prefix by the change in size."""
    delta = len(new) - (b - a)
    hunks: List[Hunk] = [(a, b - a, new)]
    for g in ([f] if a >= f.start else []) + f.parents[::-1]:
        if g.lp < 0 or (g is f and a < g.start):
            continue
        old = g.end - g.start
        hunks.append((g.lp, g.start - g.lp, varint(old + delta)))
        delta += len(varint(old + delta)) - (g.start - g.lp)
    return hunks


def parent_lengths(f: Field, delta: int) -> List[Hunk]:
    """The length prefixes of ``f``'s enclosing fields grown by ``delta`` bytes."""
    hunks: List[Hunk] = []
    for g in f.parents[::-1]:
        old = g.end - g.start
        hunks.append((g.lp, g.start - g.lp, varint(old + delta)))
        delta += len(varint(old + delta)) - (g.start - g.lp)
    return hunks


def apply(data: bytes, hunks: List[Hunk]) -> bytes:
    out = bytearray(data)
    for at, n, new in sorted(hunks, key=lambda h: -h[0]):
        out[at : at + n] = new
    return bytes(out)


def shifted(at: int, hunks: List[Hunk]) -> int:
    """Offset ``at`` of the original after the hunks before it."""
    return at + sum(len(new) - n for a, n, new in hunks if a < at)


def enclosing_path(f: Field) -> str:
    """The path of the message ``f`` is a field of."""
    return f.parents[-1].path if f.parents else ""


def cases_for(name: str, data: bytes, kind: str) -> List[Dict[str, Any]]:
    """The changes made to one fixture."""
    classes = _protobuf()
    fields: List[Field] = []
    walk(data, 0, len(data), classes[kind].DESCRIPTOR, "", [], 0, fields)
    out: List[Dict[str, Any]] = []

    def add(label: str, hunks: List[Hunk], where: Optional[Field] = None, path: Optional[str] = None, at: Optional[int] = None) -> None:
        out.append({"fixture": name, "kind": kind, "case": label, "patch": [[a, n, new.hex()] for a, n, new in sorted(hunks)],
                    "_where": (where, path, at)})

    def pick(pred: Callable[[Field], bool], depths: Tuple[int, ...]) -> List[Field]:
        got: List[Field] = []
        for d in depths:
            c = [f for f in fields if f.depth == d and f.fd is not None and pred(f)]
            if c:
                got.append(c[len(c) // 2])
        return got

    proto3_string = lambda f: f.fd.type == f.fd.TYPE_STRING and f.wt == 2 and f.end > f.start and _syntax(f.fd) == "proto3"  # noqa: E731
    for f in pick(proto3_string, tuple(range(0, 8))):
        add("utf8 %s" % f.path, [(f.start, 1, b"\xff")], f, f.path, f.tag)
    for f in pick(lambda f: f.fd.type == f.fd.TYPE_BYTES and f.wt == 2 and f.end > f.start, (2, 3, 4, 5)):
        add("control: bytes not UTF-8 %s" % f.path, [(f.start, 1, b"\xff")])
    # a known field with another wire type: kept as an unknown field (accepted)
    for f in pick(lambda f: f.wt == 2 and f.fd.type == f.fd.TYPE_STRING, (1, 2, 3, 4)):
        new = varint(f.fd.number << 3) + varint(1)
        add("control: wire type 0 for %s" % f.path, _swap(f, new))
    for f in pick(lambda f: f.wt == 0, (1, 2, 3, 4, 5)):
        new = varint(f.fd.number << 3 | 2) + varint(2) + b"ab"
        add("control: wire type 2 for %s" % f.path, _swap(f, new))
    for f in pick(lambda f: f.wt == 0, (1, 2, 3, 4, 5)):
        new = varint(f.fd.number << 3 | 5) + b"abcd"
        add("control: wire type 5 for %s" % f.path, _swap(f, new))
    # wire type 7 (or 6), and an end-group tag: refused, at the tag, in the enclosing message
    for f in pick(lambda f: f.fd.number < 16, (1, 2, 3, 4, 5)):
        for wt in (6, 7, 4):
            add("wire type %d for %s" % (wt, f.path), [(f.tag, 1, bytes([f.fd.number << 3 | wt]))], f, enclosing_path(f), f.tag)
    # varints out of their type's range: cut to their bits (accepted); over 10 bytes: refused
    for f in pick(lambda f: f.wt == 0, (0, 1, 2, 3, 4, 5)):
        for v, label in (((1 << 40) + 1, "2^40+1"), ((1 << 32) + 1, "2^32+1"), (999, "999"), (2, "2")):
            add("control: varint %s for %s" % (label, f.path), _swap(f, varint(f.fd.number << 3) + varint(v)))
        add("control: 10-byte varint for %s" % f.path, _swap(f, varint(f.fd.number << 3) + b"\xff" * 9 + b"\x7f"))
        add("11-byte varint for %s" % f.path, _swap(f, varint(f.fd.number << 3) + b"\xff" * 10 + b"\x01"), f, f.path, f.tag)
    # a length past the end of its message
    for f in pick(lambda f: f.wt == 2 and bool(f.parents), (1, 2, 3, 4, 5, 6)):
        par = f.parents[-1]
        n = par.end - f.start + 1
        grow = len(varint(n)) - (f.start - f.lp)
        hunks = [(f.lp, f.start - f.lp, varint(n))] + parent_lengths(f, grow)
        add("length past the end for %s" % f.path, hunks, f, f.path, f.tag)
    # unknown fields, a oneof twice, packed and unpacked: accepted
    for f in pick(lambda f: f.wt == 2 and f.fd.message_type is not None, (0, 1, 2, 3)):
        new = varint(99 << 3 | 2) + varint(3) + b"\xff\xfe\xfd"
        add("control: unknown field in %s" % f.path, replace(f, f.end, f.end, new))
    for f in pick(lambda f: f.fd.containing_oneof is not None and f.wt == 0, (2, 3, 4, 5)):
        new = varint(5 << 3) + varint(1)  # (AttrValue.b beside another member)
        add("control: two oneof members in %s" % enclosing_path(f), _after(f, new))
    for f in pick(lambda f: f.wt == 2 and f.fd.is_repeated and f.fd.type in (f.fd.TYPE_INT64, f.fd.TYPE_ENUM), (2, 3, 4, 5, 6)):
        vals = []
        i = f.start
        while i < f.end:
            v, i = read_varint(data, i)
            vals.append(v)
        new = b"".join(varint(f.fd.number << 3) + varint(v) for v in vals)
        add("control: unpacked %s" % f.path, _swap(f, new))
        add("packed cut %s" % f.path, _swap(f, varint(f.fd.number << 3 | 2) + varint(1) + b"\x80"), f, f.path, f.tag)
    for f in pick(lambda f: f.wt == 2 and f.fd.is_repeated and f.fd.type == f.fd.TYPE_FLOAT, (2, 3, 4, 5, 6)):
        add("packed floats of 3 bytes %s" % f.path, _swap(f, varint(f.fd.number << 3 | 2) + varint(3) + b"abc"), f, f.path, f.tag)
    return out


def _syntax(fd: Any) -> str:
    """The syntax of the file that defines ``fd`` (protobuf 7 no longer says it directly)."""
    from google.protobuf import descriptor_pb2

    return descriptor_pb2.FileDescriptorProto.FromString(fd.file.serialized_pb).syntax or "proto2"


def _swap(f: Field, new: bytes) -> List[Hunk]:
    """Field ``f`` (tag to end) replaced by ``new``, the enclosing lengths fixed."""
    delta = len(new) - (f.end - f.tag)
    return [(f.tag, f.end - f.tag, new)] + parent_lengths(f, delta)


def _after(f: Field, new: bytes) -> List[Hunk]:
    """``new`` inserted after field ``f``, the enclosing lengths fixed."""
    return [(f.end, 0, new)] + parent_lengths(f, len(new))


FIXTURES = [
    ("mlp_sgd.pb", "graphdef"),
    ("tf2_gradient_tape.pb", "graphdef"),
    ("mlp_sgd.meta", "metagraph"),
    ("saved_model_keras/saved_model.pb", "savedmodel"),
]


def main(argv: List[str]) -> int:
    classes = _protobuf()
    cases: List[Dict[str, Any]] = []
    for name, kind in FIXTURES:
        with open(os.path.join(DATA, name), "rb") as fh:
            data = fh.read()
        for c in cases_for(name, data, kind):
            where, path, at = c.pop("_where")
            hunks = [(a, n, bytes.fromhex(h)) for a, n, h in c["patch"]]
            changed = apply(data, hunks)
            try:
                classes[kind].FromString(changed)
                c["protobuf"] = "accept"
            except Exception as e:  # (protobuf's DecodeError, whatever its module)
                c["protobuf"] = "reject"
                c["message"] = str(e)
            if c["protobuf"] == "reject" and where is not None:
                c["offset"] = shifted(at, hunks)
                c["end"] = shifted(where.end, hunks)
                c["path"] = path
            cases.append(c)
    text = json.dumps({"protobuf": _version(), "cases": cases}, indent=1) + "\n"
    if "--write" in argv:
        os.makedirs(os.path.dirname(OUT), exist_ok=True)
        with open(OUT, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _version() -> str:
    import google.protobuf

    from google.protobuf.internal import api_implementation  # type: ignore

    return "protobuf %s (%s)" % (google.protobuf.__version__, api_implementation.Type())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
