"""Random messages in the canonical layout (a Hypothesis strategy and its printer) and the bytes that
disturb that layout (test_canonical, test_read_block)."""
from __future__ import annotations

from hypothesis import strategies as st

NAMES = ["node", "name", "op", "input", "graph", "library", "function", "node_def", "signature", "attr", "x", "device", "_"]


def _scalars(ascii: bool = False) -> st.SearchStrategy[bytes]:
    esc = st.sampled_from([b"\\n", b'\\"', b"\\'", b"\\\\", b"\\303", b"\\0", b"\\x4a", b"\\u00e9"] + ([] if ascii else ["é".encode()]))
    plain = st.text(alphabet="ab/:_^ 0.-", max_size=6).map(lambda s: s.encode())
    string = st.lists(st.one_of(plain, esc), max_size=4).map(lambda xs: b'"' + b"".join(xs) + b'"')
    number = st.sampled_from([b"0", b"12", b"-3", b"1.5", b"-0.5e-3", b"0x1F", b"017", b"1e+20", b".5"])
    ident = st.sampled_from([b"true", b"DT_FLOAT", b"inf", b"-inf", b"nan", b"x_1"])
    return st.one_of(string, string, number, ident)


def _fields(depth: int, ascii: bool = False) -> st.SearchStrategy[list]:
    scalar = st.tuples(st.sampled_from(NAMES), _scalars(ascii))
    if depth == 0:
        return st.lists(scalar, max_size=4)
    msg = st.tuples(st.sampled_from(NAMES), st.deferred(lambda: _fields(depth - 1, ascii)))
    return st.lists(st.one_of(scalar, msg, msg), max_size=4)


def _print(fields: list, d: int = 0) -> bytes:
    out = []
    for name, v in fields:
        if isinstance(v, bytes):
            out.append(b"  " * d + name.encode() + b": " + v + b"\n")
        else:
            out.append(b"  " * d + name.encode() + b" {\n" + _print(v, d + 1) + b"  " * d + b"}\n")
    return b"".join(out)


PERTURB = [b" ", b"\n", b";", b",", b"#c\n", b"\t", b'"z"', b"}", b"{", b"  ", b"\n\n", b"-", b"[", b"<"]
