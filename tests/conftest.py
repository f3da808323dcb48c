"""What every test shares: the Hypothesis profiles, the test groups (markers), a cache folder of
its own, and the package compiled once for the tests' own Python processes.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE=ci`` or ``--hypothesis-profile ci``:
  ``dev``  the default (the README's test command): 100 examples a property;
  ``ci``   10 times as many: CI runs it on one Python, with the ``slow`` tests.
A test whose examples cost more or less than most runs a share of the profile's count
(``support.examples``); at ``ci`` that share is the count the test had before the profiles.

Markers (``pyproject.toml`` deselects both by default):
  ``slow``    inputs of 7-60 MB built on the spot, sleeps, long chains of real processes, the
              many-ways agreement tests on the fixtures over 40 KB, and the tests on every fixture
              past one or two of each kind (``support.marks``): what made the suite take minutes;
              CI runs them on one Python (``-m slow``);
  ``memory``  opt-in peak-RSS test on a generated 500 MB file (``-m memory``).
"""
from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path
from typing import Iterator

import pytest
from hypothesis import settings
from support.data import DATA

# deadline=None: the machines are shared and loaded; a test's time is measured where it matters
# (the cost tests), not per example.
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("ci", max_examples=1000, deadline=None)
# --hypothesis-profile (Hypothesis' own option) is applied after this and wins.
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session", autouse=True)
def _compiled_once(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The tests' own Python processes (``python -m pbtxt_scan`` and the like, 150 in the quick set)
    compile the package once, into a session folder, not each time: where PYTHONDONTWRITEBYTECODE is
    set (as on this project's machine), a checkout's package has no ``__pycache__`` and each of them
    would compile every module again (70 ms). Python 3.8+ only (``PYTHONPYCACHEPREFIX``: on 3.7 the
    bytecode would go into the checkout); the tests' own process is as it was started."""
    if sys.version_info < (3, 8) or not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPYCACHEPREFIX", str(tmp_path_factory.mktemp("pycache")))
        mp.delenv("PYTHONDONTWRITEBYTECODE")
        yield


@pytest.fixture(scope="session")
def _cache_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("caches")
    return (root / str(i) for i in itertools.count())


@pytest.fixture(autouse=True)
def _own_cache_folder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, _cache_folders: Iterator[Path]) -> None:
    """Each test (and each process it starts) reads and writes the index cache in a folder of its
    own, never the user's (graph/_cache.py reads PBTXT_SCAN_CACHE_DIR first): ``tmp_path / "cache"``
    for a test that has a ``tmp_path`` (and may look inside), else a fresh name in one session
    folder (a ``tmp_path`` for each of 3,000 tests would cost seconds)."""
    if "tmp_path" in request.fixturenames:
        folder = request.getfixturevalue("tmp_path") / "cache"
    else:
        folder = next(_cache_folders)
    monkeypatch.setenv("PBTXT_SCAN_CACHE_DIR", str(folder))


@pytest.fixture(scope="session")
def data() -> Path:
    return DATA
