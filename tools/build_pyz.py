#!/usr/bin/env python3
"""Build ``pbtxt-scan.pyz``: one file to copy to an offline server, run by any Python 3.7-3.13, no pip.

    python3 -m tools.build_pyz                 # -> ./pbtxt-scan.pyz (from the checkout's root)
    python3 pbtxt-scan.pyz fp graph.pbtxt      # on the server

A zipapp (PEP 441): ``pbtxt_scan`` itself (the grammar at ``pbtxt_scan/language/pbtxt.lark``, where
the wheel puts it; the package reads it with ``pkgutil.get_data``), and its dependencies, lark,
typer, click and rich with theirs, pure Python. typer's pin differs by Python (pyproject.toml:
typer 0.16+ with click 8.2+ from 3.10, an older typer with click 8.1 before), so one file holds two
sets, ``deps/py37`` (for 3.7-3.9) and ``deps/py310`` (3.10 and later), and its ``__main__`` puts the
running Python's on ``sys.path``. Compiled extras stay out: google-crc32c is left out, and
``source._crc32c`` checks an event file's CRCs in pure Python (up to 16 MB a graph, as without it).

Where the dependencies come from (stderr says which):

- by default, ``pip download``: pure-Python wheels (``py3-none-any``) for Python 3.7 and for 3.10,
  from the index pip is set up with. pip reads the wheels' markers with the Python it runs on, so
  each wheel's ``Requires-Dist`` is read again here with every Python of its set (3.7, 3.8, 3.9;
  3.10 to 3.13), and what is missing is downloaded too;
- ``--offline``, or when pip cannot download: the packages installed in the Python that runs this
  (its site-packages, file by file as each package's RECORD lists them), for that Python and the
  later ones of its set only; the file then says so, in one line, when another Python runs it.

Nothing is imported from ``pbtxt_scan``: the builder reads the checkout's files.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMPILED = ("google-crc32c",)  # left out: the package has a pure-Python fallback
STAMP = (2020, 1, 1, 0, 0, 0)  # every member's date: the same inputs give the same file


class Range(NamedTuple):
    """A dependency set: its folder in the archive and the Pythons it serves (``hi`` excluded)."""

    name: str
    lo: Tuple[int, int]
    hi: Optional[Tuple[int, int]]
    pythons: Tuple[str, ...]  # the versions whose markers it is resolved for (pip downloads for the first)


RANGES = (
    Range("py37", (3, 7), (3, 10), ("3.7", "3.8", "3.9")),
    Range("py310", (3, 10), None, ("3.10", "3.11", "3.12", "3.13")),
)

MAIN = '''\
# pbtxt-scan.pyz (tools/build_pyz.py): the dependencies built for this Python on sys.path, then the
# command line, as the installed `pbtxt-scan` runs it.
import os
import sys

SETS = %(sets)r  # (folder, lowest Python, first Python past it or None)


def _deps():
    here = os.path.dirname(os.path.abspath(__file__))  # (the archive itself)
    for name, lo, hi in SETS:
        if tuple(lo) <= sys.version_info[:2] and (hi is None or sys.version_info[:2] < tuple(hi)):
            return os.path.join(here, "deps", name)
    served = " and ".join("%%d.%%d%%s" %% (lo[0], lo[1], "+" if hi is None else "-%%d.%%d" %% (hi[0], hi[1] - 1))
                          for _, lo, hi in SETS)
    sys.stderr.write("%%s: built for Python %%s (%%s), not %%d.%%d: run it with one of those, or build it "
                     "where pip can download (python3 -m tools.build_pyz)\\n"
                     %% (os.path.basename(here), served, %(origin)r, sys.version_info[0], sys.version_info[1]))
    sys.exit(2)


if sys.version_info < (3, 7):
    sys.stderr.write("pbtxt-scan needs Python 3.7 or later\\n")
    sys.exit(2)
sys.path.insert(1, _deps())  # (before site-packages: an installed typer of another release does not count)
try:  # (Ctrl-C while the modules load: exit 130, as pbtxt_scan/__main__.py does)
    from pbtxt_scan.cli import main
except KeyboardInterrupt:
    sys.stderr.write("interrupted\\n")
    sys.exit(130)
main()
'''


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _packaging() -> Any:
    """``packaging``'s requirements (pip carries a copy when it is not installed)."""
    try:
        from packaging.requirements import Requirement
    except ImportError:
        from pip._vendor.packaging.requirements import Requirement
    return Requirement


