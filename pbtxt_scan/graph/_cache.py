"""The user's cache folder: small files that let ``bp`` skip whole-file passes on later runs.

What is cached, per input file: its newline count and its block index (offsets and lines). Both
are only hints that must never make an answer wrong, so:

- The key covers the real path, size, mtime, **inode and ctime**, and a hash of the first and
  last 64 KiB. An in-place edit that keeps the size and restores the mtime (``touch -r``,
  ``rsync -t``) still changes the ctime, which no user tool can set back, so it misses.
- Every cache file carries a SHA-256 of its content; a file that does not match (a crash
  mid-write on a filesystem without atomic rename, a disk error, a stray write) is ignored and
  rebuilt, never believed.
- Writes are atomic (a temporary file renamed into place) and leave nothing behind when they
  fail; a read-only or missing folder just means no cache.
- The folder is bounded: past :data:`MAX_BYTES` the least recently written files are removed.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from ._input import GraphFile

MAX_BYTES = 256 << 20  # a few 1 GB graphs' indexes (about 32 bytes per block)
_MAGIC = b"pbtxtsc1"
_DIGEST = 32


def cache_dir() -> str:
    return os.environ.get("PBTXT_SCAN_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "pbtxt-scan"
    )


def key_of(g: "GraphFile") -> Optional[str]:
    """The cache key of a regular file (``None`` for a stream: nothing stable to key on)."""
    ident = g.identity()
    if ident is None:
        return None
    h = hashlib.sha256()
    h.update(ident[0].encode("utf-8", "surrogateescape"))
    h.update(("%d:%d:%d:%d" % ident[1:]).encode())
    size = ident[1]
    h.update(g.read_at(0, 65536))
    h.update(g.read_at(max(0, size - 65536), 65536))
    return h.hexdigest()[:32]


def read(key: Optional[str], kind: str) -> Optional[bytes]:
    """The payload cached under ``key``/``kind``, or ``None`` (missing, unreadable or damaged)."""
    if not key:
        return None
    try:
        with open(os.path.join(cache_dir(), "%s.%s" % (key, kind)), "rb") as c:
            data = c.read()
    except OSError:
        return None
    head, digest, payload = data[: len(_MAGIC)], data[len(_MAGIC) : len(_MAGIC) + _DIGEST], data[len(_MAGIC) + _DIGEST :]
    if head != _MAGIC or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def write(key: Optional[str], kind: str, payload: bytes) -> None:
    if not key:
        return
    d = cache_dir()
    tmp = None
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
        with os.fdopen(fd, "wb") as out:
            out.write(_MAGIC + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, os.path.join(d, "%s.%s" % (key, kind)))
        tmp = None
        _evict(d, MAX_BYTES)
    except OSError:
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class Handle:
    """The cache of one input (``key``: :func:`key_of`; ``None``: no cache), as a lane uses it:
    ``read(kind)`` and ``write(kind, payload)``."""

    __slots__ = ("key",)

    def __init__(self, key: Optional[str]) -> None:
        self.key = key

    def read(self, kind: str) -> Optional[bytes]:
        return read(self.key, kind)

    def write(self, kind: str, payload: bytes) -> None:
        write(self.key, kind, payload)


def _evict(d: str, limit: int) -> None:
    """Remove the oldest cache files until the folder holds at most ``limit`` bytes."""
    files = []
    total = 0
    for e in os.scandir(d):
        if e.is_file(follow_symlinks=False) and not e.name.startswith(".tmp-"):
            st = e.stat(follow_symlinks=False)
            files.append((st.st_mtime_ns, st.st_size, e.path))
            total += st.st_size
    files.sort()
    for _, size, path in files:
        if total <= limit:
            break
        try:
            os.unlink(path)
            total -= size
        except OSError:
            pass
