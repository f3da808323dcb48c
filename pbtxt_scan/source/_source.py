"""Opening inputs: a path, ``-`` for stdin, gzip files; read-only, in bounded chunks.

The tool never writes to, renames or locks what it reads: files are opened ``rb`` and nothing else.
"""
from __future__ import annotations

import errno
import functools
import io
import os
import stat
import sys
import zlib
from typing import TYPE_CHECKING, BinaryIO, Iterator, Optional, Tuple, Union, cast

from .._errors import PbtxtError

DEFAULT_CHUNK = 1 << 20  # 1 MiB: large enough for C-speed scanning, small enough for a flat RSS
# Copying a stream to its spool: few system calls a GB (a pipe gives 64 KiB a read, so one
# readinto loops inside C), and still a small fixed part of the RSS.
SPOOL_CHUNK = 4 << 20
_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)
BOM = b"\xef\xbb\xbf"
CONTROL = bytes(range(9)) + bytes(range(14, 32))  # the control bytes text format never holds (tab to CR aside)
# A pipe's buffer, raised from Linux's 64 KiB to 1 MiB (the default /proc/sys/fs/pipe-max-size): in
# 64 KiB the writer (`cat`, `gzip -dc`) and this reader take turns 16,000 times a GB; measured on
# 1 GB through `cat |`, 2.6 s to read it all against 0.4 s.
PIPE_BYTES = 1 << 20
_F_SETPIPE_SZ = 1031  # (fcntl names it only from Python 3.10)

PathLike = Union[str, "os.PathLike[str]"]

if TYPE_CHECKING:  # (for the type checker only: typing.Protocol is Python 3.8's)
    from typing import Protocol  # novm

    from _typeshed import WriteableBuffer

    class Reads(Protocol):
        """What a stream is read through: ``read(n)`` (stdin's buffer, or what a test put there)."""

        def read(self, __n: int = ...) -> bytes: ...


def display_name(path: PathLike) -> str:
    return "<stdin>" if str(path) == "-" else str(path)


def open_binary(path: PathLike) -> Tuple[BinaryIO, str]:
    """Open ``path`` for reading bytes (gunzipping if it is gzip). Errors become :class:`PbtxtError`."""
    name = display_name(path)
    if str(path) == "-":
        return _stdin(), name
    else:
        try:
            if os.path.isdir(path):
                raise PbtxtError("is a directory, not a file", path=name)
            raw = open(path, "rb")  # noqa: SIM115 - closed by the caller
        except PbtxtError:
            raise
        except FileNotFoundError:
            raise PbtxtError("no such file", path=name) from None
        except PermissionError:
            raise PbtxtError("permission denied (cannot read the file)", path=name) from None
        except OSError as e:
            raise PbtxtError("cannot open: %s" % (e.strerror or e), path=name) from None
    _widen_pipe(raw)  # (a named pipe, or `<(...)`'s /dev/fd/N)
    return gunzipped(raw, name), name


def gunzipped(raw: BinaryIO, name: str) -> BinaryIO:
    """``raw``, or its gzip content if it starts as gzip does (told by a peek: nothing is consumed)."""
    if _peek(raw, 2) == b"\x1f\x8b":
        # (A raw stream with BinaryIO's reads. typing's BinaryIO is a class, not a protocol, and io's
        # streams do not derive from it: the cast says what the type system cannot.)
        return cast(BinaryIO, _GzipReader(raw, name))
    return raw


def is_gzip(raw: object) -> bool:
    """Whether ``raw`` is gzip unpacked (:func:`gunzipped`'s, or stdin's in its buffer)."""
    return isinstance(raw, _GzipReader) or isinstance(getattr(raw, "raw", None), _GzipReader)


def _widen_pipe(f: object) -> None:
    """Raise the buffer of ``f`` to :data:`PIPE_BYTES` if it is a pipe; anything else (a file, a
    terminal, a system without the call, a pipe-max-size set lower) keeps what it has."""
    fileno = getattr(f, "fileno", None)
    if fileno is None:
        return
    try:
        fd = fileno()
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            import fcntl

            fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", _F_SETPIPE_SZ), PIPE_BYTES)
    except (AttributeError, ImportError, OSError, ValueError, io.UnsupportedOperation):
        pass


