"""The whole job end to end: graph.pbtxt -> fp/bp -> GE names -> profiling options to paste."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

from support.cli import CliRunner

from pbtxt_scan.cli import app

DATA = Path(__file__).parent / "data"
GRAPH = DATA / "graphs" / "mlp_sgd.pbtxt"
GE_DIR = DATA / "ge" / "mlp_sgd"  # hand-written Build dump of the same model: see data/README.md


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_profiling_json_uses_the_names_ge_knows():
    r = run("points", str(GRAPH), "--ge", str(GE_DIR), "--format", "profiling", "--profiling-output", "/data/prof")
    assert r.exit_code == 0, r.stderr
    opts = json.loads(r.stdout)
    assert opts == {
        "output": "/data/prof",
        "training_trace": "on",
        "task_trace": "on",
        # fused with BiasAdd; the TF name is recorded in _datadump_original_op_names
        "fp_point": "dense/MatMuldense/BiasAdd",
        # renamed with a _1 suffix and not recorded: only GE's name works
        "bp_point": "gradients/dense/MatMul_grad/MatMul_1_1",
        "aic_metrics": "PipeUtilization",
    }
    assert "GE renamed gradients/dense/MatMul_grad/MatMul_1 to gradients/dense/MatMul_grad/MatMul_1_1 (suffix)" in r.stderr


def test_env_lines_are_shell_ready():
    r = run("points", str(GRAPH), "--ge", str(GE_DIR), "--format", "env")
    lines = r.stdout.splitlines()
    assert lines[0] == "export PROFILING_MODE=true"
    name, _, value = lines[1][len("export ") :].partition("=")
    assert name == "PROFILING_OPTIONS"
    assert json.loads(shlex.split(value)[0])["bp_point"] == "gradients/dense/MatMul_grad/MatMul_1_1"


def test_points_json_carries_both_sides():
    obj = json.loads(run("points", "--json", str(GRAPH), "--ge", str(GE_DIR)).stdout)
    assert obj["fp"]["name"] == "dense/MatMul" and obj["fp"]["line"] == 944
    assert obj["ge"]["fp"]["best"]["name"] == "dense/MatMuldense/BiasAdd"
    assert obj["ge"]["bp"]["best"]["match"] == "suffix"


def test_without_ge_the_tf_names_are_used():
    opts = json.loads(run("points", str(GRAPH), "--format", "profiling").stdout)
    assert (opts["fp_point"], opts["bp_point"]) == ("dense/MatMul", "gradients/dense/MatMul_grad/MatMul_1")
