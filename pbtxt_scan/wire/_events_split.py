"""An event file's records read on several processes (:func:`scan_split`): the same :class:`Scan`
as one pass, in about ``1/jobs`` of its time.

A record's header says only where the next one starts, so a part of the file cannot be read from
its first byte: each worker but the first looks, from its part's first byte, for the first offset
where a record header holds (TensorFlow's layout: a length under 4 GiB, so its last 4 bytes are
zero, then its masked CRC-32C, then the Event's ``wall_time`` tag, 0x09: found by a regular
expression, then the length CRC checked) and the next records chain from it. It reads the
records whose headers lie in its part, and says where the first one after the part starts.

The parent then joins the parts: a part's first record must be where the part before it ended.
If a worker took bytes inside a record for a header (chained and CRC-checked: about one chance in
2^96), or any part failed, the whole file is read again in one pass, which gives the exact answer
or error (record numbers count from the file's start; a worker cannot know them).
"""
from __future__ import annotations

import re
import struct
from typing import List, Optional, Tuple

from .._errors import PbtxtError
from ..parallel._pool import Pool, PoolError, can_fork
from ..source._crc32c import masked_crc32c
from ._events import Scan, scan as scan_part
from ._tfrecord import FOOTER, HEADER, ReadAt

SPLIT_MIN = 64 << 20  # a smaller file reads in under a tenth of a second a part: one process
PART_MIN = 32 << 20
_CHAINED = 3  # records that must follow a header found in the middle of a file
# A header's zero high length bytes, its CRC, the Event's wall_time tag: matched from its literal start
# (a lookahead tried at every byte read a 100 MB graph record at 80 MB/s; this, at several GB/s).
_SYNC = re.compile(rb"\x00\x00\x00\x00(?s:.{4})\x09")
_SYNC_CHUNK = 1 << 20


def scan(
    read_at: ReadAt, size: int, *, record: Optional[int] = None, jobs: int = 1, window: int = 1 << 20,
    walk_first: int = 256,
) -> Scan:
    """``_events.scan`` of the whole file, on ``jobs`` workers when it is big (and no ``record``
    is asked: a worker cannot number its records)."""
    if jobs > 1 and record is None:
        got = scan_split(read_at, size, jobs, window=window, walk_first=walk_first)
        if got is not None:
            return got
    return scan_part(read_at, size, record=record, window=window, walk_first=walk_first)


def scan_split(
    read_at: ReadAt, size: int, jobs: int, *, window: int, walk_first: int, split_min: int = SPLIT_MIN,
    part_min: int = PART_MIN,
) -> Optional[Scan]:
    """The file's :class:`Scan` from ``jobs`` workers, or ``None`` when it is too small to split
    or no worker could start (the caller reads it in one pass)."""
    parts = min(jobs, size // max(1, part_min))
    if size < split_min or parts < 2 or not can_fork():
        return None
    cuts = [size * k // parts for k in range(parts)] + [size]

    def part(k: int) -> Tuple[int, Optional[Scan], Optional[str]]:
        """(its first record's offset, its Scan, or why it failed)."""
        try:
            first = 0 if k == 0 else _first_header(read_at, size, cuts[k], cuts[k + 1])
            if first >= cuts[k + 1]:
                return first, None, None
            return first, scan_part(read_at, size, window=window, walk_first=walk_first, start=first, stop=cuts[k + 1]), None
        except PbtxtError as e:
            return -1, None, str(e)

    try:
        with Pool(parts, [part]) as pool:
            got = list(pool.map(part, list(range(parts)), ahead=parts))
    except PoolError:
        return None
    return _joined(got, cuts, size)


def _joined(got: List[Tuple[int, Optional[Scan], Optional[str]]], cuts: List[int], size: int) -> Optional[Scan]:
    """The parts as one Scan, or ``None`` when they do not join (read again in one pass)."""
    out = Scan(size)
    expected = 0  # where the next record starts
    for k, (first, part, failed) in enumerate(got):
        if expected >= cuts[k + 1]:
            continue  # (a record longer than the part covers it: nothing starts here)
        if failed is not None or part is None or first != expected:
            return None
        for p in part.places:
            out.places.append(p._replace(record=p.record + out.records))
        out.records += part.records
        out.graphs += part.graphs
        out.plugins |= part.plugins
        out.keras_models += part.keras_models
        out.keras = out.keras or part.keras
        out.cut = part.cut
        expected = part.end
        if part.cut is not None:
            break
    if expected < size and out.cut is None:
        return None
    out.end = expected
    return out


def _first_header(read_at: ReadAt, size: int, start: int, stop: int) -> int:
    """The first offset at or after ``start`` where a record starts whose next records chain (to
    the end of the file, into a last record cut short, or :data:`_CHAINED` on); ``stop`` or more
    when none starts before ``stop``."""
    pos = start
    while pos < stop:
        chunk = read_at(pos, _SYNC_CHUNK + HEADER + 1)  # (a header that starts in the chunk ends in it)
        i = 4
        while True:
            m = _SYNC.search(chunk, i)
            if m is None or m.start() - 4 >= _SYNC_CHUNK:
                break
            at = pos + m.start() - 4
            if _chains(read_at, size, at):
                return at
            i = m.start() + 1  # (every start, overlapping ones included)
        pos += _SYNC_CHUNK
    return stop


def _chains(read_at: ReadAt, size: int, at: int) -> bool:
    for _ in range(_CHAINED):
        if at == size:
            return True
        head = read_at(at, HEADER)
        if len(head) < HEADER:
            return False
        length, crc = struct.unpack("<QI", head)
        if masked_crc32c(head[:8]) != crc:
            return False
        at += HEADER + length + FOOTER
        if at > size:
            return True  # (the last record, cut short: the part's reading says so)
    return True