def _stdin() -> BinaryIO:
    """Standard input, opened once per process with a peekable buffer: the format is detected
    from its first bytes, and later readers must still get those bytes. A closed stdin (``<&-``:
    Python then has no ``sys.stdin``) is no input."""
    if sys.stdin is None:
        raise PbtxtError("no input on stdin (it is closed): give a FILE", path=display_name("-"))
    return _buffered_stdin(getattr(sys.stdin, "buffer", sys.stdin))  # (a test harness may swap sys.stdin)


@functools.lru_cache(maxsize=1)
def _buffered_stdin(src: Reads) -> BinaryIO:
    _widen_pipe(src)
    buffered: BinaryIO = io.BufferedReader(_ReadOnly(src), 1 << 16)
    if _peek(buffered, 2) == b"\x1f\x8b":
        buffered = io.BufferedReader(_GzipReader(buffered, "<stdin>"), 1 << 16)
    return buffered


class _ReadOnly(io.RawIOBase):
    """Any object with ``read`` as a raw stream (what ``io.BufferedReader`` wants)."""

    def __init__(self, src: Reads) -> None:
        self._src = src

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return cast(BinaryIO, self._src).fileno()  # (stdin's: AttributeError, io.UnsupportedOperation for a test's)

    def readinto(self, b: WriteableBuffer) -> int:
        # (straight into the caller's buffer: a spool copies 4 MiB at a time; one read of the source,
        # as a raw stream reads: what a paused writer has written is not held back to fill it)
        into = getattr(self._src, "readinto1", None) or getattr(self._src, "readinto", None)
        if into is not None:
            return into(b) or 0
        view = memoryview(b)
        data = self._src.read(len(view))
        view[: len(data)] = data
        return len(data)


def _peek(f: BinaryIO, n: int) -> bytes:
    if hasattr(f, "peek"):
        try:
            return f.peek(n)[:n]
        except (OSError, ValueError):
            return b""
    return b""


class _GzipReader(io.RawIOBase):
    """gzip with corrupt-stream errors turned into :class:`PbtxtError`."""

    def __init__(self, raw: BinaryIO, name: str) -> None:
        import gzip  # (here: a regular file's reading never loads it)

        self._gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self._raw = raw
        self._name = name

    def readable(self) -> bool:
        return True

    def readinto(self, b: WriteableBuffer) -> int:
        view = memoryview(b)
        data = self.read(len(view))
        view[: len(data)] = data
        return len(data)

    def read(self, n: int = -1) -> bytes:
        try:
            return self._gz.read(n)
        except (OSError, EOFError, zlib.error) as e:
            raise PbtxtError("corrupt gzip data: %s" % e, path=self._name) from None

    def close(self) -> None:
        self._gz.close()
        self._raw.close()
        super().close()


def spool(src: BinaryIO, name: str, head: bytes = b"") -> BinaryIO:
    """``head`` and then the rest of the stream ``src``, copied to an anonymous temporary file in
    ``tempfile.gettempdir()`` (``TMPDIR``), positioned at 0: a stream read like a regular file.

    The file has no name on disk from the start where the system allows it (Linux, POSIX), so
    nothing is left behind by an error, Ctrl-C or a kill; it is gone once closed. A full folder is
    one :class:`PbtxtError` that names it and says how to pick another.
    """
    out = new_spool(name)
    try:
        copier = Copier(src, out, name)
        copier.put(head)
        while copier.more():
            pass
        out.seek(0)
    except BaseException:
        out.close()
        raise
    return out


def new_spool(name: str) -> BinaryIO:
    """An empty spool for the stream ``name`` (see :func:`spool`)."""
    import tempfile  # (here: only a stream is spooled)

    try:
        return _temporary()
    except OSError as e:
        raise PbtxtError(
            "cannot make a temporary file in %s to read the input through: %s (set TMPDIR to another folder)"
            % (tempfile.gettempdir(), e.strerror or e),
            path=name,
        ) from None


