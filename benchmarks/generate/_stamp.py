"""Templates, the buffered writer, random payloads, and sizes / output paths.

A node's text is rendered once per *variant* into a template with ``@@SLOT@@`` tokens, compiled to a
``bytes % dict`` format and stamped with the layer's numbers, so generation runs at hundreds of
MB/s. Big tensors are written as a seeded sequence of pre-escaped blocks (``BlockPool``).

A common module: it imports ``_text`` only, never a kind module.
"""

from __future__ import annotations

import os
import random
import re
import struct
from typing import Any, Dict, List, Optional, Sequence

from ._text import cescape

_BUF = 8 << 20
ROWS = 8  # rows of float32 values per pre-escaped block of a big tensor

# --------------------------------------------------------------------------------------------
# templates
# --------------------------------------------------------------------------------------------

# slot tokens; a fixed set, so random escaped payloads cannot be mistaken for one
_TOKEN_RE = re.compile(r"@@(K|P|N|M|IA|IB|I[0-9]|LOGITS)@@")


class Tmpl:
    """A text chunk with ``@@SLOT@@`` tokens, compiled to a ``bytes % dict`` format."""

    __slots__ = ("text", "fmt", "raw", "nlines", "nnodes", "base_len", "counts", "nops")

    def __init__(self, text: str, opener: str = "node {\n") -> None:
        self.text = text
        self.nlines = text.count("\n")
        if opener == "node {\n":
            self.nnodes = text.count("\nnode {\n") + (1 if text.startswith("node {\n") else 0)
        else:
            self.nnodes = text.count("\n" + opener) + (1 if text.startswith(opener) else 0)
        self.nops = self.nnodes
        counts: Dict[str, int] = {}
        for m in _TOKEN_RE.finditer(text):
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
        self.counts = [(k.lower().encode("ascii"), c) for k, c in sorted(counts.items())]
        self.base_len = len(text) - sum(len(k) * c for k, c in counts.items()) - 4 * sum(counts.values())
        if counts:
            fmt = _TOKEN_RE.sub(lambda m: "%(" + m.group(1).lower() + ")s", text.replace("%", "%%"))
            self.fmt: Optional[bytes] = fmt.encode("ascii")
            self.raw: Optional[bytes] = None
        else:
            self.fmt = None
            self.raw = text.encode("ascii")

    def stamp(self, vals: Optional[Dict[bytes, bytes]]) -> bytes:
        if self.fmt is None:
            return self.raw  # type: ignore[return-value]
        return self.fmt % vals  # type: ignore[operator]

    def size(self, vals: Optional[Dict[bytes, bytes]]) -> int:
        n = self.base_len
        for k, c in self.counts:
            n += c * len(vals[k])  # type: ignore[index]
        return n

    def line_of(self, needle: str) -> int:
        """0-based line offset (within this template) of the opener line of the block whose
        ``name:`` line is ``needle`` (exact line content, tokens included)."""
        idx = self.text.find(needle)
        if idx < 0:
            raise KeyError(needle)
        return self.text.count("\n", 0, idx) - 1


def split_tokens(text: str, markers: Sequence[str]) -> List[str]:
    """Split text at each marker.  A marker that is the whole value of its line (``input: "@@REP@@"``,
    ``type: @@REP@@``) removes that line: the repeated lines go in its place.  Otherwise the
    split is inside the line (``data: "@@DATA@@"`` -> ``...data: "`` | ``"\\n...``)."""
    parts = []
    rest = text
    for mk in markers:
        i = rest.index(mk)
        ls = rest.rfind("\n", 0, i) + 1
        le = rest.find("\n", i)
        line = rest[ls:le].strip()
        if re.match(r'^[a-z_]+: (' + re.escape(mk) + '|"' + re.escape(mk) + '")$', line) and "data" not in line \
                and "tensor_content" not in line:
            parts.append(rest[:ls])
            rest = rest[le + 1:]
        else:
            parts.append(rest[:i])
            rest = rest[i + len(mk):]
    parts.append(rest)
    return parts


