"""Issue 22, as a user meets it: one option vocabulary on every command (--json, --format,
--input-kind, --profiling-output, --quiet; old spellings kept with one stderr line), the streams
(--explain on stderr, ties broken alike in text and JSON, no chatter under --quiet), the paste-ready
TF adapter snippets, MetaGraphs counted from 1, and each command's --help."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app

DATA = Path(__file__).parent / "data"
GRAPHS = DATA / "graphs"
MLP = str(GRAPHS / "mlp_sgd.pbtxt")
TF2 = str(GRAPHS / "tf2_called_function.pbtxt")
SAVED = str(DATA / "binary" / "mlp_sgd_saved_model" / "saved_model.pb")
GE_DIR = str(DATA / "ge" / "dump_dir")
GE_FILE = str(DATA / "ge" / "dump_dir" / "ge_proto_00000042_graph_1_Build.txt")
MLP_GE = str(DATA / "ge" / "mlp_sgd")  # the Build dump of the same model as MLP (data/README.md)
FP, BP = "dense/MatMul", "gradients/dense/MatMul_grad/MatMul_1"
runner = CliRunner()
COMMANDS = ["fp", "bp", "points", "check", "nodes", "show", "stats", "events", "resolve", "ge-auto", "report", "verify"]


def run(*args: str):
    return runner.invoke(app, list(args))


def help_options(command: str) -> List[str]:
    """The option names a command's --help lists."""
    text = run(command, "--help").stdout
    opts = text.split("Options:", 1)[1]
    return re.findall(r"(?<![\w-])(--[a-z][\w-]*)", opts.split("Exit codes:")[0])


# --- --json on every command ------------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_json_and_format(command: str):
    opts = help_options(command)
    assert "--json" in opts and "--format" in opts and "--quiet" in opts, opts


def test_nodes_json_is_the_new_spelling_and_jsonl_the_old():
    new = run("nodes", "--json", MLP)
    old = run("nodes", "--jsonl", MLP)
    assert new.exit_code == old.exit_code == 0
    assert new.stdout == old.stdout and json.loads(new.stdout.splitlines()[0])["op"]
    assert new.stderr == ""
    assert old.stderr.count("\n") == 1 and "--json" in old.stderr and "--jsonl" in old.stderr


def test_format_json_is_json():
    assert run("fp", "--format", "json", MLP).stdout == run("fp", "--json", MLP).stdout


def test_json_and_another_format_are_refused():
    r = run("points", "--json", "--format", "env", MLP)
    assert r.exit_code == 2 and "--format" in r.stderr


def test_show_json_is_one_line():
    r = run("show", "--json", MLP, FP)
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 1 and json.loads(r.stdout)["name"] == FP


def test_resolve_json_is_one_object_per_line():
    r = run("resolve", "--json", FP, BP, "--ge", GE_FILE)
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["tf_name"] for o in objs] == [FP, BP]


def test_a_ge_match_has_the_same_keys_in_resolve_and_points():
    res = [json.loads(line) for line in run("resolve", "--json", FP, BP, "--ge", MLP_GE).stdout.splitlines()]
    pts = json.loads(run("points", "--json", MLP, "--ge", MLP_GE).stdout)["ge"]
    for r, kind in zip(res, ("fp", "bp")):
        p = pts[kind]
        assert set(p) == set(r) and isinstance(p["matches"], list) and isinstance(r["matches"], list)
        assert p["matches"] == r["matches"] and p["best"] == r["best"] and p["best"] is not None
        assert p["best"]["op"] and "type" not in p["best"]


def test_ge_auto_json_has_no_top_level_reasons():
    obj = json.loads(run("ge-auto", "--json", GE_FILE).stdout)
    assert "fp_reason" not in obj and "bp_reason" not in obj
    assert obj["fp"]["reason"] and obj["bp"]["reason"] and obj["fp"]["op"] == "Cast"


def test_stats_json_names_the_file_file():
    obj = json.loads(run("stats", "--json", MLP).stdout)
    assert obj["file"] == MLP and "path" not in obj


@pytest.mark.parametrize("args", [["fp", "--json", "nosuch.pbtxt"], ["ge-auto", "--json", "nosuch"], ["nodes", "--jsonl", "nosuch.pbtxt"]])
def test_an_error_under_json_is_a_json_line_too(args: List[str]):
    r = run(*args)
    assert r.exit_code == 2
    err = json.loads(r.stdout)
    assert set(err) >= {"error", "file", "line", "column"} and err["file"] == args[-1]
    assert err["error"] in r.stderr and r.stderr.strip().endswith(err["error"])


# --- --format: what to paste -------------------------------------------------------------------


