"""The processes behind fp's byte search: ``grep -E`` over a range of the one open
:class:`~pbtxt_scan.graph._input.GraphFile` (``g``: its descriptor read by grep itself, or a pipe a feeder thread fills with
``os.sendfile``), a long rest cut into parts searched at once, one a usable core; each match as
``(offset, text)``. Started by :func:`_spawn`, through the one module that starts processes (``parallel._pool``)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Tuple

from ._cores import usable_cores
from ._pool import spawn

if TYPE_CHECKING:
    import subprocess
    import threading



class _SearchFailed(Exception):
    pass


_SPLIT = 64 << 20  # a rest longer than this is cut into parts searched at once, one a core
_MAX_PARTS = 16
HERE = 1 << 20  # a range up to this is searched in this process, when its pattern allows (_grep_here)
# grep's address space, at most (Linux): grep holds a line whole, and a graph may hold a line of
# hundreds of MB (a large Const's tensor_content). Past this grep says "memory exhausted" (exit 2),
# the search fails (_SearchFailed) and its caller reads blocks instead. grep needs about 4 MB of it
# (a pattern of 100,000 names needs hundreds: such a search fails too, and is read for instead).
MEMORY = 64 << 20


ERE = ("-E",)  # (the usual search; a neighbourhood's hop gives ("-F", "-n"): fixed strings, with line numbers)


def _spawn(grep: str, pattern: str, stdin: int, opts: Tuple[str, ...] = ERE) -> "subprocess.Popen[bytes]":
    """``grep -E`` (or ``opts``) for ``pattern`` reading ``stdin``, printing each match's byte offset
    and text (bytes as bytes: ``LC_ALL=C``); :class:`_SearchFailed` if it cannot start."""
    args = [grep, "-a", "-b", "-o"] + list(opts) + ["-e", pattern]
    try:
        p = spawn(args, stdin=stdin, env=c_locale())
    except (OSError, ValueError):  # (ValueError: a NUL in the pattern, which no argument can hold)
        raise _SearchFailed("grep did not start") from None
    _cap(p.pid)
    return p


def _cap(pid: int) -> None:
    """grep's address space held to :data:`MEMORY` (Linux), set just after it starts: before its
    first read in practice (its loader takes about a millisecond), and anyway before a long line
    has grown its buffer far. Not as the child starts (``preexec_fn``): that forks where Python
    would vfork, 10 times slower (20 ms a search beside a 200 MB process)."""
    try:
        import resource
    except ImportError:  # (Windows)
        return
    prlimit = getattr(resource, "prlimit", None)
    if prlimit is not None:
        try:
            prlimit(pid, resource.RLIMIT_AS, (MEMORY, MEMORY))
        except (OSError, ValueError):  # (gone already, or a hard limit lower: left as it is)
            pass


def c_locale() -> Dict[str, str]:
    """The environment grep and wc run in: bytes as bytes (``LC_ALL=C``), and where to find the
    program's libraries; nothing else of ours (a ``GREP_OPTIONS`` or ``GREP_COLORS`` would change
    what an old grep prints, and copying the whole environment cost 0.25 ms a search)."""
    env = {k: os.environ[k] for k in ("PATH", "LD_LIBRARY_PATH") if k in os.environ}
    env["LC_ALL"] = "C"
    return env


def _grep(
    grep: str, g: Any, offset: int, pattern: str, *, split: int = _SPLIT, cores: Optional[int] = None,
    opts: Tuple[str, ...] = ERE,
) -> Iterator[Tuple[int, bytes]]:
    """grep's matches from ``offset`` on, in order. A long rest is cut at line starts into parts
    (at least ``split`` bytes each, at most one a usable core, or ``cores``) searched by processes
    started together; each part's matches come after the previous part's. A match never spans
    lines, so none is lost at a cut. All start before any is read: waiting for one part's first
    hit before starting the next ran them one after the other whenever a part had none. A stream
    read as far as asked (its size not known yet) is one part, fed from it as grep reads on."""
    size = g.known_size()
    if size is None:
        yield from _grep_range(grep, g, offset, None, pattern, opts)
        return
    here = _here(g, offset, size, pattern, opts)
    if here is not None:
        yield from here
        return
    parts = max(1, min(usable_cores() if cores is None else cores, _MAX_PARTS, (size - offset) // split))
    cuts = [offset]
    for k in range(1, parts):
        mid = offset + (size - offset) * k // parts
        nl = g.read_at(mid, 1 << 16).find(b"\n")
        if nl >= 0 and cuts[-1] < mid + nl + 1 < size:
            cuts.append(mid + nl + 1)
    cuts.append(size)
    runs: List[_GrepRun] = []
    try:
        # The last part first: it runs to the end, so it may read the descriptor itself.
        for lo, hi in reversed(list(zip(cuts, cuts[1:]))):
            runs.insert(0, _GrepRun(grep, g, lo, hi, pattern, opts))
        for run in runs:
            yield from run
            run.close()
    finally:
        for run in runs:
            run.close()


class _GrepRun:
    """One grep over bytes ``[start, end)`` of the file, started at once; iterating yields its
    matches as ``(offset, text)``. grep never opens the file: it reads the open descriptor itself
    (a range to the end) or a pipe this process fills from it."""

    __slots__ = ("_g", "_start", "_feeder", "_direct", "_p", "_failed")

    def __init__(
        self, grep: str, g: Any, start: int, end: Optional[int], pattern: str, opts: Tuple[str, ...] = ERE,
    ) -> None:
        import threading

        if getattr(g.lane, "grep_failed", False):  # (a search of this file failed: the next would too)
            raise _SearchFailed("a search of the file failed before")
        self._g = g
        self._start = start
        self._feeder: Optional["threading.Thread"] = None
        self._failed: List[BaseException] = []  # (the feeder's read failed: grep saw less than asked)
        # (``end`` None: to the end of a stream read as far as asked, whose size is not known yet)
        self._direct = g.offset_free and end is not None and end >= (g.size or 0) and g.take_offset()
        if self._direct:  # (one child at a time may own the descriptor's offset: others take a pipe)
            # To the end of the file: grep reads the open descriptor itself from `start` (our own
            # reads are positioned, so its moving offset is no one else's); no copy through a
            # pipe, which cost a third of the search (0.36 s a GB).
            fd = g.fileno()
            os.lseek(fd, start, os.SEEK_SET)
            try:
                self._p = _spawn(grep, pattern, fd, opts)
            except _SearchFailed:
                g.free_offset()
                raise
            return
        r, w = os.pipe()
        if end is None:
            _widen(w)
        try:
            # (a stream's hits as grep finds them: its writer may pause, and the next 4 KiB of hits wait for it)
            self._p = _spawn(grep, pattern, r, opts + ("--line-buffered",) if end is None else opts)
        except _SearchFailed:
            os.close(w)
            raise
        finally:
            os.close(r)
        self._feeder = threading.Thread(target=_feed, args=(g, start, end, w, self._failed), daemon=True)
        self._feeder.start()

    def __iter__(self) -> Iterator[Tuple[int, bytes]]:
        p = self._p
        assert p.stdout is not None
        try:
            for raw in p.stdout:
                off, _, text = raw.partition(b":")
                if not off.isdigit():
                    raise _SearchFailed("grep said %r" % raw[:80])
                yield self._start + int(off), text.rstrip(b"\n")
            if p.wait() not in (0, 1):  # (2: "memory exhausted", a line past MEMORY, among others)
                raise _SearchFailed("grep failed")
            if self._feeder is not None:
                self._feeder.join()
            if self._failed:
                raise _SearchFailed("the input could not be read to the search's end")
        except _SearchFailed:
            # No grep on this file again: each would read the long line up to MEMORY and fail
            # too (fp asks a hundred searches of a graph; each caller reads blocks instead).
            self._g.lane.grep_failed = True
            raise

    def close(self) -> None:
        """Stop grep (if it still runs) and its feeder; give the descriptor back. Idempotent."""
        p = self._p
        if p.poll() is None:
            p.kill()
        p.wait()
        if p.stdout is not None:
            p.stdout.close()
        if self._feeder is not None:
            # (a stream's feeder may wait on the stream itself, for its writer's next bytes: a writer
            # that pauses is not waited for, the feeder is left to meet the closed pipe then, or to
            # end with the process; it waits on the bare descriptor, holding no buffered reader's lock)
            self._feeder.join(0.1 if self._g.known_size() is None else None)
            self._feeder = None
        if self._direct:
            self._g.free_offset()
            self._direct = False


def _grep_range(
    grep: str, g: Any, start: int, end: Optional[int], pattern: str, opts: Tuple[str, ...] = ERE
) -> Iterator[Tuple[int, bytes]]:
    """grep's matches in bytes ``[start, end)`` of the file, as offsets."""
    here = None if end is None else _here(g, start, end, pattern, opts)
    if here is not None:
        yield from here
        return
    run = _GrepRun(grep, g, start, end, pattern, opts)
    try:
        yield from run
    finally:
        run.close()


