"""The command line's conventions: completion, plurals, refused options, stable JSON keys."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app

GRAPHS = Path(__file__).parent / "data" / "graphs"
MLP = GRAPHS / "mlp_sgd.pbtxt"
INFERENCE = GRAPHS / "inference_no_gradients.pbtxt"
POINT_KEYS = {
    "kind", "name", "op", "line", "name_line", "offset", "rule", "file", "function", "reason", "confidence", "doubt", "alternatives",
}
runner = CliRunner()


def run(*args: str, **kw):
    return runner.invoke(app, list(args), **kw)


def _error_lines(r) -> list:
    return [line for line in r.stderr.splitlines() if line.startswith("Error")]


# --- shell completion ----------------------------------------------------------------------


def test_help_offers_shell_completion():
    h = run("--help").stdout
    assert "--install-completion" in h and "--show-completion" in h


def test_show_completion_prints_a_script():
    # In a fresh process: typer reads _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION when the app is
    # built (at import), and without it asks shellingham, which names the shell pytest was started
    # from (sh: no completion for it) whatever --show-completion says.
    env = dict(os.environ, SHELL="/bin/bash", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    r = subprocess.run([sys.executable, "-m", "pbtxt_scan", "--show-completion", "bash"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "complete" in r.stdout and "PBTXT_SCAN_COMPLETE" in r.stdout.upper()


# The console script of the Python running the tests (not another install found on PATH).
SCRIPT = Path(sys.executable).parent / "pbtxt-scan"


@pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed beside this Python")
def test_completion_completes_command_names():
    env = dict(os.environ, _PBTXT_SCAN_COMPLETE="complete_bash", COMP_WORDS="pbtxt-scan st", COMP_CWORD="1")
    out = subprocess.run([str(SCRIPT)], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["stats"]


# --- words --------------------------------------------------------------------------------


def test_check_says_1_line_1_node():
    r = run("check", "-", input=b'node { name: "a" op: "Const" }\n')
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() == "<stdin>: ok (1 line, 1 node)"


def test_check_says_lines_and_nodes_in_the_plural():
    r = run("check", str(MLP))
    assert r.stdout.strip() == "%s: ok (3871 lines, 155 nodes)" % MLP


# --- refused options ------------------------------------------------------------------------


def test_stats_negative_top_is_refused():
    r = run("stats", "--top", "-1", str(MLP))
    assert r.exit_code == 2
    (line,) = _error_lines(r)
    assert "--top" in line and "-1 is negative" in line
    assert r.stdout == "" and "Traceback" not in r.stderr


def test_stats_top_zero_lists_every_op():
    r = run("stats", "--top", "0", "--json", str(MLP))
    assert r.exit_code == 0
    assert len(json.loads(r.stdout)["ops"]) > 15


@pytest.mark.parametrize("command", ["fp", "bp", "points"])
def test_config_unknown_key_is_refused_naming_it_and_the_allowed_ones(tmp_path, command):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"skip_op": ["Cast"], "keep_ops": []}))
    r = run(command, "--config", str(cfg), str(MLP))
    assert r.exit_code == 2
    (line,) = _error_lines(r)
    assert '"skip_op"' in line
    assert "skip_ops, keep_ops, name_filters" in line
    assert r.stdout == "" and "Traceback" not in r.stderr


@pytest.mark.parametrize("text", ['{"skip_ops": "Cast"}', '{"keep_ops": [1]}', "[1, 2]", "{"])
def test_config_of_the_wrong_shape_is_refused(tmp_path, text):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(text)
    r = run("fp", "--config", str(cfg), str(MLP))
    assert r.exit_code == 2
    assert len(_error_lines(r)) == 1 and "Traceback" not in r.stderr


def test_config_known_keys_apply(tmp_path):
    cfg = tmp_path / "cfg.json"
    cfg.write_text(json.dumps({"skip_ops": ["MatMul"]}))
    r = run("fp", "--config", str(cfg), str(MLP))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.strip() != "dense/MatMul"


# --- JSON keys ------------------------------------------------------------------------------


def test_bp_json_has_the_same_keys_found_or_not():
    found = run("bp", "--json", str(MLP))
    missing = run("bp", "--json", str(INFERENCE))
    assert (found.exit_code, missing.exit_code) == (0, 1)
    f, m = json.loads(found.stdout), json.loads(missing.stdout)
    assert set(f) == set(m) == POINT_KEYS
    assert m["name"] is None and m["line"] is None and m["offset"] is None
    assert (m["kind"], m["file"], m["rule"]) == ("bp", str(INFERENCE), "dataflow")
    assert m["reason"]


def test_fp_json_has_the_same_keys_found_or_not(tmp_path):
    consts = tmp_path / "consts.pbtxt"
    consts.write_text('node {\n  name: "a"\n  op: "Const"\n}\n')
    found = run("fp", "--json", str(MLP))
    missing = run("fp", "--json", str(consts))
    assert (found.exit_code, missing.exit_code) == (0, 1)
    assert set(json.loads(found.stdout)) == set(json.loads(missing.stdout)) == POINT_KEYS
    assert json.loads(missing.stdout)["kind"] == "fp"


def test_points_json_has_the_same_keys_found_or_not():
    found = json.loads(run("points", "--json", str(MLP)).stdout)
    missing = json.loads(run("points", "--json", str(INFERENCE)).stdout)
    for kind in ("fp", "bp"):
        assert set(found[kind]) == set(missing[kind]) == POINT_KEYS
    assert missing["bp"]["name"] is None and missing["fp"]["name"] == "MatMul"


def test_points_json_from_stdin_names_stdin_when_not_found():
    r = run("points", "--json", "-", input=INFERENCE.read_bytes())
    assert json.loads(r.stdout)["bp"]["file"] == "<stdin>"
