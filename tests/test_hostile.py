"""Hostile input: one clear line ``FILE:LINE:COL: message`` on stderr and exit 2, never a traceback,
never a hang, memory bounded; valid oddities (empty, BOM, CRLF, deep nesting) just work.

The table of cases and their exact messages is in tests/data/README.md, section "hostile/".
Whole-file verdicts (not text format at all, unreadable) have no position: ``FILE: message``.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import List

import pytest
from support.cli import CliRunner
from support.hostile import _BINARY_GRAPHDEF, CASES, NODE, run_measured
from support.signals import default_sigint

from pbtxt_scan.cli import app

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def assert_one_line_error(r, expected: str, code: int = 2) -> None:
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    assert r.stderr == expected + "\n"
    assert r.exit_code == code


def write(tmp_path: Path, name: str, data: bytes) -> str:
    p = tmp_path / name
    p.write_bytes(data)
    return str(p)


# --- bad input: the table of cases and messages is in support/hostile.py ---------------------------


@pytest.mark.parametrize("command", ["check", "nodes"])
@pytest.mark.parametrize("name, data, message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_one_clear_line(tmp_path: Path, name: str, data: bytes, message: str, command: str) -> None:
    path = write(tmp_path, name + ".pbtxt", data)
    r = run(command, path)
    positioned = message[0].isdigit() or message.startswith("offset ")  # FILE:LINE:COL or FILE:offset N
    assert_one_line_error(r, "%s:%s" % (path, message) if positioned else "%s: %s" % (path, message))


def test_binary_graphdef_is_read(tmp_path: Path) -> None:
    # Refused before issue 13 ("write it with as_text=True"); now read like its text.
    path = write(tmp_path, "tiny.pb", _BINARY_GRAPHDEF)
    r = run("nodes", path)
    assert (r.exit_code, r.stdout, r.stderr) == (0, "2\tdense\tMatMul\n30\ty\tRelu\n", "")
    r = run("check", path)
    assert (r.exit_code, r.stdout) == (0, path + ": ok (43 bytes, 2 nodes, binary GraphDef)\n")


@pytest.mark.parametrize("name, data, message", CASES[:3], ids=[c[0] for c in CASES[:3]])
def test_bad_input_from_stdin(name: str, data: bytes, message: str) -> None:
    # A real process: CliRunner's stdin is a BytesIO, not the BufferedReader `-` reads in real life.
    p = subprocess.run([sys.executable, "-m", "pbtxt_scan", "check", "-"], input=data, capture_output=True,
                       env=_env(), timeout=60)
    assert (p.returncode, p.stdout, p.stderr.decode()) == (2, b"", "<stdin>:" + message + "\n")


def test_nodes_prints_blocks_before_the_error(tmp_path: Path) -> None:
    # Streaming: the nodes before a late error are printed, then the one error line.
    path = write(tmp_path, "late.pbtxt", NODE + NODE.replace(b'"a"', b'"b"') + b"}\n")
    r = run("nodes", path)
    assert r.stdout == "1\ta\tConst\n5\tb\tConst\n"
    assert_one_line_error(r, path + ":9:1: unexpected '}': no message is open here (one '}' too many?)")


def test_every_command_reports_bad_input_the_same_way(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.pbtxt", b"}\n" + NODE)  # before any node
    want = path + ":1:1: unexpected '}': no message is open here (one '}' too many?)"
    for args in (["check", path], ["nodes", path], ["nodes", "--json", path], ["stats", path], ["fp", path], ["bp", path], ["points", path]):
        r = run(*args)
        assert_one_line_error(r, want)
    # show reads its node's block alone (issue 38: found by one byte search), as --context did: a
    # fault elsewhere is not met (as fp's past its answer), one in the block is, the same way.
    for args in (["show", path, "a"], ["show", "--json", path, "a"]):
        r = run(*args)
        assert r.exit_code == 0 and '"a"' in r.stdout and r.stderr == "", args
    # (a field the node has: an unknown one, ``x: }``, is refused by check's schema first, at 4:3)
    path = write(tmp_path, "bad_block.pbtxt", NODE.replace(b'  op: "Const"\n', b'  op: "Const"\n  device: }\n'))
    want = path + ":4:11: unexpected '}', expected a value"
    for args in (["check", path], ["show", path, "a"], ["show", "--json", path, "a"]):
        assert_one_line_error(run(*args), want)


# --- files that cannot be read ---------------------------------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.pbtxt")
    for cmd in ("check", "nodes", "stats"):
        assert_one_line_error(run(cmd, path), path + ": no such file")


def test_directory(tmp_path: Path) -> None:
    # (A folder is read when it holds a graph: test_input_kinds.py. This one holds none.)
    for cmd in ("check", "nodes", "stats"):
        assert_one_line_error(run(cmd, str(tmp_path)), str(tmp_path) + ": no graph in this folder (looked for "
                              "saved_model.pb, saved_model.pbtxt, checkpoint, *.meta, graph.pbtxt): give the graph file itself")


def test_no_read_permission(tmp_path: Path) -> None:
    p = tmp_path / "secret.pbtxt"
    p.write_bytes(NODE)
    p.chmod(0)
    try:
        if not os.access(p, os.R_OK):
            for cmd in ("check", "nodes"):
                assert_one_line_error(run(cmd, str(p)), str(p) + ": permission denied (cannot read the file)")
            return
        # Root reads anything: drop the capabilities that let it (CI runs as root).
        if shutil.which("setpriv") is None:
            pytest.skip("running as root without setpriv: permissions do not stop reading")
        caps = "-dac_override,-dac_read_search"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        for cmd in ("check", "nodes", "bp"):
            r = subprocess.run(["setpriv", "--inh-caps=" + caps, "--bounding-set=" + caps, sys.executable, "-m",
                                "pbtxt_scan", cmd, str(p)], capture_output=True, text=True, env=env)
            assert (r.returncode, r.stdout, r.stderr) == (2, "", str(p) + ": permission denied (cannot read the file)\n")
    finally:
        p.chmod(0o644)


_GZ = gzip.compress(NODE * 2000)


@pytest.mark.parametrize(
    "name, data, detail",
    [
        ("truncated", _GZ[: len(_GZ) // 2], "Compressed file ended before the end-of-stream marker was reached"),
        ("bad_header", b"\x1f\x8b" + b"X" * 30, "Unknown compression method"),
        ("bad_crc", _GZ[:-8] + b"\0" * 8, "CRC check failed 0x0 != 0x%x" % (gzip.zlib.crc32(NODE * 2000))),
    ],
    ids=["truncated", "bad_header", "bad_crc"],  # (not the bytes: gzip writes the clock's second, and xdist's workers must agree)
)
def test_corrupt_gzip(tmp_path: Path, name: str, data: bytes, detail: str) -> None:
    path = write(tmp_path, name + ".pbtxt.gz", data)
    for cmd in ("check", "nodes"):
        r = run(cmd, path)
        assert_one_line_error(r, "%s: corrupt gzip data: %s" % (path, detail))


def test_good_gzip_reads_like_the_plain_file(tmp_path: Path) -> None:
    path = write(tmp_path, "g.pbtxt.gz", gzip.compress(MLP.read_bytes()))
    assert run("nodes", path).stdout == run("nodes", str(MLP)).stdout


# --- valid oddities -----------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"# just a comment\n", b"\n\n  \t\n", b"# c1\n# c2", b"\xef\xbb\xbf"],
                         ids=["empty", "comment", "blank", "comments_no_newline", "bom_only"])
def test_empty_and_comment_only_files(tmp_path: Path, data: bytes) -> None:
    # No graph in them: every command says so in one line, exit 2 (issue 22: `check` no longer says ok).
    path = write(tmp_path, "e.pbtxt", data)
    what = "is blank" if not data.replace(b"\xef\xbb\xbf", b"").strip() else "has only comments and blank lines"
    if data == b"":
        what = "is empty"
    for cmd in ("check", "nodes", "fp", "stats"):
        r = run(cmd, path)
        assert (r.exit_code, r.stdout) == (2, ""), (cmd, r.stdout)
        assert r.stderr.startswith(path + ": the file %s: there is no graph in it; give a graph.pbtxt" % what), r.stderr
        assert r.stderr.count("\n") == 1


def test_crlf_and_bom_give_the_same_nodes_and_lines(tmp_path: Path) -> None:
    lf = MLP.read_bytes()
    want = run("nodes", "--json", str(MLP)).stdout.splitlines()
    for name, data in (("crlf", lf.replace(b"\n", b"\r\n")), ("bom", b"\xef\xbb\xbf" + lf),
                       ("both", b"\xef\xbb\xbf" + lf.replace(b"\n", b"\r\n"))):
        path = write(tmp_path, name + ".pbtxt", data)
        r = run("nodes", "--json", path)
        assert r.exit_code == 0, r.stderr
        got = [json.loads(x) for x in r.stdout.splitlines()]
        exp = [json.loads(x) for x in want]
        assert [(o["name"], o["op"], o["line"], o["name_line"], o["inputs"]) for o in got] == \
               [(o["name"], o["op"], o["line"], o["name_line"], o["inputs"]) for o in exp]
        for o in got:  # offsets are true byte offsets of this file
            assert data[o["offset"] : o["offset"] + 6] == b"node {"
        r = run("check", path)
        assert r.exit_code == 0, r.stderr


def test_crlf_error_positions_match_lf(tmp_path: Path) -> None:
    data = b'node {\n  name: "a"\n  op: "Const"\n  device: 1e\n}\n'
    lf = write(tmp_path, "lf.pbtxt", data)
    crlf = write(tmp_path, "crlf.pbtxt", b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"))
    msg = ":4:11: invalid number (a number cannot be followed directly by a letter or digit)"
    assert_one_line_error(run("check", lf), lf + msg)
    assert_one_line_error(run("check", crlf), crlf + msg)


DEPTH = 200_000


@pytest.mark.slow  # (over a second: the slow step runs it)
def test_deep_nesting_no_recursion_error(tmp_path: Path) -> None:
    # The scanner keeps an explicit stack; 200,000 open messages are just list items (and so are
    # the schema's frames: a FullTypeDef's args nest as deep as they are written).
    deep = b'node {\n  name: "n"\n  op: "Deep"\n  experimental_type {' + b"args {" * DEPTH + b"}" * DEPTH + b"}\n}\n"
    path = write(tmp_path, "deep.pbtxt", deep)
    r = run("check", path)
    assert (r.exit_code, r.stdout, r.stderr) == (0, path + ": ok (5 lines, 1 node)\n", "")
    r = run("nodes", path)
    assert (r.exit_code, r.stdout, r.stderr) == (0, "1\tn\tDeep\n", "")
    unknown = write(tmp_path, "deep_unknown.pbtxt", b"a {" * DEPTH + b"}" * DEPTH)
    assert_one_line_error(run("nodes", unknown), unknown + ':1:1: Message type "tensorflow.GraphDef" has no field named "a". '
                          "(schema: TensorFlow 2.21.0)")
    bad = write(tmp_path, "deep_bad.pbtxt", deep[: -len(b"}}\n}\n")])
    assert_one_line_error(run("check", bad), bad + ":4:%d: unexpected end of input: message 'args' is not closed (expected '}')"
                          % (len(deep.split(b"\n")[3]) - 1))


# --- huge tokens: a real process (support.hostile.run_measured), time and peak memory ----------------

BIG = 50 << 20


@pytest.mark.slow  # a 50 MB file, three measured processes
def test_50mb_string_streams_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "bigstr.pbtxt"
    with open(path, "wb") as f:
        f.write(b'node {\n  name: "w"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n        tensor_content: "')
        f.write(b"\\000\\377ab" * (BIG // 10))
        f.write(b'"\n      }\n    }\n  }\n}\nnode {\n  name: "x"\n  op: "Identity"\n  input: "w"\n}\n')
    base, _, base_mb = run_measured(tmp_path, "check", str(MLP))
    assert base.returncode == 0
    p, secs, mb = run_measured(tmp_path, "nodes", str(path))
    assert (p.returncode, p.stdout, p.stderr) == (0, b"1\tw\tConst\n13\tx\tIdentity\n", b"")
    assert secs < 30
    assert mb < base_mb + 40, (mb, base_mb)  # the 50 MB literal is never held whole
    p, _, _ = run_measured(tmp_path, "check", str(path))
    assert (p.returncode, p.stderr) == (0, b"")


@pytest.mark.slow  # a 50 MB file, a measured process
def test_50mb_identifier_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "bigident.pbtxt"
    with open(path, "wb") as f:
        f.write(b'node {\n  name: "w"\n  op: ')
        f.write(b"A" * BIG)
        f.write(b"\n}\n")
    p, secs, mb = run_measured(tmp_path, "check", str(path))
    want = "%s:3:7: identifier longer than 1048576 bytes (only a string may be this long)\n" % path
    assert (p.returncode, p.stdout, p.stderr.decode()) == (2, b"", want)
    assert secs < 30 and mb < 200


@pytest.mark.slow  # a 50 MB file, a measured process
def test_50mb_line_without_newline_truncated(tmp_path: Path) -> None:
    path = tmp_path / "cut.pbtxt"
    with open(path, "wb") as f:
        f.write(b'node { name: "w" device: "')
        f.write(b"x" * BIG)
    p, secs, _ = run_measured(tmp_path, "check", str(path))
    assert (p.returncode, p.stderr.decode()) == (2, "%s:1:26: unterminated string at end of input\n" % path)
    assert secs < 30


# --- pipes, real processes, read-only input ----------------------------------------------------------


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_real_process_bad_input(tmp_path: Path) -> None:
    path = write(tmp_path, "bad.pbtxt", b'node {\n  name: "a\n}\n')
    p = subprocess.run([sys.executable, "-m", "pbtxt_scan", "check", path], capture_output=True, env=_env(), timeout=60)
    assert p.returncode == 2 and p.stdout == b""
    assert p.stderr.decode() == path + ":2:9: unterminated string (a string cannot span lines)\n"


def test_nodes_into_head_exits_quietly(tmp_path: Path) -> None:
    path = tmp_path / "many.pbtxt"
    path.write_bytes(b"".join(b'node {\n  name: "n%d"\n  op: "Const"\n}\n' % i for i in range(100_000)))
    p = subprocess.Popen([sys.executable, "-m", "pbtxt_scan", "nodes", str(path)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=_env())
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.readline()
    p.stdout.close()  # like `head -1` exiting
    err = p.stderr.read()
    code = p.wait(timeout=60)
    assert first == b"1\tn0\tConst\n"
    assert err == b"" and code == 0


def test_shell_pipe_into_head(tmp_path: Path) -> None:
    if shutil.which("sh") is None or shutil.which("head") is None:
        pytest.skip("no sh/head")
    path = tmp_path / "many.pbtxt"
    path.write_bytes(b"".join(b'node {\n  name: "n%d"\n  op: "Const"\n}\n' % i for i in range(50_000)))
    cmd = '"%s" -m pbtxt_scan nodes "%s" | head -3; exit ${PIPESTATUS:-0}' % (sys.executable, path)
    p = subprocess.run(["sh", "-c", cmd], capture_output=True, env=_env(), timeout=60)
    assert p.stdout == b"1\tn0\tConst\n5\tn1\tConst\n9\tn2\tConst\n"
    assert p.stderr == b""


def _snapshot(d: Path) -> List[tuple]:
    return sorted((p.name, p.read_bytes(), p.stat().st_mtime_ns, stat.S_IMODE(p.stat().st_mode)) for p in d.iterdir())


def test_never_writes_to_input(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    shutil.copy(MLP, ro / "g.pbtxt")
    shutil.copy(DATA / "ge" / "ge_proto_00000013_graph_3_Build.txt", ro / "ge_proto_00000013_graph_3_Build.txt")
    (ro / "g.pbtxt.gz").write_bytes(gzip.compress(MLP.read_bytes()))
    (ro / "bad.pbtxt").write_bytes(NODE + b"}\n")
    for p in ro.iterdir():
        p.chmod(0o444)
    ro.chmod(0o555)
    before = _snapshot(ro)
    g, ge = str(ro / "g.pbtxt"), str(ro / "ge_proto_00000013_graph_3_Build.txt")
    try:
        commands = [
            ["check", g, str(ro / "g.pbtxt.gz"), str(ro / "bad.pbtxt")],
            ["nodes", g], ["nodes", "--json", str(ro / "g.pbtxt.gz")], ["nodes", ge],
            ["show", g, "dense/MatMul"], ["show", "--json", g, "dense/MatMul"],
            ["stats", g], ["stats", "--json", ge],
            ["fp", g], ["bp", g], ["points", g],
            ["resolve", "dense/MatMul", "--ge", ge], ["ge-auto", ge],
            ["nodes", str(ro / "bad.pbtxt")],
        ]
        for args in commands:
            r = run(*args)
            assert r.exit_code in (0, 1, 2), (args, r.exit_code)
            assert "Traceback" not in r.stderr, args
            assert _snapshot(ro) == before, args
    finally:
        ro.chmod(0o755)


def test_a_file_that_changes_while_read_is_named_as_such(tmp_path):
    """A dump still being written: growing or cut short under the reader is said, not misread."""
    import pbtxt_scan
    from pbtxt_scan import PbtxtError

    g = tmp_path / "g.pbtxt"
    body = 'node {\n  name: "n%d"\n  op: "Add"\n}\n'
    g.write_text("".join(body % i for i in range(20000)))
    for change in ("grow", "shrink"):
        it = pbtxt_scan.iter_nodes(str(g), chunk_size=4096)
        next(it)
        if change == "grow":
            with g.open("a") as out:
                out.write(body % 99999)
        else:
            with g.open("r+") as out:
                out.truncate(1000)
        with pytest.raises(PbtxtError) as e:
            for _ in it:
                pass
        assert "the file changed while it was being read" in str(e.value)
        g.write_text("".join(body % i for i in range(20000)))


@pytest.mark.slow  # a 60 MB graph, a sleep, a signal
def test_ctrl_c_exits_130_without_a_traceback(tmp_path: Path) -> None:
    import signal

    from benchmarks.generate import generate

    big = tmp_path / "big.pbtxt"
    generate("dense", str(big), 6 << 20, seed=1)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # The graph comes through a pipe we keep open: the scan cannot end before the signal, however
    # fast the machine (a file of 60 MB could be read whole within the wait on 2 idle cores).
    p = subprocess.Popen([sys.executable, "-m", "pbtxt_scan", "stats", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, preexec_fn=default_sigint)
    assert p.stdin is not None
    p.stdin.write(big.read_bytes())
    p.stdin.flush()
    time.sleep(0.8)  # started, and mid-scan: waiting for the rest of the graph
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert b"Traceback" not in err and len(err.splitlines()) <= 1


@pytest.mark.parametrize("data", [b"versions {\n  producer: 1\n}\n", b"# a comment\nversions { producer: 1 }\n"])
def test_fp_bp_on_an_empty_graph_say_why(tmp_path: Path, data: bytes) -> None:
    # A graph with no node says why there is no point (exit 1); a file with no graph at all is bad
    # input (exit 2, test_empty_and_comment_only_files).
    g = tmp_path / "empty.pbtxt"
    g.write_bytes(data)
    for cmd, why in (("fp", "no compute op found"), ("bp", "no node in a gradients scope")):
        r = CliRunner().invoke(app, [cmd, str(g)])
        assert r.exit_code == 1
        assert r.stderr.startswith("%s: no %s: %s" % (g, cmd, why))


@pytest.mark.slow  # three real processes on a 30,000-node file
def test_two_concurrent_runs_share_the_index_cache(tmp_path: Path) -> None:
    # One-line layout: bp takes the index path, and both runs race to write the same cache file.
    g = tmp_path / "oneline.pbtxt"
    g.write_text("".join('node { name: "gradients/n%d" op: "Mul" input: "x" }\n' % i for i in range(30000)))
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # (the cache folder: tmp_path / "cache", conftest.py)
    runs = [subprocess.Popen([sys.executable, "-m", "pbtxt_scan", "bp", str(g)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env) for _ in range(2)]
    for p in runs:
        out, err = p.communicate(timeout=300)
        assert (p.returncode, out.strip(), err) == (0, b"gradients/n29999", b"")
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".tmp-")]  # no leftovers
    again = subprocess.run([sys.executable, "-m", "pbtxt_scan", "bp", str(g)], capture_output=True, env=env)
    assert again.stdout.strip() == b"gradients/n29999"
