"""Issue 22, the answers and what the user types, tried as a user would: through the command line
(CliRunner, and real processes for a terminal) and the public Python API.

- no unusable point: with --ge, a point no GE op matches is left "" in the profiling options, said
  in one stderr line, and `points` exits 1;
- checked options: --aic-metrics, --task-trace, --rule (exit 2, the valid values listed);
  --skip-op/--keep-op that match no op, --name-filter under a rule that ignores it (a warning);
- did you mean, for node names in show and resolve (case, a `:0` output suffix, spellings);
- several files for fp/bp/points (a row or JSON line each, the worst exit code);
- stdin without FILE (piped: read; a terminal: one line, exit 2; `-` on a terminal: said);
- the Python API for training scripts: paths, bytes and file objects, typed answers.
"""
from __future__ import annotations

import io
import json
import os
import pty
import select
import shlex
import subprocess
import sys
import tempfile

import pytest
from support.cli import CliRunner
from support.data import DATA, GRAPHS

import pbtxt_scan
from pbtxt_scan.cli import app

MLP = GRAPHS / "mlp_sgd.pbtxt"
INFERENCE = GRAPHS / "inference_no_gradients.pbtxt"
GE_OK = DATA / "ge" / "mlp_sgd"  # fp and bp both map (tests/data/README.md, ge/mlp_sgd/)
GE_NO_FP = DATA / "ge" / "mlp_sgd_no_fp"  # the same dump, no op GE could match fp to
BINARY = DATA / "binary"
# mlp_sgd's answers (tests/data/README.md, graphs/ table; binary/ holds the same graph serialized).
FP, BP = "dense/MatMul", "gradients/dense/MatMul_grad/MatMul_1"
GE_BP = "gradients/dense/MatMul_grad/MatMul_1_1"  # GE's name for BP in both dumps (suffix)
# The profiler's values, as Ascend documents them: aic_metrics in CANN's ProfilingAicoreMetrics
# (ArithmeticUtilization ... MemoryUB; L2Cache, MemoryAccess, PipelineExecuteUtilization on newer
# products), task_trace on/off (the PROFILING_OPTIONS pages document no other value).
AIC_METRICS = ("ArithmeticUtilization", "PipeUtilization", "Memory", "MemoryL0", "ResourceConflictRatio",
               "MemoryUB", "L2Cache", "MemoryAccess", "PipelineExecuteUtilization")
TASK_TRACE = ("on", "off")
RULES = ("auto", "dataflow", "doc")


def run(*args: str, stdin: bytes = b""):
    return CliRunner().invoke(app, [str(a) for a in args], input=stdin)


def _env_options(stdout: str) -> dict:
    lines = stdout.splitlines()
    assert lines[0] == "export PROFILING_MODE=true"
    name, _, value = lines[1][len("export "):].partition("=")
    assert name == "PROFILING_OPTIONS"
    return json.loads(shlex.split(value)[0])


# --- no unusable point ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["env", "profiling"])
def test_a_point_ge_will_not_find_is_left_empty_and_the_command_exits_1(fmt):
    r = run("points", MLP, "--ge", GE_NO_FP, "--format", fmt)
    assert r.exit_code == 1, r.stderr
    opts = _env_options(r.stdout) if fmt == "env" else json.loads(r.stdout)
    assert opts["fp_point"] == ""  # GE picks its own, where dense/MatMul would trace nothing
    assert opts["bp_point"] == GE_BP  # the point GE finds stays
    said = [line for line in r.stderr.splitlines() if line.startswith("fp:")]
    assert len(said) == 1 and FP in said[0], r.stderr
    assert "GE will not find" in said[0] and '""' in said[0], said


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_text_and_json_exit_1_too_when_ge_will_not_find_a_point(extra):
    r = run("points", MLP, "--ge", GE_NO_FP, *extra)
    assert r.exit_code == 1, r.stderr
    if extra:
        obj = json.loads(r.stdout)
        # (docs/json.md: a ge_resolution's best match is null when no GE op matches)
        assert obj["ge"]["fp"]["best"] is None and obj["ge"]["bp"]["best"]["name"] == GE_BP


def test_points_ge_finds_keep_exit_0():
    r = run("points", MLP, "--ge", GE_OK, "--format", "env")
    assert r.exit_code == 0, r.stderr
    assert _env_options(r.stdout)["fp_point"] == "dense/MatMuldense/BiasAdd"


