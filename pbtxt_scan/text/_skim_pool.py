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
   to the exact serial road (``_strings.StringLines._long_line``), so errors are the serial path's. Since the part before a window's start is in ``L``, the serial
   road resumed there reaches the verdict it would have reached from the line's start (by 1, and
   because what an escape can take over the cut is plain on its own).
3. The closing quote: the window holding the line's first newline ``n`` validates its part up to
   ``n - 1`` and requires ``buf[n - 1]`` to be the quote; the body before it is then in ``L`` (by
   1), so that quote is not escaped and no quote before it is bare: it closes the literal, and
   the line goes on exactly as ``body_end`` would say (the caller checks what follows).

Cuts are chosen so that they are usually valid: the nominal cut ``p`` (a multiple of the window
from the first byte; a line that ends within two windows is cut in halves: a 2.4 MB kernel line
in 2 MB windows left a worker 0.4 MB, ``Skimmer._split``) moves right to the first ``q`` whose byte ``q - 1`` is not a backslash and
whose byte ``q`` is not a UTF-8 continuation byte (so a part is valid UTF-8 alone exactly when the
line is there; ASCII parts, the usual, are judged with one ``isascii``). Both neighbours compute
``q`` from the same file bytes; the parent also checks that each window starts where the one
before ended.

Processes: started at the first line longer than one window (none for files without such lines,
nor for lines the parent's first window holds whole), ``min(usable cores - 1, MAX_WORKERS)`` of
them, forked by ``parallel._pool``. Windows are taken, not dealt (``Skimmer``): a worker that gets
less of a core takes fewer. A worker dies with the parent (end of file on the request pipe, and
``PR_SET_PDEATHSIG`` on Linux), holds no inherited descriptor but the input and its pipes, and
skips requests the parent no longer needs (a shared floor). Memory per process: one window (plus
the slack), its class map and decoding, about 3 x ``WINDOW``, kept in the heap (with glibc's
defaults they are mapped and unmapped at every window: page faults, a third of the check's time;
``Skimmer._start``). Only regular files read with ``pread``, where there is ``fork``.
"""
from __future__ import annotations

import mmap
import os
import struct
import weakref
from typing import Any, Dict, List, Optional, Tuple

from .._kit import NamedTuple
from ..parallel._cores import usable_cores
from ..parallel._pool import can_fork, fork, stop
from ..language._skip import valid_piece
from ._pipes import newline as _newline
from ._pipes import read_exact as _read_exact
from ._pipes import ready as _ready

WINDOW = 2 << 20  # bytes a process checks at a time (a line is taken in parallel past one window)
MAX_WORKERS = 7  # forked workers at most, beside the parent
SLACK = 4096  # bytes read past a window's nominal end to find its cut
_BS = 0x5C

PART, CLOSED, FAIL = 0, 1, 2
_REQ = struct.Struct("=qqqqqBB")  # seq, the literal's first seq, nominal start, nominal end, input end, quote, exact start
_REP = struct.Struct("=qBqq")  # seq, verdict, the window's start, its end (PART) or closing quote
_Q = struct.Struct("=q")

Verdict = Tuple[int, int, int]  # (PART, start, end), (CLOSED, start, closing quote) or (FAIL, ...)


def for_reader(f: Any, origin: int, *, window: int = WINDOW, slack: int = SLACK, workers: Optional[int] = None) -> Optional["Skimmer"]:
    """A skimmer for the scanner's input ``f`` (whose byte 0 is the walk's offset ``origin``), or
    None where the serial path must stay: not a view of a regular file read with ``pread``, no
    ``fork``, fewer than two cores. Forks nothing yet. ``window``, ``slack``: see
    :class:`Skimmer`; ``workers``: this many (default: a core each, ``MAX_WORKERS`` at most)."""
    g = getattr(f, "_g", None)  # a _views.View of a GraphFile (other readers: None)
    if g is None or not getattr(g, "offset_free", False) or g.size is None:
        return None
    if workers is None:
        workers = min(usable_cores() - 1, MAX_WORKERS)
    if workers < 1 or not can_fork():
        return None
    start = f._start  # the file offset of the view's byte 0
    end = g.size if f._end is None else min(f._end, g.size)
    return Skimmer(g.fileno(), start - origin, end - start + origin, workers, window=window, slack=slack)


# --- one window (in the workers and in the parent) ----------------------------------------------


class Ask(NamedTuple):
    """One window to judge: from the cut of ``p`` (``p`` itself if ``exact``) to the cut of ``r``,
    in an input that ends at ``end``, inside a literal quoted by ``quote``."""

    p: int
    r: int
    end: int
    quote: int
    exact: bool


def _cut(buf: bytes, t: int) -> int:
    """The first index ``q >= t`` (``t >= 1``) of ``buf`` with ``buf[q - 1]`` not a backslash and
    ``buf[q]`` not a UTF-8 continuation byte; -1 if none."""
    n = len(buf)
    while t < n:
        if buf[t - 1] != _BS and not 0x80 <= buf[t] < 0xC0:
            return t
        t += 1
    return -1


def _read(fd: int, a: Ask, slack: int) -> Tuple[int, bytes]:
    """The file bytes a window needs: from ``p`` (``p - 1``, to find its cut) to ``r + slack``."""
    at = a.p if a.exact else a.p - 1
    stop = min(a.r + slack, a.end)
    return at, (os.pread(fd, stop - at, at) if stop > at else b"")


def _judge(at: int, buf: bytes, a: Ask) -> Verdict:
    """The verdict on window ``a``, whose bytes from file offset ``at`` are ``buf``."""
    p, r, end, quote = a.p, a.r, a.end, a.quote
    lo = 0 if a.exact else _cut(buf, 1)
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


def window(fd: int, a: Ask, slack: int) -> Verdict:
    """Read and judge one window (what a worker does with a request)."""
    at, buf = _read(fd, a, slack)
    return _judge(at, buf, a)


# --- the processes -------------------------------------------------------------------------------

_RING = 64  # claim slots (more than the windows requested at once: 2 x (MAX_WORKERS + 1) + 1)
_PARENT = 255


class Claims:
    """Shared memory (anonymous, ``MAP_SHARED``: made before the fork, seen by every process):
    the *floor* (requests below it are stale) and who took each recent request."""

    def __init__(self) -> None:
        self.mem = mmap.mmap(-1, 8 + 8 * _RING)

    def floor(self) -> int:
        return _Q.unpack(self.mem[:8])[0]

    def set_floor(self, seq: int) -> None:
        self.mem[:8] = _Q.pack(seq)

    def owner(self, seq: int) -> int:
        """Who took request ``seq``: a worker's number, _PARENT, or 0 (nobody yet)."""
        at = 8 + 8 * (seq % _RING)
        v = _Q.unpack(self.mem[at : at + 8])[0]
        return v & 255 if v >> 8 == seq else 0

    def claim(self, seq: int, who: int) -> None:
        at = 8 + 8 * (seq % _RING)
        self.mem[at : at + 8] = _Q.pack((seq << 8) | who)


