"""TFRecord framing, the container of TensorBoard's event files (``events.out.tfevents.*``).

Each record: a little-endian u64 length, the masked CRC-32C of those 8 bytes, ``length`` data
bytes, and the masked CRC-32C of the data (TensorFlow's ``tensorflow/core/lib/io/record_writer.cc``;
the CRC and its mask: ``source._crc32c``).

- :func:`iter_records` walks the records' headers: each record's data is stepped over by its
  length, never read (a record's header lies in the window already read when records are small,
  and is one positioned read away when they are big), and every length CRC is checked.
- :func:`check_data` reads one record's data and checks its CRC: :func:`check_graph_record` for
  the record a command's graph comes from (every command, before it answers), :func:`check_every`
  for all of them (``check``). The CRC is ``source._crc32c``'s: the hardware library's, at several
  GB/s, else pure Python's, about 8 MB/s (then a command that answers checks a record of up to
  ``PURE_MAX`` bytes, and says so of a bigger one).

Errors name the record by its number (counted from 0, as ``--record`` does) and its offset. A
record cut short at the end of the file is said to be so (the training may still be writing it),
not taken for the end of the file.
"""
from __future__ import annotations

import struct
from typing import Callable, Iterator, List, Optional, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from ..parallel._pool import Pool, PoolError, can_fork
from ..source._crc32c import HOW_TO_GET, PURE_MAX, crc32c, fast, masked, masked_crc32c

HEADER = 12  # u64 length + u32 masked CRC of it
FOOTER = 4  # u32 masked CRC of the data
WINDOW = 1 << 16  # what one read takes: a run of small records' headers at once

ReadAt = Callable[[int, int], bytes]


class CutShort(PbtxtError):
    """The file ends inside a record: the training may still be writing it."""


class Record(NamedTuple):
    """One record: its number, the offset of its header, where its data starts and its length."""

    index: int  # type: ignore[assignment]  # (shadows tuple.index(): a record's number, as every caller and test names it)
    offset: int
    data_start: int
    length: int

    @property
    def end(self) -> int:
        return self.data_start + self.length + FOOTER


class Window:
    """Bytes of a file read through ``read_at`` a window at a time: ``get`` answers from the last
    window when it holds the range, else reads a new one there (a skip further on is a seek)."""

    __slots__ = ("read_at", "buf", "at", "span")

    def __init__(self, read_at: ReadAt, span: int = WINDOW) -> None:
        self.read_at = read_at
        self.buf = b""
        self.at = 0
        self.span = span

    def get(self, pos: int, n: int) -> bytes:
        i = pos - self.at
        if i < 0 or i + n > len(self.buf):
            self.buf = self.read_at(pos, max(n, self.span))
            self.at = pos
            i = 0
        return self.buf[i : i + n]


def iter_records(
    read_at: ReadAt, size: int, *, window: Optional[Window] = None, start: int = 0, index: int = 0,
    stop: Optional[int] = None,
) -> Iterator[Record]:
    """Every record of the file (``size`` bytes), in order, by its header alone (from the record
    whose header is at ``start``, counted ``index``, to the one before ``stop``: a part of the file)."""
    w = window or Window(read_at)
    offset = start
    stop = size if stop is None else stop
    while offset < stop:
        head = w.get(offset, HEADER)
        if len(head) < HEADER:
            raise CutShort(
                "record %d is cut short: the file ends %d bytes into its 12-byte header (is the training "
                "still writing it? run again when it is done)" % (index, len(head)),
                offset=offset,
            )
        length, length_crc = struct.unpack("<QI", head)
        if masked_crc32c(head[:8]) != length_crc:
            raise PbtxtError(
                "record %d: its length's CRC does not hold (a damaged event file, or not one)" % index, offset=offset
            )
        end = offset + HEADER + length + FOOTER
        if end > size:
            raise CutShort(
                "record %d is cut short: it needs %d bytes and the file ends after %d (is the training still "
                "writing it? run again when it is done)" % (index, HEADER + length + FOOTER, size - offset),
                offset=offset,
            )
        yield Record(index, offset, offset + HEADER, length)
        offset = end
        index += 1