# --- checked options -----------------------------------------------------------------------

CHOICES = [
    # (command args, option, wrong value, the valid values the message must list)
    (["points", MLP], "--aic-metrics", "Bogus", AIC_METRICS),
    (["points", MLP], "--task-trace", "maybe", TASK_TRACE),
    (["points", MLP], "--rule", "bogus", RULES),
    (["fp", MLP], "--rule", "Dataflow", RULES),
]


@pytest.mark.parametrize("args, option, value, valid", CHOICES)
def test_a_wrong_choice_exits_2_listing_the_valid_ones(args, option, value, valid):
    r = run(*args, option, value)
    assert r.exit_code == 2 and r.stdout == ""
    assert option in r.stderr
    for v in valid:
        assert v in r.stderr, (v, r.stderr)


def test_a_wrong_case_choice_is_named():
    r = run("points", MLP, "--aic-metrics", "pipeutilization")
    assert r.exit_code == 2 and "did you mean PipeUtilization?" in r.stderr


@pytest.mark.parametrize("option, key, value", [("--aic-metrics", "aic_metrics", v) for v in AIC_METRICS]
                         + [("--task-trace", "task_trace", v) for v in TASK_TRACE])
def test_every_valid_value_reaches_the_options(option, key, value):
    r = run("points", MLP, "--format", "profiling", option, value)
    assert r.exit_code == 0 and json.loads(r.stdout)[key] == value


def test_the_api_names_the_same_values():
    assert (pbtxt_scan.AIC_METRICS, pbtxt_scan.TASK_TRACE, pbtxt_scan.RULES) == (AIC_METRICS, TASK_TRACE, RULES)


def test_the_api_checks_the_profiler_values_too():
    with pytest.raises(ValueError, match="PipeUtilization"):
        pbtxt_scan.profiling_options(FP, BP, aic_metrics="Bogus")
    with pytest.raises(ValueError, match="off"):
        pbtxt_scan.profiling_options(FP, BP, task_trace="maybe")


OP_WARNINGS = [
    # (args, the op type named, a close name the warning must offer, or None: no warning)
    (["--skip-op", "matmul"], "matmul", "did you mean MatMul?"),
    (["--keep-op", "Relu6"], "Relu6", "did you mean Relu"),
    (["--skip-op", "NoSuchOpAtAll"], "NoSuchOpAtAll", ""),
    (["--skip-op", "MatMul"], "MatMul", None),
    (["--keep-op", "Identity"], "Identity", None),
    (["--keep-op", "Cast"], "Cast", "did you mean Const?"),  # mlp_sgd has no Cast at all
]


@pytest.mark.parametrize("command", ["fp", "bp", "points"])
@pytest.mark.parametrize("args, name, hint", OP_WARNINGS)
def test_an_op_type_that_matches_no_op_gets_one_warning(command, args, name, hint):
    r = run(command, MLP, *args)
    assert r.exit_code in (0, 1), r.stderr
    said = [line for line in r.stderr.splitlines() if "matches no op" in line]
    if hint is None:
        assert said == [], r.stderr
    else:
        assert len(said) == 1, r.stderr
        assert str(MLP) in said[0] and "%s %s" % (args[0], name) in said[0] and hint in said[0]


@pytest.mark.parametrize("command, args, warned", [
    ("fp", ["--name-filter", "dense"], True),  # mlp_sgd is answered by the dataflow rule
    ("fp", ["--name-filter", "dense", "--rule", "doc"], False),
    ("points", ["--name-filter", "dense"], True),
    ("fp", [], False),
])
def test_a_name_filter_under_a_rule_that_ignores_it_is_said(command, args, warned):
    r = run(command, MLP, *args)
    assert r.exit_code == 0, r.stderr
    said = [line for line in r.stderr.splitlines() if "--name-filter is ignored" in line]
    assert len(said) == (1 if warned else 0), r.stderr


def test_bp_has_no_name_filter_to_ignore():
    r = run("bp", MLP, "--name-filter", "dense")  # (bp never used it: its --help no longer lists it)
    assert r.exit_code == 2 and "--name-filter" in r.stderr, r.stderr


# --- did you mean --------------------------------------------------------------------------

SHOW_NAMES = [
    # (name typed, exit code, what stderr must say)
    ("dense/matmul", 1, "did you mean dense/MatMul?"),
    ("DENSE/MATMUL", 1, "did you mean dense/MatMul?"),
    ("dense/MatMl", 1, "dense/MatMul"),
    ("dense/MatMul:0", 0, "output 0 of node dense/MatMul"),
]


