"""--help reads the same on every typer version the package allows: click's plain metavars
(FILE, TEXT, INTEGER, FILE...), never typer 0.26+'s own ({file}, <str>, <list[str]>).

Run on every Python in CI, where pip resolves different typer releases (3.7 to 3.9 stay below
0.24), so a typer that changes its help fails here.
"""
from __future__ import annotations

import re
from typing import Dict, List, Tuple

import pytest
import typer
from support.cli import CliRunner

from pbtxt_scan.cli import app

runner = CliRunner()
COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]

METAVAR = re.compile(r"^[A-Z][A-Z_]*(\.\.\.)?$")  # FILE, TEXT, INTEGER, FILE...
CHOICE = re.compile(r"^\[[a-z]+(\|[a-z]+)+\]$")  # [bash|zsh|fish] (typer's completion options)
TYPER_STYLE = re.compile(r"\{[a-z_]+\}|<[a-z_]+(\[[a-z_|, ]+\])?>")  # {file}, <str>, <list[str]>

USAGE = {
    # fp, bp, points: several files, or none (stdin from a pipe): click's optional, repeatable argument.
    "fp": "[OPTIONS] [FILE]...",
    "bp": "[OPTIONS] [FILE]...",
    "points": "[OPTIONS] [FILE]...",
    "nodes": "[OPTIONS] FILE",
    "show": "[OPTIONS] FILE [NAME]...",  # (several names, or none with --glob or --regex)
    "stats": "[OPTIONS] FILE",
    "events": "[OPTIONS] FILE_OR_LOGDIR",
    "check": "[OPTIONS] FILE...",
    "resolve": "[OPTIONS] NAME...",
    "ge-auto": "[OPTIONS] PATH",
    "report": "[OPTIONS] FILE",
    "verify": "[OPTIONS] PROF_DIR",
}


def help_text(*args: str) -> str:
    r = runner.invoke(app, [*args, "--help"], terminal_width=100)
    assert r.exit_code == 0, r.stderr
    return r.stdout


def sections(text: str) -> Dict[str, List[Tuple[str, str]]]:
    """{"Arguments": [(first column, help)], "Options": [...]} from a plain click help page."""
    out: Dict[str, List[Tuple[str, str]]] = {}
    current = None
    for line in text.splitlines():
        if re.match(r"^[A-Z][a-z]+:$", line):
            current = out.setdefault(line[:-1], [])
        elif current is not None and re.match(r"^  \S", line):
            first, _, rest = line[2:].partition("  ")
            current.append((first.strip(), rest.strip()))
        elif not line.strip() or not line.startswith(" "):
            current = None  # a blank line ends a section (the epilog follows, indented)
    return out


def test_every_command_is_covered():
    assert set(COMMANDS) == set(USAGE)


@pytest.mark.parametrize("command", COMMANDS)
def test_usage_line_is_plain(command):
    usage = help_text(command).splitlines()[0]
    assert usage.startswith("Usage: ") and usage.endswith(" %s %s" % (command, USAGE[command])), usage
    assert not TYPER_STYLE.search(usage), usage


@pytest.mark.parametrize("command", COMMANDS)
def test_arguments_and_options_show_plain_metavars(command):
    s = sections(help_text(command))
    args, opts = s.get("Arguments", []), s.get("Options", [])
    # (the Arguments section names an optional argument without the usage line's brackets)
    assert [a for a, _ in args] == [u.replace("[", "").replace("]", "") for u in USAGE[command].split()[1:]]
    for first, _ in args + opts:
        assert not TYPER_STYLE.search(first), first
    assert opts and opts[-1][0] == "-h, --help"
    for first, _ in opts:
        names = [t.strip() for t in first.split(",")]
        *flags, last = names
        assert all(f.startswith("-") and " " not in f for f in flags), first
        name, _, metavar = last.partition(" ")
        assert name.startswith("-"), first
        assert metavar == "" or METAVAR.match(metavar) or CHOICE.match(metavar), first


def test_help_has_no_rich_markup_or_escapes():
    for command in COMMANDS:
        text = help_text(command)
        assert "\\[" not in text and "╭" not in text, command


def test_value_options_say_what_they_take():
    stats, points, resolve = (dict(sections(help_text(c))["Options"]) for c in ("stats", "points", "resolve"))
    assert "-n, --top INTEGER" in stats and "--format FORMAT" in stats
    assert {"--ge PATH", "--config FILE", "--rule RULE", "--skip-op OP", "--profiling-output DIR"} <= set(points)
    assert "--ge PATH" in resolve
    assert "[default: 15]" in stats["-n, --top INTEGER"]


def test_main_help_lists_commands_in_their_order():
    text = help_text()
    assert text.splitlines()[0].endswith(" [OPTIONS] COMMAND [ARGS]...")
    s = sections(text)
    assert [c for c, _ in s["Commands"]] == ["fp", "bp", "points", "check", "nodes", "show", "stats", "events", "resolve", "ge-auto", "report", "verify"]
    assert "--install-completion" in [o.split()[0] for o, _ in s["Options"]]


def test_usage_errors_use_the_same_usage_line():
    r = runner.invoke(app, ["show", "x.pbtxt"])
    assert r.exit_code == 2
    assert "[OPTIONS] FILE [NAME]..." in r.stderr
