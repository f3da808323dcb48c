"""How many cores this process may use: one answer for the parallel commands, fp's byte search
and the long-line checker (a module of its own: all three sit at different layers)."""
from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return os.cpu_count() or 1
