"""How many cores this process may use: one answer for the parallel commands, fp's byte search
and the long-line checker (a module of its own: all three sit at different layers)."""
from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one)."""
    affinity = getattr(os, "sched_getaffinity", None)  # (Linux's, not macOS's or Windows')
    if affinity is not None:
        try:
            return len(affinity(0))
        except OSError:
            pass
    return os.cpu_count() or 1