class _Literal:
    """One literal's windows: window ``k`` (at ``s + k x window``) is request ``base + k``."""

    __slots__ = ("base", "s", "end", "quote", "sent", "done", "size")

    def __init__(self, base: int, s: int, end: int, quote: int) -> None:
        self.base, self.s, self.end, self.quote = base, s, end, quote
        self.size = WINDOW  # (its windows' size: ``Skimmer._split``)
        self.sent = 1  # windows requested (window 0 is the parent's)
        self.done: Dict[int, Verdict] = {}  # verdicts that came early


class Skimmer:
    """The parallel skim of one scan: ``body`` checks a long literal; ``workers`` processes are
    forked at the first literal longer than a ``window`` (bytes) and stopped by ``close`` (or when
    this is collected). ``slack``: bytes read past a window's end to find its cut.

    Windows are taken, not dealt: requests go into one pipe that every worker reads, and whoever
    is free takes the next window nobody has claimed (:class:`Claims`). The parent takes windows
    too, and stitches the verdicts in order; it waits only when every window ahead is taken. So a
    worker that gets less of a core (other processes on the machine) takes fewer windows instead
    of holding the parent up. Two takers may claim one window at once (the claim is not atomic):
    both check it, one verdict is used, the other is dropped by its number.
    """

    def __init__(self, fd: int, delta: int, end: int, workers: int, *, window: int = WINDOW, slack: int = SLACK) -> None:
        self.fd = fd
        self.delta = delta  # file offset = walk offset + delta
        self.end = end  # the input's end, as a walk offset
        self.n = workers
        self.window = window
        self.slack = slack
        self.pids: List[int] = []
        self.req = -1  # the request pipe's write end (the workers share its read end)
        self.replies: List[int] = []  # each worker's reply pipe, read end
        self.seq = 0  # requests made so far
        self.claims: Optional[Claims] = None
        self.broken = False
        self._finalizer: Optional[Any] = None

    # The life of the workers.

    def _start(self) -> bool:
        if self.pids or not self.n:  # (no workers: the parent checks every window, as the tests do)
            return True
        if self.broken:
            return False
        try:
            # (The parent checks windows too, with no allocator option set: one block this big freed
            # raises glibc's mmap and trim thresholds past it, so its window buffers stay in its heap.)
            bytes(4 * max(self.window, WINDOW))
            claims = self.claims = Claims()
            req_r, self.req = os.pipe()
            for w in range(self.n):
                rep_r, rep_w = os.pipe()
                self.replies.append(rep_r)

                def main(me: int = w + 1, rep: int = rep_w) -> None:  # pragma: no cover - (in the child)
                    serve(self.fd, req_r, rep, claims, me, slack=self.slack)

                self.pids.append(fork(main, keep={self.fd, req_r, rep_w}, heap=4 * max(self.window, WINDOW)))  # (heap: see the docstring)
                os.close(rep_w)
            os.close(req_r)
        except OSError:
            self._fail()
            return False
        self._finalizer = weakref.finalize(self, stop, list(self.pids), [self.req] + self.replies)
        return True

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        stop(self.pids, ([self.req] if self.req >= 0 else []) + self.replies)
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
        delta = self.delta
        s = start + delta
        lit = _Literal(self.seq, s, self.end + delta, quote)
        end = lit.end
        size, stop, first = self._split(s, end)
        lit.size = size
        at = s
        a0 = Ask(s, s + size, end, quote, True)
        # A line that ends in the parent's first window (or its slack) wakes no worker.
        alone = first.find(b"\n") >= 0 or s + size >= end or not self._start() or not self.n
        ahead = 2 * (self.n + 1)  # windows requested beyond the one stitched next
        expect = s  # where the next window must start
        k = 0
        claims = self.claims
        try:
            while True:
                while not alone and lit.sent <= k + ahead and s + lit.sent * size < stop:
                    p = s + lit.sent * size
                    assert claims is not None  # (made by _start)
                    claims.claim(lit.base + lit.sent, 0)
                    os.write(self.req, _REQ.pack(lit.base + lit.sent, lit.base, p, p + size, end, quote, 0))
                    lit.sent += 1
                if s + k * size >= end:
                    return expect - delta, False
                if k:
                    got = lit.done.pop(k, None)
                    if got is None:
                        got = self._next(lit, k)
                        if got is None:
                            continue  # (checked a later window meanwhile)
                else:
                    got = _judge(at, first, a0)
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
            self.seq = lit.base + lit.sent
            if claims is not None and not self.broken:
                claims.set_floor(self.seq)  # what is still queued is stale

    def _split(self, s: int, end: int) -> Tuple[int, int, bytes]:
        """``(size, stop, first)``: windows from ``s``, none asked for from ``stop`` on; window 0."""
        size, slack = self.window, self.slack
        nl = _newline(self.fd, s, min(2 * size + slack, end - s))  # (halves whatever the workers)
        if nl >= size + slack:
            size, end = max(slack, -(-(nl + 1) // 2)), s + nl + 1
        return size, end, os.pread(self.fd, max(0, min(size + slack, self.end + self.delta - s)), s)

    def _window(self, lit: _Literal, k: int) -> Verdict:
        p = lit.s + k * lit.size
        return window(self.fd, Ask(p, p + lit.size, lit.end, lit.quote, False), self.slack)

    def _next(self, lit: _Literal, k: int) -> Optional[Verdict]:
        """Window ``k``'s verdict; or None after checking some later window (``k`` is being
        checked by a worker that has not answered yet)."""
        if k >= lit.sent:  # (not requested: the parent's alone)
            return self._window(lit, k)
        assert self.claims is not None
        seq = lit.base + k
        who = self.claims.owner(seq)
        if who and who != _PARENT:
            rep = self.replies[who - 1]
            if not _ready(rep):
                # Take the first window ahead nobody has taken, rather than wait.
                for j in range(k + 1, lit.sent):
                    if j not in lit.done and not self.claims.owner(lit.base + j):
                        self.claims.claim(lit.base + j, _PARENT)
                        lit.done[j] = self._window(lit, j)
                        return None
            while True:  # (its replies come in the order it took its windows)
                got, v, lo, hi = _REP.unpack(_read_exact(rep, _REP.size))
                if got == seq:
                    return v, lo, hi
                if got > seq:
                    lit.done[got - lit.base] = (v, lo, hi)
        self.claims.claim(seq, _PARENT)
        return self._window(lit, k)


def serve(fd: int, req: int, rep: int, claims: Claims, me: int, *, slack: int) -> None:  # pragma: no cover - (in the child)
    """A worker's loop (``parallel._pool.fork`` runs it): take requests nobody has taken, answer
    them on ``rep``, until the request pipe ``req`` closes (the parent went)."""
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
            return
        seq, first, p, r, end, quote, exact = _REQ.unpack(msg)
        if first == ended[0] and p > ended[1]:
            continue  # past the end of its literal
        if seq < claims.floor() or claims.owner(seq):
            continue  # stale, or taken
        claims.claim(seq, me)
        try:
            out = window(fd, Ask(p, r, end, quote, bool(exact)), slack)
        except Exception:
            out = (FAIL, p, 0)  # (the parent goes the serial road and meets it itself)
        if out[0] != PART:
            ended = (first, p)
        os.write(rep, _REP.pack(seq, *out))