def project_requirements() -> List[str]:
    """pyproject.toml's ``dependencies`` (read as text: Python 3.7 has no TOML reader)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    if m is None:
        raise SystemExit("pyproject.toml: no dependencies list")
    return re.findall(r'^\s*"([^"]+)",', m.group(1), re.M)


def _env(python: str) -> Dict[str, str]:
    """Marker values of that Python on this machine's platform."""
    return {"python_version": python, "python_full_version": python + ".0", "extra": ""}


def needed(requires: List[str], pythons: Tuple[str, ...]) -> Dict[str, str]:
    """Which of ``requires`` (Requires-Dist lines) some Python in ``pythons`` installs, by normalised
    name -> the requirement (compiled extras and extras' requirements left out)."""
    Requirement = _packaging()
    out: Dict[str, str] = {}
    for line in requires:
        req = Requirement(line)
        if _norm(req.name) in COMPILED:
            continue
        if req.marker is None or any(req.marker.evaluate(_env(p)) for p in pythons):
            out.setdefault(_norm(req.name), str(req).split(";")[0].strip())
    return out


# --- the dependencies from pip download ------------------------------------------------------------


def _wheel_requires(path: str) -> List[str]:
    with zipfile.ZipFile(path) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        text = z.read(meta).decode("utf-8")
    head = text.split("\n\n", 1)[0]
    return [line[len("Requires-Dist:"):].strip() for line in head.splitlines() if line.startswith("Requires-Dist:")]


def _wheels(folder: str) -> Dict[str, str]:
    """The wheels in ``folder``, by normalised project name -> path."""
    return {_norm(w.split("-")[0]): os.path.join(folder, w) for w in sorted(os.listdir(folder)) if w.endswith(".whl")}


def download(r: Range, folder: str, requires: List[str]) -> Dict[str, str]:
    """Pure-Python wheels of ``requires`` and what they need on every Python of ``r``."""
    want = needed(requires, r.pythons)
    for _ in range(8):  # (rounds: what a wheel needs only under another Python's markers)
        got = _wheels(folder)
        missing = [spec for name, spec in sorted(want.items()) if name not in got]
        if not missing:
            return got
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--dest", folder,
               "--only-binary", ":all:", "--implementation", "py", "--abi", "none", "--platform", "any",
               "--python-version", r.pythons[0]] + missing
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        if done.returncode != 0:
            raise OSError("pip download failed: %s" % (done.stderr.strip().splitlines() or ["exit %d" % done.returncode])[-1])
        for path in _wheels(folder).values():
            want.update((k, v) for k, v in needed(_wheel_requires(path), r.pythons).items() if k not in want)
    raise OSError("the wheels' requirements did not close after 8 rounds")


def wheel_members(path: str) -> Iterator[Tuple[str, bytes]]:
    """A pure-Python wheel's files as installed (its ``.data`` folder, scripts and headers, left out)."""
    if not path.endswith("-none-any.whl"):
        raise SystemExit("%s: not a pure-Python wheel" % os.path.basename(path))
    with zipfile.ZipFile(path) as z:
        for n in sorted(z.namelist()):
            if n.endswith("/") or n.split("/")[0].endswith(".data"):
                continue
            yield n, z.read(n)


# --- the dependencies from the running Python's site-packages --------------------------------------


def installed_members(requires: List[str]) -> Iterator[Tuple[str, bytes]]:
    """The files of the installed distributions ``requires`` needs on this Python, by their RECORD."""
    try:
        from importlib import metadata  # novermin
    except ImportError:  # (Python 3.7: click brings the backport there)
        import importlib_metadata as metadata  # type: ignore[no-redef, import-not-found, unused-ignore]

    mine = "%d.%d" % sys.version_info[:2]
    todo = list(needed(requires, (mine,)))
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        dist = metadata.distribution(name)
        todo += list(needed(dist.requires or [], (mine,)))
        for f in dist.files or []:
            parts = f.parts
            if parts[0] == ".." or "__pycache__" in parts or f.suffix in (".pyc", ".pyo") or str(f).endswith(".pth"):
                continue
            if f.suffix in (".so", ".pyd", ".dylib"):
                raise SystemExit("%s is compiled (%s): it cannot go in the archive" % (name, f))
            with open(str(dist.locate_file(f)), "rb") as src:
                yield "/".join(parts), src.read()


