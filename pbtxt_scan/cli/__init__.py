"""The ``pbtxt-scan`` command line: a thin layer over the Python API.

- ``_app``: the Typer app, the option vocabulary every command declares from (the shared options,
  read once into a ``Common`` whose ``Console`` is passed down), opening the input, whether a
  progress bar is drawn, ``main``. It imports no command module.
- ``_output``: what a command says: results on stdout (a closed pipe or a full disk never a
  traceback), the exit codes, the ``Console`` (notes under ``--quiet``, errors, ``--json`` errors).
- ``_bar``: the rich progress bar of a long scan, loaded only when one is drawn.
- ``_json``: the JSON objects in the one shape docs/json.md writes down.
- ``_paste``: ``points --format``'s ready-to-paste profiling options and TF adapter snippets.
- ``_help``: ``--help`` in click's plain form on every typer release (the command classes).
- ``_points``: fp and bp: the profiling points, their rules and options, JSON answers.
- ``_pair``: points: both answers, with --ge the names GE uses (a point GE will not find is left
  ``""``), and the options to paste.
- ``_graph``: check, nodes, show, stats: whole-file commands on graphs and GE dumps.
- ``_events``: events: an event file's records (or a logdir's), a line each.
- ``_show``: show's printing: a node's text or parsed block, its neighbourhood (rows, JSON, DOT).
- ``_ge``: resolve, ge-auto: the commands on GE Build dumps.
- ``_report``: report: one self-contained HTML page of both answers, drawn with their neighbourhoods.
- ``_checks``: what the user typed: choice values, op types and filters that have no effect, node
  names that match nothing (with close names), and stdin when no FILE is given.
- ``_suggest``: did you mean: the few closest names, kept in bounded memory while names stream past.

Importing this package registers every command on ``app`` (the command modules import ``_app``,
never the other way round).
"""
from __future__ import annotations

# Importing the command modules registers their commands on `app`, in this order (--help lists them so).
from . import _points  # noqa: F401  # isort: skip
from . import _pair  # noqa: F401  # isort: skip
from . import _graph  # noqa: F401  # isort: skip
from . import _events  # noqa: F401  # isort: skip
from . import _ge  # noqa: F401  # isort: skip
from . import _report  # noqa: F401  # isort: skip
from . import _verify  # noqa: F401  # isort: skip
from ._app import app, main
from ._output import EXIT_BAD_INPUT, EXIT_NOT_FOUND

__all__ = ["EXIT_BAD_INPUT", "EXIT_NOT_FOUND", "app", "main"]
