"""The environment's faults are clean (issue 35): a full disk on stdout, a closed stdin, SIGTERM
with workers running, a damaged binary graph, names that would break a line or a terminal.

Each runs the real program (``python -m pbtxt_scan``) where the fault lives in the process: its
descriptors, its exit-time flush, its signals."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import pytest
from support.marks import quick_first
from support.cli import CliRunner

from pbtxt_scan.cli import app

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
runner = CliRunner()


def _env(unbuffered: bool = True) -> Dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), PBTXT_SCAN_NO_PROGRESS="1")
    env.pop("PYTHONUNBUFFERED", None)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _run(args: List[str], *, stdout: object = subprocess.PIPE, close_stdin: bool = False,
         unbuffered: bool = True) -> "subprocess.CompletedProcess[bytes]":
    return subprocess.run([sys.executable, "-m", "pbtxt_scan"] + args, stdout=stdout, stderr=subprocess.PIPE,
                          stdin=None if close_stdin else subprocess.DEVNULL, env=_env(unbuffered), timeout=300,
                          preexec_fn=(lambda: os.close(0)) if close_stdin else None)


def _one_line(err: bytes) -> str:
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text and "Exception ignored" not in text, text
    assert len(text.splitlines()) == 1, text
    return text


# --- stdout on a full disk ------------------------------------------------------------------------

FULL_DISK = [["points", str(MLP)], ["nodes", str(MLP)], ["fp", str(MLP)], ["bp", str(MLP)], ["stats", str(MLP)],
             ["check", str(MLP)], ["show", str(MLP), "dense/MatMul"], ["nodes", "--json", str(MLP)], ["--version"]]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
@pytest.mark.parametrize("unbuffered", [True, False], ids=["write", "exit-flush"])
@pytest.mark.parametrize("args", quick_first(FULL_DISK, 3), ids=lambda a: " ".join(x for x in a if "/" not in x))
def test_a_full_disk_is_one_line_and_exit_2(args: List[str], unbuffered: bool) -> None:
    # Unbuffered, the error comes at the write; buffered, at the flush when the program exits.
    with open("/dev/full", "wb") as full:
        r = _run(args, stdout=full, unbuffered=unbuffered)
    assert r.returncode == 2, r.stderr
    assert _one_line(r.stderr) == "<stdout>: cannot write the output: No space left on device\n"


def test_a_closed_pipe_stays_quiet() -> None:
    p = subprocess.Popen([sys.executable, "-m", "pbtxt_scan", "nodes", str(MLP)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env(False))
    assert p.stdout is not None and p.stderr is not None
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read()
    assert p.wait(timeout=60) == 0 and err == b""


# --- a closed stdin -------------------------------------------------------------------------------

CLOSED_STDIN = [["points", "-"], ["points"], ["fp", "-"], ["bp", "-"], ["stats", "-"], ["check", "-"],
                ["nodes", "-"], ["show", "-", "x"], ["report", "-", "-o", "r.html"], ["resolve", "--ge", "-", "x"],
                ["ge-auto", "-"], ["points", "--json", "-"]]


@pytest.mark.parametrize("args", CLOSED_STDIN, ids=" ".join)
def test_a_closed_stdin_is_no_input(args: List[str], tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "pbtxt_scan"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       env=_env(), timeout=120, cwd=str(tmp_path), preexec_fn=lambda: os.close(0))
    assert r.returncode == 2, r.stderr
    assert _one_line(r.stderr) == "<stdin>: no input on stdin (it is closed): give a FILE\n"
    assert not (tmp_path / "r.html").exists()


# --- SIGTERM with workers running -----------------------------------------------------------------


def _children(pid: int) -> List[int]:
    kids: List[int] = []
    try:
        for task in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, task)) as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def _alive(pid: int) -> bool:
    """Whether ``pid`` is still a process (a zombie that no one reaps counts: it was left behind)."""
    return os.path.exists("/proc/%d" % pid)


@pytest.fixture(scope="module")
def busy_graph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A text graph two workers take seconds over (about 25 MB)."""
    g = tmp_path_factory.mktemp("busy") / "busy.pbtxt"
    node = ('node {\n  name: "gradients/n%d"\n  op: "Mul"\n  input: "x"\n  attr {\n    key: "T"\n    value {\n'
            '      type: DT_FLOAT\n    }\n  }\n}\n')
    with open(g, "w") as f:
        for start in range(0, 200000, 10000):
            f.write("".join(node % i for i in range(start, start + 10000)))
    return g


