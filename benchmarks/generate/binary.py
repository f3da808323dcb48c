"""Kind ``binary``: a binary GraphDef (protobuf wire format) of the same nodes as the ``dense`` kind,
or (``--shape copies``, ``_copies``) a real transformer training graph followed by renamed copies of
its nodes as concatenated GraphDef messages, with its text twin.

Usage::

    python -m benchmarks.generate binary --size 1GB -o /tmp/wire-bench/dense.pb

The ``dense`` generator's own templates are compiled from text format to the wire format by a
small line compiler (the writer layout has one field per line): each template that holds whole
nodes is compiled once per set of slot widths (the layer numbers' digit counts fix every length
prefix) into a ``bytes % dict`` format, so stamping a layer costs what it costs in text; the
templates of the few nodes that grow with the layer count (``init``, ``save/SaveV2`` ...) are
compiled line by line as they are written. A GraphDef is written as a sequence of ``node`` fields,
then ``library`` and ``versions``: repeated fields of concatenated messages merge, so no length
prefix spans the whole file. Standard library only.
"""
from __future__ import annotations

import os
import re
import struct
import time
from typing import Any, Dict, List, Optional, Tuple

from . import _copies
from ._stamp import Tmpl, Writer
from .dense import DenseGraph

# ---- the schema of the messages the dense kind writes (field numbers: pbtxt_scan/wire/_wire.py,
# pbtxt_scan/wire/_wire_text.py, and function.proto / op_def.proto / versions.proto for the rest)


def _schema() -> Dict[str, Dict[str, Tuple[int, Any, bool]]]:
    from pbtxt_scan.wire._wire_text import SCHEMA

    out: Dict[str, Dict[str, Tuple[int, Any, bool]]] = {}
    for msg, fields in SCHEMA.items():
        d = out.setdefault(msg, {})
        for num, (name, typ, label) in fields.items():
            if label == "map":
                entry = msg + "." + name + "Entry"
                out[entry] = {"key": (1, typ[0], False), "value": (2, typ[1], False)}
                d[name] = (num, entry, True)
            else:
                d[name] = (num, typ, label == "*")
    out["GraphDef"] = {"node": (1, "NodeDef", True), "library": (2, "FunctionDefLibrary", False),
                       "versions": (4, "VersionDef", False)}
    out["VersionDef"] = {"producer": (1, "int32", False), "min_consumer": (2, "int32", False),
                         "bad_consumers": (3, "int32", True)}
    out["FunctionDefLibrary"] = {"function": (1, "FunctionDef", True)}
    out["FunctionDef"] = {"signature": (1, "OpDef", False), "node_def": (3, "NodeDef", True),
                          "ret": (4, "FunctionDef.RetEntry", True), "attr": (5, "NodeDef.attrEntry", True),
                          "control_ret": (6, "FunctionDef.RetEntry", True)}
    out["FunctionDef.RetEntry"] = {"key": (1, "string", False), "value": (2, "string", False)}
    out["OpDef"] = {"name": (1, "string", False), "input_arg": (2, "OpDef.ArgDef", True),
                    "output_arg": (3, "OpDef.ArgDef", True), "description": (6, "string", False),
                    "is_stateful": (17, "bool", False), "control_output": (20, "string", True)}
    out["OpDef.ArgDef"] = {"name": (1, "string", False), "description": (2, "string", False),
                           "type": (3, out["AttrValue"]["type"][1], False), "type_attr": (4, "string", False)}
    return out


_VARINT_TYPES = {"int64", "int32", "uint64", "uint32", "bool"}
_UNESCAPE = re.compile(rb"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)")
_NAMED = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b'"': b'"', b"'": b"'", b"\\": b"\\", b"a": b"\a", b"b": b"\b",
          b"f": b"\f", b"v": b"\v", b"?": b"?"}
_SLOT = re.compile(rb"@@([A-Z0-9]+)@@")


def _unescape(s: bytes) -> bytes:
    def one(m: "re.Match[bytes]") -> bytes:
        e = m.group(1)
        if e[:1].isdigit():
            return bytes([int(e, 8) & 0xFF])
        if e[:1] == b"x":
            return bytes([int(e[1:], 16)])
        return _NAMED[e]

    return _UNESCAPE.sub(one, s)


def varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


# A piece of output: bytes, or a slot name (filled at stamping time) whose width is known.
Seg = Any


class _Frame:
    __slots__ = ("msg", "segs", "size", "packed_fn", "packed")

    def __init__(self, msg: str) -> None:
        self.msg = msg
        self.segs: List[Seg] = []
        self.size = 0
        self.packed_fn = 0
        self.packed: List[bytes] = []


