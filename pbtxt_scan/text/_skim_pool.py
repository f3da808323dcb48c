"""Validating one long string literal's body on several processes at once (``fp`` on frozen graphs).

``_skip.body_end`` checks a ``tensor_content`` line at ~2.5 ms/MB on one core. A line of tens of
MB is cut into *windows* of ``WINDOW`` bytes; forked workers check some of them (reading the open
descriptor with ``os.pread``), the parent checks the others and stitches the verdicts in order.

Why a cut is sound
------------------
The grammar's string body is a Kleene star: ``L = (plain | escape)*``, a plain byte being
anything but a backslash, the literal's own quote, a newline or NUL, an escape one of a fixed set
of whole strings (``\\n``, ``\\123``, ``\\x4f``, ``\\u00e9``...). So:

1. If ``A`` and ``B`` are both in ``L``, so is ``A + B``: the concatenation of two runs of
   (plain | escape) is one. Escape parsing is left to right, ``A``'s parse ends at the cut with
   nothing pending (``A`` in ``L`` cannot end in a lone backslash), and ``B`` parses on from there.
   A greedy octal or hex escape may reach over the cut when joined (``\\1`` + ``23`` reads as
   ``\\123``), but what it takes are digits, plain bytes in ``B``'s own parse: same verdict.
2. The converse needs no proof: a window that does not validate *alone* (a ``\\u`` escape cut in
   two, a cut after a lone backslash) is only "not plainly valid", and sends the rest of the line
   to the exact serial road (``_canonical._long_line``: ``body_end``, then the terminal's regex,
   then the general scanner from the line's start), so error messages and positions are those of
   the serial path, byte for byte. Since the part before a window's start is in ``L``, the serial
   road resumed there reaches the verdict it would have reached from the line's start (by 1, and
   because what an escape can take over the cut is plain on its own).
3. The closing quote: the window holding the line's first newline ``n`` validates its part up to
   ``n - 1`` and requires ``buf[n - 1]`` to be the quote; the body before it is then in ``L`` (by
   1), so that quote is not escaped and no quote before it is bare: it closes the literal, and
   the line goes on exactly as ``body_end`` would say (the caller checks what follows).

Cuts are chosen so that they are usually valid: the nominal cut ``p`` (a multiple of ``WINDOW``
from the first byte) moves right to the first ``q`` whose byte ``q - 1`` is not a backslash and
whose byte ``q`` is not a UTF-8 continuation byte (so a part is valid UTF-8 alone exactly when the
line is there; ASCII parts, the usual, are judged with one ``isascii``). Both neighbours compute
``q`` from the same file bytes; the parent also checks that each window starts where the one
before ended.

Processes: started at the first line longer than one window (none for files without such lines,
nor for lines the parent's first window holds whole), ``min(usable cores - 1, MAX_WORKERS)`` of
them. Windows are taken, not dealt (``Skimmer``): a worker that gets less of a core takes fewer.
A worker dies with the parent (end of file on the request pipe, and ``PR_SET_PDEATHSIG`` on
Linux), closes every inherited descriptor but the input and its pipes, and skips requests the
parent no longer needs (a shared floor). Memory per process: one window (plus ``SLACK``), its
class map and decoding, about 3 x ``WINDOW``; glibc is told to keep such buffers (``_libc``).
Only regular files read with ``pread``, where ``fork`` is the platform's own start method.
"""
from __future__ import annotations

import mmap
import os
import struct
import sys
import weakref
from typing import Any, Dict, List, Optional, Tuple

from ..parallel._cores import usable_cores
from ..language._skip import valid_piece

WINDOW = 2 << 20  # bytes a process checks at a time (a line is taken in parallel past one window)
MAX_WORKERS = 7  # forked workers at most, beside the parent
SLACK = 4096  # bytes read past a window's nominal end to find its cut
_BS = 0x5C

PART, CLOSED, FAIL = 0, 1, 2
_REQ = struct.Struct("=qqqqqBB")  # seq, the literal's first seq, nominal start, nominal end, input end, quote, exact start
_REP = struct.Struct("=qBqq")  # seq, verdict, the window's start, its end (PART) or closing quote