def _temporary() -> BinaryIO:
    """An unbuffered (``FileIO``: reads go straight to ``pread``) anonymous temporary file."""
    import tempfile

    return tempfile.TemporaryFile(prefix="pbtxt-scan-spool-", buffering=0)


class Copier:
    """A stream copied to its spool a read at a time (:meth:`more`): ``stored`` bytes so far. A
    read or write error is one :class:`PbtxtError` (a full folder says how to pick another)."""

    __slots__ = ("src", "out", "name", "stored", "_view", "_bare")

    def __init__(self, src: BinaryIO, out: BinaryIO, name: str, *, bare: bool = False) -> None:
        self.src = src
        self.out = out
        self.name = name
        self.stored = 0
        self._view = memoryview(bytearray(SPOOL_CHUNK))
        # ``bare``: after the first read (which takes what the stream's buffer holds), read its
        # descriptor itself: a read that waits there (a writer that pauses) holds no lock of a
        # buffered reader, which a thread left waiting at the interpreter's exit would abort it on.
        self._bare = bare

    def more(self) -> int:
        """Copy the stream's next read (up to :data:`SPOOL_CHUNK` bytes: what one read gives, not
        waiting for more to fill it; a writer that pauses is not waited for); 0 at its end."""
        src = self.src
        readinto = getattr(src, "readinto1", None) or getattr(src, "readinto", None)
        try:
            if readinto is not None:
                n = readinto(self._view)
                data: "bytes | memoryview" = self._view[:n] if n else b""
            else:
                data = src.read(SPOOL_CHUNK)
        except PbtxtError as e:
            raise e.with_path(self.name) from None
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e), path=self.name) from None
        self.put(data)
        if self._bare:
            self._bare = False
            try:
                self.src = cast(BinaryIO, io.FileIO(src.fileno(), "rb", closefd=False))
            except (AttributeError, OSError, ValueError):  # (io.UnsupportedOperation: no descriptor)
                pass
        return len(data)

    def put(self, data: "bytes | memoryview") -> None:
        try:
            while data:  # (a raw file may write less than it was given)
                n = self.out.write(data)
                self.stored += n
                data = data[n:]
        except OSError as e:
            import tempfile

            full = e.errno in _FULL
            why = "no room left in the temporary folder" if full else "cannot write to the temporary folder"
            raise PbtxtError(
                "%s %s after copying %d MB of the input there (%s): set TMPDIR to a folder with room%s"
                % (why, tempfile.gettempdir(), self.stored >> 20, e.strerror or e, ", or pass a file" if self.name == "<stdin>" else ""),
                path=self.name,
            ) from None


def iter_chunks(f: BinaryIO, size: int = DEFAULT_CHUNK) -> Iterator[bytes]:
    while True:
        try:
            data = f.read(size)
        except PbtxtError:
            raise
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e)) from None
        if not data:
            return
        yield data


def looks_binary(head: bytes) -> Optional[str]:
    """Why ``head`` (the first bytes of a file) is not protobuf text format, or ``None`` if it may be.
    (Binary graphs are told apart before this is asked: ``_wire.sniff``.)"""
    if not head:
        return None
    if head.startswith(BOM):
        head = head[3:]
    sample = head[:4096]
    nul = sample.find(b"\x00")
    if nul >= 0:
        if not is_text(sample[:nul]):
            return "this looks like a binary file (it has NUL bytes), not protobuf text format"
        return None  # a NUL after clean text (a damaged text file): the lexer gives its line
    bad = len(sample) - len(sample.translate(None, CONTROL))
    if bad > len(sample) // 100 + 1:
        return "this looks like a binary file (control bytes), not protobuf text format"
    return None


def is_text(prefix: bytes) -> bool:
    """Whether ``prefix`` is non-empty UTF-8 text without control bytes (a cut last character is fine)."""
    if not prefix or len(prefix.translate(None, CONTROL)) != len(prefix):
        return False
    try:
        prefix.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.start >= len(prefix) - 3 and e.reason == "unexpected end of data"
    return True
