"""The byte stores an input reads through: one small class for each way the bytes are reached.

- :class:`FileStore`: a regular, uncompressed file, read in place at any offset (``pread``);
- :class:`SpooledStore`: a stream (gzip, or a graph a command reads from its end) copied whole to an
  anonymous temporary file (``source._source.spool``) and read like a regular file: ours alone, so
  it never changes;
- :class:`FillingStore`: a stream (stdin, a pipe or FIFO) copied to its spool as far as it is read,
  and read like a regular file up to there (further, the copy reads on);
- :class:`StreamStore`: a stream read once, forward, its first bytes kept to be read again;
- :class:`RecordStore`: a byte range of a file or spool, read as if it were all of it (a
  TensorBoard event file's graph record): offset 0 is its first byte, and the store ends with it.

A store is chosen when the input is opened (``graph._input``) and never changes after; what moves is
only its own reading state (a stream's bytes read so far, the descriptor's offset lent to a child
process). Every store answers the same questions, so :class:`~pbtxt_scan.graph._input.GraphFile`
and the lanes ask them without a branch on the source. (Bytes only: which graph is in them, and
how it is read, is the layers' above.)
"""
from __future__ import annotations

import io
import os
import stat
from typing import Any, BinaryIO, Optional, Tuple

from .._errors import PbtxtError
from ._source import Copier, is_gzip, new_spool, spool as spool_stream
from ._views import view_of

__all__ = ["FileStore", "FillingStore", "RecordStore", "SpooledStore", "StreamStore", "store_of"]

# Regular files are read with pread where the system has it: reads never depend on (or move) the
# descriptor's shared offset, which fp's grep may then use as its own stdin (see parallel._grep).
_PREAD = hasattr(os, "pread")

_CHANGED = "the file changed while it was being read (%s bytes when opened, %s now): run again when it is complete"


class _Store:
    """What every store answers the same way, from its own ``read_at``, ``regular`` and ``size``."""

    __slots__ = ()
    name: str
    regular: bool
    size: Optional[int]
    offset_free: bool  # nothing in this process reads through the descriptor's shared offset (reads are positioned)

    def reader(self, start: int = 0, end: Optional[int] = None) -> BinaryIO:
        """A file-like view of bytes ``[start, end)`` (``end=None``: to the end of the input). It
        keeps its own position, so views, block reads and scans can interleave."""
        return view_of(self, start, end)

    def whole(self) -> Tuple[BinaryIO, int]:
        """The input as a seekable file and its size, for reading backward."""
        if not self.regular:
            raise PbtxtError("cannot read %s backward: pass a file" % self.name, path=self.name)
        return self.reader(), self.size or 0  # (a view: positioned reads, never the descriptor's offset)

    def take_offset(self) -> bool:
        """Lend the descriptor's offset to one child process (a grep or wc reading it itself):
        ``False`` if it is not free or already lent. :meth:`free_offset` gives it back. (Only a
        file's, read by ``pread``, is ever free: :class:`FileStore`.)"""
        return False

    def free_offset(self) -> None:
        pass


def store_of(raw: BinaryIO, name: str, *, spool: bool, head_bytes: int) -> Any:
    """The store that reads ``raw``: in place if it is a regular file, else a stream, spooled
    (``spool``: gzip whole at once, anything else as far as it is read) or read once (then its
    first ``head_bytes`` are read now, to be read again)."""
    st = _regular_stat(raw)
    if st is not None:
        return FileStore(raw, name, st)
    if spool:
        return SpooledStore(raw, name, b"") if is_gzip(raw) else FillingStore(raw, name)
    return StreamStore(raw, name, head_bytes)