# --- the archive -----------------------------------------------------------------------------------


def package_members() -> Iterator[Tuple[str, bytes]]:
    """pbtxt_scan's sources, and the grammar where the wheel puts it."""
    top = os.path.join(ROOT, "pbtxt_scan")
    for folder, dirs, files in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") or f == "py.typed":
                path = os.path.join(folder, f)
                with open(path, "rb") as src:
                    yield os.path.relpath(path, ROOT).replace(os.sep, "/"), src.read()
    with open(os.path.join(ROOT, "grammar", "pbtxt.lark"), "rb") as src:
        yield "pbtxt_scan/language/pbtxt.lark", src.read()


def write_archive(target: str, members: Iterator[Tuple[str, bytes]]) -> None:
    """The zipapp: a ``#!/usr/bin/env python3`` line, then the zip (deflated, members in order)."""
    tmp = target + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"#!/usr/bin/env python3\n")
        with zipfile.ZipFile(f, "w", zipfile.ZIP_DEFLATED) as z:
            for name, data in members:
                info = zipfile.ZipInfo(name, STAMP)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                z.writestr(info, data)
    os.chmod(tmp, os.stat(tmp).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, target)


def build(target: str, offline: bool = False) -> List[Range]:
    """Write the archive at ``target``; the dependency sets it holds."""
    requires = project_requirements()
    deps: List[Tuple[Range, List[Tuple[str, bytes]]]] = []
    origin = "pip download"
    work = tempfile.mkdtemp(prefix="pbtxt-scan-pyz-")
    try:
        if not offline:
            try:
                for r in RANGES:
                    folder = os.path.join(work, r.name)
                    os.mkdir(folder)
                    wheels = download(r, folder, requires)
                    deps.append((r, [m for w in sorted(wheels.values()) for m in wheel_members(w)]))
                    say("%s (Python %s): %s" % (r.name, "-".join(r.pythons[::len(r.pythons) - 1]),
                                                ", ".join(sorted(os.path.basename(w)[:-4] for w in wheels.values()))))
            except OSError as e:
                say("%s; taking the packages installed in this Python instead" % e)
                deps = []
        if not deps:
            mine = sys.version_info[:2]
            r = next(r for r in RANGES if r.lo <= mine and (r.hi is None or mine < r.hi))
            r = r._replace(lo=max(r.lo, mine))  # (installed for this Python: maybe not for an older one)
            deps = [(r, list(installed_members(requires)))]
            origin = "offline, from Python %d.%d's site-packages" % mine
            say("%s: this Python's installed packages (%s)" % (r.name, sys.prefix))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sets = [(r.name, r.lo, r.hi) for r, _ in deps]
    main = MAIN % {"sets": sets, "origin": origin}

    def members() -> Iterator[Tuple[str, bytes]]:
        yield "__main__.py", main.encode("utf-8")
        for item in package_members():
            yield item
        for r, files in deps:
            for name, data in files:
                yield "deps/%s/%s" % (r.name, name), data

    write_archive(target, members())
    return [r for r, _ in deps]


def say(line: str) -> None:
    sys.stderr.write("build_pyz: %s\n" % line)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m tools.build_pyz", description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default="pbtxt-scan.pyz", help="where to write it (default: ./pbtxt-scan.pyz)")
    ap.add_argument("--offline", action="store_true",
                    help="no pip download: this Python's installed packages, for its own Pythons (3.7-3.9 or 3.10+)")
    a = ap.parse_args(argv)
    sets = build(a.output, offline=a.offline)
    size = os.path.getsize(a.output)
    say("wrote %s (%.1f MB; Python %s)" % (a.output, size / 1e6, " and ".join(
        "%d.%d%s" % (r.lo + ("+" if r.hi is None else "-%d.%d" % (r.hi[0], r.hi[1] - 1),)) for r in sets)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
