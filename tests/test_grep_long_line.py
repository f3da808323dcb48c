"""A long line in the middle of a text graph (a large Const's ``tensor_content``, which TensorFlow
writes as one escaped string line: hundreds of MB happen). grep holds a line whole, so every grep
pbtxt-scan starts has its address space capped (``parallel._grep.MEMORY``); on such a line it fails
and the search's caller reads blocks instead, with the answers the search would have given.

The graph here holds a line of 4 MB and the cap is lowered to 8 MiB (grep itself needs about 4),
so grep fails on it as it would on a line of 300 MB under the real cap. The quick set puts the line
before fp's answer, where every search crosses it; CI's slow run puts it at every place."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from support.cli import CliRunner
from support.marks import quick_first

from pbtxt_scan.cli import app

DATA = Path(__file__).parent / "data" / "graphs"
runner = CliRunner()

LINE = 4 << 20  # escaped characters in the long line
CAP = 8 << 20


def _escaped(n: int) -> bytes:
    """``n`` characters of float32 bytes escaped as protobuf's CEscape writes them (TF's text format)."""
    rng = random.Random(18)
    out = bytearray()
    table = {9: b"\\t", 10: b"\\n", 13: b"\\r", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}
    while len(out) < n:
        for c in rng.getrandbits(8 * 4096).to_bytes(4096, "little"):
            out += table.get(c) or (b"\\%03o" % c if c < 0x20 or c >= 0x7F else bytes((c,)))
    return bytes(out[:n]).rsplit(b"\\", 1)[0]  # (no escape cut in half)


def with_long_line(tmp_path: Path, after: str) -> Path:
    """mlp_sgd with a Const ``big/kernel`` whose ``tensor_content`` is one line of :data:`LINE`
    characters, put between two node blocks: before the node named ``after``."""
    data = (DATA / "mlp_sgd.pbtxt").read_bytes()
    cut = data.index(b'node {\n  name: "%s"\n' % after.encode())
    const = (
        b'node {\n  name: "big/kernel"\n  op: "Const"\n  attr {\n    key: "dtype"\n    value {\n      type: DT_FLOAT\n    }\n  }\n'
        b'  attr {\n    key: "value"\n    value {\n      tensor {\n        dtype: DT_FLOAT\n        tensor_shape {\n'
        b'          dim {\n            size: 1048576\n          }\n        }\n        tensor_content: "'
        + _escaped(LINE) + b'"\n      }\n    }\n  }\n}\n'
    )
    p = tmp_path / ("long_before_%s.pbtxt" % after.replace("/", "_"))
    p.write_bytes(data[:cut] + const + data[cut:])
    return p


def binary_with_long_line(tmp_path: Path, after: str) -> Path:
    """mlp_sgd.pb with a Const ``big/kernel`` before the node named ``after``, whose
    ``tensor_content`` is :data:`LINE` zero bytes: to grep, which reads a binary graph too, one
    line (no byte 0x0a in it)."""
    from support.wire_encoder import encode, node, varint

    data = (DATA.parent / "binary" / "mlp_sgd.pb").read_bytes()
    at = 0
    while True:  # (the top-level fields: a node's is 0x0a, its length, the NodeDef)
        assert data[at] == 0x0A
        n, k = 0, at + 1
        shift = 0
        while True:
            n |= (data[k] & 0x7F) << shift
            shift += 7
            k += 1
            if data[k - 1] < 0x80:
                break
        if data[k + 2 : k + 2 + len(after) + 1] == after.encode() + b"\x12":
            break
        at = k + n
    tensor = [(1, 1), (4, b"\0" * LINE)]  # (dtype DT_FLOAT, tensor_content)
    big = encode(node("big/kernel", "Const", attrs=[("dtype", [(6, 1)]), ("value", [(8, tensor)])]))
    p = tmp_path / ("long_before_%s.pb" % after.replace("/", "_"))
    p.write_bytes(data[:at] + b"\x0a" + varint(len(big)) + big + data[at:])
    return p


# Where the line goes: before fp's answer, between fp's and bp's, before the last node.
PLACES = ["dense/MatMul", "dense_1/MatMul", "gradients/dense_1/MatMul_grad/MatMul", "GradientDescent"]
COMMANDS = [
    ["fp", "{f}"], ["bp", "{f}"], ["points", "--json", "{f}"], ["fp", "--explain", "{f}"],
    ["show", "{f}", "GradientDescent/update_dense_1/kernel/ResourceApplyGradientDescent"], ["show", "{f}", "no/such/node"],
    ["show", "{f}", "dense/MatMul", "gradients/dense_1/MatMul_grad/MatMul"], ["show", "--context", "1", "{f}", "dense_1/MatMul"],
    ["nodes", "--op", "MatMul", "{f}"], ["nodes", "--name", "gradients/*", "{f}"], ["nodes", "--count", "{f}"],
]


def _run(argv: List[str]) -> Tuple[int, str, str]:
    r = runner.invoke(app, argv)
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="no prlimit: grep runs uncapped")
@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
@pytest.mark.parametrize("place", quick_first(PLACES, 1))  # (the quick set: the line before fp's answer, every search crosses it)
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a))
def test_a_long_line_grep_cannot_hold_gives_the_answers_of_reading_blocks(
    tmp_path: Path, place: str, args: List[str], binary: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pbtxt_scan.parallel import _grep
    from pbtxt_scan.text import _lane
    from pbtxt_scan.wire import _lane as _wire_lane

    f = (binary_with_long_line if binary else with_long_line)(tmp_path, place)
    argv = [a.format(f=f) for a in args]
    monkeypatch.setattr(_grep, "MEMORY", 1 << 40)
    uncapped = _run(argv)
    monkeypatch.setattr(_grep, "MEMORY", CAP)
    capped = _run(argv)
    monkeypatch.setattr(_lane.TextLane, "searchable", False)
    monkeypatch.setattr(_wire_lane.WireLane, "searchable", False)
    read = _run(argv)
    assert capped[:2] == uncapped[:2] == read[:2]
    if "--explain" not in args:  # (its trace on stderr: the nodes read, more where a search failed or none ran)
        assert capped[2] == uncapped[2] == read[2]
    assert capped[0] in (0, 1), capped[2]


def test_every_grep_started_has_its_address_space_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from pbtxt_scan.parallel import _grep

    resource = pytest.importorskip("resource")
    if not hasattr(resource, "prlimit") or not os.path.exists("/proc/self/limits"):
        pytest.skip("no prlimit: grep runs uncapped")
    import shutil

    grep = shutil.which("grep")
    assert grep is not None
    monkeypatch.setattr(_grep, "MEMORY", 48 << 20)
    r, w = os.pipe()
    try:
        p = _grep._spawn(grep, "x", r)
        try:
            with open("/proc/%d/limits" % p.pid) as limits:
                line = next(s for s in limits if s.startswith("Max address space"))
            assert line.split()[3:5] == [str(48 << 20)] * 2
        finally:
            p.kill()
            p.wait()
            assert p.stdout is not None
            p.stdout.close()
    finally:
        os.close(r)
        os.close(w)


def test_a_search_over_the_long_line_fails_under_the_cap_and_not_without(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (what makes the test above meaningful: grep does fail on this line under CAP)
    import shutil

    from pbtxt_scan.graph._input import opened
    from pbtxt_scan.parallel import _grep

    f = with_long_line(tmp_path, "dense_1/MatMul")
    grep = shutil.which("grep")
    assert grep is not None
    with opened(f) as g:
        monkeypatch.setattr(_grep, "MEMORY", 1 << 40)
        hits = list(_grep._grep(grep, g, 0, 'name: "'))
        assert len(hits) == f.read_bytes().count(b'name: "')
        monkeypatch.setattr(_grep, "MEMORY", CAP)
        got: List[Tuple[int, bytes]] = []
        with pytest.raises(_grep._SearchFailed):
            for hit in _grep._grep(grep, g, 0, 'name: "'):
                got.append(hit)
        assert got == hits[: len(got)] and 0 < len(got) < len(hits)  # (the hits before the line came first)


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="no prlimit: grep runs uncapped")
def test_after_a_search_failed_no_grep_starts_on_the_file_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each grep over the line reads it up to the cap and fails: fp, which asks a hundred searches of
    # a graph, read it a hundred times (a 300 MB line: 6 GB) before the first failure was kept.
    from pbtxt_scan.parallel import _grep

    f = with_long_line(tmp_path, "dense_1/MatMul")
    events: List[str] = []
    spawn, run = _grep.spawn, _grep._GrepRun.__iter__

    def counted_spawn(*a: Any, **k: Any) -> Any:
        events.append("spawn")
        return spawn(*a, **k)

    def counted_run(self: Any) -> Any:
        try:
            yield from run(self)
        except _grep._SearchFailed:
            events.append("failed")
            raise

    monkeypatch.setattr(_grep, "spawn", counted_spawn)
    monkeypatch.setattr(_grep._GrepRun, "__iter__", counted_run)
    monkeypatch.setattr(_grep, "MEMORY", CAP)
    for args in (["fp", str(f)], ["points", str(f)], ["show", "--context", "1", str(f), "dense_1/MatMul"]):
        del events[:]
        assert _run(args)[0] == 0
        assert "failed" in events, args
        assert "spawn" not in events[events.index("failed"):], (args, events)


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="no prlimit: grep runs uncapped")
@pytest.mark.parametrize("place", quick_first(PLACES, 1))
def test_a_miss_after_a_failed_search_suggests_the_names_reading_blocks_suggests(
    tmp_path: Path, place: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (the names grep met before it failed are not mixed in: the search's are dropped whole. The
    # search's own suggestions, where it holds, differ from reading's: its close names are those
    # holding a piece of the name asked for; left as it is)
    from pbtxt_scan.parallel import _grep
    from pbtxt_scan.text import _lane

    f = with_long_line(tmp_path, place)
    argv = ["show", str(f), "dense_1/MatMull"]
    monkeypatch.setattr(_grep, "MEMORY", CAP)
    capped = _run(argv)
    monkeypatch.setattr(_lane.TextLane, "searchable", False)
    assert capped == _run(argv)
    assert capped[0] == 1 and "did you mean dense_1/MatMul" in capped[2]


_TREE_RSS = r"""
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux: the largest process, grep's included
sys.stdout.write("%d %d %s" % (p.returncode, rss, p.stderr.decode(errors="replace")))
"""


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="no prlimit: grep runs uncapped")
@pytest.mark.slow  # a 100 MB line, under the real cap
def test_no_process_grows_with_a_long_line_in_the_middle(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    data = (DATA / "mlp_sgd.pbtxt").read_bytes()
    cut = data.index(b'node {\n  name: "dense_1/MatMul"\n')
    f = tmp_path / "long.pbtxt"
    piece = _escaped(1 << 20)
    with f.open("wb") as w:
        w.write(data[:cut] + b'node {\n  name: "big/kernel"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n'
                b'        tensor_content: "')
        for _ in range(100):
            w.write(piece)
        w.write(b'"\n      }\n    }\n  }\n}\n' + data[cut:])
    for args in (["fp", str(f)], ["points", str(f)], ["show", str(f), "no/such/node"], ["show", str(f), "GradientDescent"]):
        p = subprocess.run([sys.executable, "-c", _TREE_RSS, sys.executable, "-m", "pbtxt_scan", *args],
                           capture_output=True, text=True, env=dict(os.environ), timeout=300)
        code, rss, err = p.stdout.split(" ", 2)
        assert int(code) in (0, 1) and "Traceback" not in err, (args, err)
        assert int(rss) < 80 * 1024, "%s: %d MB" % (" ".join(args), int(rss) >> 10)
