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
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from ._events import Row, csv_rows, json_events_at, json_number
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


def _device(r: Row) -> str:
    """``device_N`` of a row's Device_id; "" without the column."""
    n = r.whole("device", need=True)
    return "" if n is None else "device_%d" % n


def _step_csv(path: str) -> Dict[str, List[Iteration]]:
    by: Dict[str, List[Iteration]] = {}
    for r in csv_rows(path, _STEP, ("iteration", "fp_start", "bp_end")):
        it = Iteration(
            r.whole("iteration", need=True) or 0,
            r.number("fp_start", need=True) or 0.0,
            r.number("bp_end", need=True) or 0.0,
            r.number("iteration_end"),
            r.number("iteration_time"),
            r.number("fp_bp_time"),
            "%s:%d" % (path, r.line),
        )
        by.setdefault(_device(r), []).append(it)
    if not by:
        raise PbtxtError("nothing to check: no iterations in the step trace (only its header)", path=path)
    return by


def _step_json(path: str) -> List[Iteration]:
    out = []
    for line, e in json_events_at(path):
        a = e.get("args")
        if e.get("ph") != "X" or not isinstance(a, dict) or not re.match(r"Iteration \d+$", str(e.get("name", ""))):
            continue
        if "FP Start" not in a and "BP End" not in a:
            continue
        name = str(e["name"])
        for k in ("FP Start", "BP End"):
            if k not in a:
                raise PbtxtError("%s: no %s" % (name, k), line=line, path=path)
        t = json_number(path, line, name + ": Iteration Time(ns)", a.get("Iteration Time(ns)"), need=False)
        out.append(Iteration(
            _int(a.get("Iteration ID")) or _int(name.split()[-1]) or 0,
            json_number(path, line, name + ": FP Start", a["FP Start"]) or 0.0,
            json_number(path, line, name + ": BP End", a["BP End"]) or 0.0,
            json_number(path, line, name + ": Iteration End", a.get("Iteration End"), need=False),
            t / 1000.0 if t is not None else json_number(path, line, name + ": dur", e.get("dur"), need=False),
            None, path,
        ))
    if not out:
        raise PbtxtError("nothing to check: no 'Iteration N' event in the step trace", path=path)
    return out


def _interned() -> Any:
    """A function that returns one shared copy of each string (op names repeat every iteration)."""
    seen: Dict[Any, Any] = {}
    return lambda v: v if v is None else seen.setdefault(v, v)


def _tasks_json(path: str) -> Iterator[Task]:
    one = _interned()
    for line, e in json_events_at(path):
        a = e.get("args")
        if e.get("ph") != "X" or not isinstance(a, dict) or "Task Id" not in a:
            continue
        name = str(e.get("name", ""))
        ts = json_number(path, line, name + ": ts", e.get("ts")) or 0.0
        dur = json_number(path, line, name + ": dur", e.get("dur"), need=False) or 0.0
        yield Task(ts, ts + dur, _int(a.get("Stream Id")), _int(a.get("Task Id")), one(name),
                   one(a.get("Op Type") or a.get("OP Type")), one(a.get("Task Type")))


def _tasks_csv(path: str) -> Iterator[Tuple[str, Task]]:
    """``(device_N or "" without a Device_id column, task)`` per row."""
    one = _interned()
    for r in csv_rows(path, _OPS, ("name", "start")):
        ts = r.number("start", need=True) or 0.0
        dur = r.number("dur") or 0.0
        yield (_device(r), Task(ts, ts + dur, _int(r.text("stream")), _int(r.text("task_id")), one(r.text("name") or ""),
                                one(r.text("op")), one(r.text("task_type"))))


def _files(folder: str, pattern: str) -> List[str]:
    return sorted(glob.glob(os.path.join(glob.escape(folder), pattern)))