def _can_fork() -> bool:
    if not hasattr(os, "fork") or not hasattr(os, "pread"):
        return False
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def for_reader(f: Any, origin: int) -> Optional["Skimmer"]:
    """A skimmer for the scanner's input ``f`` (whose byte 0 is the walk's offset ``origin``), or
    None where the serial path must stay: not a view of a regular file read with ``pread``, no
    ``fork``, fewer than two cores. Forks nothing yet."""
    g = getattr(f, "_g", None)  # a _views.View of a GraphFile (other readers: None)
    if g is None or not getattr(g, "offset_free", False) or g.size is None:
        return None
    workers = min(usable_cores() - 1, MAX_WORKERS)
    if workers < 1 or not _can_fork():
        return None
    start = f._start  # the file offset of the view's byte 0
    end = g.size if f._end is None else min(f._end, g.size)
    return Skimmer(g.fileno(), start - origin, end - start + origin, workers)


# --- one window (in the workers and in the parent) ----------------------------------------------


def _cut(buf: bytes, t: int) -> int:
    """The first index ``q >= t`` (``t >= 1``) of ``buf`` with ``buf[q - 1]`` not a backslash and
    ``buf[q]`` not a UTF-8 continuation byte; -1 if none."""
    n = len(buf)
    while t < n:
        if buf[t - 1] != _BS and not 0x80 <= buf[t] < 0xC0:
            return t
        t += 1
    return -1


def _read(fd: int, p: int, r: int, end: int, exact: bool) -> Tuple[int, bytes]:
    """The file bytes a window needs: from ``p`` (``p - 1``, to find its cut) to ``r + SLACK``."""
    at = p if exact else p - 1
    stop = min(r + SLACK, end)
    return at, (os.pread(fd, stop - at, at) if stop > at else b"")


def _judge(at: int, buf: bytes, p: int, r: int, end: int, quote: int, exact: bool) -> Tuple[int, int, int]:
    """The verdict on the window that starts at the cut of ``p`` (``p`` itself if ``exact``) and
    ends at the cut of ``r``: (PART, start, end), (CLOSED, start, closing quote) or (FAIL, ...)."""
    lo = 0 if exact else _cut(buf, 1)
    if lo < 0:
        return FAIL, p, 0
    if at + len(buf) >= end and r >= end:
        hi = len(buf)  # the input ends in this window
    else:
        hi = _cut(buf, r - at)
        if hi < 0:
            return FAIL, at + lo, 0
    nl = buf.find(b"\n", lo, hi + 1)  # (a newline right at the cut ends this window's line)
    if nl >= 0:
        c = nl - 1
        if c < lo or buf[c] != quote or not _valid(buf, lo, c, quote):
            return FAIL, at + lo, 0
        return CLOSED, at + lo, at + c
    if at + hi >= end or not _valid(buf, lo, hi, quote):
        return FAIL, at + lo, 0  # (an unterminated literal, or not plainly valid)
    return PART, at + lo, at + hi


def _valid(buf: bytes, a: int, b: int, quote: int) -> bool:
    """``buf[a:b]`` alone, which holds no newline (``_judge`` looked): valid UTF-8 (the scanner's
    window checks it on the serial road), then a valid piece of a body (``_skip``)."""
    if not buf.isascii():
        try:
            buf[a:b].decode("utf-8")
        except UnicodeDecodeError:
            return False
    return valid_piece(buf, a, b, quote, no_newline=True)


def window(fd: int, p: int, r: int, end: int, quote: int, exact: bool) -> Tuple[int, int, int]:
    """Read and judge one window (what a worker does with a request)."""
    at, buf = _read(fd, p, r, end, exact)
    return _judge(at, buf, p, r, end, quote, exact)


# --- the processes -------------------------------------------------------------------------------


