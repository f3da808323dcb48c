"""pbtxt-scan.pyz, from a user's side: ``python3 -m tools.build_pyz`` writes one file; copied to a
folder with nothing installed and run by a bare Python (``-I -S``: no environment, no site-packages),
it answers as the installed tool does.

The quick test builds it offline, from this Python's installed packages (no network: the set for
this Python's range only), and runs it on this Python's own interpreter outside its venv. The slow
one builds it as the README says (pip download, both sets) and runs it on 3.7 and 3.13 where pyenv
has them; CI does the same in .ci/run.
"""
from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRAPH = ROOT / "tests" / "data" / "graphs" / "mlp_sgd.pbtxt"


def bare_python(version: str) -> Optional[str]:
    """An interpreter of that version outside any venv (pyenv's, else PATH's), or None."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for c in sorted(glob.glob(os.path.join(root, "versions", version + ".*", "bin", "python" + version))):
        return c
    return shutil.which("python" + version)


def this_bare_python() -> str:
    """This Python's own interpreter, without the venv the tests run in."""
    exe = os.path.join(sys.base_prefix, "bin", "python%d.%d" % sys.version_info[:2])
    return exe if os.path.exists(exe) else sys.executable


def build(target: Path, *options: str) -> "subprocess.CompletedProcess[str]":
    done = subprocess.run([sys.executable, "-m", "tools.build_pyz", "-o", str(target)] + list(options),
                          cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert done.returncode == 0, done.stderr
    assert target.is_file() and os.access(str(target), os.X_OK)
    return done


def run_pyz(python: str, pyz: Path, args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    """``python -I -S pbtxt-scan.pyz ARGS`` from ``cwd``, with nothing of this checkout or venv in reach."""
    copy = cwd / "pbtxt-scan.pyz"
    if not copy.exists():
        shutil.copy(str(pyz), str(copy))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PBTXT_SCAN_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run([python, "-I", "-S", str(copy)] + args, cwd=str(cwd), env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)


def installed(*args: str) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "pbtxt_scan"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def test_the_readme_gives_the_build_and_the_run_under_install() -> None:
    install = (ROOT / "README.md").read_text(encoding="utf-8").split("\n## Install", 1)[1].split("\n## ", 1)[0]
    assert "`python3 -m tools.build_pyz`" in install and "`python3 pbtxt-scan.pyz points graph.pbtxt`" in install


@pytest.fixture(scope="module")
def offline_pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("pyz") / "pbtxt-scan.pyz"
    build(target, "--offline")
    return target


def test_the_pyz_answers_as_the_installed_tool(offline_pyz: Path, tmp_path: Path) -> None:
    want = installed("points", str(GRAPH))
    assert want.returncode == 0 and want.stdout.startswith("fp_point"), want.stderr
    got = run_pyz(this_bare_python(), offline_pyz, ["points", str(GRAPH)], tmp_path)
    assert (got.returncode, got.stdout, got.stderr) == (0, want.stdout, want.stderr)


def test_the_pyz_says_what_the_installed_tool_says_on_bad_input(offline_pyz: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node {\n  name: "a"\n  op: "Const"\n', encoding="utf-8")
    want = installed("check", str(bad))
    got = run_pyz(this_bare_python(), offline_pyz, ["check", str(bad)], tmp_path)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr) and want.returncode == 2


def test_the_grammar_loads_from_inside_the_pyz(offline_pyz: Path, tmp_path: Path) -> None:
    """Lark's grammar is a member of the zip, read by the package's loader (no grammar/ beside it)."""
    deps = "py37" if sys.version_info < (3, 10) else "py310"
    code = (
        "import sys; sys.path[:0] = [%r, %r]\n"
        "import pbtxt_scan\n"
        "assert '.pyz' in pbtxt_scan.__file__, pbtxt_scan.__file__\n"
        "print(pbtxt_scan.parse_text('a: 1 b { c: \"x\" }'))\n" % (str(offline_pyz), str(offline_pyz / "deps" / deps))
    )
    got = subprocess.run([this_bare_python(), "-I", "-S", "-c", code], cwd=str(tmp_path), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True)
    assert got.returncode == 0, got.stderr
    assert "Field(name='c', value='x', line=1, column=10)" in got.stdout


def test_a_python_the_pyz_was_not_built_for_gets_one_line(offline_pyz: Path, tmp_path: Path) -> None:
    """Built offline, the file holds this Python's set only; another range's Python is told so, exit 2."""
    other = bare_python("3.13" if sys.version_info < (3, 10) else "3.7")
    if other is None:
        pytest.skip("no Python of the other range (3.7-3.9 or 3.10+) on this machine")
    got = run_pyz(other, offline_pyz, ["points", str(GRAPH)], tmp_path)
    assert got.returncode == 2 and got.stdout == ""
    assert got.stderr.count("\n") == 1 and "built for Python" in got.stderr and "Traceback" not in got.stderr


@pytest.fixture(scope="module")
def downloaded_pyz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's build: pip download, both typer ranges in one file."""
    target = tmp_path_factory.mktemp("pyz-all") / "pbtxt-scan.pyz"
    done = build(target)
    if "taking the packages installed" in done.stderr:
        pytest.skip("pip cannot download here: %s" % done.stderr.strip().splitlines()[0])
    return target


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.7", "3.13"])
def test_the_downloaded_pyz_runs_on_the_oldest_and_newest_python(version: str, downloaded_pyz: Path, tmp_path: Path) -> None:
    python = bare_python(version)
    if python is None:
        pytest.skip("no Python %s on this machine" % version)
    want = installed("points", str(GRAPH))
    got = run_pyz(python, downloaded_pyz, ["points", str(GRAPH)], tmp_path)
    assert (got.returncode, got.stdout) == (0, want.stdout), got.stderr