def _options_in(text: str) -> dict:
    """The profiling options JSON inside a snippet (its one string literal holding fp_point)."""
    import ast

    for node in ast.walk(ast.parse(text)):
        # (Python 3.7 parses a string literal as ast.Str, whose text is .s; later ones as ast.Constant)
        value = getattr(node, "value", getattr(node, "s", None)) if type(node).__name__ in ("Constant", "Str") else None
        if isinstance(value, str) and "fp_point" in value:
            return json.loads(value)
    raise AssertionError(text)


@pytest.mark.parametrize("fmt, needles", [
    ("tf1-estimator", ["from npu_bridge.npu_init import *", "ProfilingConfig(enable_profiling=True, profiling_options=",
                       "NPURunConfig(profiling_config=profiling_config"]),
    ("tf1-session", ['custom_op.name = "NpuOptimizer"', 'custom_op.parameter_map["profiling_mode"].b = True',
                     'custom_op.parameter_map["profiling_options"].s = tf.compat.as_bytes(', "tf.compat.v1.Session(config=config)"]),
    ("tf2", ["import npu_device as npu", "npu.global_options().profiling_config.enable_profiling = True",
             "npu.global_options().profiling_config.profiling_options = "]),
])
def test_points_prints_a_tf_adapter_snippet_to_paste(fmt: str, needles: List[str]):
    r = run("points", "--format", fmt, "--profiling-output", "/data/prof", MLP)
    assert r.exit_code == 0, r.stderr
    for n in needles:
        assert n in r.stdout, (n, r.stdout)
    compile(r.stdout, fmt, "exec")  # it is Python as written
    opts = _options_in(r.stdout)
    assert (opts["fp_point"], opts["bp_point"], opts["output"]) == (FP, BP, "/data/prof")


def test_a_snippet_keeps_a_name_with_quotes_intact(tmp_path: Path):
    g = Path(MLP).read_text().replace('"dense/MatMul"', '"it\'s \\"dense\\"/MatMul"').replace('"dense/MatMul:', '"it\'s \\"dense\\"/MatMul:')
    f = tmp_path / "q.pbtxt"
    f.write_text(g)
    want = json.loads(run("points", "--format", "profiling", str(f)).stdout)["fp_point"]
    assert "'" in want and '"' in want
    for fmt in ("tf1-estimator", "tf1-session", "tf2"):
        assert _options_in(run("points", "--format", fmt, str(f)).stdout)["fp_point"] == want


def test_unknown_format_lists_the_choices():
    r = run("points", "--format", "yaml", MLP)
    assert r.exit_code == 2 and "tf1-estimator" in r.stderr and "env" in r.stderr


# --- --input-kind, --profiling-output, and the old spellings -------------------------------------


@pytest.mark.parametrize("command", ["fp", "bp", "points", "nodes", "show", "stats"])
def test_every_graph_command_takes_input_kind(command: str):
    assert "--input-kind" in help_options(command)


def test_input_kind_forces_the_kind():
    by_kind = run("nodes", "--input-kind", "function", TF2)
    auto = run("nodes", TF2)
    assert by_kind.exit_code == 0 and by_kind.stdout != auto.stdout  # the function bodies' nodes
    assert run("stats", "--json", "--input-kind", "function", TF2).exit_code == 0
    assert json.loads(run("stats", "--json", "--input-kind", "function", TF2).stdout)["format"] == "function"


def test_fp_input_kind_is_used():
    r = run("fp", "--input-kind", "ge_proto", MLP)  # read as a GE dump: no op blocks at all
    assert r.stdout != FP + "\n"
    assert run("fp", "--input-kind", "graphdef", MLP).stdout == FP + "\n"


@pytest.mark.parametrize("command, extra", [("nodes", []), ("stats", []), ("show", [FP])])
def test_format_as_input_kind_still_works_with_one_line_naming_the_new_option(command: str, extra: List[str]):
    old = run(command, "--format", "function", TF2, *extra)
    new = run(command, "--input-kind", "function", TF2, *extra)
    assert old.exit_code == new.exit_code
    if command != "stats":  # (stats prints the seconds it took)
        assert old.stdout == new.stdout
    assert old.stderr.replace(new.stderr, "").count("\n") == 1 and "--input-kind function" in old.stderr


def test_profiling_output_names_the_profilers_folder():
    opts = json.loads(run("points", "--format", "profiling", "--profiling-output", "/data/p", MLP).stdout)
    assert opts["output"] == "/data/p"
    old = run("points", "--format", "profiling", "--output", "/data/p", MLP)
    assert json.loads(old.stdout) == opts
    assert old.stderr.count("\n") == 1 and "--profiling-output" in old.stderr


# --- streams ---------------------------------------------------------------------------------------