def _here(g: Any, start: int, end: int, pattern: str, opts: Tuple[str, ...]) -> Optional[Iterator[Tuple[int, bytes]]]:
    """The matches in bytes ``[start, end)``, found in this process (a small range, a pattern whose
    meaning is certain: ``_grep_here``), or ``None``: grep searches."""
    if end - start > HERE:
        return None
    from ._grep_here import compiled, search

    rx = compiled(pattern, opts)
    if rx is None:
        return None
    return search(g.read_at(start, end - start) if end > start else b"", start, rx)


def _feed(g: Any, start: int, end: Optional[int], w: int, failed: List[BaseException]) -> None:
    """Write bytes ``[start, end)`` of the file into the pipe ``w`` and close it: ``sendfile`` at
    explicit offsets where the system has it (the file's own position is left alone), else
    positioned reads; stop quietly when the reader has gone. A stream read as far as asked (its
    size not known) is read on as grep reads (``end`` None: to its end); a read that fails is
    put in ``failed`` (the search then fails: what grep did not see cannot be told)."""
    if g.known_size() is None:
        _feed_stream(g, start, end, w, failed)
        return
    fd = g.fileno()
    assert end is not None
    off, end = start + g.base, end + g.base  # (a graph inside an event file: its bytes from ``base`` on)
    try:
        while off < end:
            n = min(1 << 20, end - off)
            try:
                n = os.sendfile(w, fd, off, n)
            except BrokenPipeError:
                return
            except (AttributeError, OSError):
                chunk = os.pread(fd, n, off) if hasattr(os, "pread") else g.read_at(off - g.base, n)
                n = os.write(w, chunk) if chunk else 0
            if n <= 0:
                return
            off += n
    except OSError:
        return
    finally:
        os.close(w)