class FileStore(_Store):
    """A regular file, read in place at any offset."""

    __slots__ = ("name", "raw", "size", "_stat", "busy")
    regular = True  # readable in place at any offset
    can_seek = True
    spooled = False
    offset_free = _PREAD
    base = 0  # (a RecordStore's first byte in its file)

    def __init__(self, raw: BinaryIO, name: str, st: Optional[Tuple[int, int]]) -> None:
        self.name = name
        self.raw = raw
        self._stat = st
        self.size: Optional[int] = st[0] if st else None
        self.busy = False  # the descriptor's offset is lent to a child process (parallel._grep)

    def take_offset(self) -> bool:
        if not self.offset_free or self.busy:
            return False
        self.busy = True
        return True

    def free_offset(self) -> None:
        self.busy = False

    def read_file_at(self, pos: int, n: int) -> bytes:
        """Up to ``n`` bytes at offset ``pos`` of the whole file (fewer at its end)."""
        try:
            if _PREAD:  # positioned: the descriptor's offset stays free for a grep reading it
                return os.pread(self.raw.fileno(), n, pos)
            self.raw.seek(pos)
            return self.raw.read(n)
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e), path=self.name) from None

    read_at = read_file_at

    def known_size(self) -> Optional[int]:
        return self.size

    def bytes_read(self) -> int:
        return self.size or 0

    def fileno(self) -> int:
        return self.raw.fileno()

    def identity(self) -> Optional[Tuple[str, int, int, int, int]]:
        return _identity(self.raw, "")

    def changed(self) -> Optional[PbtxtError]:
        now = _regular_stat(self.raw)
        if self._stat is not None and now != self._stat:
            return PbtxtError(_CHANGED % (self._stat[0], now[0] if now else "?"), path=self.name)
        return None

    def stat_size(self) -> Any:
        return self._stat[0] if self._stat else "?"

    def close(self, owned: bool) -> None:
        if owned:
            self.raw.close()


class SpooledStore(FileStore):
    """A stream copied (``head`` first, then the rest of it) to a spool, read like a regular file."""

    __slots__ = ("stream",)
    spooled = True

    def __init__(self, stream: BinaryIO, name: str, head: bytes) -> None:
        f = spool_stream(stream, name, head)
        size = os.fstat(f.fileno()).st_size
        super().__init__(f, name, (size, 0))
        self.stream = stream

    def identity(self) -> Optional[Tuple[str, int, int, int, int]]:
        return None  # (no cache is keyed on a spool)

    def changed(self) -> Optional[PbtxtError]:
        return None  # (our own spool: nothing else writes it)

    def close(self, owned: bool) -> None:
        self.raw.close()  # the spool: ours whatever the input (and gone once closed)
        if owned:
            self.stream.close()


class FillingStore(FileStore):
    """A stream copied to its spool as far as it is read: a read past the copy's end reads on from
    the stream (a :data:`~pbtxt_scan.source._source.SPOOL_CHUNK` at a time) and nothing further.
    So fp on ``cat F |`` costs the bytes up to its answer and its byte searches' (grep is fed from
    here, ``parallel._grep``), not a copy of the whole stream first; what is left of the stream is
    not read (the writer gets SIGPIPE, as ``head`` gives it). ``size`` reads the stream to its end
    (bp's backward reading, a search to the end, a split: the whole spool, as
    :class:`SpooledStore`'s). Reads may come from several threads (a search's feeder reads on
    while the scan reads behind it)."""

    __slots__ = ("stream", "_copier", "_eof", "_error", "_lock")
    spooled = True
    offset_free = False  # (the spool holds only what was read: grep is fed through a pipe, by read_at)

    def __init__(self, stream: BinaryIO, name: str) -> None:
        import threading

        self.name = name
        self.raw = new_spool(name)
        self._stat = None
        self.busy = False
        self.stream = stream
        self._copier = Copier(stream, self.raw, name, bare=True)
        self._eof = False
        self._error: Optional[PbtxtError] = None  # (the stream's read or the spool's write failed: said each time)
        self._lock = threading.Lock()

    @property
    def size(self) -> int:  # (what asks for it reads the stream to its end)
        self._fill(-1)
        return self._copier.stored

    @size.setter
    def size(self, value: Optional[int]) -> None:
        raise AttributeError("a filling store's size is the stream's")

    def _fill(self, upto: int) -> None:
        """Copy the stream to the spool until it holds byte ``upto - 1`` (``-1``: all of it)."""
        if self._eof or 0 <= upto <= self._copier.stored:
            return
        with self._lock:
            if self._error is not None:
                raise self._error
            try:
                while not self._eof and (upto < 0 or self._copier.stored < upto):
                    self._eof = not self._copier.more()
            except PbtxtError as e:
                self._error = e
                raise

    def read_file_at(self, pos: int, n: int) -> bytes:
        self._fill(pos + n)
        if _PREAD:
            return FileStore.read_file_at(self, pos, n)
        with self._lock:  # (seek and read: one thread's at a time)
            return FileStore.read_file_at(self, pos, n)

    read_at = read_file_at

    def known_size(self) -> Optional[int]:
        return self._copier.stored if self._eof else None

    def bytes_read(self) -> int:
        return self._copier.stored

    def take_offset(self) -> bool:
        return False

    def identity(self) -> None:
        return None

    def changed(self) -> None:
        return None

    def close(self, owned: bool) -> None:
        self.raw.close()
        if owned:
            self.stream.close()


