"""verify PROF_DIR: the real msprof sample against values read off its timeline, and synthetic runs
(both layouts, two devices) built at test time from tests/data/prof/synthetic.json, one per case."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support.cli import CliRunner
from support.prof_synth import build

from pbtxt_scan.cli import app
from pbtxt_scan.prof import json_events, read_run

DATA = Path(__file__).resolve().parent / "data"
PROF = DATA / "prof"
REAL = PROF / "mindinsight_PROF_000001"
SPEC = json.loads((PROF / "synthetic.json").read_text())
runner = CliRunner()


def run_json(args: List[str], code: int) -> Dict[str, Any]:
    r = runner.invoke(app, ["verify", "--json"] + args)
    assert r.exit_code == code, (r.exit_code, r.stdout, r.stderr)
    lines = r.stdout.splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_the_real_sample_against_its_timeline():
    want = json.loads((PROF / "mindinsight_PROF_000001.expected.json").read_text())
    got = run_json([str(REAL)], 0)
    assert got["layout"] == want["layout"] and got["verdict"] == want["verdict"]
    assert [d["device"] for d in got["devices"]] == want["devices"]
    dev = got["devices"][0]
    assert len(dev["iterations"]) == want["iterations"]
    t = want["fp_bp_time_us"]
    for k in ("median", "min", "max"):
        assert dev["fp_bp_time"][k] == pytest.approx(t[k], abs=0.005)
    assert dev["iterations"][0]["fp_bp_time"] == pytest.approx(t["1"], abs=1e-6)
    for key in ("opened_by", "closed_by"):
        w, g = want[key], dev[key]
        assert (g["name"], g["op"], g["stream"], g["task_id"]) == (w["name"], w["op"], w["stream"], w["task_id"])
        assert g["trace_gap"] == {"task_id": w["gap"], "missing": w["gap_missing"]}
    covered = [r["iteration"] for r in dev["iterations"] if r["opened_by"] is not None]
    assert covered == want["covered_iterations"]


def test_the_real_sample_in_text_names_the_ops_and_times():
    r = runner.invoke(app, ["verify", str(REAL / "device_0")])
    assert r.exit_code == 0, r.stderr
    assert "FP to BP 4269.38 µs median (4236.10 to 4280.74, 10 iterations)" in r.stdout
    assert "Cast-op239  (Cast, stream 2, task 4, no task before it in the timeline: no trace-task gap to tell)" in r.stdout
    assert "BiasAddGrad-op191  (BiasAddGrad, stream 2, task 123, task 124 missing: GE's trace task)" in r.stdout
    assert "data-side op (Cast)" in r.stderr  # a note: without --graph it is not a verdict


@pytest.fixture(scope="module")
def synth(tmp_path_factory: Any) -> Dict[Any, str]:
    root = tmp_path_factory.mktemp("prof")
    return {(c, lay): build(SPEC, c, str(root), lay) for c in SPEC["cases"] for lay in ("device", "current")}


CASES = [(c, lay) for c in sorted(SPEC["cases"]) for lay in ("device", "current")]


@pytest.mark.parametrize("case, layout", CASES, ids=["%s-%s" % c for c in CASES])
def test_synthetic_verdict(synth: Dict[Any, str], case: str, layout: str):
    want = SPEC["cases"][case]
    args = [synth[case, layout], "--graph", str(DATA / SPEC["graph"]), "--ge", str(DATA / SPEC["ge"])]
    got = run_json(args, 1 if want["verdict"] == "wrong points" else 0)
    assert got["verdict"] == want["verdict"]
    assert got["layout"] == ("device" if layout == "device" else "mindstudio_profiler_output")
    assert [d["device"] for d in got["devices"]] == ["device_0", "device_1"] and got["agree"] is True
    assert got["fixes"] == want["fixes"]
    if "reason" in want:
        assert got["reasons"] and all(want["reason"] in r for r in got["reasons"])
    for d in got["devices"]:
        assert len(d["iterations"]) == SPEC["iterations"]
        o, c = d["opened_by"], d["closed_by"]
        assert (o and o["name"]) == want["opened_by"]
        assert c["name"] == want["closed_by"] and c["trace_gap"]["missing"] is True
        if o is not None:  # (the stream's first task: nothing before it shows a skip)
            assert o["trace_gap"]["missing"] is (None if o["name"] == SPEC["tasks"][0][0] else True)
            assert o["iterations"] == SPEC["iterations"]
        if "opened_tf" in want:
            assert o["tf_names"] == want["opened_tf"]
        assert (d["fp_start_zero"] == SPEC["iterations"]) == (want["fp_before"] is None)


@pytest.mark.parametrize("layout", ["device", "current"])
def test_without_the_dump_names_compare_by_resolves_name_rules(synth: Dict[Any, str], layout: str):
    # No --ge: the timeline's GE name dense/MatMuldense/BiasAdd is dense/MatMul fused (resolve's
    # rule on names), gradients/dense/MatMul_grad/MatMul_1_1 its _1 twin; more: test_trust_verify.py.
    got = run_json([synth["right", layout], "--graph", str(DATA / SPEC["graph"])], 0)
    assert got["verdict"] == "right points" and got["reasons"] == []


def test_devices_that_disagree(synth: Dict[Any, str], tmp_path: Path):
    import shutil

    top = tmp_path / "PROF_mixed"
    shutil.copytree(synth["right", "device"] + "/device_0", str(top / "device_0"))
    shutil.copytree(synth["data_side", "device"] + "/device_1", str(top / "device_1"))
    got = run_json([str(top)], 0)
    assert got["agree"] is False and got["verdict"] == "not checked"
    assert [d["opened_by"]["name"] for d in got["devices"]] == ["dense/MatMuldense/BiasAdd", "IteratorV2"]




@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such folder"),
    (lambda p: p.mkdir(), "no profiling output here"),
    (lambda p: (p / "device_0" / "timeline").mkdir(parents=True), "no step trace"),
    (lambda p: ((p / "device_0" / "timeline").mkdir(parents=True),
                (p / "device_0" / "timeline" / "step_trace_0.json").write_text('[{"ph": "X"},\n  nope]')), ":2:3: not a trace event"),
])
def test_bad_folder_is_one_line_exit_2(tmp_path: Path, make: Any, message: str):
    p = tmp_path / "PROF_bad"
    make(p)
    r = runner.invoke(app, ["verify", str(p)])
    assert r.exit_code == 2 and r.stdout == ""
    assert len(r.stderr.splitlines()) == 1 and message in r.stderr, r.stderr


def test_json_events_reads_in_chunks(tmp_path: Path):
    # Events that straddle the 64 KiB read chunk, and the {"traceEvents": [...]} form.
    events = [{"name": "e%d" % i, "args": {"pad": "x" * (i * 37 % 5000)}} for i in range(300)]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(events))
    assert list(json_events(str(p))) == events
    p.write_text(json.dumps({"traceEvents": events[:5]}, indent=1))
    assert list(json_events(str(p))) == events[:5]


@pytest.mark.parametrize("csv_name, rows, first", [
    # Current header (Task Start Time(us), Device_id), each start ending in a TAB.
    ("op_summary_neo_pan.csv", 3, (1756, 0, "main_kernel", 1780676244313289.0, 87139.38)),
    # Older header (Start Time(us), no Device_id); HCCL rows have N/A for task and stream.
    ("op_summary_msinsight.csv", 21, (16, 2451, "ZerosLike", 1695115378713661.0, 496.8508)),
])
def test_real_op_summary_headers(tmp_path: Path, csv_name: str, rows: Any, first: Any):
    import shutil

    out = tmp_path / "PROF_1" / "mindstudio_profiler_output"
    out.mkdir(parents=True)
    shutil.copy(str(PROF / csv_name), str(out / "op_summary_1.csv"))
    (out / "step_trace_1.csv").write_text("Device_id,Iteration ID,FP Start(us),BP End(us)\n0,1,0\t,0\t\n")
    run = read_run(str(tmp_path / "PROF_1"))
    assert run.layout == "mindstudio_profiler_output" and [d.name for d in run.devices] == ["device_0"]
    tasks = run.devices[0].tasks
    assert tasks.count == rows
    t = tasks.first
    assert (t.stream, t.task_id, t.name) == first[:3]
    assert t.start == pytest.approx(first[3]) and t.end - t.start == pytest.approx(first[4], abs=0.25)  # float64 at 1.7e15 µs: steps of 0.25


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=30))
_events = st.lists(st.dictionaries(st.text(max_size=8), st.one_of(_scalars, st.lists(_scalars, max_size=3)), max_size=5),
                   max_size=20)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=_events, indent=st.sampled_from([None, 0, 2]))
def test_json_events_is_json_load(tmp_path: Path, events: List[Dict[str, Any]], indent: Any):
    p = tmp_path / "e.json"
    p.write_text(json.dumps(events, indent=indent), encoding="utf-8")
    assert list(json_events(str(p))) == events