def _widen(fd: int) -> None:
    """A pipe's buffer raised to 1 MiB (the default pipe-max-size; Linux, where it can): in 64 KiB,
    grep and the feeder of a stream take turns 16,000 times a GB (``source._source.PIPE_BYTES``)."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (ImportError, OSError):
        pass


def _feed_stream(g: Any, off: int, end: Optional[int], w: int, failed: List[BaseException]) -> None:
    try:
        while end is None or off < end:
            # What the stream has given (or its next read, a byte asked): a pause of its writer is
            # not waited out to fill a MiB, so grep sees what came, and a closed pipe is met soon.
            n = min(1 << 20, max(1, g.bytes_read() - off))
            chunk = g.read_at(off, n if end is None else min(n, end - off))
            if not chunk:
                return
            view = memoryview(chunk)
            while view:
                view = view[os.write(w, view):]
            off += len(chunk)
    except BrokenPipeError:
        return
    except Exception as e:  # (a read error, the spool's folder full: said by the reads that follow)
        failed.append(e)
    finally:
        os.close(w)


def newlines_to_end(g: Any, start: int = 0) -> Optional[int]:
    """The newlines from byte ``start`` to the end of the file, counted by ``wc -l`` reading the
    open descriptor itself (0.17 s a GB where Python's ``bytes.count`` takes 0.65 s); ``None``
    where it cannot (no ``wc``, not a regular file, a graph inside another file, the descriptor
    in use)."""
    import shutil

    wc = shutil.which("wc")
    if wc is None or not g.take_offset():
        return None
    fd = g.fileno()
    try:
        os.lseek(fd, start, os.SEEK_SET)
        p = spawn([wc, "-l"], stdin=fd, env=c_locale())
        out = p.communicate()[0]
    except OSError:
        return None
    finally:
        g.free_offset()
    words = out.split()
    return int(words[0]) if p.returncode == 0 and words and words[0].isdigit() else None


def ere(s: str) -> str:
    """``s`` as a POSIX extended regex that matches it literally."""
    return "".join("\\" + c if c in ".[]()*+?{}|^$\\" else c for c in s)


def folded(s: str) -> str:
    """``s`` as a POSIX extended regex that matches it in any case (ASCII letters)."""
    return "".join("[%s%s]" % (c.upper(), c.lower()) if "a" <= c.lower() <= "z" else ere(c) for c in s)


def needle_hits(g: Any, pattern: str) -> Optional[Callable[[int], Iterator[Tuple[int, bytes]]]]:
    """A byte search for ``pattern`` (POSIX extended regex, bytes as bytes) in the file: called
    with an offset, it yields ``(offset, text)`` of every match from there on, in order.
    ``None`` when there can be none (no grep; a stream): the caller reads blocks instead."""
    import shutil

    if not g.regular or not g.lane.searchable:
        return None
    grep = shutil.which("grep")
    if grep is None:
        return None
    return lambda offset: _grep(grep, g, offset, pattern)
