"""TFRecord framing of TensorBoard event files (``events.out.tfevents.*``), without TensorFlow.

Each record: u64 little-endian length, masked CRC-32C of the 8 length bytes, ``length`` data bytes,
masked CRC-32C of the data. CRC-32C is Castagnoli (reflected polynomial 0x82F63B78); the mask is
``((c >> 15 | c << 17) + 0xa282ead8) mod 2**32`` (TensorFlow's ``tensorflow/core/lib/hash/crc32c.h``
``Mask`` and ``tensorflow/core/lib/io/record_writer.cc``).

- ``iter_records(f, path=None) -> Iterator[Record]``: the records' positions in file order.
  The data is skipped by a seek past the length, never read; every length CRC is checked.
- ``read_record(f, record, path=None) -> bytes``: one record's data, its data CRC checked.

A bad CRC raises :class:`~pbtxt_scan._errors.PbtxtError` naming the record's offset; a record cut
short at the end of the file raises its own message (the file may still be being written).
"""
from __future__ import annotations

import os
import struct
from typing import BinaryIO, Iterator, List, NamedTuple, Optional

from .._errors import PbtxtError

_POLY = 0x82F63B78
_MASK_DELTA = 0xA282EAD8
HEADER = 12  # u64 length + u32 masked CRC of it
FOOTER = 4  # u32 masked CRC of the data


def _table() -> List[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _table()


def crc32c(data: bytes, crc: int = 0) -> int:
    """CRC-32C (Castagnoli) of ``data``, table-driven."""
    table = _TABLE
    c = crc ^ 0xFFFFFFFF
    for b in data:
        c = table[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + _MASK_DELTA) & 0xFFFFFFFF


class Record(NamedTuple):
    """One record: ``offset`` of its header, ``data_start`` and ``length`` of its data, its number."""

    index: int
    offset: int
    data_start: int
    length: int
    data_crc: int

    @property
    def end(self) -> int:
        return self.data_start + self.length + FOOTER


def _size(f: BinaryIO) -> int:
    try:
        return os.fstat(f.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        here = f.tell()
        size = f.seek(0, os.SEEK_END)
        f.seek(here)
        return size


def iter_records(f: BinaryIO, path: Optional[str] = None) -> Iterator[Record]:
    """Every record's position, in file order, the data skipped by seeking."""
    size = _size(f)
    offset = 0
    index = 0
    while offset < size:
        f.seek(offset)
        head = f.read(HEADER)
        if len(head) < HEADER:
            raise PbtxtError(
                "record %d is cut short: %d of its 12 header bytes at the end of the file "
                "(is the file still being written?)" % (index, len(head)),
                path=path, offset=offset)
        length, length_crc = struct.unpack("<QI", head)
        if masked_crc(head[:8]) != length_crc:
            raise PbtxtError(
                "record %d: bad length CRC (not a TFRecord event file, or a damaged one)" % index,
                path=path, offset=offset)
        data_start = offset + HEADER
        end = data_start + length + FOOTER
        if end > size:
            raise PbtxtError(
                "record %d is cut short: it needs %d bytes, the file ends after %d "
                "(is the file still being written?)" % (index, length + FOOTER + HEADER, size - offset),
                path=path, offset=offset)
        f.seek(data_start + length)
        (data_crc,) = struct.unpack("<I", f.read(FOOTER))
        yield Record(index, offset, data_start, length, data_crc)
        offset = end
        index += 1


def read_record(f: BinaryIO, record: Record, path: Optional[str] = None) -> bytes:
    """One record's data, its CRC checked."""
    f.seek(record.data_start)
    data = f.read(record.length)
    if len(data) < record.length or masked_crc(data) != record.data_crc:
        raise PbtxtError("record %d: bad data CRC" % record.index, path=path, offset=record.offset)
    return data
