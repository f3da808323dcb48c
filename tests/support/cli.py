"""typer's CliRunner with stderr kept apart from stdout on every click version, and the click
command an app gives built once.

click < 8.2 (the last releases for Python 3.8/3.9) mixes stderr into stdout unless told not to;
click 8.2 always keeps them apart and has no such option.

typer's ``CliRunner.invoke(app, ...)`` builds the click command from the Typer app at every call
(``typer.main.get_command``: about 6 ms, a fifth of a small command's run, 4,000 times in the
quick set); the console script builds it once per process too. Here it is built once per app and
kept while the app's registered commands, groups and callback stay the same (a test that registers
a command on a fresh app gets that app's own command).
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Tuple

import typer.testing
from typer.testing import CliRunner as _TyperRunner

_build = getattr(typer.testing, "_get_command", None)  # (typer's name for typer.main.get_command, in every release)
_built: Dict[int, Tuple[Any, Tuple[Any, ...], Any]] = {}  # id(app) -> (app, what it registered, its click command)


def _registered(app: Any) -> Tuple[Any, ...]:
    return (tuple(map(id, app.registered_commands)), tuple(map(id, app.registered_groups)), id(app.registered_callback))


def _command_of(app: Any) -> Any:
    kept = _built.get(id(app))
    if kept is not None and kept[0] is app and kept[1] == _registered(app):
        return kept[2]
    command = _build(app)  # type: ignore[misc]
    _built[id(app)] = (app, _registered(app), command)
    return command


if _build is not None:
    typer.testing._get_command = _command_of  # type: ignore[attr-defined]


def CliRunner(**kw: Any) -> _TyperRunner:  # noqa: N802 - a drop-in for typer.testing.CliRunner
    if "mix_stderr" in inspect.signature(_TyperRunner.__init__).parameters:
        kw.setdefault("mix_stderr", False)
    return _TyperRunner(**kw)