class Skimmer:
    """The parallel skim of one scan: ``body`` checks a long literal; workers are forked at the
    first literal longer than a window and stopped by ``close`` (or when this is collected).

    Windows are taken, not dealt: requests go into one pipe that every worker reads, and whoever
    is free takes the next window nobody has claimed (a claim is a slot in shared memory: the
    request's number and who took it). The parent takes windows too, and stitches the verdicts
    in order; it waits only when every window ahead is taken. So a worker that gets less of a
    core (other processes on the machine) takes fewer windows instead of holding the parent up.
    Two takers may claim one window at once (the claim is not atomic): both check it, one verdict
    is used, the other is dropped by its number.
    """

    def __init__(self, fd: int, delta: int, end: int, workers: int) -> None:
        self.fd = fd
        self.delta = delta  # file offset = walk offset + delta
        self.end = end  # the input's end, as a walk offset
        self.n = workers
        self.pids: List[int] = []
        self.req = -1  # the request pipe's write end (the workers share its read end)
        self.replies: List[int] = []  # each worker's reply pipe, read end
        self.seq = 0  # requests made so far
        self.shared: Optional[mmap.mmap] = None  # the floor (requests below it are stale) and claims
        self.broken = False
        self._finalizer: Optional[Any] = None

    # The life of the workers.

    def _start(self) -> bool:
        if self.pids or not self.n:  # (no workers: the parent checks every window, as the tests do)
            return True
        if self.broken:
            return False
        try:
            self.shared = mmap.mmap(-1, 8 + 8 * _RING)  # (anonymous, MAP_SHARED: seen by the workers)
            _libc()  # (before any fork)
            req_r, self.req = os.pipe()
            for w in range(self.n):
                rep_r, rep_w = os.pipe()
                pid = os.fork()
                if pid == 0:  # pragma: no cover - (the child: measured by the parent's tests)
                    _serve(self.fd, req_r, rep_w, self.shared, w + 1)
                os.close(rep_w)
                self.pids.append(pid)
                self.replies.append(rep_r)
            os.close(req_r)
        except OSError:
            self._fail()
            return False
        self._finalizer = weakref.finalize(self, _stop, list(self.pids), [self.req] + self.replies)
        return True

    def close(self) -> None:
        """Stop the workers (idempotent): they hold nothing that needs cleaning up."""
        _stop(self.pids, ([self.req] if self.req >= 0 else []) + self.replies)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        self.pids = []
        self.replies = []
        self.req = -1

    def _fail(self) -> None:
        self.close()
        self.broken = True

    # One literal.

    def body(self, start: int, quote: int) -> Tuple[int, bool]:
        """Check a literal's body from walk offset ``start`` (just after its opening quote, or a
        point the serial road reached with nothing pending). Returns ``(at, True)``: the closing
        quote is at ``at`` and the body before it is valid; or ``(at, False)``: the body is valid
        up to ``at`` (with nothing pending), the serial road goes on from there."""
        fd, delta, end = self.fd, self.delta, self.end + self.delta
        s = start + delta
        at, first = _read(fd, s, s + WINDOW, end, True)
        # A line that ends in the parent's first window (or its slack) wakes no worker.
        alone = first.find(b"\n") >= 0 or s + WINDOW >= end or not self._start() or not self.n
        ahead = 2 * (self.n + 1)  # windows requested beyond the one stitched next
        base = self.seq
        sent = 1  # windows requested (window 0 is the parent's)
        done: Dict[int, Tuple[int, int, int]] = {}  # verdicts that came early, by window
        expect = s  # where the next window must start
        k = 0
        try:
            while True:
                while not alone and sent <= k + ahead and s + sent * WINDOW < end:
                    p = s + sent * WINDOW
                    self._claim(base + sent, 0)
                    os.write(self.req, _REQ.pack(base + sent, base, p, p + WINDOW, end, quote, 0))
                    sent += 1
                p = s + k * WINDOW
                if p >= end:
                    return expect - delta, False
                if k:
                    got = done.pop(k, None)
                    if got is None:
                        got = self._next(base, k, sent, done, fd, s, end, quote)
                        if got is None:
                            continue  # (checked a later window meanwhile)
                else:
                    got = _judge(at, first, s, s + WINDOW, end, quote, True)
                    first = b""
                v, lo, hi = got
                if v == CLOSED and lo == expect:
                    return hi - delta, True
                if v != PART or lo != expect:
                    return expect - delta, False
                expect = hi
                k += 1
        except (OSError, EOFError):
            self._fail()  # a worker died: this literal and the next go the serial road
            return expect - delta, False
        finally:
            self.seq = base + sent
            if self.shared is not None and not self.broken:
                self.shared[:8] = struct.pack("=q", self.seq)  # what is still queued is stale

    def _next(self, base: int, k: int, sent: int, done: Dict[int, Tuple[int, int, int]], fd: int, s: int, end: int, quote: int) -> Optional[Tuple[int, int, int]]:
        """Window ``k``'s verdict; or None after checking some later window (``k`` is being
        checked by a worker that has not answered yet)."""
        if k >= sent:  # (not requested: the parent's alone)
            p = s + k * WINDOW
            return window(fd, p, p + WINDOW, end, quote, False)
        who = self._owner(base + k)
        if who and who != _PARENT:
            rep = self.replies[who - 1]
            if not _ready(rep):
                # Take the first window ahead nobody has taken, rather than wait.
                for j in range(k + 1, sent):
                    if j not in done and not self._owner(base + j):
                        self._claim(base + j, _PARENT)
                        p = s + j * WINDOW
                        done[j] = window(fd, p, p + WINDOW, end, quote, False)
                        return None
            while True:  # (its replies come in the order it took its windows)
                got, v, lo, hi = _REP.unpack(_read_exact(rep, _REP.size))
                if got == base + k:
                    return v, lo, hi
                if got > base + k:
                    done[got - base] = (v, lo, hi)
        self._claim(base + k, _PARENT)
        p = s + k * WINDOW
        return window(fd, p, p + WINDOW, end, quote, False)

    def _owner(self, seq: int) -> int:
        """Who took request ``seq``: a worker's number, _PARENT, or 0 (nobody yet)."""
        assert self.shared is not None
        at = 8 + 8 * (seq % _RING)
        v = struct.unpack("=q", self.shared[at : at + 8])[0]
        return v & 255 if v >> 8 == seq else 0

    def _claim(self, seq: int, who: int) -> None:
        if self.shared is not None:
            at = 8 + 8 * (seq % _RING)
            self.shared[at : at + 8] = struct.pack("=q", (seq << 8) | who)


