"""Synthetic profiling runs from tests/data/prof/synthetic.json, in both msprof layouts.

``build(spec, case, root, layout)`` writes ``root/PROF_<case>_<layout>/`` and returns its path:

- ``device``: the older per-device layout. device_0 has ``timeline/step_trace_*.json`` (a Chrome
  trace with ``Iteration N`` events, args FP Start, BP End, Iteration End, Iteration Time(ns)) and
  ``timeline/task_time_*.json`` (``Ascend Hardware`` X events with Task Type, Stream Id, Task Id);
  device_1 has ``summary/step_trace_*.csv`` and ``summary/op_summary_*.csv`` in the older header
  spelling (``Stream Id``, ``Start Time(us)``, no Device_id column).
- ``current``: ``mindstudio_profiler_output/`` with one ``step_trace_*.csv`` and one
  ``op_summary_*.csv`` for both devices (a ``Device_id`` column), each task start ending in a TAB
  as CANN writes it.

Per iteration the spec's tasks run one after another on one stream; the task id skipped before
``fp_before`` and after ``bp_after`` is GE's trace task (it never shows in the task timeline).
"""
from __future__ import annotations

import csv
import json
import os
from typing import Any, Dict, List, Tuple

T0 = 1000000.0  # µs
ITERATION = 500.0  # µs between iteration starts
DEVICE_SKEW = 7.25  # µs: device_1 runs a little later


def _run(spec: Dict[str, Any], case: Dict[str, Any], device: int) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """(iterations, tasks) of one device: plain dicts, times in µs."""
    iters, tasks = [], []
    tid = 0
    for n in range(spec["iterations"]):
        t = T0 + n * ITERATION + device * DEVICE_SKEW
        start = t
        fp = bp = 0.0
        for name, op, kind, dur in spec["tasks"]:
            dur = dur + 0.25 * ((n + device) % 3)  # a little jitter per iteration
            if name == case["fp_before"]:
                tid += 1  # GE's trace task, not in the timeline
                fp = t - 1.0
            tasks.append({"name": name, "op": op, "type": kind, "stream": spec["stream"], "task": tid, "start": t, "dur": dur})
            tid += 1
            t += dur + 0.5
            if name == case["bp_after"]:
                bp = t - 0.5 + 1.0
                tid += 1
        end = t + 5.0
        iters.append({"id": n + 1, "fp": fp, "bp": bp, "end": end, "time": end - start})
    return iters, tasks


def _write_json(path: str, events: List[Dict[str, Any]]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(events, f)


def _write_csv(path: str, header: List[str], rows: List[List[Any]]) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _step_row(i: Dict[str, Any]) -> List[Any]:
    return [i["id"], i["fp"], i["bp"], i["end"], i["time"], (i["bp"] - i["fp"]) if i["fp"] and i["bp"] else 0]


def build(spec: Dict[str, Any], name: str, root: str, layout: str) -> str:
    case = spec["cases"][name]
    top = os.path.join(root, "PROF_%s_%s" % (name, layout))
    runs = [_run(spec, case, d) for d in range(spec["devices"])]
    if layout == "device":
        iters, tasks = runs[0]
        tl = os.path.join(top, "device_0", "timeline")
        _write_json(os.path.join(tl, "step_trace_0_1_1.json"), [
            {"name": "process_name", "pid": 1, "tid": 0, "args": {"name": "Step Trace"}, "ph": "M"}] + [
            {"name": "Iteration %d" % i["id"], "pid": 1, "tid": 1, "ts": i["end"] - i["time"], "dur": i["time"], "ph": "X",
             "cat": "Iteration Time", "args": {"Iteration ID": i["id"], "FP Start": i["fp"], "BP End": i["bp"],
                                               "Iteration End": i["end"], "Iteration Time(ns)": i["time"] * 1000}}
            for i in iters] + [
            {"name": "Iteration Refresh %d" % i["id"], "pid": 1, "tid": 1, "ts": i["bp"], "dur": 1.0, "ph": "X",
             "cat": "Iteration Refresh", "args": {"Iteration ID": i["id"], "BP End": i["bp"], "Iteration End": i["end"]}}
            for i in iters])
        _write_json(os.path.join(tl, "task_time_0_1_1.json"), [
            {"name": "process_name", "pid": 3, "tid": 0, "args": {"name": "Ascend Hardware"}, "ph": "M"}] + [
            {"name": t["name"], "pid": 3, "tid": t["stream"], "ts": t["start"], "dur": t["dur"], "ph": "X",
             "args": {"Task Type": t["type"], "Stream Id": t["stream"], "Task Id": t["task"], "Batch Id": 0}}
            for t in tasks])
        iters, tasks = runs[1]
        sm = os.path.join(top, "device_1", "summary")
        _write_csv(os.path.join(sm, "step_trace_1_1_1.csv"),
                   ["Iteration ID", "FP Start(us)", "BP End(us)", "Iteration End(us)", "Iteration Time(us)", "FP to BP Time(us)"],
                   [_step_row(i) for i in iters])
        _write_csv(os.path.join(sm, "op_summary_1_1_1.csv"),
                   ["Model ID", "Task ID", "Stream Id", "Op Name", "OP Type", "Task Type", "Start Time(us)", "Task Duration(us)"],
                   [[1, t["task"], t["stream"], t["name"], t["op"], t["type"], t["start"], t["dur"]] for t in tasks])
    else:
        out = os.path.join(top, "mindstudio_profiler_output")
        _write_csv(os.path.join(out, "step_trace_20260101000000.csv"),
                   ["Device_id", "Iteration ID", "FP Start(us)", "BP End(us)", "Iteration End(us)", "Iteration Time(us)",
                    "FP to BP Time(us)", "Iteration Refresh(us)", "Data Aug Bound(us)", "Model ID"],
                   [[d] + _step_row(i) + [1.0, "N/A", 1] for d, (iters, _) in enumerate(runs) for i in iters])
        _write_csv(os.path.join(out, "op_summary_20260101000000.csv"),
                   ["Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
                    "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)"],
                   [[d, 1, t["task"], t["stream"], t["name"], t["op"], "static", t["type"], "%.3f\t" % t["start"], "%.3f" % t["dur"], 0]
                    for d, (_, tasks) in enumerate(runs) for t in tasks])
    return top
