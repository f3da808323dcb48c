"""The ``slow`` mark for the fixtures that make an agreement test long.

The tests that run every fixture many ways (every chunk size, tiny limits, broken variants, every
command split across workers) spend most of their time on the few largest graphs. The quick set
(the README's command, on every Python) runs them on the fixtures up to ``BIG_FIXTURE`` bytes, and
every fixture still goes through the plain agreement test there (test_canonical's
``test_fixture_agrees``: the fast path against the general scanner, at two chunk sizes, seekable or
not); the ``slow`` run in CI adds the large ones, so together they check all that was checked
before.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Sequence

import pytest

# bytes: most of the graphs are larger (tests/data/graphs), none of the GE dumps; test_scanner already
# kept its chunk size 7 to the fixtures under this size.
BIG_FIXTURE = 40_000


def slow_if_big(fixtures: Sequence[Any], size_of: Any = None) -> List[Any]:
    """``fixtures`` for ``parametrize``, each one over ``BIG_FIXTURE`` bytes marked ``slow``.
    ``size_of`` gives the path of a parameter that is not a path itself (a tuple)."""
    out: List[Any] = []
    for f in fixtures:
        path = Path(size_of(f) if size_of else f)
        if path.stat().st_size > BIG_FIXTURE:
            out.append(pytest.param(*(f if isinstance(f, tuple) else (f,)), marks=pytest.mark.slow))
        else:
            out.append(f)
    return out


def quick_first(values: Sequence[Any], n: int = 2) -> List[Any]:
    """``values`` for ``parametrize`` with all but the first ``n`` marked ``slow``: a test that runs
    every command through a real process keeps two of them in the quick set (every Python), and
    the ``slow`` run in CI runs them all."""
    return [v if i < n else pytest.param(v, marks=pytest.mark.slow) for i, v in enumerate(values)]
