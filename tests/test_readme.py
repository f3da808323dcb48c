"""The README, from a new user's side: short, its first example prints what it says, and every
command, option and file it names exists (so it cannot drift from the tool)."""
from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import List, Set

import pytest

from pbtxt_scan.cli import app
from support.cli import CliRunner

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
COMMANDS = ("fp", "bp", "points", "nodes", "show", "stats", "events", "check", "resolve", "ge-auto", "report", "verify")


def run(*args: str, cwd: Path = ROOT):
    old = os.getcwd()
    os.chdir(str(cwd))  # (the README's paths are the checkout's)
    try:
        return CliRunner().invoke(app, list(args))
    finally:
        os.chdir(old)


def blocks(lang: str) -> List[str]:
    return re.findall(r"```%s\n(.*?)```" % lang, TEXT, re.S)


def test_the_first_screen_is_short() -> None:
    assert len(TEXT.splitlines()) < 200


def test_the_ascend_steps_are_there() -> None:
    # From the graph to the GE dump to the options to paste, in that order.
    steps = [TEXT.index(s) for s in ("pbtxt-scan points model_dir/", "DUMP_GE_GRAPH=", "--ge ./ge_dump", "--format env")]
    assert steps == sorted(steps)


def test_the_install_example_prints_what_the_readme_shows() -> None:
    command = blocks("sh")[0].split("&&", 1)[1].split()
    assert command[:2] == ["pbtxt-scan", "points"]
    r = run(*command[1:], cwd=ROOT)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == blocks("text")[0]


def _options_of(command: str) -> Set[str]:
    r = run(command, "--help")
    assert r.exit_code == 0, r.stderr
    return set(re.findall(r"(--[a-z][a-z-]*)", r.stdout))


def _readme_commands() -> List[List[str]]:
    """Every ``pbtxt-scan COMMAND ...`` the README shows, in code blocks or inline code."""
    prose = re.sub(r"```.*?```", "", TEXT, flags=re.S)
    code = blocks("sh") + re.findall(r"`([^`\n]+)`", prose)
    found = []
    for span in code:
        for m in re.finditer(r"pbtxt-scan ([a-z-]+)([^|)#\n]*)", span):
            found.append([m.group(1)] + m.group(2).split())
    return found


@pytest.mark.parametrize("words", _readme_commands(), ids=lambda w: " ".join(w)[:60])
def test_every_command_and_option_shown_exists(words: List[str]) -> None:
    command = words[0]
    if command.startswith("-"):
        return
    assert command in COMMANDS, "README shows an unknown command %r" % command
    known = _options_of(command)
    for w in words[1:]:
        opt = w.split("=", 1)[0]
        if opt.startswith("--"):
            assert opt in known, "README shows %s %s, which --help does not list" % (command, opt)


def test_every_option_in_the_command_table_exists() -> None:
    table = [line for line in TEXT.splitlines() if line.startswith("| `") and any(line.startswith("| `%s" % c) for c in COMMANDS)]
    assert len(table) >= len(COMMANDS) - 1
    for line in table:
        names = re.findall(r"`([a-z-]+)[ `]", line.split("|")[1])
        options = set(re.findall(r"`(--[a-z-]+)", line))
        for name in names:
            assert name in COMMANDS, line
            assert options <= _options_of(name) | {o for c in names for o in _options_of(c)}, line


def test_every_linked_file_exists() -> None:
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT):
        if "://" not in target:
            assert (ROOT / target).exists(), "README links to %s, which is not there" % target


def test_the_shell_lines_parse() -> None:
    for block in blocks("sh"):
        for line in block.splitlines():
            if line.strip():
                shlex.split(line, comments=True)  # (a quote left open would break a paste)
