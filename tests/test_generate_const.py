"""The ``const`` kind's ``nodes`` shape (issue 21): many 256x1024 float32 kernels, each with its own
content, escaped exactly as TensorFlow's printers do, and the answers the generator promises."""
from __future__ import annotations

import codecs
import re
import struct
import subprocess
import sys

import pytest

from benchmarks.generate import generate

# CEscape written out independently of the generator: named escapes, printable as is, else octal
_NAMED = {9: b"\\t", 10: b"\\n", 13: b"\\r", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}


def _cescape(raw: bytes) -> bytes:
    return b"".join(_NAMED.get(b) or (bytes((b,)) if 0x20 <= b <= 0x7E else b"\\%03o" % b) for b in raw)


@pytest.mark.slow  # (over a second: the slow step runs it)
def test_the_nodes_shape_is_tensorflows(tmp_path) -> None:
    path = tmp_path / "c.pbtxt"
    meta = generate("const", str(path), 12 << 20, seed=1, const_shape="nodes")
    data = path.read_bytes()
    assert meta["bytes"] == len(data) and meta["layers"] == 5
    bodies = re.findall(rb'\n {8}tensor_content: "(.*)"\n', data)
    kernels = [b for b in bodies if len(b) > 1 << 20]
    assert len(kernels) == meta["layers"] and len(set(kernels)) == len(kernels)  # each its own
    for body in kernels:
        raw = codecs.escape_decode(body)[0]  # type: ignore[attr-defined]
        assert len(raw) == 256 * 1024 * 4 and _cescape(raw) == body
        vals = struct.unpack("<%df" % (len(raw) // 4), raw)
        assert min(vals) >= 0.0 and max(vals) < 1.0 and all(v * 2 ** 23 == int(v * 2 ** 23) for v in vals[:4096])
    out = subprocess.run([sys.executable, "-m", "pbtxt_scan", "fp", str(path)], stdout=subprocess.PIPE, check=True)
    assert out.stdout.decode().strip() == meta["expected"]["fp"]
    assert generate("const", str(tmp_path / "d.pbtxt"), 12 << 20, seed=1, const_shape="nodes")["bytes"] == len(data)
    assert (tmp_path / "d.pbtxt").read_bytes() == data  # deterministic
