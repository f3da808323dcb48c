"""What every test shares: the Hypothesis profiles, the test groups (markers), and a cache folder of
its own.

Hypothesis profiles, chosen with ``HYPOTHESIS_PROFILE=ci`` or ``--hypothesis-profile ci``:
  ``dev``  the default (the README's test command): 100 examples a property;
  ``ci``   10 times as many: CI runs it on one Python, with the ``slow`` tests.
A test whose examples cost more or less than most runs a share of the profile's count
(``support.examples``); at ``ci`` that share is the count the test had before the profiles.

Markers (``pyproject.toml`` deselects both by default):
  ``slow``    inputs of 7-60 MB built on the spot, sleeps, long chains of real processes, and
              the many-ways agreement tests on the fixtures over 60 KB (``support.marks``): what
              made the suite take minutes; CI runs them on one Python (``-m slow``);
  ``memory``  opt-in peak-RSS test on a generated 500 MB file (``-m memory``).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings
from support.data import DATA

# deadline=None: the machines are shared and loaded; a test's time is measured where it matters
# (the cost tests), not per example.
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("ci", max_examples=1000, deadline=None)
# --hypothesis-profile (Hypothesis' own option) is applied after this and wins.
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _own_cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test (and each process it starts) reads and writes the index cache in its own
    ``tmp_path / "cache"``, never the user's (graph/_cache.py reads PBTXT_SCAN_CACHE_DIR first)."""
    monkeypatch.setenv("PBTXT_SCAN_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="session")
def data() -> Path:
    return DATA
