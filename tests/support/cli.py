"""typer's CliRunner with stderr kept apart from stdout on every click version.

click < 8.2 (the last releases for Python 3.8/3.9) mixes stderr into stdout unless told not to;
click 8.2 always keeps them apart and has no such option.
"""
from __future__ import annotations

import inspect
from typing import Any

from typer.testing import CliRunner as _TyperRunner


def CliRunner(**kw: Any) -> _TyperRunner:  # noqa: N802 - a drop-in for typer.testing.CliRunner
    if "mix_stderr" in inspect.signature(_TyperRunner.__init__).parameters:
        kw.setdefault("mix_stderr", False)
    return _TyperRunner(**kw)