@pytest.mark.parametrize("name, code, said", SHOW_NAMES)
def test_show_suggests_the_name_meant(name, code, said):
    r = run("show", MLP, name)
    assert r.exit_code == code, r.stderr
    assert said in r.stderr, r.stderr
    if code == 0:  # the node itself is shown
        assert 'name: "dense/MatMul"' in r.stdout
    else:
        assert r.stdout == ""


def test_show_suggests_in_a_binary_graph_too():
    r = run("show", BINARY / "mlp_sgd.pb", "dense/matmul")
    assert r.exit_code == 1 and "did you mean dense/MatMul?" in r.stderr


@pytest.mark.parametrize("name, said", [
    ("dense/relu", "did you mean dense/Relu?"),
    ("dense/matmul", "did you mean dense/MatMul?"),  # a TF name the fused op lists
    ("gradients/dense/MatMul_grad/MatMull", "did you mean gradients/dense/MatMul_grad/MatMul"),
])
def test_resolve_with_no_match_suggests(name, said):
    r = run("resolve", name, "--ge", GE_OK)
    assert r.exit_code == 1
    line = [x for x in r.stderr.splitlines() if "no GE op matches" in x]
    assert len(line) == 1 and said in line[0], r.stderr


@pytest.mark.parametrize("command", ["fp", "points"])
def test_a_source_that_names_no_node_suggests(command):
    r = run(command, "--source", "iteratorgetnext", MLP)
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "did you mean IteratorGetNext?" in lines[0], r.stderr


# --- several files -------------------------------------------------------------------------


def test_fp_on_several_files_prints_a_row_each_prefixed():
    r = run("fp", MLP, BINARY / "mlp_sgd.pb")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.splitlines() == ["%s: %s" % (MLP, FP), "%s: %s" % (BINARY / "mlp_sgd.pb", FP)]


def test_one_file_keeps_the_bare_name():
    assert run("fp", MLP).stdout == FP + "\n"


def test_an_error_in_one_file_does_not_stop_the_others_and_the_worst_code_wins(tmp_path):
    missing = tmp_path / "nosuch.pbtxt"
    r = run("bp", MLP, INFERENCE, missing, MLP)
    assert r.exit_code == 2  # 2 (unreadable) over 1 (no bp in the inference graph)
    assert r.stdout.splitlines() == ["%s: %s" % (MLP, BP)] * 2
    assert str(missing) in r.stderr and str(INFERENCE) in r.stderr
    r = run("bp", MLP, INFERENCE)
    assert r.exit_code == 1


def test_json_is_one_line_per_file():
    r = run("fp", "--json", MLP, INFERENCE, BINARY / "mlp_sgd.meta")
    assert r.exit_code == 0, r.stderr
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o["file"] for o in objs] == [str(MLP), str(INFERENCE), str(BINARY / "mlp_sgd.meta")]
    assert objs[0]["name"] == objs[2]["name"] == FP


def test_points_on_several_files():
    r = run("points", MLP, INFERENCE)
    assert r.exit_code == 1  # no bp in the inference graph
    rows = r.stdout.splitlines()
    assert len(rows) == 4 and [row.split(": ", 1)[0] for row in rows] == [str(MLP)] * 2 + [str(INFERENCE)] * 2
    r = run("points", "--json", MLP, BINARY / "mlp_sgd.pb")
    assert [json.loads(line)["bp"]["name"] for line in r.stdout.splitlines()] == [BP, BP]


def test_one_profiling_output_takes_one_file():
    r = run("points", MLP, MLP, "--format", "env")
    assert r.exit_code == 2 and r.stdout == "" and "one file" in r.stderr


# --- stdin without FILE --------------------------------------------------------------------


@pytest.mark.parametrize("command, answer", [("fp", FP), ("bp", BP)])
def test_no_file_and_a_piped_stdin_reads_stdin(command, answer):
    r = run(command, stdin=MLP.read_bytes())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == answer + "\n"


def test_points_reads_a_piped_stdin_without_file():
    r = run("points", "--json", stdin=MLP.read_bytes())
    assert r.exit_code == 0 and json.loads(r.stdout)["fp"]["name"] == FP