def test_ge_auto_explain_goes_to_stderr():
    plain = run("ge-auto", GE_FILE)
    explained = run("ge-auto", "--explain", GE_FILE)
    assert explained.stdout == plain.stdout  # X=$(pbtxt-scan ge-auto --explain d) is the answer alone
    assert "dropped" in explained.stderr and "fp: " in explained.stderr
    as_json = run("ge-auto", "--json", "--explain", GE_FILE)
    assert "explain" not in json.loads(as_json.stdout) and "dropped" in as_json.stderr


def test_stats_ties_break_by_name_in_text_and_json(tmp_path: Path):
    # Three op types of one node each, written in the reverse of their names' order.
    f = tmp_path / "ties.pbtxt"
    f.write_text("".join('node {\n  name: "n%d"\n  op: "%s"\n}\n' % (i, op) for i, op in enumerate(["Zeta", "Mid", "Alpha", "Alpha"])))
    js = list(json.loads(run("stats", "--json", "--top", "2", str(f)).stdout)["ops"])
    text = [line.split()[0] for line in run("stats", "--top", "2", str(f)).stdout.splitlines() if line.startswith("  ")]
    assert js == text == ["Alpha", "Mid"]


@pytest.mark.parametrize("args", [["fp", SAVED], ["bp", SAVED], ["points", SAVED], ["nodes", SAVED], ["stats", SAVED],
                                  ["check", SAVED], ["show", SAVED, FP], ["resolve", "resnet_model/Cast", "--ge", GE_DIR], ["ge-auto", GE_DIR]])
def test_quiet_silences_the_notes(args: List[str]):
    loud = run(*args)
    assert loud.stderr  # (which MetaGraph, which dump of the folder)
    quiet = run(*args, "--quiet")
    assert quiet.exit_code == loud.exit_code and quiet.stderr == ""
    if args[0] != "check":  # (check --quiet keeps its meaning: nothing on success)
        assert quiet.stdout.splitlines()[:1] == loud.stdout.splitlines()[:1]
    else:
        assert quiet.stdout == ""


@pytest.mark.parametrize("command", ["fp", "nodes", "stats", "ge-auto"])
def test_quiet_keeps_the_error_line(command: str):
    r = run(command, "--quiet", "nosuch.pbtxt")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1 and "nosuch.pbtxt" in r.stderr


def test_metagraphs_are_counted_from_one():
    # The fixture's SavedModel holds two MetaGraphs, the train-tagged one second (data/README.md).
    assert "reading MetaGraph 2 of 2 (tags: train)" in run("fp", SAVED).stderr


def test_saved_model_of_one_metagraph_reads_metagraph_1_of_1(tmp_path: Path):
    """A SavedModel holding one MetaGraph: "1 of 1" (it said "0 of 1")."""
    from support.wire_encoder import encode, graph, meta_graph, node, saved_model

    g = graph([node("x", "Placeholder"), node("w", "VariableV2"), node("m", "MatMul", ["x", "w"])])
    f = tmp_path / "saved_model.pb"
    f.write_bytes(encode(saved_model([meta_graph(g, tags=["serve"])])))
    r = run("nodes", str(f))
    assert r.exit_code == 0, r.stderr
    assert "reading MetaGraph 1 of 1" in r.stderr, r.stderr


# --- help ----------------------------------------------------------------------------------------


def test_bp_help_lists_no_fp_only_option():
    opts = help_options("bp")
    assert "--source" not in opts and "--name-filter" not in opts
    assert {"--source", "--name-filter"} <= set(help_options("fp"))


def test_the_command_list_is_whole_sentences():
    text = run("--help").stdout
    rows = text.split("Commands:", 1)[1].split("\n\n")[0].strip().splitlines()
    assert [r.split()[0] for r in rows] == COMMANDS
    for r in rows:
        assert r.rstrip().endswith(".") and not r.rstrip().endswith("..."), r


def test_no_progress_variable_is_documented():
    assert "PBTXT_SCAN_NO_PROGRESS" in run("--help").stdout


def test_the_typer_floor_excludes_the_releases_broken_by_click_8_2():
    """With click 8.2+ (Python 3.10+), typer 0.9 and 0.12 print the version on every command and
    typer 0.15 fails on --help: the package must ask for typer 0.16 or later there."""
    import pbtxt_scan

    text = (Path(pbtxt_scan.__file__).resolve().parent.parent / "pyproject.toml").read_text()  # (the tested checkout's)
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert deps, "dependencies"
    typer_reqs = re.findall(r'"(typer[^"]*)"', deps.group(1))
    new = [r for r in typer_reqs if "python_version >= '3.10'" in r]
    assert new and re.search(r"typer>=0\.(1[6-9]|2\d)", new[0]), typer_reqs


def test_a_command_in_a_fresh_process_answers_rather_than_printing_the_version():
    r = subprocess.run([sys.executable, "-m", "pbtxt_scan", "fp", MLP], capture_output=True, text=True, timeout=60)
    assert r.stdout == FP + "\n", r.stdout
