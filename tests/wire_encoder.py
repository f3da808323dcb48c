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
