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

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"


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
@pytest.mark.parametrize("args", FULL_DISK, ids=lambda a: " ".join(x for x in a if "/" not in x))
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