class Compiler:
    """Text format (the writer layout) to wire format, line by line; the stack lives across calls
    so a node may arrive in pieces."""

    def __init__(self) -> None:
        self.schema = _schema()
        self.stack: List[Tuple[_Frame, str]] = [(_Frame("GraphDef"), "")]
        self.widths: Dict[str, int] = {}

    def at_top(self) -> bool:
        return len(self.stack) == 1

    def take(self) -> List[Seg]:
        """The finished top-level output so far."""
        top = self.stack[0][0]
        self._flush(top)
        segs, top.segs, top.size = top.segs, [], 0
        return segs

    def feed(self, text: bytes) -> None:
        for line in text.split(b"\n"):
            line = line.strip()
            if not line:
                continue
            frame = self.stack[-1][0]
            if line == b"}":  # 1. the end of a block: its tag and length into the parent
                self._flush(frame)
                _, name = self.stack.pop()
                parent = self.stack[-1][0]
                num = self._field(parent, name)[0]
                self._emit(parent, [self._tag(num, 2) + varint(frame.size)] + frame.segs)
            elif line.endswith(b"{"):  # 2. a block opens
                name = line[:-1].strip().decode()
                typ = self._field(frame, name)[1]
                self._flush(frame)
                self.stack.append((_Frame(typ), name))
            else:  # 3. a scalar
                name_b, _, value = line.partition(b": ")
                num, typ, rep = self._field(frame, name_b.decode())
                kind = typ[0] if isinstance(typ, tuple) else typ
                if kind in ("string", "bytes"):
                    self._flush(frame)
                    segs, size = self._string(value[1:-1])
                    self._emit(frame, [self._tag(num, 2) + varint(size)] + segs)
                elif rep:  # repeated numbers are packed (proto3)
                    if frame.packed_fn != num:
                        self._flush(frame)
                        frame.packed_fn = num
                    frame.packed.append(self._scalar(kind, typ, value))
                else:
                    self._flush(frame)
                    wt = 5 if kind == "float" else 1 if kind == "double" else 0
                    self._emit(frame, [self._tag(num, wt) + self._scalar(kind, typ, value)])

    def _field(self, frame: _Frame, name: str) -> Tuple[int, Any, bool]:
        try:
            return self.schema[frame.msg][name]
        except KeyError:
            raise ValueError("binary: no field %r in %s" % (name, frame.msg)) from None

    @staticmethod
    def _tag(num: int, wt: int) -> bytes:
        return varint(num << 3 | wt)

    def _string(self, body: bytes) -> Tuple[List[Seg], int]:
        segs: List[Seg] = []
        size = 0
        pos = 0
        for m in _SLOT.finditer(body):
            lit = _unescape(body[pos : m.start()])
            slot = m.group(1).lower().decode()
            segs += [lit, slot]
            size += len(lit) + self.widths[slot]
            pos = m.end()
        lit = _unescape(body[pos:])
        segs.append(lit)
        return segs, size + len(lit)

    def _scalar(self, kind: str, typ: Any, value: bytes) -> bytes:
        if _SLOT.search(value):
            raise ValueError("binary: a slot outside a string: %r" % value)
        if kind == "float":
            return struct.pack("<f", float(value))
        if kind == "double":
            return struct.pack("<d", float(value))
        if kind == "bool":
            return varint(1 if value == b"true" else 0)
        if kind == "enum":
            names = {v: k for k, v in typ[1].items()}
            v = value.decode()
            return varint(names[v] if v in names else int(v))
        return varint(int(value))

    def _flush(self, frame: _Frame) -> None:
        if frame.packed:
            body = b"".join(frame.packed)
            self._emit(frame, [self._tag(frame.packed_fn, 2) + varint(len(body)) + body])
            frame.packed = []
            frame.packed_fn = 0

    def _emit(self, frame: _Frame, segs: List[Seg]) -> None:
        n = sum(len(s) for s in segs if isinstance(s, bytes))
        n += sum(self.widths[s] for s in segs if not isinstance(s, bytes))
        frame.segs += segs
        frame.size += n


def _format(segs: List[Seg]) -> bytes:
    return b"".join(s.replace(b"%", b"%%") if isinstance(s, bytes) else b"%(" + s.encode() + b")s" for s in segs)


