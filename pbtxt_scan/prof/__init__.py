"""Ascend profiler output: what a profiling run bracketed between FP Start and BP End.

- ``_events``: the files in bounded memory (a JSON trace one event at a time, CSV columns by
  normalised header name);
- ``_tasks``: the rows, and :class:`Bracketer`: each iteration's opener and closer found while
  the tasks stream past (memory follows iterations and streams, not tasks);
- ``_run``: :func:`read_run`, the folder's layout (``mindstudio_profiler_output`` or
  ``device_N``), its devices, their step trace and tasks;
- ``_bracket``: :func:`summary` per device: per iteration the op that opened and the op that
  closed the bracket, GE's trace-task gap beside each, the times' median and spread; :func:`agree`.

It knows nothing of graphs: matching the bracket against the points is the command's
(``pbtxt_scan.cli._verify``), through the public API.
"""
from __future__ import annotations

from ._bracket import DATA_SIDE, agree, brackets, op_type, spread, summary
from ._events import json_events
from ._run import LAYOUTS, Device, Run, read_run
from ._tasks import Bracketer, Iteration, Task

__all__ = ["Bracketer", "DATA_SIDE", "Device", "LAYOUTS", "Iteration", "Run", "Task", "agree", "brackets", "json_events", "op_type",
           "read_run", "spread", "summary"]