def _on_a_terminal(*args: str, wait_for: str = "") -> subprocess.CompletedProcess:
    """The command run with a terminal as stdin (a pty). With ``wait_for``: once stderr shows it,
    Ctrl-D is typed, as a user ends input."""
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen([sys.executable, "-m", "pbtxt_scan", *args], stdin=slave,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        first = b""
        if wait_for:
            ready, _, _ = select.select([p.stderr], [], [], 30)  # said at once, not after a silent wait
            first = p.stderr.readline() if ready else b""
            # A terminal's end of input holds for one read only, and a reader may read again
            # after it (a user then presses Ctrl-D once more).
            for _ in range(3):
                os.write(master, b"\x04")
        out, err = p.communicate(timeout=30)  # it must not wait for the terminal
        return subprocess.CompletedProcess(p.args, p.returncode, out.decode(), (first + err).decode())
    finally:
        os.close(slave)
        os.close(master)


@pytest.mark.parametrize("command", ["fp", "bp", "points"])
def test_no_file_on_a_terminal_says_how_to_give_one(command):
    r = _on_a_terminal(command)
    assert r.returncode == 2 and r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and "FILE" in lines[0] and "<" in lines[0], r.stderr


def test_dash_on_a_terminal_says_it_reads_stdin():
    r = _on_a_terminal("fp", "-", wait_for="stdin")
    first = r.stderr.splitlines()[0] if r.stderr else ""
    assert "reading the graph from stdin" in first and "Ctrl-D" in first, r.stderr


# --- the Python API ------------------------------------------------------------------------

API_INPUTS = [
    # (how the script holds the graph, the answers' file name)
    (lambda: str(MLP), str(MLP)),
    (lambda: MLP, str(MLP)),
    (lambda: (BINARY / "mlp_sgd.pb").read_bytes(), "<bytes>"),  # GraphDef.SerializeToString()
    (lambda: (BINARY / "mlp_sgd.meta").read_bytes(), "<bytes>"),  # MetaGraphDef.SerializeToString()
    (lambda: bytearray(MLP.read_bytes()), "<bytes>"),  # text format bytes too
    (lambda: io.BytesIO((BINARY / "mlp_sgd.pb").read_bytes()), "<stream>"),
    (lambda: open(BINARY / "mlp_sgd.meta", "rb"), str(BINARY / "mlp_sgd.meta")),  # noqa: SIM115
]


@pytest.mark.parametrize("make, name", API_INPUTS)
def test_points_takes_a_path_bytes_or_a_file_object(make, name):
    src = make()
    try:
        found = pbtxt_scan.points(src)
    finally:
        if hasattr(src, "close"):
            src.close()
    assert isinstance(found, pbtxt_scan.Points)
    assert isinstance(found.fp, pbtxt_scan.Answer) and isinstance(found.fp.point, pbtxt_scan.Point)
    assert (found.fp_name, found.bp_name) == (FP, BP)
    assert found.fp.point.file == found.bp.point.file == name
    opts = pbtxt_scan.profiling_options(found.fp_name, found.bp_name)
    assert (opts["fp_point"], opts["bp_point"]) == (FP, BP)


@pytest.mark.parametrize("make, name", API_INPUTS[2:])
def test_find_fp_and_find_bp_take_bytes_and_file_objects(make, name):
    src = make()
    assert pbtxt_scan.find_fp(src).point.name == FP
    if hasattr(src, "seek"):
        src.seek(0)
    assert pbtxt_scan.find_bp(src).point.name == BP


def test_no_point_is_none_and_the_options_leave_it_empty():
    found = pbtxt_scan.points(INFERENCE.read_bytes())
    assert found.bp_name is None and found.bp.point is None and found.bp.reason
    assert pbtxt_scan.profiling_options(found.fp_name, found.bp_name)["bp_point"] == ""


def test_bad_bytes_raise_the_one_error_naming_the_input_and_leave_no_file():
    before = set(os.listdir(tempfile.gettempdir()))
    with pytest.raises(pbtxt_scan.PbtxtError) as e:
        pbtxt_scan.points(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert str(e.value).startswith("<bytes>:")
    left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("pbtxt-scan")}
    assert not left


def test_points_stays_the_function_when_the_rules_are_imported():
    code = ("import pbtxt_scan.fpbp._rules, pbtxt_scan\n"
            "from pbtxt_scan import points\n"
            "assert callable(pbtxt_scan.points) and points is pbtxt_scan.points\n"
            "print(pbtxt_scan.points(%r).fp_name)\n" % str(MLP))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.stdout.strip() == FP, r.stderr