class BinaryWriter:
    """What ``DenseGraph.write`` writes to, turning its text templates into wire format."""

    def __init__(self, path: Optional[str]) -> None:
        self.f = open(path, "wb", buffering=8 << 20) if path is not None else None
        self.bytes = 0
        self.lines = 0
        self.nodes = 0
        self.c = Compiler()
        self._cache: Dict[Tuple[int, Tuple[Tuple[bytes, int], ...]], Optional[bytes]] = {}

    def put(self, t: Tmpl, vals: Optional[Dict[bytes, bytes]] = None) -> int:
        self.nodes += t.nnodes
        if self.c.at_top() and t.fmt is not None:
            key = (id(t), tuple(sorted((k, len(v)) for k, v in (vals or {}).items())))
            fmt = self._cache.get(key, b"")
            if fmt == b"":
                fmt = self._compile(t, vals or {})
                self._cache[key] = fmt
            if fmt is not None:
                self._write(fmt % vals)  # type: ignore[operator]
                return 0
        if not self.c.at_top():  # a repeated part inside an open node (an input per layer ...)
            frame = self.c.stack[-1][0]
            key2 = (id(t), frame.msg, tuple(sorted((k, len(v)) for k, v in (vals or {}).items())))
            rep = self._cache.get(key2, b"")
            if rep == b"":
                rep = self._compile_rep(t, vals or {}, frame.msg)
                self._cache[key2] = rep
            if rep is not None:
                packed_fn, fmt = rep
                data = fmt % vals if vals else fmt.replace(b"%%", b"%")
                if packed_fn:
                    if frame.packed_fn != packed_fn:
                        self.c._flush(frame)
                        frame.packed_fn = packed_fn
                    frame.packed.append(data)
                else:
                    self.c._flush(frame)
                    frame.segs.append(data)
                    frame.size += len(data)
                return 0
        self.c.widths = {}
        self.c.feed(t.stamp(vals))
        if self.c.at_top():
            self._write(b"".join(self.c.take()))  # (no slots: stamped already)
        return 0

    def _compile(self, t: Tmpl, vals: Dict[bytes, bytes]) -> Optional[bytes]:
        """The template as a wire-format ``bytes % vals`` format, if it holds whole nodes."""
        c = Compiler()
        c.widths = {k.decode(): len(v) for k, v in vals.items()}
        try:
            c.feed(t.text.encode("ascii"))
        except ValueError:
            return None
        if not c.at_top():
            return None
        return _format(c.take())

    def _compile_rep(self, t: Tmpl, vals: Dict[bytes, bytes], msg: str) -> Optional[Tuple[int, bytes]]:
        """Scalar lines of an open ``msg`` as ``(packed field or 0, format)``; ``None`` if the
        template is more than that."""
        if "{" in t.text or "}" in t.text:
            return None
        c = Compiler()
        c.stack = [(_Frame(msg), "")]
        c.widths = {k.decode(): len(v) for k, v in vals.items()}
        c.feed(t.text.encode("ascii"))
        top = c.stack[0][0]
        if top.packed and not top.segs:
            return top.packed_fn, b"".join(top.packed).replace(b"%", b"%%")
        c._flush(top)
        return 0, _format(top.segs)

    def _write(self, b: bytes) -> None:
        if self.f is not None:
            self.f.write(b)
        self.bytes += len(b)

    def data(self, b: bytes) -> None:
        raise NotImplementedError("the dense kind writes no raw data")

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


def _ratio(seed: int) -> float:
    """Binary bytes per text byte for the dense kind (measured on a small graph)."""
    w = BinaryWriter(None)
    tw = Writer(os.devnull)
    try:
        DenseGraph(seed).write(w, 4 << 20)
        DenseGraph(seed).write(tw, 4 << 20)
    finally:
        tw.close()
    return w.bytes / float(tw.bytes)


SHAPES = ("dense", "copies")


def generate(path: str, size: int, seed: int = 0, *, shape: str = "dense", twin: Optional[str] = None) -> Dict[str, Any]:
    """Write a binary GraphDef of about ``size`` bytes; returns ``generate``'s metadata.

    ``shape`` ``dense``: the nodes of a ``dense`` graph; ``text_bytes`` is the size of the text
    graph of the same nodes (``generate dense --size <text_bytes> --seed <seed>`` writes it).
    ``copies``: a real transformer training graph followed by renamed copies of its nodes, as
    concatenated GraphDef messages (``_copies``); ``twin``, if given, gets the text of the same
    nodes. Line numbers in ``expected`` are the twin's (binary has none)."""
    if shape not in SHAPES:
        raise ValueError("binary: shape must be one of %s" % (SHAPES,))
    if twin is not None and shape != "copies":
        raise ValueError("binary: a text twin is written for the copies shape (dense has the dense kind)")
    t0 = time.perf_counter()
    tmp = path + ".tmp-gen"
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    w = BinaryWriter(tmp)
    tw = Writer(twin + ".tmp-gen") if twin is not None else None
    try:
        if shape == "copies":
            info = _copies.write(w, size, tw)
            target = tw.bytes if tw is not None else None
        else:
            target = int(size / _ratio(seed))
            info = DenseGraph(seed).write(w, target)
    finally:
        w.close()
        if tw is not None:
            tw.close()
    os.replace(tmp, path)
    if tw is not None and twin is not None:
        os.replace(twin + ".tmp-gen", twin)
    dt = time.perf_counter() - t0
    e = info["expected"]
    meta = {"kind": "binary", "shape": shape, "path": os.path.abspath(path), "target_bytes": size, "bytes": w.bytes,
            "lines": 0, "nodes": w.nodes, "seed": seed, "expected": e, "text_bytes": target,
            "seconds": round(dt, 3), "mb_per_s": round(w.bytes / (1 << 20) / dt, 1) if dt > 0 else None}
    if shape == "copies":
        meta.update(copies=info["copies"], graph=info["graph"], twin=os.path.abspath(twin) if twin else None,
                    twin_lines=tw.lines if tw is not None else None)
    else:
        e["fp_line"] = e["bp_line"] = 0  # binary has no lines
        meta["layers"] = info["layers"]
    return meta
