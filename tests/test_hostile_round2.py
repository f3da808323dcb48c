"""Hostile input, round 2 (issue 11): each case a measured reproduction that used to end in a
traceback or a wrong answer. The general guard over every command is in test_guard.py."""
from __future__ import annotations

from pathlib import Path

import pytest
from support.cli import CliRunner
from support.hostile import BIG_INT, BIG_INT_GE, BIG_INT_TF, DEEP_GE, DEEP_TF

from pbtxt_scan.cli import app

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    r = runner.invoke(app, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.stderr
    return r


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


@pytest.mark.parametrize(
    "args, code",
    [(["fp", "{f}"], 1), (["show", "{f}", "n"], 0), (["points", "{f}"], 1), (["bp", "{f}"], 1)],
    ids=lambda a: " ".join(a) if isinstance(a, list) else str(a),
)
def test_deep_nesting_below_line_1(tmp_path: Path, args: "list[str]", code: int) -> None:
    f = write(tmp_path, "deep.pbtxt", DEEP_TF)
    r = run(*[a.format(f=f) for a in args])
    assert r.exit_code == code, r.stderr


def test_deep_nesting_show_json_says_why(tmp_path: Path) -> None:
    f = write(tmp_path, "deep.pbtxt", DEEP_TF)
    r = run("show", "--json", f, "n")
    assert r.exit_code == 2
    assert r.stderr == "%s:2:1: nested too deeply to print as JSON (use show without --json)\n" % f


@pytest.mark.parametrize("braces, prints", [(99, True), (100, False)])
def test_show_json_prints_100_levels_and_refuses_101(tmp_path: Path, braces: int, prints: bool) -> None:
    # The node is a level, and each brace in its attr one more: 99 braces nest 100 messages. The bound
    # is counted, not met as a RecursionError (Python 3.8 could abort handling one: xdist's workers
    # died on DEEP_TF), so it holds whatever recursion limit or stack the command runs with.
    import json
    import sys

    deep = "{ a " * (braces - 1) + "{ }" + " }" * (braces - 1)
    f = write(tmp_path, "deep.pbtxt", 'node {\n  name: "n"\n  op: "Placeholder"\n  attr ' + deep + "\n}\n")
    limit = sys.getrecursionlimit()
    try:
        for at in (limit, 5000):
            sys.setrecursionlimit(at)
            r = run("show", "--json", f, "n")
            if prints:
                assert r.exit_code == 0, r.stderr
                level, n = json.loads(r.stdout)["block"], 1
                while "attr" in level or "a" in level:
                    level, n = (level.get("attr") or level["a"])[0]["value"], n + 1
                assert n == 100
            else:
                assert (r.exit_code, r.stderr) == (2, "%s:1:1: nested too deeply to print as JSON (use show without --json)\n" % f)
    finally:
        sys.setrecursionlimit(limit)


@pytest.mark.parametrize("args", [["resolve", "n", "--ge", "{f}"], ["ge-auto", "{f}"], ["ge-auto", "--json", "{f}"]])
def test_deep_nesting_in_a_ge_dump(tmp_path: Path, args: "list[str]") -> None:
    f = write(tmp_path, "ge_proto_00000001_graph_1_Build.txt", DEEP_GE)
    r = run(*[a.format(f=f) for a in args])
    assert r.exit_code in (0, 1), r.stderr
    if args[0] == "resolve":
        assert "n" in r.stdout.split()


def test_5000_digit_integer_show_json(tmp_path: Path) -> None:
    import json

    f = write(tmp_path, "big.pbtxt", BIG_INT_TF)
    r = run("show", "--json", f, "n")
    assert r.exit_code == 0, r.stderr
    attr = json.loads(r.stdout)["block"]["attr"][0]["value"]
    value = attr["value"][0]["value"]["i"][0]["value"]
    assert str(value) == BIG_INT  # kept as written (Python will not convert it to int)


@pytest.mark.parametrize("full_parse_max", [None, 0], ids=["lark", "skim"])
def test_5000_digit_integer_in_a_ge_dump(tmp_path: Path, full_parse_max: "int | None") -> None:
    from pbtxt_scan import ge

    f = write(tmp_path, "ge_proto_00000001_graph_1_Build.txt", BIG_INT_GE)
    b = ge.load_build(f) if full_parse_max is None else ge.load_build(f, full_parse_max=full_parse_max)
    assert [op.name for op in b.ops] == ["n"]
    assert run("resolve", "n", "--ge", f).exit_code == 0


# --- GE dump folders: dumps chosen by content, not only by name -----------------------------------

_DUMP_DIR = Path(__file__).parent / "data" / "ge" / "dump_dir"
_TRAIN = "ge_proto_00000042_graph_1_Build.txt"


def _folder(tmp_path: Path, rename: "dict[str, str]", gz: bool = False) -> Path:
    import gzip
    import shutil

    d = tmp_path / "dumps"
    d.mkdir()
    for p in sorted(_DUMP_DIR.glob("ge_proto_*.txt")):
        name = rename.get(p.name, p.name)
        if gz:
            with gzip.open(str(d / (name + ".gz")), "wb") as out:
                out.write(p.read_bytes())
        else:
            shutil.copy(str(p), str(d / name))
    (d / "notes.txt").write_text("not a dump\n")
    return d


def test_gzipped_dump_folder(tmp_path: Path) -> None:
    from pbtxt_scan import ge

    d = _folder(tmp_path, {}, gz=True)
    pick = ge.pick_training_graph(ge.find_build_files(d))
    assert Path(pick["file"]).name == _TRAIN + ".gz"
    r = run("ge-auto", str(d))
    assert r.exit_code == 0, r.stderr


def test_renamed_dumps_are_chosen_by_content(tmp_path: Path) -> None:
    import json

    d = _folder(tmp_path, {p.name: "graph_%d.txt" % i for i, p in enumerate(sorted(_DUMP_DIR.glob("ge_proto_*.txt")))})
    r = run("ge-auto", "--json", str(d))
    assert r.exit_code == 0, r.stderr
    want = run("ge-auto", "--json", str(_DUMP_DIR / _TRAIN))
    got, exp = json.loads(r.stdout), json.loads(want.stdout)
    assert (got["fp"], got["bp"]) == (exp["fp"], exp["bp"])


# --- the progress bar never touches stdout ------------------------------------------------------

_WITH_BAR = r"""
import sys
from pbtxt_scan import cli
from pbtxt_scan.cli import _app
_app.PROGRESS_MIN_BYTES = 0  # a bar for any size: stderr is a terminal here
sys.argv = ["pbtxt-scan"] + sys.argv[1:]
cli.main()
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "openpty"), reason="needs a pseudo-terminal")
def test_progress_bar_on_a_terminal_leaves_stdout_to_the_results(tmp_path: Path) -> None:
    """With stderr on a terminal, rich's live display used to capture stdout: `nodes | wc -l`
    counted 419 of 559,011 rows, and `| head` did not stop the scan."""
    import os
    import subprocess
    import sys

    graph = tmp_path / "g.pbtxt"  # rows are written in batches of 512: several batches, during the scan
    graph.write_text("".join('node {\n  name: "n%d"\n  op: "Const"\n}\n' % i for i in range(3000)))
    want = run("nodes", str(graph)).stdout
    assert len(want.splitlines()) == 3000
    master, slave = os.openpty()
    env = dict(os.environ)
    env.pop("PBTXT_SCAN_NO_PROGRESS", None)
    try:
        r = subprocess.run([sys.executable, "-c", _WITH_BAR, "nodes", str(graph)], stdout=subprocess.PIPE,
                           stderr=slave, env=env, timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 0
    assert r.stdout.decode() == want


def test_points_on_a_truncated_file_keeps_the_fp(tmp_path: Path) -> None:
    graph = Path(__file__).parent / "data" / "graphs" / "mlp_sgd.pbtxt"
    data = graph.read_bytes()
    cut = tmp_path / "cut.pbtxt"
    cut.write_bytes(data[: len(data) * 2 // 3])  # after dense/MatMul (line 944), before the end
    r = run("points", str(cut))
    assert r.exit_code == 2
    assert r.stdout.splitlines()[0].split()[:2] == ["fp_point", "dense/MatMul"]
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(str(cut) + ":")
    assert run("fp", str(cut)).stdout == "dense/MatMul\n"


@pytest.mark.parametrize("args", [["nodes"], ["nodes", "--json"], ["fp", "--json"], ["show"], ["show", "--json"]])
def test_names_that_are_not_utf8_print_as_escapes(tmp_path: Path, args: "list[str]") -> None:
    """Octal escapes may spell bytes that are not UTF-8 (kept as surrogates when read): printing
    such a name raised UnicodeEncodeError (found by the guard's mutations on Python 3.9)."""
    import json
    import subprocess
    import sys

    f = write(tmp_path, "g.pbtxt", 'node {\n  name: "a\\345\\236b"\n  op: "Placeholder"\n  attr { key: "shape" value { shape { dim { size: -1 } } } }\n}\n'
              'node {\n  name: "m"\n  op: "MatMul"\n  input: "a\\345\\236b"\n}\n')
    extra = ["a\udce5\udc9eb"] if args[0] == "show" else []
    r = subprocess.run([sys.executable, "-m", "pbtxt_scan", *args, f, *[e.encode("utf-8", "surrogateescape").decode("utf-8", "replace") for e in extra]],
                       capture_output=True, env=dict(__import__("os").environ, PYTHONIOENCODING="utf-8"), timeout=60)
    err = r.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    if args[0] == "nodes":  # (issue 37: a string field that is no UTF-8 is refused, as TensorFlow refuses it)
        assert r.returncode == 2 and err.count("\n") == 1 and "Couldn't parse string" in err, err
    else:
        assert r.returncode in (0, 1), err
    text = r.stdout.decode("utf-8")  # what is printed is valid UTF-8
    if "--json" in args or "--jsonl" in args:
        for line in text.splitlines():
            if line.startswith("{") and line.endswith("}"):
                json.loads(line)
