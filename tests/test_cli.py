"""The command line as a user runs it: typer's CliRunner, plus one real installed console script."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app

MLP = Path(__file__).parent / "data" / "graphs" / "mlp_sgd.pbtxt"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_nodes_lists_the_recipe_example_with_editor_lines():
    r = run("nodes", str(MLP))
    assert r.exit_code == 0
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    by_name = {name: (int(line), op) for line, name, op in rows}
    # The recipe's worked example: dense/MatMul opens at line 944 (shared/README.md).
    assert by_name["dense/MatMul"] == (944, "MatMul")
    assert by_name["gradients/dense/MatMul_grad/MatMul_1"] == (3227, "MatMul")
    text = MLP.read_text().splitlines()
    for line, name, _ in rows:  # every reported line is really that node's opener
        assert text[int(line) - 1] == "node {"
        assert text[int(line)] == '  name: "%s"' % name


def test_nodes_jsonl():
    r = run("nodes", "--json", str(MLP))
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    mm = next(o for o in objs if o["name"] == "dense/MatMul")
    assert (mm["op"], mm["line"], mm["name_line"]) == ("MatMul", 944, 945)
    assert mm["inputs"] == ["IteratorGetNext", "dense/MatMul/ReadVariableOp"]
    assert MLP.read_bytes()[mm["offset"] : mm["offset"] + 6] == b"node {"


def test_show_prints_the_block_with_line_numbers():
    r = run("show", str(MLP), "dense/MatMul")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["944", "node", "{"]
    assert lines[-1].split() == [lines[-1].split()[0], "}"]
    src = MLP.read_text().splitlines()
    for row in lines:
        num, _, rest = row.strip().partition("  ")
        assert src[int(num) - 1] == rest


def test_show_json_is_the_grammar_parse():
    r = run("show", "--json", str(MLP), "dense/MatMul")
    obj = json.loads(r.stdout)
    block = obj["block"]
    assert block["name"] == [{"value": "dense/MatMul", "line": 945, "column": 3}]
    assert [i["value"] for i in block["input"]] == ["IteratorGetNext", "dense/MatMul/ReadVariableOp"]


def test_show_unknown_name_exits_1():
    r = run("show", str(MLP), "no/such/node")
    assert r.exit_code == 1
    assert "no node named" in r.stderr


def test_stats_json_counts_match_the_file():
    r = run("stats", "--json", "--top", "0", str(MLP))
    obj = json.loads(r.stdout)
    text = MLP.read_text()
    assert obj["lines"] == text.count("\n")
    assert obj["bytes"] == len(text.encode())
    assert obj["nodes"] == text.count("\nnode {") + text.startswith("node {")
    assert obj["ops"]["Const"] == text.count('\n  op: "Const"')


def test_check_reports_file_line_col_and_exit_2(tmp_path):
    bad = tmp_path / "cut.pbtxt"
    bad.write_text('node {\n  name: "a"\n  op: "Const\n}\n')
    r = run("check", str(bad))
    assert r.exit_code == 2
    assert r.stderr.strip() == "%s:3:7: unterminated string (a string cannot span lines)" % bad
    assert "Traceback" not in r.stderr


def test_missing_file_is_one_line_exit_2(tmp_path):
    r = run("nodes", str(tmp_path / "nope.pbtxt"))
    assert r.exit_code == 2
    assert r.stderr.strip() == "%s: no such file" % (tmp_path / "nope.pbtxt")


def test_version_and_help():
    assert run("--version").stdout.startswith("pbtxt-scan ")
    h = run("--help").stdout
    for cmd in ("check", "nodes", "show", "stats"):
        assert cmd in h


@pytest.mark.skipif(shutil.which("pbtxt-scan") is None, reason="console script not installed")
def test_installed_console_script_from_another_folder(tmp_path):
    # The grammar must ship with the package: run from a folder that has no grammar/ beside it.
    out = subprocess.run(
        ["pbtxt-scan", "show", "--json", str(MLP), "dense/MatMul"],
        cwd=str(tmp_path), capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""},
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["line"] == 944
    piped = subprocess.run(
        "pbtxt-scan nodes %s | head -1" % MLP, shell=True, cwd=str(tmp_path), capture_output=True, text=True
    )
    assert piped.stdout.split("\t")[1] == "global_step/Initializer/zeros"
    assert piped.stderr == ""


def test_stdin_and_gzip_stdin_for_every_kind_of_command():
    import gzip

    raw = MLP.read_bytes()
    for data in (raw, gzip.compress(raw)):
        # points reads forward then backward: stdin is spooled once, positions are the stream's
        r = runner.invoke(app, ["points", "--json", "-"], input=data)
        assert r.exit_code == 0, r.stderr
        obj = json.loads(r.stdout)
        assert (obj["fp"]["line"], obj["bp"]["line"]) == (944, 3227)
        assert obj["bp"]["file"] == "<stdin>"
        r = runner.invoke(app, ["nodes", "-"], input=data)
        assert r.stdout.splitlines()[-1].split("\t")[1] == "GradientDescent"


def test_stdin_errors_name_stdin():
    r = runner.invoke(app, ["bp", "-"], input=b'node { name: "gradients/x" op: "Mul" ')
    assert r.exit_code == 2
    assert r.stderr.strip() == "<stdin>:1:38: unexpected end of input: message 'node' is not closed (expected '}')"


def test_show_json_too_deep_is_one_line(tmp_path):
    deep = tmp_path / "deep.pbtxt"
    deep.write_text('node { name: "x" op: "Const" ' + "a {" * 5000 + "}" * 5000 + "}\n")  # (a node: its name and op)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # the same failure as 200,000 levels, at a test-friendly size
    try:
        r = run("show", "--json", str(deep), "x")
    finally:
        sys.setrecursionlimit(limit)
    assert r.exit_code == 2
    assert r.stderr.strip() == "%s:1:1: nested too deeply to print as JSON (use show without --json)" % deep
