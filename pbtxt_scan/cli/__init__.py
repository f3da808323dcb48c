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

Importing this package's ``app`` registers every command on it (the command modules import ``_app``,
never the other way round). ``main``, the console script, registers only the command it runs (the
first word of its command line, ``MODULES`` says where it is declared), so that a command imports its
own module and no other: ``pbtxt-scan fp`` neither ``_graph`` nor ``_report`` (tests/test_startup.py).
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Optional

from ._output import EXIT_BAD_INPUT, EXIT_NOT_FOUND

# Each command module, in --help's order, and the commands it declares (a new command: its line here).
MODULES = (
    ("_points", ("fp", "bp")),
    ("_pair", ("points",)),
    ("_graph", ("check", "nodes", "show", "stats")),
    ("_events", ("events",)),
    ("_ge", ("resolve", "ge-auto")),
    ("_report", ("report",)),
    ("_verify", ("verify",)),
)


def register(command: Optional[str] = None) -> Any:
    """The app with ``command`` registered (from its module alone, when ``MODULES`` knows it and it is
    there), else with every command; returns the app."""
    from . import _app

    home = next((m for m, names in MODULES if command in names), None)
    if home is not None:
        importlib.import_module("." + home, __name__)
        if command in _app.registered():
            return _app.app
    for m, _names in MODULES:
        importlib.import_module("." + m, __name__)
    return _app.app


def main() -> None:
    """Console-script entry (``_app.main``), with the command its command line names registered: all of
    them for --help, a misspelt name or none. The process ends when it returns: its objects are
    frozen first (``gc.freeze``), so that Python's last collection at exit does not walk them all
    once more (~10 ms, a third of a small graph's answer)."""
    import gc

    from . import _app

    command = sys.argv[1] if len(sys.argv) > 1 else None
    register(command)
    try:
        _app.main(command)
    finally:
        gc.freeze()


def __getattr__(name: str) -> Any:
    if name == "app":  # (every command: what --help lists, what tests and CliRunner invoke)
        return register()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = ["EXIT_BAD_INPUT", "EXIT_NOT_FOUND", "app", "main", "register"]
