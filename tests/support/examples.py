"""How many examples a Hypothesis test runs: a share of the profile's ``max_examples`` (the profiles
are registered in tests/conftest.py: ``dev`` 100, ``ci`` 1000).

Most properties take the profile's count as it is. One whose examples cost much more (every command
run, a real graph scanned on every road) takes a small share, one whose examples are a single regex
match a larger one: ``@settings(max_examples=examples(0.2))``. At ``ci`` each share gives the count
the test had before the profiles existed, at ``dev`` a tenth of it.
"""
from __future__ import annotations

import os

from hypothesis import settings


def examples(share: float) -> int:
    return max(1, int(round(settings.default.max_examples * share)))


def fuzz_examples(share: float) -> int:
    """``examples(share)``, unless PBTXT_SCAN_FUZZ_EXAMPLES asks for a long exploring run (those
    fuzz tests then also draw new inputs each time instead of the same derandomized ones)."""
    return int(os.environ.get("PBTXT_SCAN_FUZZ_EXAMPLES") or 0) or examples(share)