class StreamStore(_Store):
    """A stream read once, forward: its first bytes, or the next ones; never a second look further back."""

    __slots__ = ("name", "raw", "_head", "_stored", "_eof")
    regular = False
    can_seek = False
    spooled = False
    offset_free = False
    base = 0
    size = None

    def __init__(self, raw: BinaryIO, name: str, head_bytes: int) -> None:
        self.name = name
        self.raw = raw
        self._eof = False
        self._head = self._read_raw(head_bytes)  # the first bytes, kept to be read again from 0
        self._stored = len(self._head)  # the bytes read so far

    def read_file_at(self, pos: int, n: int) -> bytes:
        if pos < len(self._head):
            out = self._head[pos : pos + n]
            if len(out) == n or self._stored > len(self._head):
                return out
            return out + self.read_file_at(len(self._head), n - len(out))
        if pos != self._stored:
            raise PbtxtError("cannot read %s a second time: pass a file" % self.name, path=self.name)
        data = self._read_raw(n)
        self._stored += len(data)
        return data

    read_at = read_file_at

    def _read_raw(self, n: int) -> bytes:
        if self._eof:
            return b""
        try:
            data = self.raw.read(n)
        except PbtxtError as e:
            raise e.with_path(self.name) from None
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e), path=self.name) from None
        if not data:
            self._eof = True
        return data

    def spooled_from_here(self) -> SpooledStore:
        """This stream as a spooled one (only its first bytes were read yet)."""
        assert self._stored == len(self._head)
        return SpooledStore(self.raw, self.name, self._head)

    def known_size(self) -> Optional[int]:
        return self._stored if self._eof else None

    def bytes_read(self) -> int:
        return self._stored

    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno: %s is a stream" % self.name)

    def identity(self) -> None:
        return None

    def changed(self) -> None:
        return None

    def close(self, owned: bool) -> None:
        if owned:
            self.raw.close()


class RecordStore(_Store):
    """Bytes ``[start, end)`` of ``file`` (a :class:`FileStore` or :class:`SpooledStore`) read as
    if they were all of it: offset 0 is ``start`` (a graph in an event file: the lanes, the byte
    searches and the caches see that graph alone). Nothing is copied."""

    __slots__ = ("file", "name", "base", "size")
    size: int  # (always known: the record's length)
    regular = True
    can_seek = True
    offset_free = False  # (a search must not read the descriptor to the file's end)

    def __init__(self, file: FileStore, start: int, end: int) -> None:
        self.file = file
        self.name = file.name
        self.base = start
        self.size = end - start

    @property
    def spooled(self) -> bool:
        return self.file.spooled

    def read_at(self, pos: int, n: int) -> bytes:
        return self.file.read_file_at(self.base + pos, max(0, min(n, self.size - pos)))

    @property
    def read_file_at(self) -> Any:
        return self.file.read_file_at

    def known_size(self) -> int:
        return self.size

    def bytes_read(self) -> int:
        return self.size

    def fileno(self) -> int:
        return self.file.fileno()

    def identity(self) -> Optional[Tuple[str, int, int, int, int]]:
        if self.file.spooled:
            return None
        return _identity(self.file.raw, "@%d+%d" % (self.base, self.size))

    def changed(self) -> Optional[PbtxtError]:
        if self.file.spooled:
            return None
        now = _regular_stat(self.file.raw)  # (an event file the training still writes grows: the graph read stays as it was)
        if now is None or now[0] < self.base + self.size:
            return PbtxtError(_CHANGED % (self.file.stat_size(), now[0] if now else "?"), path=self.name)
        return None

    def close(self, owned: bool) -> None:
        self.file.close(owned)


def _identity(raw: Any, suffix: str) -> Optional[Tuple[str, int, int, int, int]]:
    """(real path + ``suffix``, size, mtime, inode, ctime) of a regular file that has a path."""
    path = getattr(raw, "name", None)
    if not isinstance(path, str):
        return None
    try:
        st = os.fstat(raw.fileno())
    except OSError:
        return None
    return os.path.realpath(path) + suffix, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns


def _regular_stat(f: Any) -> Optional[Tuple[int, int]]:
    """(size, mtime) of a regular file opened as ``f``; ``None`` for streams and gzip."""
    if not isinstance(f, io.BufferedReader) and not isinstance(f, io.FileIO):
        return None  # (a gzip reader, stdin's wrapper)
    try:
        st = os.fstat(f.fileno())
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns
