"""stdin, pipes and gzip at path speed (issue 21): a stream is copied to an anonymous temporary
file (the spool) and read like a regular file, so every fast path a file has (positioned reads,
fp's grep ahead, --jobs splits, bp's reverse index) works on it too; a pipe is copied as far as
it is read (issue 38: fp's answer near the start of a piped GB does not wait for the rest), gzip
whole. A full temporary folder is one error line, and no temporary file is ever left behind."""
from __future__ import annotations

import gzip
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from support.signals import default_sigint

from pbtxt_scan import GraphFile, PbtxtError
from pbtxt_scan.source import _source

DATA = Path(__file__).parent / "data"
needs_grep = pytest.mark.skipif(shutil.which("grep") is None, reason="fp's search ahead runs grep")
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
GE = DATA / "ge" / "ge_proto_00000013_graph_3_Build.txt"


def _cli(*args: str, **kw: Any) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        [sys.executable, "-m", "pbtxt_scan", *args], capture_output=True, text=True, timeout=120, **kw
    )


@pytest.mark.parametrize("wrap", ["pipe", "gzip"])
def test_a_spooled_stream_is_read_like_a_file(wrap: str) -> None:
    """A spooled stream has positioned reads (what fp's grep ahead asks for) and a size (what the
    --jobs split asks for), and every byte reads back as it came. gzip is in the spool whole
    once opened; a pipe only as far as it was read, until its size is asked for."""
    body = MLP.read_bytes() * 100
    assert len(body) > 2 * _source.SPOOL_CHUNK
    data = gzip.compress(body) if wrap == "gzip" else body
    src = io.BufferedReader(io.BytesIO(data))
    if wrap == "gzip":
        src = io.BufferedReader(_source._GzipReader(src, "<pipe>"))  # type: ignore[arg-type]
    with GraphFile(src, "<pipe>", spool=True) as g:  # type: ignore[arg-type]
        assert g.regular and g.spooled
        if wrap == "pipe":
            assert g.known_size() is None and g.bytes_read() == 0  # (nothing is read at open)
            assert g.read_at(0, 10) == body[:10] and g.bytes_read() == _source.SPOOL_CHUNK  # (a read copies a chunk)
            assert not g.offset_free  # (grep is fed by the reads, not given the spool's descriptor)
            assert g.read_at(len(body) - 10, 5) == body[-10:-5] and g.known_size() is None
        else:
            assert g.offset_free and g.known_size() == len(body)
        assert g.size == len(body) and g.known_size() == len(body)  # (asking for the size reads the rest)
        assert os.pread(g.fileno(), len(body) + 1, 0) == body
        assert g.changed() is None and g.identity() is None  # (no cache is keyed on a spool)
        blocks = list(g.nodes())
        assert [g.read(b) for b in blocks] == [body[b.start : b.end] for b in blocks]


def test_the_spool_is_copied_in_big_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pipe gives 64 KiB a read; the copy asks for SPOOL_CHUNK at a time (few calls a GB)."""
    sizes: List[int] = []

    class Counting(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self._f = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            sizes.append(len(b))
            return self._f.readinto(b)

    body = MLP.read_bytes() * 40
    out = _source.spool(Counting(body), "<pipe>")  # type: ignore[arg-type]
    try:
        assert out.read() == body
    finally:
        out.close()
    assert sizes and min(sizes) >= _source.SPOOL_CHUNK >= 1 << 20


def test_a_full_temporary_folder_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes to /dev/full fail with ENOSPC, as on a full disk: one PbtxtError naming the folder and
    TMPDIR, and the spool is closed."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    made: List[Any] = []

    def full() -> Any:
        f = open("/dev/full", "w+b", buffering=0)  # noqa: SIM115
        made.append(f)
        return f

    monkeypatch.setattr(_source, "_temporary", full)
    with pytest.raises(PbtxtError) as e:
        with GraphFile(io.BufferedReader(io.BytesIO(MLP.read_bytes())), "<stdin>", spool=True) as g:  # type: ignore[arg-type]
            g.head()  # (a pipe is copied as it is read)
    msg = str(e.value)
    assert msg.startswith("<stdin>: no room left in the temporary folder ")
    assert tempfile.gettempdir() in msg and "TMPDIR" in msg and "\n" not in msg
    assert made and made[0].closed


def _unshare_tmpfs() -> bool:
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return False
    r = subprocess.run([unshare, "-rm", "sh", "-c", "mount -t tmpfs -o size=64k none /mnt"], capture_output=True)
    return r.returncode == 0


@pytest.mark.skipif(not _unshare_tmpfs(), reason="needs unshare -rm and a tmpfs mount (Linux user namespaces)")
@pytest.mark.parametrize("command", ["fp", "bp"])
def test_the_cli_on_a_full_temporary_folder(tmp_path: Path, command: str) -> None:
    """A real full folder: a 64 KiB tmpfs as TMPDIR (in a private mount namespace) and a 1.6 MB
    graph on stdin. One line on stderr, exit 2, no traceback."""
    script = 'mount -t tmpfs -o size=64k none "$1" && TMPDIR="$1" exec "$2" -m pbtxt_scan "$3" -'
    folder = tmp_path / "small"
    folder.mkdir()
    with open(str(MLP), "rb") as f:
        body = f.read() * 8
    r = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", str(folder), sys.executable, command],
        input=body, capture_output=True, timeout=60,
    )
    err = r.stderr.decode()
    assert (r.returncode, r.stdout) == (2, b""), err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("<stdin>: no room left in the temporary folder %s " % folder), err
    assert "TMPDIR" in err


def test_no_temporary_file_is_left(tmp_path: Path) -> None:
    """After answers, an error, and Ctrl-C while the stream is still being copied."""
    env = dict(os.environ, TMPDIR=str(tmp_path))
    ok = _cli("bp", "-", input=MLP.read_text(), env=env)
    assert (ok.returncode, ok.stdout.strip()) == (0, "gradients/dense/MatMul_grad/MatMul_1"), ok.stderr
    bad = _cli("fp", "-", input="node { name: 'a' op: \n", env=env)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    p = subprocess.Popen(  # (bp: it reads the stream to its end, so it is still copying when Ctrl-C comes)
        [sys.executable, "-m", "pbtxt_scan", "bp", "-"], stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        preexec_fn=default_sigint,
    )
    assert p.stdin is not None
    p.stdin.write(MLP.read_bytes())
    p.stdin.flush()
    _wait_for_spool(p.pid, tmp_path)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=30)
    assert p.returncode != 0 and b"Traceback" not in err, err
    assert os.listdir(str(tmp_path)) == []


def _wait_for_spool(pid: int, folder: Path) -> None:
    """Until process ``pid`` holds a file in ``folder`` open (its spool, copying the stream), where
    /proc tells; else a pause long enough for it to start."""
    fds = "/proc/%d/fd" % pid
    if not os.path.isdir(fds):
        time.sleep(3)
        return
    deadline = time.time() + 60
    while time.time() < deadline:
        for fd in os.listdir(fds):
            try:
                if os.readlink(os.path.join(fds, fd)).startswith(str(folder)):
                    return
            except OSError:
                pass
        time.sleep(0.05)
    raise AssertionError("no spool was opened in %s" % folder)


def test_stdin_answers_like_the_path() -> None:
    for command, path in [("points", MLP), ("ge-auto", GE)]:
        want = _cli(command, "--json", str(path))
        got = _cli(command, "--json", "-", input=path.read_text())
        assert want.returncode == got.returncode == 0, got.stderr
        assert got.stdout.replace('"<stdin>"', '"%s"' % path) == want.stdout


def _best_of(n: int, args: List[str], cache: Path, stdin_path: "Path | None" = None) -> float:
    """The best of ``n`` wall times; each run with an empty bp cache (a pipe never has one)."""
    best = float("inf")
    for i in range(n):
        env = dict(os.environ, PBTXT_SCAN_CACHE_DIR=str(cache / str(i)))
        t = time.perf_counter()
        if stdin_path is None:
            r = _cli(*args, env=env)
        else:
            with open(str(stdin_path), "rb") as f:  # (a pipe from cat, not a file as stdin)
                cat = subprocess.Popen(["cat"], stdin=f, stdout=subprocess.PIPE)
                r = _cli(*args, stdin=cat.stdout, env=env)
                assert cat.stdout is not None
                cat.stdout.close()
                cat.wait()
        best = min(best, time.perf_counter() - t)
        assert r.returncode == 0, r.stderr
    return best


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("cat") is None, reason="needs cat")
@pytest.mark.parametrize("command", ["fp", "bp"])
def test_a_pipe_runs_at_path_speed(tmp_path: Path, command: str) -> None:
    """300 MB of the dense benchmark graph: fp on the pipe took 7.3 s against 0.38 s by path (the
    stream was scanned block by block, no grep ahead). Now: the path's time plus one copy."""
    from benchmarks.generate import generate

    path = tmp_path / "dense.pbtxt"
    generate("dense", str(path), 300 << 20, seed=0)
    by_path = _best_of(2, [command, str(path)], tmp_path / "path-cache")
    by_pipe = _best_of(2, [command, "-"], tmp_path / "pipe-cache", stdin_path=path)
    assert by_pipe <= by_path * 1.5 + 2.0, "pipe %.2f s, path %.2f s" % (by_pipe, by_path)


