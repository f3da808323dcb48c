"""The two pipe reads of the skim pool (``_skim_pool``): whether a reply is waiting, and one whole
fixed-size record."""
from __future__ import annotations

import os
import select


def ready(fd: int) -> bool:
    """Whether ``fd`` can be read without waiting."""
    return bool(select.select([fd], [], [], 0)[0])


def read_exact(fd: int, n: int) -> bytes:
    """``n`` bytes from ``fd``; EOFError if it closes first."""
    out = b""
    while len(out) < n:
        data = os.read(fd, n - len(out))
        if not data:
            raise EOFError
        out += data
    return out