def _steps(choices: List[Tuple[List[str], Any]], files: List[str], folder: str, alone: str) -> Dict[str, List[Iteration]]:
    """The iterations of the first choice whose files exist: ``(paths, reader)``, a reader giving
    a list (JSON: one device's) or ``{device: iterations}`` (CSV; "" without a Device_id column:
    ``alone``). Several files are one run's per-device files, or two runs: a device in two files
    is refused."""
    for paths, reader in choices:
        if paths:
            by: Dict[str, List[Iteration]] = {}
            src: Dict[str, str] = {}
            for p in paths:
                files.append(p)
                got = reader(p)
                for k, v in (got.items() if isinstance(got, dict) else [("", got)]):
                    k = k or alone
                    if k in src:
                        raise PbtxtError("%s and %s both hold %s: two runs' step traces in one folder? keep one run's files "
                                         "per folder (a sub-folder each) and give that folder" % (
                                             os.path.basename(src[k]), os.path.basename(p), k), path=folder)
                    src[k] = p
                    by[k] = v
            return by
    return {}


def _old_device(folder: str) -> Device:
    name = os.path.basename(folder.rstrip(os.sep))
    tl, sm = os.path.join(folder, "timeline"), os.path.join(folder, "summary")
    files: List[str] = []
    by = _steps([(_files(tl, "step_trace_*.json"), _step_json), (_files(sm, "step_trace_*.csv"), _step_csv)], files, folder,
                name)
    if len(by) > 1:  # one device's folder: whatever its Device_id
        by = {name: [i for v in by.values() for i in v]}
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
    by = _steps([(_files(folder, "step_trace_*.csv"), _step_csv)], steps, folder, "device_0")  # no Device_id: device 0
    if not steps:
        raise PbtxtError("no step_trace_*.csv: was training_trace on?", path=folder)
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


LAYOUTS = ("device", "mindstudio_profiler_output")


def _old_devices(here: str) -> List[str]:
    """The ``device_N`` folders of the older layout: those with a step trace (the current layout
    keeps raw ``device_N/data`` folders beside ``mindstudio_profiler_output``)."""
    return sorted((d for d in _files(here, "device_*") if re.search(r"device_\d+$", d) and os.path.isdir(d)
                   and (_files(os.path.join(d, "timeline"), "step_trace_*.json") or _files(os.path.join(d, "summary"), "step_trace_*.csv"))),
                  key=_devkey)


def read_run(path: str, layout: Optional[str] = None) -> Run:
    """Read a profiling run: ``PROF_*`` (either layout), its ``mindstudio_profiler_output``, one
    ``device_N``, or a folder holding exactly one ``PROF_*``. A ``PROF_*`` with both layouts is
    refused unless ``layout`` (one of :data:`LAYOUTS`) chooses."""
    if not os.path.isdir(path):
        raise PbtxtError("not a folder" if os.path.exists(path) else "no such folder", path=path)
    here = path.rstrip(os.sep) or path
    base = os.path.basename(here)
    if base == "mindstudio_profiler_output" or re.match(r"device_\d+$", base):
        kind = "device" if base.startswith("device_") else base
        if layout not in (None, kind):
            raise PbtxtError("this is the %s layout, not %s: give the PROF_* folder above it to choose" % (kind, layout), path=path)
        return Run(path, kind, [_old_device(here)] if kind == "device" else _new_layout(here))
    new = os.path.join(here, "mindstudio_profiler_output")
    has_new = os.path.isdir(new)
    devs = _old_devices(here)
    if not devs and not has_new:  # (each then says it has no step trace)
        devs = [d for d in _files(here, "device_*") if re.search(r"device_\d+$", d) and os.path.isdir(d)]
    if has_new and devs and layout is None:
        raise PbtxtError("both msprof layouts here: mindstudio_profiler_output/ and %s/: choose one with --layout "
                         "mindstudio_profiler_output or --layout device (or give that sub-folder)" % "/, ".join(
                             os.path.basename(d) for d in devs), path=path)
    if has_new and layout != "device":
        return Run(path, "mindstudio_profiler_output", _new_layout(new))
    if devs and layout != "mindstudio_profiler_output":
        return Run(path, "device", [_old_device(d) for d in sorted(devs, key=_devkey)])
    if layout is not None and (has_new or devs):
        raise PbtxtError("no %s layout here" % layout, path=path)
    runs = [d for d in _files(here, "PROF_*") if os.path.isdir(d)]
    if len(runs) == 1:
        return read_run(runs[0], layout)
    if runs:
        raise PbtxtError("%d profiling runs here (%s): give one" % (len(runs), ", ".join(os.path.basename(r) for r in runs)),
                         path=path)
    raise PbtxtError("no profiling output here: expected PROF_*/mindstudio_profiler_output/ or PROF_*/device_N/", path=path)
