"""The reads of the skim pool (``_skim_pool``): whether a reply is waiting, one whole fixed-size
record, and where a line ends in the input (looked up in a map: a read would copy bytes that the
workers read again)."""
from __future__ import annotations

import mmap
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


def newline(fd: int, s: int, n: int) -> int:
    """The first newline in the file's ``n`` bytes from ``s`` (from ``s``; -1: none), in a map."""
    at = s - s % mmap.ALLOCATIONGRANULARITY
    try:
        with mmap.mmap(fd, s - at + n, access=mmap.ACCESS_READ, offset=at) as m:
            nl = m.find(b"\n", s - at)
    except (OSError, ValueError):  # (n <= 0, or the file shrank: window 0 finds out)
        return -1
    return nl - (s - at) if nl >= 0 else -1
