"""Start-up, from the user's side: a command imports what it uses and nothing else (issue 38).

`pbtxt-scan fp` on a small graph is mostly start-up, and a shell loop over a model zoo pays it a
graph. So the modules ``fp`` imports are held to a budget, :data:`FP_MODULES` (what it has
loaded when it exits; ``python -X importtime`` shows their cost), and each command is registered from its own
module alone (``cli.MODULES``), the others' never imported. Speed itself is measured in
benchmarks/ (``fp`` against ``python -c "import typer"``), not here.
"""
from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path
from typing import List, Set

import pytest
import typer

from pbtxt_scan import cli

ROOT = Path(__file__).resolve().parent.parent
GRAPH = ROOT / "tests" / "data" / "graphs" / "mlp_sgd.pbtxt"

# What `pbtxt-scan fp` on a small text graph imports of the package, every one used on the way.
FP_MODULES = """
pbtxt_scan pbtxt_scan._errors pbtxt_scan._kit pbtxt_scan._api pbtxt_scan._api_ge pbtxt_scan._api_points pbtxt_scan._model
pbtxt_scan.cli pbtxt_scan.cli._app pbtxt_scan.cli._checks pbtxt_scan.cli._escape pbtxt_scan.cli._help
pbtxt_scan.cli._output pbtxt_scan.cli._points
pbtxt_scan.fpbp pbtxt_scan.fpbp._ahead pbtxt_scan.fpbp._answers pbtxt_scan.fpbp._body pbtxt_scan.fpbp._catalog
pbtxt_scan.fpbp._fp pbtxt_scan.fpbp._fp_flow pbtxt_scan.fpbp._fp_inputs pbtxt_scan.fpbp._fp_pick
pbtxt_scan.fpbp._fp_scan pbtxt_scan.fpbp._fp_settle pbtxt_scan.fpbp._fp_steps pbtxt_scan.fpbp._hood_find
pbtxt_scan.fpbp._needles
pbtxt_scan.graph pbtxt_scan.graph._dialect pbtxt_scan.graph._input pbtxt_scan.graph._sniff
pbtxt_scan.graph._strict pbtxt_scan.text._strict
pbtxt_scan.language pbtxt_scan.language._atomic pbtxt_scan.language._lines pbtxt_scan.language._skip
pbtxt_scan.language._terminals pbtxt_scan.language._values
pbtxt_scan.parallel pbtxt_scan.parallel._cores pbtxt_scan.parallel._grep pbtxt_scan.parallel._grep_here pbtxt_scan.parallel._pool
pbtxt_scan.source pbtxt_scan.source._kinds pbtxt_scan.source._lane pbtxt_scan.source._source
pbtxt_scan.source._store pbtxt_scan.source._views
pbtxt_scan.text pbtxt_scan.text._batch pbtxt_scan.text._canonical pbtxt_scan.text._frames pbtxt_scan.text._handover
pbtxt_scan.text._hood pbtxt_scan.text._lane pbtxt_scan.text._layout pbtxt_scan.text._needles
pbtxt_scan.text._strings pbtxt_scan.text._window
pbtxt_scan.wire pbtxt_scan.wire._binary pbtxt_scan.wire._wire_sniff
""".split()


