"""A profiling run's folder: which layout, which devices, and the step trace and task rows of each.

Layouts (SOURCES.md of the msprof samples; CANN's msprof output):

- current: ``PROF_*/mindstudio_profiler_output/`` with ``step_trace_*.csv`` (a ``Device_id``
  column), ``op_summary_*.csv`` (tasks) and ``msprof_*.json`` (the whole timeline);
- older, per device: ``PROF_*/device_N/timeline/`` (``step_trace_*.json``, a Chrome trace with one
  ``Iteration N`` event per iteration; ``task_time_*.json``, ``msprof_*.json``) and
  ``device_N/summary/`` (``step_trace_*.csv``, ``op_summary_*.csv``).

Times are in µs. Tasks are not kept: each goes to its device's :class:`._tasks.Bracketer` as it is read;
JSON timelines are read one event at a time (:func:`._events.json_events`).
"""
from __future__ import annotations

import glob
import os
import re
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

from .._errors import PbtxtError
from ._events import csv_rows, json_events, number
from ._tasks import Bracketer, Iteration, Task


class Device(NamedTuple):
    name: str  # device_N
    iterations: List[Iteration]
    tasks: Bracketer  # the tasks, read once: the bracket of each iteration
    files: List[str]  # what was read


class Run(NamedTuple):
    path: str
    layout: str  # "mindstudio_profiler_output" or "device"
    devices: List[Device]


_STEP = {
    "device": ["deviceid", "device"],
    "iteration": ["iterationid", "iteration", "stepid", "step"],
    "fp_start": ["fpstart"],
    "bp_end": ["bpend"],
    "iteration_end": ["iterationend"],
    "iteration_time": ["iterationtime"],
    "fp_bp_time": ["fptobptime", "fpbptime"],
}
_OPS = {
    "device": ["deviceid", "device"],
    "task_id": ["taskid"],
    "stream": ["streamid"],
    "name": ["opname", "name"],
    "op": ["optype"],
    "task_type": ["tasktype"],
    "start": ["taskstarttime", "starttime"],
    "dur": ["taskduration", "duration"],
}


def _int(v: Any) -> Optional[int]:
    try:
        return int(float(v))
    except (TypeError, ValueError):
        return None


def _step_csv(path: str) -> Dict[str, List[Iteration]]:
    by: Dict[str, List[Iteration]] = {}
    for r in csv_rows(path, _STEP, ("iteration", "fp_start", "bp_end")):
        ln = r["_line"]
        it = Iteration(
            int(number(path, ln, "Iteration ID", r["iteration"]) or 0),
            number(path, ln, "FP Start", r["fp_start"]) or 0.0,
            number(path, ln, "BP End", r["bp_end"]) or 0.0,
            number(path, ln, "Iteration End", r["iteration_end"]),
            number(path, ln, "Iteration Time", r["iteration_time"]),
            number(path, ln, "FP to BP Time", r["fp_bp_time"]),
            "%s:%s" % (path, ln),
        )
        dev = r["device"]
        by.setdefault("device_%d" % int(float(dev)) if dev is not None else "", []).append(it)
    return by


def _step_json(path: str) -> List[Iteration]:
    out = []
    for e in json_events(path):
        a = e.get("args")
        if e.get("ph") != "X" or not isinstance(a, dict) or not re.match(r"Iteration \d+$", str(e.get("name", ""))):
            continue
        if "FP Start" not in a and "BP End" not in a:
            continue
        t = a.get("Iteration Time(ns)")
        fp, bp = float(a.get("FP Start") or 0), float(a.get("BP End") or 0)
        out.append(Iteration(
            _int(a.get("Iteration ID")) or _int(str(e["name"]).split()[-1]) or 0, fp, bp,
            float(a["Iteration End"]) if a.get("Iteration End") is not None else None,
            float(t) / 1000.0 if t is not None else (float(e["dur"]) if e.get("dur") is not None else None),
            None, path,
        ))
    return out


def _interned() -> Any:
    """A function that returns one shared copy of each string (op names repeat every iteration)."""
    seen: Dict[Any, Any] = {}
    return lambda v: v if v is None else seen.setdefault(v, v)


def _tasks_json(path: str) -> Iterator[Task]:
    one = _interned()
    for e in json_events(path):
        a = e.get("args")
        if e.get("ph") != "X" or not isinstance(a, dict) or "Task Id" not in a:
            continue
        ts, dur = float(e.get("ts", 0)), float(e.get("dur", 0) or 0)
        yield Task(ts, ts + dur, _int(a.get("Stream Id")), _int(a.get("Task Id")), one(str(e.get("name", ""))),
                   one(a.get("Op Type") or a.get("OP Type")), one(a.get("Task Type")))


def _tasks_csv(path: str) -> Iterator[Tuple[str, Task]]:
    """``(device_N or "" without a Device_id column, task)`` per row."""
    one = _interned()
    for r in csv_rows(path, _OPS, ("name", "start")):
        ln = r["_line"]
        ts = number(path, ln, "Task Start Time", r["start"]) or 0.0
        dur = number(path, ln, "Task Duration", r["dur"]) or 0.0
        dev = r["device"]
        yield ("device_%d" % int(float(dev)) if dev is not None else "",
               Task(ts, ts + dur, _int(r["stream"]), _int(r["task_id"]), one(r["name"] or ""), one(r["op"]), one(r["task_type"])))


def _files(folder: str, pattern: str) -> List[str]:
    return sorted(glob.glob(os.path.join(glob.escape(folder), pattern)))


def _steps(choices: List[Tuple[List[str], Any]], files: List[str]) -> Dict[str, List[Iteration]]:
    """The iterations of the first choice whose files exist: ``(paths, reader)``, a reader giving
    a list (JSON: one device's) or ``{device: iterations}`` (CSV)."""
    for paths, reader in choices:
        if paths:
            by: Dict[str, List[Iteration]] = {}
            for p in paths:
                files.append(p)
                got = reader(p)
                for k, v in (got.items() if isinstance(got, dict) else [("", got)]):
                    by.setdefault(k, []).extend(v)
            return by
    return {}


def _old_device(folder: str) -> Device:
    name = os.path.basename(folder.rstrip(os.sep))
    tl, sm = os.path.join(folder, "timeline"), os.path.join(folder, "summary")
    files: List[str] = []
    by = _steps([(_files(tl, "step_trace_*.json"), _step_json), (_files(sm, "step_trace_*.csv"), _step_csv)], files)
    if not files:
        raise PbtxtError("no step trace (timeline/step_trace_*.json or summary/step_trace_*.csv): "
                         "was training_trace on?", path=folder)
    tasks = Bracketer([i for v in by.values() for i in v])  # one device's folder: whatever its Device_id
    jsons = _files(tl, "task_time_*.json") or _files(tl, "msprof_*.json")
    for p in jsons:
        files.append(p)
        for t in _tasks_json(p):
            tasks.add(t)
    if not jsons:
        for p in _files(sm, "op_summary_*.csv"):
            files.append(p)
            for _, t in _tasks_csv(p):
                tasks.add(t)
    return Device(name, tasks.iterations, tasks, files)


def _new_layout(folder: str) -> List[Device]:
    steps: List[str] = []
    by = _steps([(_files(folder, "step_trace_*.csv"), _step_csv)], steps)
    if not steps:
        raise PbtxtError("no step_trace_*.csv: was training_trace on?", path=folder)
    if "" in by:  # no Device_id column: device 0
        by.setdefault("device_0", []).extend(by.pop(""))
    tasks = {k: Bracketer(v) for k, v in by.items()}
    alone = next(iter(tasks)) if len(tasks) == 1 else None
    ops = _files(folder, "op_summary_*.csv")
    for p in ops:
        for k, t in _tasks_csv(p):
            b = tasks.get(k or alone or "device_0")
            if b is not None:  # (a device with tasks but no step trace has no bracket)
                b.add(t)
    jsons: List[str] = []
    if not ops and alone is not None:
        jsons = _files(folder, "msprof_*.json")
        for p in jsons:
            for t in _tasks_json(p):
                tasks[alone].add(t)
    return [Device(k, tasks[k].iterations, tasks[k], steps + ops + jsons) for k in sorted(tasks, key=_devkey)]


def _devkey(name: str) -> Tuple[int, str]:
    m = re.search(r"(\d+)$", name)
    return (int(m.group(1)) if m else -1, name)


def read_run(path: str) -> Run:
    """Read a profiling run: ``PROF_*`` (either layout), its ``mindstudio_profiler_output``, one
    ``device_N``, or a folder holding exactly one ``PROF_*``."""
    if not os.path.isdir(path):
        raise PbtxtError("not a folder" if os.path.exists(path) else "no such folder", path=path)
    here = path.rstrip(os.sep) or path
    if os.path.basename(here) == "mindstudio_profiler_output":
        return Run(path, "mindstudio_profiler_output", _new_layout(here))
    new = os.path.join(here, "mindstudio_profiler_output")
    if os.path.isdir(new):
        return Run(path, "mindstudio_profiler_output", _new_layout(new))
    if re.match(r"device_\d+$", os.path.basename(here)):
        return Run(path, "device", [_old_device(here)])
    devs = sorted((d for d in _files(here, "device_*") if re.search(r"device_\d+$", d) and os.path.isdir(d)), key=_devkey)
    if devs:
        return Run(path, "device", [_old_device(d) for d in devs])
    runs = [d for d in _files(here, "PROF_*") if os.path.isdir(d)]
    if len(runs) == 1:
        return read_run(runs[0])
    if runs:
        raise PbtxtError("%d profiling runs here (%s): give one" % (len(runs), ", ".join(os.path.basename(r) for r in runs)),
                         path=path)
    raise PbtxtError("no profiling output here: expected PROF_*/mindstudio_profiler_output/ or PROF_*/device_N/", path=path)