def check_data(read_at: ReadAt, record: Record, chunk: int = 4 << 20) -> None:
    """Read ``record``'s data and check its CRC; :class:`PbtxtError` at the record's offset, naming
    it, if it fails (``FILE:offset X: record N: data CRC mismatch ...``)."""
    c = 0
    pos, end = record.data_start, record.data_start + record.length
    foot = b""
    if record.length <= chunk:  # (a small record and its footer: one read)
        data = read_at(pos, record.length + FOOTER)
        c, foot = crc32c(data[: record.length]), data[record.length :]
        pos += min(len(data), record.length)
    else:
        while pos < end:
            data = read_at(pos, min(chunk, end - pos))
            if not data:
                break
            c = crc32c(data, c)
            pos += len(data)
        foot = read_at(end, FOOTER)
    if pos < end or len(foot) < FOOTER:  # (the file shrank since its headers were read)
        raise PbtxtError("record %d: the file ends inside its data or its data CRC (did it change while it was "
                         "read?)" % record.index, offset=record.offset)
    stored, got = struct.unpack("<I", foot)[0], masked(c)
    if got != stored:
        raise PbtxtError(
            "record %d: data CRC mismatch (stored 0x%08x, computed 0x%08x over its %s bytes): a damaged event file; "
            "nothing in the record is taken" % (record.index, stored, got, format(record.length, ",")), offset=record.offset
        )


def check_graph_record(read_at: ReadAt, index: int, offset: int) -> Optional[str]:
    """Check the data CRC of record ``index`` (its header at ``offset``, its length CRC checked
    already), the one a command's graph comes from: :class:`PbtxtError` if it fails. Without the
    CRC library, a record over ``PURE_MAX`` bytes is not checked (pure Python would take over 2 s
    for it): the note that says so is returned (None: checked)."""
    length = struct.unpack("<Q", read_at(offset, 8).ljust(8, b"\0"))[0]
    if length > PURE_MAX and not fast():
        return ("record %d's data CRC was not checked: it holds %s bytes, and this Python has no CRC-32C library "
                "(pure Python checks up to %d MB); to check it, %s" % (
                    index, format(length, ","), PURE_MAX >> 20, HOW_TO_GET))
    check_data(read_at, Record(index, offset, offset + HEADER, length))
    return None


PARALLEL_MIN = 8 << 20  # a smaller file's CRCs take under a second: no workers
_PARTS_PER_JOB = 4


def check_every(
    read_at: ReadAt, size: int, *, jobs: int = 1, parallel_min: int = PARALLEL_MIN, checked: Optional[int] = None
) -> int:
    """Check every record's CRCs (``check``); the record count. With ``jobs`` > 1 the data CRCs
    (and the reads) are checked by that many forked workers, each a run of records: the
    headers are walked here first (so a bad length is found as ``--jobs 1`` finds it), and the
    first bad record in file order is the one said. ``checked``: a record whose data CRC was
    checked already (the graph's, when the file was opened), not read again."""
    parts: List[Tuple[int, int, int]] = []  # (first header's offset, its record number, stop)
    target = size // max(1, jobs * _PARTS_PER_JOB) + 1
    at = first = n = 0
    for rec in iter_records(read_at, size):
        if rec.offset - at >= target:
            parts.append((at, first, rec.offset))
            at, first = rec.offset, rec.index
        n += 1
    parts.append((at, first, size))
    if jobs > 1 and size >= parallel_min and len(parts) > 1 and can_fork():
        def part(task: Tuple[int, int, int]) -> Optional[Tuple[str, Optional[int]]]:
            try:
                _check_part(read_at, size, task, checked)
            except PbtxtError as e:
                return e.msg, e.offset
            return None

        try:
            with Pool(min(jobs, len(parts)), [part]) as pool:
                for bad in pool.map(part, parts, ahead=2 * jobs):
                    if bad is not None:
                        raise PbtxtError(bad[0], offset=bad[1])
            return n
        except PoolError:  # (no worker could start, or one died: on alone)
            pass
    for task in parts:
        _check_part(read_at, size, task, checked)
    return n


def _check_part(read_at: ReadAt, size: int, task: Tuple[int, int, int], checked: Optional[int]) -> None:
    start, index, stop = task
    for rec in iter_records(read_at, size, start=start, index=index, stop=stop):
        if rec.index != checked:
            check_data(read_at, rec)