class Writer:
    def __init__(self, path: str) -> None:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.f = open(path, "wb", buffering=_BUF)
        self.bytes = 0
        self.lines = 0
        self.nodes = 0

    def put(self, t: Tmpl, vals: Optional[Dict[bytes, bytes]] = None) -> int:
        """Write a stamped template; returns the 1-based line number of its first line."""
        start = self.lines + 1
        b = t.stamp(vals)
        self.f.write(b)
        self.bytes += len(b)
        self.lines += t.nlines
        self.nodes += t.nnodes
        return start

    def data(self, b: bytes) -> None:
        """Raw bytes without newlines (part of a long single-line string)."""
        self.f.write(b)
        self.bytes += len(b)

    def close(self) -> None:
        self.f.close()


def slot_values(**kw: Any) -> Dict[bytes, bytes]:
    return {k.encode("ascii"): str(v).encode("ascii") for k, v in kw.items()}


# --------------------------------------------------------------------------------------------
# random payloads
# --------------------------------------------------------------------------------------------


def float_bytes(rng: random.Random, n: int, scale: float = 0.05, zero_frac: float = 0.05) -> bytes:
    vals = [0.0 if rng.random() < zero_frac else rng.gauss(0.0, scale) for _ in range(n)]
    return struct.pack("<%df" % n, *vals)


class BlockPool:
    """Pre-escaped blocks of float32 data (``rows`` x ``cols`` floats each); a big tensor is
    written as a seeded sequence of these blocks, so a 50 MB line costs ~250 writes."""

    def __init__(self, rng: random.Random, cols: int, rows: int, count: int = 8) -> None:
        self.cols = cols
        self.rows = rows
        self.blocks = [cescape(float_bytes(rng, rows * cols)).encode("ascii") for _ in range(count)]
        self.lens = [len(b) for b in self.blocks]
        self.perm = list(range(count))
        rng.shuffle(self.perm)

    def seq(self, k: int, nblocks: int) -> List[int]:
        p = self.perm
        n = len(p)
        return [p[(k * 31 + i * 7 + (i // n)) % n] for i in range(nblocks)]

    def length(self, k: int, nblocks: int) -> int:
        return sum(self.lens[j] for j in self.seq(k, nblocks))

    def write(self, w: Writer, k: int, nblocks: int) -> None:
        for j in self.seq(k, nblocks):
            w.data(self.blocks[j])



# --------------------------------------------------------------------------------------------
# sizes and output paths
# --------------------------------------------------------------------------------------------

_SIZE_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(I?B?)\s*$", re.I)


def parse_size(s: "str | int") -> int:  # noqa: UP037 (string annotation: py3.8 at runtime)
    """``'1GB'``, ``'500MB'``, ``'5M'``, ``'1.5GiB'``, ``'1048576'`` -> bytes (K/M/G/T are powers of 1024)."""
    if isinstance(s, int):
        return s
    m = _SIZE_RE.match(s)
    if not m:
        raise ValueError("bad size: %r" % (s,))
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * mult)


def _size_tag(n: int) -> str:
    for unit, sh in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << sh and n % (1 << sh) == 0:
            return "%d%s" % (n >> sh, unit)
    return "%dB" % n


def default_bench_dir() -> str:
    return os.environ.get("PBTXT_SCAN_BENCH_DIR") or "/tmp/pbtxt-scan-bench"


def default_output_path(kind: str, size_bytes: int, seed: int = 0) -> str:
    tag = "%s-%s-s%d" % (kind, _size_tag(size_bytes), seed)
    if kind == "ge":
        return os.path.join(default_bench_dir(), tag, "ge_proto_00000001_graph_1_Build.txt")
    return os.path.join(default_bench_dir(), tag + (".pb" if kind == "binary" else ".pbtxt"))

