"""File-like views of a byte store (``_store``: what a :class:`~pbtxt_scan.graph._input.GraphFile` reads
through): a byte range with a position of its own (so scans, block reads and rescans interleave on
one open file), some bytes before a stream, and a file descriptor's range read with ``os.pread`` (the
workers' chunks)."""
from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Optional, cast

from ._source import DEFAULT_CHUNK

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer


class View(io.RawIOBase):
    """Bytes ``[start, end)`` of a byte store, with a position of its own."""

    def __init__(self, g: Any, start: int, end: Optional[int]) -> None:  # g: a store (``_store`` imports us)
        self._g = g
        self._start = start
        self._pos = start
        self._end = end

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._g.can_seek

    def seek(self, offset: int, whence: int = 0) -> int:
        """Any position of a seekable input; the end only where the size is known. Past the end
        the position stops at it (what a reader checks to tell a truncated field)."""
        if not self._g.can_seek:
            raise io.UnsupportedOperation("seek")
        if whence == 0:
            pos = self._start + offset
        elif whence == 1:
            pos = self._pos + offset
        else:
            end = self._end if self._end is not None else self._g.known_size()
            if whence != 2 or end is None:
                raise io.UnsupportedOperation("seek to the end of a stream not read to its end")
            pos = end + offset
        size = self._g.known_size()
        if size is not None and pos > size:
            pos = max(size, self._start)
        self._pos = pos
        return pos - self._start

    def tell(self) -> int:
        return self._pos - self._start

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            return b"".join(iter(lambda: self.read(DEFAULT_CHUNK), b""))
        if self._end is not None:
            n = min(n, self._end - self._pos)
        if n <= 0:
            return b""
        data = self._g.read_at(self._pos, n)
        self._pos += len(data)
        return data

    def readinto(self, b: WriteableBuffer) -> int:
        view = memoryview(b)
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)


class Prefixed(io.RawIOBase):
    """Some bytes, then a stream."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self._head = head
        self._rest = rest

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._head:
            out, self._head = self._head, b""
            return out
        return self._rest.read(n)


# A view as the file every reader takes: a raw stream with BinaryIO's reads (read, readinto, seek,
# tell). typing's BinaryIO is a class, not a protocol, and io's streams are not its subclasses: the
# cast says what the type system cannot. (Once here, not at each view made: a block read makes one.)
view_of = cast("Callable[[Any, int, Optional[int]], BinaryIO]", View)


class PRead:
    """Bytes ``[start, end)`` of a file descriptor, read with ``os.pread`` (no shared offset)."""

    def __init__(self, fd: int, start: int, end: int) -> None:
        self._fd = fd
        self._start = start
        self._pos = start
        self._end = end

    def read(self, n: int = -1) -> bytes:
        left = self._end - self._pos
        if n is None or n < 0 or n > left:
            n = left
        if n <= 0:
            return b""
        data = os.pread(self._fd, n, self._pos)
        self._pos += len(data)
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            raise io.UnsupportedOperation("seek")
        self._pos = self._start + offset
        return offset

    def tell(self) -> int:
        return self._pos - self._start