def imported(*args: str) -> List[str]:
    """The modules the console script ``pbtxt-scan ARGS`` has loaded when it exits, however loaded
    (``python -X importtime`` leaves out what ``importlib.import_module`` loads: the package's names
    and the commands load so)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES %s\\n' % ' '.join(sorted(sys.modules))))\n"
            "from pbtxt_scan.cli import main\n"
            "main()\n")
    done = subprocess.run([sys.executable, "-c", code] + list(args), cwd=str(ROOT),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert done.returncode == 0, done.stderr
    return done.stderr.rsplit("\nMODULES ", 1)[1].split()


def budget_message(extra: Set[str], gone: Set[str]) -> str:
    said = []
    if extra:
        said.append(
            "`pbtxt-scan fp` now imports %s, which FP_MODULES (tests/test_startup.py) does not list. If fp does "
            "not use it on a small text graph, import it where it is used: inside the function that needs it "
            "(as fpbp/_fp_steps imports bp's modules), or register the command from its own module "
            "(cli.MODULES). If fp uses it, add it to FP_MODULES." % ", ".join(sorted(extra)))
    if gone:
        said.append("fp no longer imports %s: take it out of FP_MODULES." % ", ".join(sorted(gone)))
    return " ".join(said)


def test_fp_imports_the_modules_it_uses_and_no_other() -> None:
    mods = imported("fp", str(GRAPH))
    mine = {m for m in mods if m == "pbtxt_scan" or m.startswith("pbtxt_scan.")}
    assert mine == set(FP_MODULES), budget_message(mine - set(FP_MODULES), set(FP_MODULES) - mine)
    assert not [m for m in mods if m.split(".")[0] in ("lark", "rich", "gzip", "tempfile", "pkgutil", "json")], (
        "fp on a regular text file needs neither the Lark parser, rich, gzip, a spool, a package's data nor "
        "json (its answer is a line of text)")


def test_the_budget_message_says_what_to_do() -> None:
    said = budget_message({"pbtxt_scan.cli._graph"}, set())
    assert "pbtxt_scan.cli._graph" in said and "inside the function that needs it" in said and "add it to FP_MODULES" in said
    assert "take it out of FP_MODULES" in budget_message(set(), {"pbtxt_scan.wire._wire"})


def registered_alone(command: str) -> List[str]:
    """The commands registered when the console script runs ``command`` (what ``cli.main`` does first)."""
    code = "import sys\nfrom pbtxt_scan import cli\nfrom pbtxt_scan.cli import _app\ncli.register(sys.argv[1])\nprint(' '.join(_app.registered()))\n"
    done = subprocess.run([sys.executable, "-c", code, command], cwd=str(ROOT), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize("module,names", cli.MODULES, ids=[m for m, _n in cli.MODULES])
def test_each_command_is_registered_from_its_own_module(module: str, names: List[str]) -> None:
    every = {n for _m, ns in cli.MODULES for n in ns}
    for name in names:
        got = set(registered_alone(name))
        # its module's commands, and those of the modules it builds on (points on fp's options), not all
        assert set(names) <= got and got != every, "%s: %s" % (name, sorted(got))
    assert registered_alone("fp") == ["fp", "bp"]


def test_modules_names_every_command() -> None:
    from pbtxt_scan.cli import _app

    assert cli.app is _app.app  # (the package's app: every command registered)
    every = set(_app.registered())
    listed = {n for _m, ns in cli.MODULES for n in ns}
    assert every == listed, (
        "cli.MODULES (pbtxt_scan/cli/__init__.py) must name every command and the module that declares it: "
        "missing %s, not a command %s" % (sorted(every - listed), sorted(listed - every)))


def test_help_and_an_unknown_command_still_see_every_command() -> None:
    assert set(registered_alone("--help")) == {n for _m, ns in cli.MODULES for n in ns}
    assert set(registered_alone("fpp")) == {n for _m, ns in cli.MODULES for n in ns}


def test_the_console_script_builds_the_command_it_runs_and_gives_the_others_back(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # (typer builds each registered command's click command, ~1 ms each: main builds the one it runs,
    # from a copy of the app, which keeps every command for the next caller, here bp in the same process)
    from pbtxt_scan.cli import _app

    built: List[List[str]] = []
    real = _app.app.__class__.__call__

    def call(app: typer.Typer, *a: object, **k: object) -> object:
        built.append([_app._name(c) for c in app.registered_commands])
        return real(app, *a, **k)

    monkeypatch.setattr(_app.app.__class__, "__call__", call)
    monkeypatch.setattr(gc, "freeze", lambda: None)  # (the console script freezes its objects as it ends; this process goes on)
    for command in ("fp", "bp"):
        monkeypatch.setattr(sys, "argv", ["pbtxt-scan", command, str(GRAPH)])
        with pytest.raises(SystemExit) as done:
            cli.main()
        assert done.value.code in (0, None)
    assert built == [["fp"], ["bp"]]
    assert set(_app.registered()) >= {"fp", "bp"}
    import pbtxt_scan

    want = [pbtxt_scan.find_fp(str(GRAPH)).point.name, pbtxt_scan.find_bp(str(GRAPH)).point.name]  # type: ignore[union-attr]
    assert capsys.readouterr().out.split("\n")[:2] == want
