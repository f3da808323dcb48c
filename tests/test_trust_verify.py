"""verify's verdicts one can act on (issue 35): nothing to check, damaged step-trace rows and
values, several step traces or both layouts in one folder, trace-task gaps claimed only where a
task id was really skipped, and GE's names matched to the points by resolve's name rules without
a dump. The runs are built in tmp_path from tests/data/prof/synthetic.json (support/prof_synth.py)
and the real msprof sample, then damaged one way each."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from support.cli import CliRunner
from support.prof_synth import build

from pbtxt_scan.cli import app

DATA = Path(__file__).resolve().parent / "data"
PROF = DATA / "prof"
SPEC = json.loads((PROF / "synthetic.json").read_text())
GRAPH = str(DATA / SPEC["graph"])
CUR = "mindstudio_profiler_output/step_trace_20260101000000.csv"  # prof_synth's file names
OPS = "mindstudio_profiler_output/op_summary_20260101000000.csv"
DEV_JSON = "device_0/timeline/step_trace_0_1_1.json"
DEV_CSV = "device_1/summary/step_trace_1_1_1.csv"
runner = CliRunner()


def run(tmp_path: Path, case: str = "right", layout: str = "current") -> Path:
    return Path(build(SPEC, case, str(tmp_path), layout))


def invoke(args: List[str]) -> Any:
    r = runner.invoke(app, ["verify"] + args)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert "Traceback" not in r.stderr
    return r


def refused(args: List[str]) -> str:
    """The one stderr line of an exit 2, with nothing on stdout."""
    r = invoke(args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.stdout, r.stderr)
    assert len(r.stderr.splitlines()) == 1, r.stderr
    return r.stderr.strip()


def edit_lines(f: Path, fn: Callable[[List[str]], List[str]]) -> None:
    f.write_bytes("".join(fn(f.read_text().splitlines(True))).encode())


def cells(line: str, k: int, value: str) -> str:
    """``line`` (a CSV row) with its ``k``-th field set to ``value``."""
    end = line[len(line.rstrip("\r\n")):]
    parts = line.rstrip("\r\n").split(",")
    parts[k] = value
    return ",".join(parts) + end


def json_edit(f: Path, fn: Callable[[List[Dict[str, Any]]], None]) -> None:
    events = json.loads(f.read_text())
    fn(events)
    f.write_text(json.dumps(events, indent=1))


def iteration(events: List[Dict[str, Any]], n: int) -> Dict[str, Any]:
    return next(e for e in events if e.get("name") == "Iteration %d" % n)


def line_of(f: Path, text: str) -> int:
    """The line of the event whose name is ``text`` (its opening brace: json.dumps(indent=1))."""
    lines = f.read_text().splitlines()
    return next(i for i, ln in enumerate(lines) if text in ln)  # (0-based index of the name = 1-based line of "{")


# --- nothing to check: exit 2, and what is missing ---------------------------------------------------

NOTHING = [
    ("current", CUR, lambda ls: ls[:1], "nothing to check: no iterations in the step trace (only its header)"),
    ("device", DEV_JSON, None, "nothing to check: no 'Iteration N' event in the step trace"),
    ("device", DEV_CSV, lambda ls: ls[:1], "nothing to check: no iterations in the step trace (only its header)"),
]


@pytest.mark.parametrize("layout, rel, fn, message", NOTHING, ids=["current-header", "device-json-none", "device-csv-header"])
def test_nothing_to_check(tmp_path: Path, layout: str, rel: str, fn: Any, message: str):
    top = run(tmp_path, layout=layout)
    f = top / rel
    if fn is None:
        json_edit(f, lambda es: es.__setitem__(slice(None), [e for e in es if not str(e.get("name")).startswith("Iteration")]))
    else:
        edit_lines(f, fn)
    err = refused([str(top), "--graph", GRAPH])
    assert err.startswith(str(f)) and message in err, err


# --- a damaged row or value: FILE:LINE: column X is '...' ---------------------------------------------

# (layout, file, how it is damaged, line, the message after "FILE:LINE: ")
BAD_ROWS = [
    ("current", CUR, lambda ls: ls[:-1] + [",".join(ls[-1].split(",")[:3])], 9,
     "column BP End(us) is missing: the row is cut short (3 of 10 fields)"),
    ("current", CUR, lambda ls: ls[:2] + [",".join(ls[2].split(",")[:5]) + "\r\n"] + ls[3:], 3,
     "column Iteration Time(us) is missing: the row is cut short (5 of 10 fields)"),
    ("current", CUR, lambda ls: ls[:-1] + [",".join(ls[-1].split(",")[:7])], 9,
     "column FP to BP Time(us) is '41.5' where the file ends with no newline: the row may be cut short"),
    ("current", CUR, lambda ls: [ls[0], cells(ls[1], 2, "nan")] + ls[2:], 2, "column FP Start(us) is 'nan', not a number"),
    ("current", CUR, lambda ls: [ls[0], cells(ls[1], 3, "inf")] + ls[2:], 2, "column BP End(us) is 'inf', not a number"),
    ("current", CUR, lambda ls: ls[:4] + [cells(ls[4], 0, "gpu0")] + ls[5:], 5, "column Device_id is 'gpu0', not a number"),
    ("current", CUR, lambda ls: ls[:4] + [cells(ls[4], 0, "0.5")] + ls[5:], 5, "column Device_id is '0.5', not a whole number"),
    ("current", CUR, lambda ls: [ls[0], cells(ls[1], 1, "one")] + ls[2:], 2, "column Iteration ID is 'one', not a number"),
    ("current", CUR, lambda ls: [ls[0], cells(ls[1], 3, "")] + ls[2:], 2, "column BP End(us) is '', not a number"),
    ("current", OPS, lambda ls: [ls[0], cells(ls[1], 8, "nan\t")] + ls[2:], 2, "column Task Start Time(us) is 'nan', not a number"),
    ("device", DEV_CSV, lambda ls: ls[:-1] + [",".join(ls[-1].split(",")[:2])], 5,
     "column BP End(us) is missing: the row is cut short (2 of 6 fields)"),
    ("device", DEV_CSV, lambda ls: [ls[0], cells(ls[1], 1, "NaN")] + ls[2:], 2, "column FP Start(us) is 'NaN', not a number"),
]


@pytest.mark.parametrize("layout, rel, fn, line, message", BAD_ROWS, ids=[
    "cut-last", "cut-middle", "cut-no-newline", "nan", "inf", "device-id-text", "device-id-half", "iteration-text",
    "empty", "op-summary-nan", "device-cut", "device-nan"])
def test_a_damaged_csv_row_is_named(tmp_path: Path, layout: str, rel: str, fn: Any, line: int, message: str):
    top = run(tmp_path, layout=layout)
    f = top / rel
    edit_lines(f, fn)
    assert refused([str(top), "--graph", GRAPH]) == "%s:%d: %s" % (f, line, message)


JSON_BAD = [
    (DEV_JSON, lambda es: iteration(es, 2)["args"].__setitem__("FP Start", "garbage"), "Iteration 2",
     "Iteration 2: FP Start is 'garbage', not a number"),
    (DEV_JSON, lambda es: iteration(es, 3)["args"].__setitem__("BP End", float("nan")), "Iteration 3",
     "Iteration 3: BP End is NaN, not a number"),
    (DEV_JSON, lambda es: iteration(es, 1)["args"].pop("BP End"), "Iteration 1", "Iteration 1: no BP End"),
    (DEV_JSON, lambda es: iteration(es, 4)["args"].__setitem__("FP Start", None), "Iteration 4",
     "Iteration 4: FP Start is null, not a number"),
    ("device_0/timeline/task_time_0_1_1.json", lambda es: es[3].__setitem__("ts", "soon"), '"dense/Relu"',
     "dense/Relu: ts is 'soon', not a number"),
]


@pytest.mark.parametrize("rel, fn, anchor, message", JSON_BAD, ids=["fp-text", "bp-nan", "bp-missing", "fp-null", "task-ts"])
def test_a_damaged_json_value_is_named(tmp_path: Path, rel: str, fn: Any, anchor: str, message: str):
    top = run(tmp_path, layout="device")
    f = top / rel
    json_edit(f, fn)
    assert refused([str(top)]) == "%s:%d: %s" % (f, line_of(f, anchor), message)


# --- several step traces, both layouts ---------------------------------------------------------------


def test_two_runs_step_traces_in_one_folder(tmp_path: Path):
    top = run(tmp_path)
    a = top / CUR
    b = a.with_name("step_trace_20260202000000.csv")
    shutil.copy(str(a), str(b))
    err = refused([str(top)])
    assert "%s and %s both hold device_0" % (a.name, b.name) in err, err
    assert "one run's files per folder" in err


def test_two_step_traces_in_one_device_folder(tmp_path: Path):
    top = run(tmp_path, layout="device")
    a = top / DEV_JSON
    b = a.with_name("step_trace_0_2_1.json")
    shutil.copy(str(a), str(b))
    err = refused([str(top)])
    assert "%s and %s both hold device_0" % (a.name, b.name) in err, err


def test_one_runs_per_device_step_traces_are_read_together(tmp_path: Path):
    top = run(tmp_path)
    a = top / CUR
    head, *rows = a.read_text().splitlines(True)
    a.write_text(head + "".join(r for r in rows if r.startswith("0,")))
    a.with_name("step_trace_20260101000001.csv").write_text(head + "".join(r for r in rows if r.startswith("1,")))
    r = invoke([str(top), "--json", "--graph", GRAPH])
    got = json.loads(r.stdout)
    assert r.exit_code == 0 and got["verdict"] == "right points"
    assert [(d["device"], len(d["iterations"])) for d in got["devices"]] == [("device_0", 4), ("device_1", 4)]


@pytest.fixture()
def both(tmp_path: Path) -> Path:
    top = run(tmp_path / "a")
    old = run(tmp_path / "b", "data_side", "device")
    for d in ("device_0", "device_1"):
        shutil.copytree(str(old / d), str(top / d))
    return top


def test_both_layouts_in_one_folder_are_refused(both: Path):
    err = refused([str(both)])
    assert err.startswith(str(both) + ": both msprof layouts here: mindstudio_profiler_output/ and device_0/, device_1/"), err
    assert "--layout device" in err and "--layout mindstudio_profiler_output" in err


@pytest.mark.parametrize("layout, verdict, code", [("mindstudio_profiler_output", "right points", 0), ("device", "wrong points", 1)])
def test_layout_chooses(both: Path, layout: str, verdict: str, code: int):
    r = invoke([str(both), "--layout", layout, "--json", "--graph", GRAPH])
    got = json.loads(r.stdout)
    assert r.exit_code == code and (got["layout"], got["verdict"]) == (layout, verdict), r.stderr


def test_layout_is_checked(both: Path):
    r = invoke([str(both), "--layout", "devices"])
    assert r.exit_code == 2 and "--layout" in r.stderr and "device, mindstudio_profiler_output" in r.stderr


# --- trace-task gaps: claimed only where a task id was really skipped ---------------------------------

_HEAD_OPS = "Device_id,Task ID,Stream ID,Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us)\r\n"
_NAMES = ["dense/MatMuldense/BiasAdd", "dense/Relu", "gradients/dense/MatMul_grad/MatMul",
          "gradients/dense/MatMul_grad/MatMul_1_1", "ApplyGradientDescent"]

# The five ops' task ids in order (None: not in the timeline); the opener's and closer's gaps.
GAPS = [
    ([0, 1, 2, 3, 5], {"task_id": None, "missing": None}, {"task_id": 4, "missing": True}),  # the opener is task 0
    ([4, 5, 6, 7, 9], {"task_id": 3, "missing": None}, {"task_id": 8, "missing": True}),  # nothing before task 4
    ([2, 3, 4, 5, None], {"task_id": 1, "missing": None}, {"task_id": 6, "missing": None}),  # nothing after task 5
    ([1, 2, 3, 4, 6], {"task_id": 0, "missing": False}, {"task_id": 5, "missing": True}),  # task 0 runs before
    ([70000, 70001, 70002, 70003, 70005], {"task_id": 69999, "missing": None}, {"task_id": 70004, "missing": True}),  # past 16 bits
]


@pytest.mark.parametrize("ids, opener, closer", GAPS, ids=["first-task", "starts-later", "last-task", "present", "large-ids"])
def test_a_gap_is_claimed_only_when_a_task_id_was_skipped(tmp_path: Path, ids: List[Any], opener: Any, closer: Any):
    out = tmp_path / "PROF_gap" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    (out / "step_trace_1.csv").write_text("Device_id,Iteration ID,FP Start(us),BP End(us)\r\n0,1,999.0,1041.0\r\n")
    rows = [(ids[k], _NAMES[k], 1000.0 + 10 * k) for k in range(5) if ids[k] is not None]
    if opener["missing"] is False:
        rows.insert(0, (0, "trans_Cast_0", 900.0))  # a task before the opener, outside the bracket
    (out / "op_summary_1.csv").write_text(_HEAD_OPS + "".join(
        "0,%d,5,%s,Op,AI_CORE,%.1f\t,9.0\r\n" % (t, n, s) for t, n, s in rows))
    r = invoke([str(out.parent), "--json"])
    dev = json.loads(r.stdout)["devices"][0]
    assert (dev["opened_by"]["trace_gap"], dev["closed_by"]["trace_gap"]) == (opener, closer)
    text = invoke([str(out.parent)]).stdout
    assert "task -1" not in text
    assert text.count("missing: GE's trace task") == [opener["missing"], closer["missing"]].count(True), text


def test_the_real_samples_opener_starts_its_stream(tmp_path: Path):
    # Cast-op239 is task 4, the first task of stream 2 in the timeline: task 3 is absent, and so
    # are 0..2, so nothing shows that GE's trace task took it. BiasAddGrad-op191's 124 is a real gap.
    r = invoke([str(PROF / "mindinsight_PROF_000001"), "--json"])
    dev = json.loads(r.stdout)["devices"][0]
    assert dev["opened_by"]["trace_gap"] == {"task_id": 3, "missing": None}
    assert dev["closed_by"]["trace_gap"] == {"task_id": 124, "missing": True}


# --- --graph without --ge: GE's names matched by resolve's name rules ---------------------------------


@pytest.mark.parametrize("layout", ["current", "device"])
def test_right_points_named_the_ge_way_are_right_without_the_dump(tmp_path: Path, layout: str):
    # The timeline says dense/MatMuldense/BiasAdd (fused) and gradients/dense/MatMul_grad/MatMul_1_1
    # (the _1 twin); the points are dense/MatMul and gradients/dense/MatMul_grad/MatMul_1.
    r = invoke([str(run(tmp_path, layout=layout)), "--graph", GRAPH, "--json"])
    got = json.loads(r.stdout)
    assert r.exit_code == 0 and got["verdict"] == "right points", r.stdout
    assert got["reasons"] == [] and got["fixes"] == []


def test_a_name_only_a_dump_could_map_is_not_checked(tmp_path: Path):
    top = run(tmp_path)
    edit_lines(top / OPS, lambda ls: [ln.replace("dense/MatMuldense/BiasAdd", "te_fused_op_17") for ln in ls])
    r = invoke([str(top), "--graph", GRAPH])
    assert r.exit_code == 0, r.stdout
    assert "verdict: not checked without --ge" in r.stdout and "wrong points" not in r.stdout
    assert "te_fused_op_17" in r.stdout and "set " not in r.stdout
    got = json.loads(invoke([str(top), "--graph", GRAPH, "--json"]).stdout)
    assert got["verdict"] == "not checked" and got["fixes"] == [] and got["reasons"] == []
    assert any("not checked without --ge" in n and "te_fused_op_17" in n for n in got["notes"])


def test_an_opener_no_name_rule_maps_is_not_wrong_without_the_dump(tmp_path: Path):
    # IteratorV2 (a FrameworkOp in the timeline): with --ge it is a data-side op, so wrong points
    # (test_verify.py); without, nothing on its name says which TF op it was.
    r = invoke([str(run(tmp_path, "data_side")), "--graph", GRAPH, "--json"])
    got = json.loads(r.stdout)
    assert r.exit_code == 0 and got["verdict"] == "not checked" and got["fixes"] == []
    assert any("IteratorV2" in n and "not checked without --ge" in n for n in got["notes"])


def test_the_name_rules_are_resolves():
    # verify asks pbtxt_scan.ge for the rule, as resolve does: not a copy of it.
    src = (Path(__file__).resolve().parent.parent / "pbtxt_scan" / "cli" / "_verify.py").read_text()
    assert "name_match" in src and not re.search(r"isdigit|_contains_whole", src)