_RING = 64  # claim slots (more than the windows requested at once: 2 x (MAX_WORKERS + 1) + 1)
_PARENT = 255


def _ready(fd: int) -> bool:
    import select

    return bool(select.select([fd], [], [], 0)[0])


def _stop(pids: List[int], fds: List[int]) -> None:
    import signal

    for x in fds:
        try:
            os.close(x)
        except OSError:
            pass
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


def _read_exact(fd: int, n: int) -> bytes:
    out = b""
    while len(out) < n:
        data = os.read(fd, n - len(out))
        if not data:
            raise EOFError
        out += data
    return out


_PRCTL: Any = None


def _libc() -> None:
    """On Linux: load ``prctl`` in the parent, for the workers to ask for SIGKILL when it dies;
    and keep freed window-sized buffers in the heap (glibc's ``mallopt``). Each window allocates a
    few buffers of its size (the bytes read, their class map, their decoding); with glibc's
    defaults they are mapped and unmapped at every window, and the page faults cost more than a
    third of the check (1 ms/MB of system time). Set once, inherited by the workers."""
    global _PRCTL
    if _PRCTL is None and sys.platform.startswith("linux"):
        _PRCTL = False
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            _PRCTL = libc.prctl
            libc.mallopt(-3, 4 * WINDOW)  # M_MMAP_THRESHOLD: window buffers come from the heap
            libc.mallopt(-1, 16 * WINDOW)  # M_TRIM_THRESHOLD: ... and go back to it, not the OS
        except (ImportError, OSError, AttributeError):
            pass


def _serve(fd: int, req: int, rep: int, shared: mmap.mmap, me: int) -> None:  # pragma: no cover - (runs in the child)
    """A worker's life: take requests nobody has taken, answer them, until the parent goes.
    Never returns."""
    import signal

    code = 0
    try:
        parent = os.getppid()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the workers
        if _PRCTL:
            _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(0)
        # Hold no other descriptor of the parent's: a pipe end kept open here would keep its
        # reader waiting (grep's output, the other workers' replies).
        keep = {fd, req, rep}
        try:
            fds = [int(x) for x in os.listdir("/proc/self/fd")]
        except OSError:
            fds = list(range(3, 256))
        for x in fds:
            if x > 2 and x not in keep:
                try:
                    os.close(x)
                except OSError:
                    pass
        unpack = struct.Struct("=q").unpack
        # Where a literal's chain of windows ended, as this worker saw it: at its line's newline
        # (CLOSED) or at a window not plainly valid (FAIL). The windows requested after it (the
        # parent asks ahead, not knowing where the line ends) lie in the lines that follow: their
        # verdicts would never be read, and checking them took a third of this worker's time on a
        # frozen graph (4 windows a line). Other workers' ends come through the floor.
        ended = (-1, 0)  # (the literal's first seq, the window's nominal start)
        while True:
            try:
                msg = _read_exact(req, _REQ.size)  # (records are written whole: each read takes one)
            except EOFError:
                break
            seq, first, p, r, end, quote, exact = _REQ.unpack(msg)
            if first == ended[0] and p > ended[1]:
                continue  # past the end of its literal
            at = 8 + 8 * (seq % _RING)
            v = unpack(shared[at : at + 8])[0]
            if seq < unpack(shared[:8])[0] or (v >> 8 == seq and v & 255):
                continue  # stale, or taken
            shared[at : at + 8] = struct.pack("=q", (seq << 8) | me)
            try:
                out = window(fd, p, r, end, quote, bool(exact))
            except Exception:
                out = (FAIL, p, 0)  # (the parent goes the serial road and meets it itself)
            if out[0] != PART:
                ended = (first, p)
            os.write(rep, _REP.pack(seq, *out))
    except BaseException:
        code = 1
    finally:
        os._exit(code)  # (never the parent's cleanup: no atexit, no flush, no finally above)
