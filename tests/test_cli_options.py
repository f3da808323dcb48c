"""The options every command shares are read once (issue 36): each command gets one ``Common``, its
output mode a ``Console`` passed down; nothing reads the mode back from click's context or argv,
and a command may name its parameters as it likes."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import List, Optional

import pytest
import typer
import typer.main
from support.cli import CliRunner

from pbtxt_scan import PbtxtError
from pbtxt_scan.cli import _app, app

DATA = Path(__file__).parent / "data"
MLP = str(DATA / "graphs" / "mlp_sgd.pbtxt")
GE = str(DATA / "ge" / "ge_proto_00000013_graph_3_Build.txt")
CLI = Path(_app.__file__).parent
runner = CliRunner()

# How the output mode was once looked up: by parameter name in click's global context, or in the raw argv.
READ_BACK = [r"get_current_context", r"sys\.argv", r"""["']--json["']\s+in\b""", r"""params\.get\(\s*["']""", r"""\bparams\[\s*["']"""]


@pytest.mark.parametrize("pattern", READ_BACK)
def test_no_cli_module_reads_the_output_mode_back(pattern: str) -> None:
    found = ["%s:%d" % (p.name, n) for p in sorted(CLI.glob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if re.search(pattern, line)]
    # (cli.main reads the command's name there, to register that command alone: not the output mode)
    assert [f for f in found if not (pattern == r"sys\.argv" and f.startswith("__init__.py:"))] == [], found


# The shared options, by the flag the user types, and the role a command's declaration gives each.
SHARED = {"--json": "json", "--jsonl": "jsonl", "--format": "format", "--quiet": "quiet", "--input-kind": "input_kind",
          "--jobs": "jobs", "--record": "record", "--run": "run", "--lenient": "lenient"}


def test_every_shared_option_of_every_command_is_found_by_its_role() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    assert len(commands) == 12
    for name, cmd in commands.items():
        declared = {SHARED[o]: p.name for p in cmd.params for o in p.opts if o in SHARED}
        assert {"json", "format", "quiet"} <= set(declared), name
        assert cmd.roles == declared, name


# A command line valid but for the error: each command's own arguments.
ARGS = {"fp": [MLP], "bp": [MLP], "points": [MLP], "check": [MLP], "nodes": [MLP], "show": [MLP, "dense/MatMul"], "stats": [MLP],
        "resolve": ["a", "--ge", GE], "ge-auto": [GE], "report": [MLP], "verify": [str(DATA)],
        "events": [str(DATA / "events" / "v1_filewriter")]}
MODES = [["--json"], ["--format", "json"], ["--format=json"]]
ERRORS = [
    ["--bogus"],  # click's parser stops at it, before any option is read
    ["--format", "nosuch"],  # the command itself refuses it (after --json; with --format json the later one counts)
]


@pytest.mark.parametrize("mode", MODES, ids=" ".join)
@pytest.mark.parametrize("error", ERRORS, ids=" ".join)
@pytest.mark.parametrize("command", sorted(ARGS))
def test_a_usage_error_under_json_is_one_json_line_in_every_command(command: str, error: List[str], mode: List[str]) -> None:
    if error[0] == "--format" and mode[0] != "--json":
        mode = ["--json"]  # (--format given twice: the last one counts, and is not json)
    for args in ([command] + error + mode + ARGS[command], [command] + mode + ARGS[command] + error):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        objs = [json.loads(line) for line in r.stdout.splitlines()]
        assert len(objs) == 1 and objs[0]["error"] and objs[0]["error"] in r.stderr, (args, r.stdout)


@pytest.mark.parametrize("command", sorted(ARGS))
def test_a_usage_error_without_json_leaves_stdout_empty(command: str) -> None:
    r = runner.invoke(app, [command, "--bogus"] + ARGS[command])
    assert r.exit_code == 2 and r.stdout == "" and "--bogus" in r.stderr


def test_a_command_names_its_parameters_as_it_likes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mode follows the options' declarations, not the parameters' names: a command whose
    --json is ``j`` and whose --quiet is ``hush`` still answers errors in JSON and keeps its notes back."""
    fresh = typer.Typer(cls=_app.PlainGroup)
    fresh.callback()(lambda: None)
    monkeypatch.setattr(_app, "app", fresh)
    seen: List[_app.Common] = []

    @_app.command("odd", short="A command with odd parameter names.")
    def odd(common: _app.Common, what: str = typer.Argument(...), j: bool = _app.JsonOpt, fmt: str = _app.format_option("text"),
            hush: bool = _app.QuietOpt, kind: str = _app.InputKindOpt, n: Optional[int] = _app.JobsOpt,
            rec: Optional[str] = _app.RecordOpt) -> None:
        seen.append(common)
        if what == "usage":
            raise _app.usage_error("no good", "--what")
        common.console.note("a note")
        raise common.console.fail(PbtxtError("bad input", 3, 4, "f.pbtxt"))

    r = runner.invoke(fresh, ["odd", "--json", "-j", "2", "--record", "1.2", "--input-kind", "function", "input"])
    assert r.exit_code == 2 and "a note" in r.stderr
    assert json.loads(r.stdout) == {"error": "bad input", "file": "f.pbtxt", "line": 3, "column": 4, "offset": None}
    assert seen[-1] == _app.Common(_app.Console(json=True, quiet=False), True, "text", "function", 2, "1.2")
    r = runner.invoke(fresh, ["odd", "--format", "json", "--quiet", "input"])
    assert r.exit_code == 2 and "a note" not in r.stderr and json.loads(r.stdout)["error"] == "bad input"
    assert seen[-1].console == _app.Console(json=True, quiet=True) and not seen[-1].as_json
    for args in (["odd", "--json", "usage"], ["odd", "--json", "--bogus", "input"], ["odd", "--json", "-j", "x", "input"], ["odd", "--json"]):
        r = runner.invoke(fresh, args)
        assert r.exit_code == 2 and "error" in json.loads(r.stdout), args
    r = runner.invoke(fresh, ["odd", "usage"])
    assert r.exit_code == 2 and r.stdout == ""