def _piped(args: List[str], data: bytes, env: Any) -> Tuple[int, bytes, bytes, int]:
    """The CLI with ``data`` written to its stdin through a pipe, as ``cat`` writes it: (exit
    status, stdout, stderr, the bytes it took before it closed the pipe)."""
    p = subprocess.Popen(
        [sys.executable, "-m", "pbtxt_scan", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, bufsize=0, env=env,
    )
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    taken = 0
    try:
        while taken < len(data):
            taken += os.write(p.stdin.fileno(), data[taken : taken + (1 << 16)])
    except BrokenPipeError:  # (the reader has gone: what cat meets as SIGPIPE)
        pass
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    out, err = p.stdout.read(), p.stderr.read()
    return p.wait(timeout=120), out, err, taken


@needs_grep
def test_fp_reads_a_pipe_only_to_where_its_answer_is_settled(tmp_path: Path) -> None:
    """fp on the dense benchmark graph settles at its first gradients node (half-way in: whether
    the step runs at the top level): on a pipe it reads the stream to there, plus a window (the
    copy's reads and the pipes' buffers), and leaves the rest unread (the writer meets a closed
    pipe, as ``cat`` meets SIGPIPE). Before (issue 38), the whole stream was copied to the spool
    first: 3 s on 1 GB. The answer is the path's, and no temporary file is left."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.generate import generate

    path = tmp_path / "dense.pbtxt"
    generate("dense", str(path), 40 << 20, seed=0)
    body = path.read_bytes()
    settled = body.find(b'\n  name: "gradients/')
    assert 0 < settled < len(body) // 2 + (4 << 20)
    spool = tmp_path / "spool"
    spool.mkdir()
    env = dict(os.environ, TMPDIR=str(spool))
    code, out, err, taken = _piped(["fp", "-"], body, env)
    assert (code, out) == (0, _cli("fp", str(path)).stdout.encode()), err
    assert taken <= settled + 2 * _source.SPOOL_CHUNK < len(body), (taken, settled)
    assert os.listdir(str(spool)) == []


@needs_grep
def test_fp_answers_while_the_writer_pauses(tmp_path: Path) -> None:
    """A writer that has written past where fp's answer is settled and then pauses, the pipe still
    open (a slow producer, ``tail -f``): fp answers and exits without waiting for more (before:
    it copied the stream to its end first; a read that waited to fill its buffer, or grep's hits
    held in its output buffer, would wait for the writer too)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.generate import generate

    path = tmp_path / "dense.pbtxt"
    generate("dense", str(path), 12 << 20, seed=0)
    body = path.read_bytes()
    part = body[: body.find(b'\n  name: "gradients/') + (1 << 20)]
    p = subprocess.Popen(
        [sys.executable, "-m", "pbtxt_scan", "fp", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, bufsize=0,
    )
    assert p.stdin is not None and p.stdout is not None
    try:
        p.stdin.write(part)  # (and nothing more until fp is done: the pipe stays open)
        code = p.wait(timeout=120)  # (before: TimeoutExpired)
        out = p.stdout.read()
    finally:
        p.kill()
        p.stdin.close()
    assert (code, out) == (0, b"layer_0/MatMul\n"), p.stderr.read() if p.stderr else ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are Linux's")
def test_a_pipe_read_gets_a_wide_buffer(tmp_path):
    # A 64 KiB pipe makes `cat F | pbtxt-scan fp -` take turns with cat every 64 KiB (2.6 s a GB to
    # read, against 0.4 s at 1 MiB): opening a pipe widens it, where the system lets it.
    import fcntl

    from pbtxt_scan.source._source import open_binary

    PIPE_BYTES = 1 << 20
    if int(open("/proc/sys/fs/pipe-max-size").read()) < PIPE_BYTES:
        pytest.skip("pipe-max-size is below 1 MiB here")
    fifo = tmp_path / "graph.fifo"
    os.mkfifo(str(fifo))
    writer = os.open(str(fifo), os.O_RDWR)  # (a reader and a writer: opening does not block)
    try:
        os.write(writer, b'node { name: "a" op: "Const" }\n')
        f, _ = open_binary(str(fifo))
        try:
            assert fcntl.fcntl(f.fileno(), 1032) >= PIPE_BYTES  # F_GETPIPE_SZ
        finally:
            f.close()
    finally:
        os.close(writer)
