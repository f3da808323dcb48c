"""The ``pbtxt-scan`` command line: a thin layer over the Python API.

- ``_app``: the Typer app, exit codes, output and error helpers, shared options, the progress bar,
  ``main``. It imports no command module.
- ``_tf``: the commands on graph files: fp, bp, points, nodes, show, stats, check.
- ``_ge``: the commands on GE Build dumps: resolve, ge-auto.

Importing this package registers every command on ``app`` (``_tf`` and ``_ge`` import ``_app``, never
the other way round).
"""
from __future__ import annotations

# Importing the command modules registers their commands on `app`, in this order (--help lists them so).
from . import _tf  # noqa: F401  # isort: skip
from . import _ge  # noqa: F401  # isort: skip
from ._app import EXIT_BAD_INPUT, EXIT_NOT_FOUND, app, main

__all__ = ["EXIT_BAD_INPUT", "EXIT_NOT_FOUND", "app", "main"]
