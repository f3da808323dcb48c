"""One input, opened once: every command reads the user's file through one GraphFile, and pipes,
FIFOs, /dev/fd/N and gzip give the answers a plain file gives."""
from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.marks import quick_first
from support.opens import needs_audit, opens as _opens
from support.pipes import _feed

DATA = Path(__file__).parent / "data"
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
TF2 = DATA / "graphs" / "tf2_gradient_tape.pbtxt"
GE = DATA / "ge" / "ge_proto_00000013_graph_3_Build.txt"
# binary twins (issue 13): read through the same GraphFile, so opened once too
MLP_PB = DATA / "binary" / "mlp_sgd.pb"
MLP_SAVED = DATA / "binary" / "mlp_sgd_saved_model" / "saved_model.pb"
TF2_META = DATA / "binary" / "tf2_gradient_tape.meta"

@needs_audit
@pytest.mark.slow  # 33 real processes, each under an audit hook
@pytest.mark.parametrize(
    "args",
    [
        ["fp", "{f}"],
        ["bp", "{f}"],
        ["points", "{f}"],
        ["points", "--json", "--explain", "{f}"],
        ["show", "{f}", "dense/MatMul"],
        ["show", "--json", "{f}", "dense/MatMul"],
        ["show", "{f}", "dense/MatMul", "--context", "2"],
        ["show", "{f}", "dense/MatMul", "--format", "dot"],
        ["nodes", "{f}"],
        ["stats", "{f}"],
        ["check", "{f}"],
        ["report", "-o", os.devnull, "{f}"],
    ],
    ids=lambda a: " ".join(a),
)
@pytest.mark.parametrize("target", [MLP, MLP_PB, MLP_SAVED], ids=["text", "pb", "saved_model"])
def test_tf_commands_open_the_input_once(tmp_path: Path, args: "list[str]", target: Path) -> None:
    n, r = _opens(target, *[a.format(f=target) for a in args], tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert n == 1, "opened %d times" % n


@needs_audit
@pytest.mark.parametrize("command", ["fp", "bp", "points"])
@pytest.mark.parametrize("target", [TF2, TF2_META], ids=["text", "meta"])
def test_tf2_function_search_opens_the_input_once(tmp_path: Path, command: str, target: Path) -> None:
    # The answer comes from a library function: a second pass over the file, same open.
    n, r = _opens(target, command, "--json", str(target), tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "__inference_train_step" in r.stdout
    assert n == 1, "opened %d times" % n


@needs_audit
@pytest.mark.parametrize(
    "args",
    [["resolve", "dense/MatMul", "--ge", "{g}"], ["ge-auto", "{g}"], ["ge-auto", "--explain", "{g}"],
     # on a dump, fp, bp and points answer GE's own choice: the dump read once too
     ["fp", "{g}"], ["bp", "{g}"], ["points", "--json", "--explain", "{g}"], ["report", "-o", os.devnull, "{g}"]],
    ids=lambda a: " ".join(a),
)
def test_ge_commands_open_the_dump_once(tmp_path: Path, args: "list[str]") -> None:
    n, r = _opens(GE, *[a.format(g=GE) for a in args], tmp_path=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "Traceback" not in r.stderr
    assert n == 1, "opened %d times" % n


def _run(*args: str, **kw: object) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "pbtxt_scan", *args], capture_output=True, text=True, timeout=120, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd (process substitution)")
@pytest.mark.parametrize("command", quick_first(["fp", "bp", "points", "stats", "nodes", "show"]))
def test_dev_fd_pipe_reads_like_the_file(tmp_path: Path, command: str) -> None:
    """`pbtxt-scan bp <(cat graph.pbtxt)`: a pipe passed by path is read once, like stdin."""
    extra = ["dense/MatMul"] if command == "show" else []
    want = _run(command, str(MLP), *extra)
    assert want.returncode == 0, want.stderr
    r_fd, w_fd = os.pipe()
    t = _feed(w_fd, MLP.read_bytes())
    got = _run(command, "/dev/fd/%d" % r_fd, *extra, pass_fds=(r_fd,))
    os.close(r_fd)
    t.join(10)
    assert got.returncode == 0, got.stderr

    def same(out: str) -> "list[str]":  # (stats times itself)
        return [x for x in out.replace("/dev/fd/%d" % r_fd, str(MLP)).splitlines() if not x.startswith("seconds")]

    assert same(got.stdout) == same(want.stdout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("command", ["bp", "points"])
def test_named_fifo_reads_like_the_file(tmp_path: Path, command: str) -> None:
    fifo = tmp_path / "graph.fifo"
    os.mkfifo(str(fifo))

    def write() -> None:
        with open(str(fifo), "wb") as w:  # blocks until the tool opens it: once
            w.write(MLP.read_bytes())

    t = threading.Thread(target=write, daemon=True)
    t.start()
    got = _run(command, "--json", str(fifo))
    t.join(10)
    want = _run(command, "--json", str(MLP))
    assert got.returncode == 0, got.stderr
    assert not t.is_alive(), "the writer was left blocked: the FIFO was opened twice"
    assert got.stdout.replace(str(fifo), str(MLP)) == want.stdout


@pytest.mark.parametrize("command", ["bp", "points", "show"])
def test_gzip_reads_like_the_plain_file(tmp_path: Path, command: str) -> None:
    gz = tmp_path / "mlp_sgd.pbtxt.gz"
    with gzip.open(str(gz), "wb") as out:
        out.write(MLP.read_bytes())
    extra = ["dense/MatMul"] if command == "show" else []
    want = _run(command, str(MLP), *extra)
    got = _run(command, str(gz), *extra)
    assert got.returncode == want.returncode == 0, got.stderr
    assert got.stdout.replace(str(gz), str(MLP)) == want.stdout


def test_gzip_bp_decompresses_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """bp on .gz used to re-open and decompress from the start for every block (quadratic)."""
    import pbtxt_scan
    from pbtxt_scan.source import _source

    gz = tmp_path / "mlp_sgd.pbtxt.gz"
    with gzip.open(str(gz), "wb") as out:
        out.write(MLP.read_bytes())
    opened = []
    real = _source.open_binary

    def counting(path):  # type: ignore[no-untyped-def]
        opened.append(path)
        return real(path)

    monkeypatch.setattr(_source, "open_binary", counting)
    monkeypatch.setattr("pbtxt_scan.graph._input.open_binary", counting)
    from pbtxt_scan.fpbp._rules import find_bp

    ans = find_bp(str(gz))
    assert ans.point is not None and ans.point.name == "gradients/dense/MatMul_grad/MatMul_1"
    assert ans.point.line == 3227
    assert len(opened) == 1
    assert pbtxt_scan.GraphFile  # the public name of the input object


def test_stdin_is_spooled_for_bp(tmp_path: Path) -> None:
    want = _run("bp", "--json", str(MLP))
    got = _run("bp", "--json", "-", input=MLP.read_text())
    assert got.returncode == 0, got.stderr
    w, g = json.loads(want.stdout), json.loads(got.stdout)
    assert g["file"] == "<stdin>"
    assert (g["name"], g["line"], g["offset"]) == (w["name"], w["line"], w["offset"])


def test_unspooled_stream_refuses_a_second_look() -> None:
    """stats/check/nodes read a stream once and copy nothing; reading back is an error, not a
    silent wrong answer."""
    import io

    from pbtxt_scan import GraphFile, PbtxtError

    g = GraphFile(io.BufferedReader(io.BytesIO(b'node {\n  name: "a"\n  op: "Const"\n}\n' * 4000)), "<pipe>", spool=False)  # type: ignore[arg-type]
    blocks = list(g.nodes())
    assert len(blocks) == 4000
    with pytest.raises(PbtxtError, match="a second time"):
        g.read(blocks[len(blocks) // 2])  # (past the first bytes kept for detection)


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a shell")
def test_fp_from_a_shell_pipe(tmp_path: Path) -> None:
    r = subprocess.run(
        "cat %s | %s -m pbtxt_scan fp -" % (MLP, sys.executable), shell=True, capture_output=True, text=True, timeout=60
    )
    assert (r.returncode, r.stdout.strip()) == (0, "dense/MatMul"), r.stderr


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd (process substitution)")
@pytest.mark.parametrize("args", [["ge-auto", "--json", "{p}"], ["points", "--json", "--ge", "{p}", str(MLP)], ["points", "--json", "{p}"]],
                         ids=["ge-auto", "points --ge", "points on the dump"])
def test_ge_dump_through_a_pipe_reads_like_the_file(args: "list[str]") -> None:
    """`ge-auto <(cat build.txt)` said GE would find nothing; `points --ge <(...)` matched nothing."""
    dump = DATA / "ge" / "mlp_sgd" / "ge_proto_00000003_graph_1_Build.txt"  # the Build dump of mlp_sgd
    want = _run(*[a.format(p=dump) for a in args])
    r_fd, w_fd = os.pipe()
    t = _feed(w_fd, dump.read_bytes())
    got = _run(*[a.format(p="/dev/fd/%d" % r_fd) for a in args], pass_fds=(r_fd,))
    os.close(r_fd)
    t.join(10)
    assert got.returncode == want.returncode, got.stderr
    assert json.loads(got.stdout.replace("/dev/fd/%d" % r_fd, str(dump))) == json.loads(want.stdout)


def test_the_lane_is_picked_once_at_open_by_content(tmp_path: Path) -> None:
    """GraphFile keeps the bytes; its lane (text or wire, picked from the first bytes at open)
    reads the blocks, and each lane implements every part of the protocol."""
    from pbtxt_scan.graph._input import GraphFile
    from pbtxt_scan.source._lane import Lane
    from pbtxt_scan.text._lane import TextLane
    from pbtxt_scan.wire._lane import WireLane

    for lane in (TextLane, WireLane):
        for part in ("dialect", "forward", "read", "rescan", "parse", "backward"):
            assert getattr(lane, part) is not getattr(Lane, part), (lane, part)
    odd = tmp_path / "graph.txt"  # (a binary graph under a text name: told by content, not name)
    odd.write_bytes(MLP_PB.read_bytes())
    for path, lane, kind in ((MLP, TextLane, None), (MLP_PB, WireLane, "graphdef"), (odd, WireLane, "graphdef"),
                             (MLP_SAVED, WireLane, "savedmodel"), (TF2_META, WireLane, "metagraph")):
        with GraphFile.open(path) as g:
            assert type(g.lane) is lane and g.binary == kind and g.lane.text == (kind is None)
            first = next(iter(g.nodes()))
            assert g.read(first) == g.lane.read(first) and g.rescan(first, frozenset({"name"}))[0].name == first.name
