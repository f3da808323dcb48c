"""A tiny protobuf wire-format encoder for the tests (no protobuf): just enough for graphs.

A message is a list of ``(field number, value)``; a value is ``bytes``/``str`` (length-delimited),
``int`` (varint), a :class:`Fixed32`/:class:`Fixed64`, a :class:`Packed` list, or a nested list
(a message).
"""
from __future__ import annotations

import struct
from typing import Any, List, NamedTuple, Sequence, Tuple


class Fixed32(NamedTuple):
    raw: bytes


class Fixed64(NamedTuple):
    raw: bytes


class Packed(NamedTuple):
    kind: str  # "varint", "f" (float32), "d" (float64)
    values: Sequence[Any]


def varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(fn: int, wt: int) -> bytes:
    return varint(fn << 3 | wt)


def encode(msg: Sequence[Tuple[int, Any]]) -> bytes:
    out: List[bytes] = []
    for fn, v in msg:
        if isinstance(v, bool):
            out += [tag(fn, 0), varint(int(v))]
        elif isinstance(v, int):
            out += [tag(fn, 0), varint(v)]
        elif isinstance(v, Fixed32):
            out += [tag(fn, 5), v.raw]
        elif isinstance(v, Fixed64):
            out += [tag(fn, 1), v.raw]
        else:
            if isinstance(v, str):
                v = v.encode("utf-8", "surrogateescape")
            elif isinstance(v, Packed):
                if v.kind == "varint":
                    v = b"".join(varint(x) for x in v.values)
                else:
                    v = struct.pack("<%d%s" % (len(v.values), v.kind), *v.values)
            elif isinstance(v, list):
                v = encode(v)
            out += [tag(fn, 2), varint(len(v)), v]
    return b"".join(out)


def float32(x: float) -> Fixed32:
    return Fixed32(struct.pack("<f", x))


# ---- TensorFlow messages (field numbers from the .proto files, see pbtxt_scan/_wire.py) -------


def node(name: str, op: str, inputs: Sequence[str] = (), device: str = "", attrs: Sequence[Tuple[str, list]] = ()) -> list:
    m: list = [(1, name), (2, op)] + [(3, i) for i in inputs]
    if device:
        m.append((4, device))
    m += [(5, [(1, k), (2, v)]) for k, v in attrs]
    return m


def graph(nodes: Sequence[list], functions: Sequence[Tuple[str, Sequence[list]]] = (), producer: int = 0) -> list:
    m: list = [(1, n) for n in nodes]
    if functions:
        m.append((2, [(1, [(1, [(1, fname)])] + [(3, n) for n in fnodes]) for fname, fnodes in functions]))
    m.append((4, [(1, producer)]))
    return m


def meta_graph(g: list, tags: Sequence[str] = ()) -> list:
    info: list = [(4, t) for t in tags] + [(5, "2.15.0")]
    return [(1, info), (2, g), (3, [(1, "save/Const:0")])]


def saved_model(metas: Sequence[list]) -> list:
    return [(1, 1)] + [(2, m) for m in metas]


class Encoded(NamedTuple):
    """A graph's bytes and where each NodeDef is: ``(start, end)`` of graph and function nodes."""

    data: bytes
    nodes: List[Tuple[int, int]]
    fnodes: List[Tuple[int, int]]


def graph_with_offsets(nodes: Sequence[list], functions: Sequence[Tuple[str, Sequence[list]]] = ()) -> Encoded:
    """A GraphDef, recording the NodeDef spans (in the order the reader must give them)."""
    out = bytearray()
    spans: List[Tuple[int, int]] = []
    for n in nodes:
        body = encode(n)
        out += tag(1, 2) + varint(len(body))
        spans.append((len(out), len(out) + len(body)))
        out += body
    fspans: List[Tuple[int, int]] = []
    if functions:
        lib = bytearray()
        lib_spans: List[Tuple[int, int]] = []
        for fname, fnodes in functions:
            fn = bytearray(encode([(1, [(1, fname), (2, [(1, "x"), (3, 1)])])]))
            rel: List[Tuple[int, int]] = []
            for n in fnodes:
                body = encode(n)
                fn += tag(3, 2) + varint(len(body))
                rel.append((len(fn), len(fn) + len(body)))
                fn += body
            fn += encode([(4, [(1, "out"), (2, "y:0")])])
            head = tag(1, 2) + varint(len(fn))
            lib_spans += [(len(lib) + len(head) + s, len(lib) + len(head) + e) for s, e in rel]
            lib += head + fn
        head = tag(2, 2) + varint(len(lib))
        fspans = [(len(out) + len(head) + s, len(out) + len(head) + e) for s, e in lib_spans]
        out += head + lib
    out += encode([(4, [(1, 1286), (2, 1)])])
    return Encoded(bytes(out), spans, fspans)


def wrap(g: Encoded, kind: str, before: int = 0, after: int = 0) -> Encoded:
    """``g`` inside a MetaGraphDef (``"metagraph"``) or SavedModel (``"savedmodel"``), the graph
    in the MetaGraph tagged train with ``before`` serve-tagged MetaGraphs before it and ``after``
    after it."""
    if kind == "graphdef":
        return g

    def meta(graph: bytes, tags: Sequence[str]) -> Tuple[bytes, int]:
        head = encode([(1, [(2, [(1, [(1, "MatMul")])])] + [(4, t) for t in tags] + [(5, "2.15.1")])])
        head += tag(2, 2) + varint(len(graph))
        return head + graph + encode([(4, [(1, "train_op"), (2, [(1, [(1, "x")])])])]), len(head)

    m, shift = meta(g.data, ["train"] if kind == "savedmodel" else [])
    if kind == "metagraph":
        return Encoded(m, [(s + shift, e + shift) for s, e in g.nodes], [(s + shift, e + shift) for s, e in g.fnodes])
    other = encode(graph([node("serve_only", "Placeholder")]))
    out = bytearray(encode([(1, 1)]))
    for _ in range(before):
        out += encode([(2, meta(other, ["serve"])[0])])
    out += tag(2, 2) + varint(len(m))
    shift += len(out)
    out += m
    for _ in range(after):
        out += encode([(2, meta(other, ["serve"])[0])])
    return Encoded(bytes(out), [(s + shift, e + shift) for s, e in g.nodes], [(s + shift, e + shift) for s, e in g.fnodes])