@pytest.mark.slow  # a 25 MB input, and workers to wait for
@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="no /proc")
@pytest.mark.parametrize("cmd", ["stats", "check", "nodes"])
def test_sigterm_stops_the_workers_with_the_parent(cmd: str, busy_graph: Path) -> None:
    p = subprocess.Popen([sys.executable, "-m", "pbtxt_scan", cmd, "--jobs", "2", str(busy_graph)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_env())
    kids: List[int] = []
    deadline = time.monotonic() + 60
    while len(kids) < 2 and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
        kids = _children(p.pid)
    assert len(kids) == 2, "the workers never started"
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143
    assert b"Traceback" not in err
    deadline = time.monotonic() + 10
    while any(_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [k for k in kids if _alive(k)] == []


# --- a damaged binary graph -----------------------------------------------------------------------

BINARY = sorted((DATA / "binary").glob("*.pb"))


def _varint(data: bytes, i: int) -> "tuple[int, int]":
    v = shift = 0
    while True:
        v |= (data[i] & 0x7F) << shift
        shift += 7
        i += 1
        if data[i - 1] < 0x80:
            return v, i


def _first_name(data: bytes) -> "tuple[int, int]":
    """Where the first node's name is in a binary GraphDef: (start, end)."""
    assert data[0] == 0x0A  # (field 1, node)
    _, i = _varint(data, 1)
    assert data[i] == 0x0A  # (the NodeDef's field 1, name)
    n, i = _varint(data, i + 1)
    return i, i + n


def test_binary_fixtures_found() -> None:
    assert len(BINARY) >= 10


@pytest.mark.parametrize("path", BINARY, ids=lambda p: p.name)
@pytest.mark.parametrize("cmd", [["check"], ["fp"], ["points", "--json"], ["nodes"]], ids=" ".join)
def test_a_damaged_name_is_a_damaged_binary_graph(path: Path, cmd: List[str], tmp_path: Path) -> None:
    # A byte of the first node's name damaged: no longer told as a binary graph by its first
    # bytes, it was read as text ("looks like a binary file", "invalid UTF-8 byte 0x80").
    data = bytearray(path.read_bytes())
    start, end = _first_name(bytes(data))
    at = (start + end) // 2
    data[at] = 0x80
    g = tmp_path / path.name
    g.write_bytes(bytes(data))
    r = runner.invoke(app, cmd + [str(g)])
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("%s:offset %d: not a valid binary " % (g, at)), r.stderr
    assert r.stderr.endswith(": a name is not UTF-8 (byte 0x80)\n")


@pytest.mark.parametrize("path", BINARY[:4], ids=lambda p: p.name)
def test_a_cut_binary_graph_names_the_offset(path: Path, tmp_path: Path) -> None:
    data = path.read_bytes()
    start, end = _first_name(data)
    g = tmp_path / path.name
    g.write_bytes(data[: end + 3])  # (cut inside the first node: a few bytes after its name)
    r = runner.invoke(app, ["check", str(g)])
    assert r.exit_code == 2
    assert r.stderr.startswith("%s:offset " % g) and "truncated" in r.stderr and r.stderr.count("\n") == 1, r.stderr


# --- names that would break a line or reach the terminal ------------------------------------------

ODD = "in\nput\tx\x1b[31mRED"  # (a newline, a tab and an ANSI colour in one name)
ODD_SHOWN = "in\\nput\\tx\\x1b[31mRED"
ODD_TEXT = ('node {\n  name: "in\\nput\\tx\\033[31mRED"\n  op: "Placeholder"\n}\n'
            'node {\n  name: "dense/Mat\\\\Mul"\n  op: "MatMul"\n  input: "in\\nput\\tx\\033[31mRED"\n}\n'
            'node {\n  name: "gradients/dense/MatMul_grad/MatMul"\n  op: "MatMul"\n  input: "dense/Mat\\\\Mul"\n}\n')


@pytest.fixture
def odd_graph(tmp_path: Path) -> Path:
    g = tmp_path / "odd.pbtxt"
    g.write_text(ODD_TEXT)
    return g


def test_nodes_rows_stay_rows(odd_graph: Path) -> None:
    r = runner.invoke(app, ["nodes", str(odd_graph)])
    assert r.exit_code == 0
    assert r.stdout.splitlines() == ["1\t%s\tPlaceholder" % ODD_SHOWN, "5\tdense/Mat\\\\Mul\tMatMul",
                                     "10\tgradients/dense/MatMul_grad/MatMul\tMatMul"]


def test_json_stays_exact(odd_graph: Path) -> None:
    import json

    r = runner.invoke(app, ["nodes", "--json", str(odd_graph)])
    assert [json.loads(x)["name"] for x in r.stdout.splitlines()][:2] == [ODD, "dense/Mat\\Mul"]


def test_fp_points_and_explain_escape_names(odd_graph: Path) -> None:
    r = runner.invoke(app, ["fp", "--explain", str(odd_graph)])
    assert r.stdout == "dense/Mat\\\\Mul\n"
    assert "\x1b" not in r.stderr and ODD_SHOWN in r.stderr
    r = runner.invoke(app, ["points", str(odd_graph)])
    assert r.stdout.splitlines()[0] == "fp_point  dense/Mat\\\\Mul  (MatMul, line 5, rule dataflow)"


def test_show_keeps_the_escapes(odd_graph: Path) -> None:
    r = runner.invoke(app, ["show", str(odd_graph), ODD])
    assert r.exit_code == 0 and "\x1b" not in r.stdout and len(r.stdout.splitlines()) == 4


def test_a_node_without_a_name_or_op_is_listed_as_before(tmp_path: Path) -> None:
    # (a hypothesis run of test_parallel found it: `nam` for `name`, a field text format accepts)
    g = tmp_path / "g.pbtxt"
    # Issue 37: `nam` is no field of a NodeDef, and TensorFlow refuses it: so does nodes now. A node
    # the schema accepts without its op is listed as before.
    g.write_text('node {\n  nam: "x"\n  op: "Const"\n}\nnode {\n  name: "y"\n}\n')
    r = subprocess.run([sys.executable, "-m", "pbtxt_scan", "nodes", str(g)], capture_output=True, text=True)
    assert (r.returncode, r.stdout) == (2, "") and r.stderr == '%s:2:3: Message type "tensorflow.NodeDef" has no field named "nam". ' \
        'Did you mean "name"? (schema: TensorFlow 2.21.0)\n' % g, r.stderr
    g.write_text('node {\n  name: "y"\n}\n')
    r = subprocess.run([sys.executable, "-m", "pbtxt_scan", "nodes", str(g)], capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (0, "1\ty\tNone\n", "")
