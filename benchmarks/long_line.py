"""A long line in the middle of a graph (session 18): build one, and measure a command's whole
process tree (grep's peak memory is not in ``/usr/bin/time``'s, which is the largest process's).

    python -m benchmarks.long_line build dense50.pbtxt long.pbtxt --mb 300   # a Const, one line of 300 MB
    python -m benchmarks.long_line build dense50.pb long.pb --mb 300         # (binary: 300 MiB of zeros)
    python -m benchmarks.long_line run -- pbtxt-scan show long.pbtxt no/such/node

``build`` puts, between two node blocks in the middle of the input, a Const ``big/kernel`` whose
``tensor_content`` is one line of CEscape'd float32 bytes (as ``tf.io.write_graph`` writes a large
constant; in a binary graph, zero bytes: no 0x0a, one line to grep). ``run`` prints wall and CPU
seconds (user+sys of the tree), the peak of the tree's summed RSS and grep's own peak (``/proc``,
polled every 5 ms: Linux)."""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import time
from typing import Dict, List


def build(src: str, dst: str, mb: int) -> int:
    """Write ``src`` with the long Const inserted in its middle to ``dst``; the offset it sits at."""
    with open(src, "rb") as f:
        data = f.read()
    if src.endswith(".pbtxt"):
        from .generate._stamp import float_bytes
        from .generate._text import cescape

        cut = data.index(b"\nnode {\n", len(data) // 2) + 1
        block = cescape(float_bytes(random.Random(18), 1 << 18, 0.05, 0.05)).encode("latin-1")
        n = max(1, (mb << 20) // len(block))
        head = (b'node {\n  name: "big/kernel"\n  op: "Const"\n  attr {\n    key: "dtype"\n    value {\n      type: DT_FLOAT\n'
                b'    }\n  }\n  attr {\n    key: "value"\n    value {\n      tensor {\n        dtype: DT_FLOAT\n'
                b'        tensor_shape {\n          dim {\n            size: %d\n          }\n        }\n'
                b'        tensor_content: "' % (n << 18))
        parts = [head] + [block] * n + [b'"\n      }\n    }\n  }\n}\n']
    else:  # a binary GraphDef: its top-level fields walked to the middle (each node: 0x0a, length, NodeDef)
        cut = 0
        while cut < len(data) // 2:
            n, k, shift = 0, cut + 1, 0
            while True:
                n |= (data[k] & 0x7F) << shift
                shift, k = shift + 7, k + 1
                if data[k - 1] < 0x80:
                    break
            cut = k + n
        tensor = b"\x08\x01" + _field(4, b"\0" * (mb << 20))  # (TensorProto: dtype DT_FLOAT, tensor_content)
        attr = _field(1, b"value") + _field(2, _field(8, tensor))
        node = _field(1, b"big/kernel") + _field(2, b"Const") + _field(5, attr)
        parts = [_field(1, node)]
    with open(dst, "wb") as f:
        f.write(data[:cut])
        for p in parts:
            f.write(p)
        f.write(data[cut:])
    return cut


def _field(number: int, value: bytes) -> bytes:
    n, out = len(value), bytearray([number << 3 | 2])
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out) + bytes([n]) + value


def _tree(root: int) -> List[int]:
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir("/proc/%d/task" % p):
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def _status(pid: int) -> Dict[str, str]:
    d: Dict[str, str] = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Name", "VmRSS", "VmHWM"):
                    d[k] = v.split()[0]
    except OSError:
        pass
    return d


def run(argv: List[str]) -> str:
    """One run of ``argv``: its exit code, wall and CPU seconds, the tree's and grep's peak RSS."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tree = grep = 0
    while p.poll() is None:
        total = 0
        for q in _tree(p.pid):
            s = _status(q)
            if "VmRSS" in s:
                total += int(s["VmRSS"])
                if s["Name"] == "grep":
                    grep = max(grep, int(s["VmHWM"]))
        tree = max(tree, total)
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return "exit %d, %.2f s wall, %.2f s CPU, tree peak %d MB, grep peak %d MB" % (
        p.returncode, wall, ru.ru_utime + ru.ru_stime, tree >> 10, grep >> 10)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.long_line", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    b = sub.add_parser("build", help="the input with a long Const line in its middle")
    b.add_argument("src")
    b.add_argument("dst")
    b.add_argument("--mb", type=int, default=300)
    r = sub.add_parser("run", help="one command, measured with its whole process tree")
    r.add_argument("argv", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.what == "build":
        print("%s: the long line at byte %d" % (a.dst, build(a.src, a.dst, a.mb)))
    else:
        print(run(a.argv[1:] if a.argv[:1] == ["--"] else a.argv))


if __name__ == "__main__":
    main()
