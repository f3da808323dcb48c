"""CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) and TFRecord's mask of it.

TFRecord frames (TensorBoard's event files) carry a masked CRC-32C of each record's length and of
its data (TensorFlow's ``tensorflow/core/lib/hash/crc32c.h``: ``Mask(c) = ((c >> 15) | (c << 17))
+ 0xa282ead8``). The standard library has no CRC-32C (``zlib.crc32`` is another polynomial).

Two implementations, one answer (``tests/test_trust_crc.py`` proves they agree):

- ``google-crc32c`` (Apache-2.0, a declared dependency), when its C extension is in use: Google's
  crc32c library, on the CPU's CRC instruction (SSE 4.2 on x86_64, the ARMv8 CRC extension on
  aarch64: Kunpeng), several GB/s. Its own fallback is pure Python, as slow as ours: then, and
  where the package cannot be imported (no wheel for the platform, a zipapp), ours is used.
- :func:`py_crc32c`: table-driven, eight bytes a step ("slicing by 8": one 64-bit word, eight
  table lookups), about 8 MB/s on CPython, against 6.5 MB/s a byte at a time.

Every command checks the data CRC of the event-file record its graph comes from
(``graph._input``); at pure Python's pace it does so up to :data:`PURE_MAX` bytes, and past that
says the CRC was not checked and how to get the library (``check`` and ``stats`` check whatever
the size: validating is their job).
"""
from __future__ import annotations

import importlib
import struct
import warnings
from typing import Any, Callable, List, Optional, Tuple

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8


def _tables() -> Tuple[List[int], ...]:
    t0 = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(7):  # table k: a byte followed by k zero bytes
        prev = tables[-1]
        tables.append([(v >> 8) ^ t0[v & 0xFF] for v in prev])
    return tuple(tables)


_T = _tables()


PURE_MAX = 16 << 20  # the largest record whose data CRC pure Python checks for a command that answers (2 s)
HOW_TO_GET = "pip install google-crc32c"  # (the library that checks it at the CPU's pace)

_SMALL = 8  # a CRC of this many bytes or fewer does not load the library (pure Python's takes microseconds)
_UNSET: Any = object()
_extend: Any = _UNSET  # google_crc32c.extend when its C extension is in use, else None (loaded on first use)


def _load() -> Optional[Callable[[int, bytes], int]]:
    """``google_crc32c.extend`` if the package imports and runs on its C extension, else None."""
    try:
        with warnings.catch_warnings():  # (it warns when it falls back to pure Python: we do too, silently)
            warnings.simplefilter("ignore")
            google_crc32c = importlib.import_module("google_crc32c")  # (typed or not, wherever it is installed)
    except ImportError:
        return None
    if getattr(google_crc32c, "implementation", None) != "c":
        return None
    extend: Callable[[int, bytes], int] = google_crc32c.extend  # (its C extension's: what its stubs say of it)
    return extend


def library() -> Optional[Callable[[int, bytes], int]]:
    """The hardware CRC-32C (``extend(crc, data)``), or None where only pure Python's is there."""
    global _extend
    if _extend is _UNSET:
        _extend = _load()
    extend: Optional[Callable[[int, bytes], int]] = _extend  # (the memo: what _load gave)
    return extend


def fast() -> bool:
    """Whether CRCs are computed by the library (at the CPU's pace), not by pure Python."""
    return library() is not None


def crc32c(data: bytes, crc: int = 0) -> int:
    """The CRC-32C of ``data`` (continuing ``crc``, the CRC of what came before it)."""
    extend = _extend
    if extend is _UNSET:
        if len(data) <= _SMALL:  # (a header's length, as every input's first bytes are tried: no import for it)
            return py_crc32c(data, crc)
        extend = library()
    if extend is not None:
        return extend(crc, data if isinstance(data, bytes) else bytes(data))  # (it takes bytes only)
    return py_crc32c(data, crc)


def py_crc32c(data: bytes, crc: int = 0) -> int:
    """:func:`crc32c` in pure Python (where the library is not there)."""
    t0, t1, t2, t3, t4, t5, t6, t7 = _T
    c = crc ^ 0xFFFFFFFF
    whole = len(data) & ~7
    for (w,) in struct.iter_unpack("<Q", memoryview(data)[:whole]):
        w ^= c
        c = (t7[w & 0xFF] ^ t6[(w >> 8) & 0xFF] ^ t5[(w >> 16) & 0xFF] ^ t4[(w >> 24) & 0xFF]
             ^ t3[(w >> 32) & 0xFF] ^ t2[(w >> 40) & 0xFF] ^ t1[(w >> 48) & 0xFF] ^ t0[w >> 56])
    for b in memoryview(data)[whole:]:
        c = t0[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(crc: int) -> int:
    """TFRecord's mask of a CRC-32C (so a CRC of data that holds CRCs is not trivially zero)."""
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    return masked(crc32c(data))
