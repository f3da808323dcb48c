"""A long literal checked in windows on several processes says "valid" only where the grammar does.

``_skim_pool`` cuts a body at ``q`` (byte ``q - 1`` not a backslash) and checks the parts alone:
two valid parts make a valid whole (the body is a Kleene star), and a part that is not plainly
valid hands the rest to the serial road, which must then reach the verdict it reaches from the
line's start. Checked here against the grammar's STRING terminal on random bodies, window sizes
and cuts, in one process (``Skimmer(..., workers=0)``) and with a forked worker.
"""
from __future__ import annotations

import os
import random
import re
import tempfile
from typing import Iterator, Tuple

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from support.examples import examples

from pbtxt_scan.parallel._pool import can_fork, fork
from pbtxt_scan.text import _skim_pool
from pbtxt_scan.language._grammar import terminal_patterns
from pbtxt_scan.text._lexer import _string_body
from pbtxt_scan.text._skim_pool import Skimmer

STRING = re.compile(terminal_patterns()["STRING"].encode("ascii"))

# Escapes of every kind and their broken forms, backslash runs, quotes, newlines, NUL, digits
# that a greedy escape may take over a cut, non-ASCII characters (cut inside, they fail UTF-8).
_PIECES = [
    "a", "Z", " ", "\\\\", "\\", '\\"', "\\'", "\\n", "\\q", "\\8", "\\0", "\\07", "\\377", "\\400", "\\x", "\\x4",
    "\\x4f", "\\xg", "\\u", "\\u12", "\\u00e9", "\\uD800", "\\U0010FFFF", "\\U00110000", "\\U0001F600", '"', "'",
    "\n", "\x00", "7", "f", "\u00e9", "\u20ac",
]
# What writers write (octal, not \\x or \\u: cut between the letter and its digits, those are
# "not plainly valid" and go the serial road).
_OK_PIECES = ["a", "7", "\\\\", '\\"', "\\'", "\\n", "\\0", "\\07", "\\377", "\u00e9"]
_TAILS = ["", '"\n', '" x\n', "\n", '"']


class _File:
    """One temporary file, rewritten for each example (a forked worker keeps reading it)."""

    def __init__(self) -> None:
        self.fd, self.path = tempfile.mkstemp(prefix="pbtxt-skim-")

    def put(self, data: bytes) -> None:
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)

    def close(self) -> None:
        os.close(self.fd)
        os.unlink(self.path)


def _verdict(f: _File, data: bytes, window: int, slack: int, workers: int = 0, sk: "Skimmer | None" = None) -> Tuple[int, bool]:
    f.put(data)
    sk = sk or Skimmer(f.fd, 0, len(data), workers, window=window, slack=slack)
    assert (sk.window, sk.slack) == (window, slack)
    sk.end = len(data)
    return sk.body(4, data[3])


def _check(data: bytes, at: int, closed: bool) -> None:
    """What the skimmer says holds by the grammar; and the serial road resumed at ``at`` stops
    where it stops from the body's start."""
    q = data[3:4]
    assert STRING.fullmatch(q + data[4:at] + q), (data, at)  # a valid prefix, nothing pending
    m = STRING.match(data, 3)
    if closed:
        assert data[at : at + 2] == q + b"\n" and m is not None and m.end() == at + 1, (data, at)
    body = _string_body(data[3])
    assert body.match(data, at).end() == body.match(data, 4).end(), (data, at)  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def tmpfile() -> Iterator[_File]:
    f = _File()
    yield f
    f.close()


@settings(max_examples=examples(1.5), deadline=None)
@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=60),
    quote=st.sampled_from(['"', "'"]),
    tail=st.sampled_from(_TAILS),
    window=st.integers(1, 40),
    slack=st.integers(1, 12),
)
def test_cuts_agree_with_the_string_terminal(tmpfile: _File, pieces: "list[str]", quote: str, tail: str, window: int, slack: int) -> None:
    data = ("x: " + quote + "".join(pieces) + tail.replace('"', quote)).encode("utf-8")
    at, closed = _verdict(tmpfile, data, window, slack)
    _check(data, at, closed)


@settings(max_examples=examples(0.3), deadline=None)
@given(pieces=st.lists(st.sampled_from(_OK_PIECES), min_size=1, max_size=80), window=st.integers(4, 40))
def test_a_valid_literal_is_closed_however_the_windows_fall(tmpfile: _File, pieces: "list[str]", window: int) -> None:
    """Bodies as writers escape them: always skipped to the closing quote, however the windows
    fall (cuts move past backslashes; a greedy octal escape may span a cut), as long as a cut
    can move past every backslash run within its slack. (A longer run, as 10 escaped backslashes
    in a row with a slack of 8, leaves no place to cut: the rest of the line then goes the serial
    road, which is sound but not what this test is about.)"""
    body = "".join(pieces)
    assume(max((len(r) for r in re.findall(r"\\+", body)), default=0) <= 4)
    data = ('x: "' + body + '"\ny: 1\n').encode("utf-8")
    at, closed = _verdict(tmpfile, data, window, 8)
    assert closed and at == len(data) - 7, (data, at)


@pytest.mark.skipif(not can_fork(), reason="no fork")
def test_a_forked_worker_agrees_with_one_process(tmpfile: _File) -> None:
    """The same verdicts with a worker checking every other window (one worker forked once)."""
    rng = random.Random(5)
    sk = Skimmer(tmpfile.fd, 0, 0, 1, window=16, slack=6)
    try:
        for n in range(300):
            pieces = [rng.choice(_OK_PIECES if n % 3 else _PIECES) for _ in range(rng.randrange(1, 120))]
            data = ('x: "' + "".join(pieces) + rng.choice(_TAILS)).encode("utf-8")
            got = _verdict(tmpfile, data, 16, 6, sk=sk)
            assert got == _verdict(tmpfile, data, 16, 6), data
            _check(data, *got)
        assert len(sk.pids) == 1 and not sk.broken
        pids = list(sk.pids)
    finally:
        sk.close()
    _assert_reaped(pids)


def _assert_reaped(pids: "list[int]") -> None:
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # not ours any more: killed and waited for


@pytest.mark.skipif(not can_fork(), reason="no fork")
def test_a_dead_worker_sends_the_line_the_serial_road(tmpfile: _File) -> None:
    """A worker killed under the parent: the literal's verdict is still sound (the rest goes the
    serial road), the skimmer stops using workers, and nothing is left behind."""
    import signal

    sk = Skimmer(tmpfile.fd, 0, 0, 1, window=16, slack=6)
    try:
        data = ('x: "' + "\\\\001a" * 200 + '"\n').encode("ascii")
        assert _verdict(tmpfile, data, 16, 6, sk=sk) == (len(data) - 2, True)
        pids = list(sk.pids)
        os.kill(pids[0], signal.SIGKILL)
        os.waitid(os.P_PID, pids[0], os.WEXITED | os.WNOWAIT)  # (dead, left for close to reap)
        for _ in range(2):
            at, closed = _verdict(tmpfile, data, 16, 6, sk=sk)
            _check(data, at, closed)
        assert sk.broken and not sk.pids
    finally:
        sk.close()
    _assert_reaped(pids)


def test_a_backslash_run_longer_than_the_slack_stops_soundly(tmpfile: _File) -> None:
    """(Found by hypothesis.) Ten escaped backslashes in a row, windows of 4 and a slack of 8: no
    place to cut, so the verdict stops short of the closing quote, at a valid prefix; the caller
    then reads the rest serially. (The line is longer than two windows and their slack: a
    shorter one is cut in halves, ``Skimmer._split``.)"""
    data = b'x: "' + b"a" * 29 + b"\\\\" * 5 + b'"\ny: 1\n'
    at, closed = _verdict(tmpfile, data, 4, 8)
    _check(data, at, closed)
    assert not closed


@pytest.mark.skipif(not can_fork(), reason="no fork")
def test_a_worker_skips_the_windows_past_the_end_it_found(tmpfile: _File) -> None:
    """The parent asks for windows ahead, not knowing where the line ends: a worker that finds a
    literal's end itself checks none of that literal's later windows (they lie in the lines after
    it, and their verdicts would never be read), but goes on with the next literal's."""
    body = b"\\001a" * 40
    data = b'x: "' + body + b'"\nx: "' + body + body + b'"\n'
    tmpfile.put(data)
    w = 64
    end = len(data)
    claims = _skim_pool.Claims()
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = fork(lambda: _skim_pool.serve(tmpfile.fd, req_r, rep_w, claims, 1, slack=_skim_pool.SLACK), keep={tmpfile.fd, req_r, rep_w})
    os.close(req_r)
    os.close(rep_w)
    try:
        q = 0x22
        first_end = data.index(b"\n")
        last = (first_end // w) * w  # the window holding the first line's newline
        # Literal 1 (first seq 1): the window with its end, then two past it; literal 2 (first
        # seq 4): one window inside its body.
        second = first_end + 1 + 4 + w
        reqs = [(1, 1, last, last + w), (2, 1, last + w, last + 2 * w), (3, 1, last + 2 * w, last + 3 * w), (4, 4, second, second + w)]
        for seq, first, p, r in reqs:
            os.write(req_w, _skim_pool._REQ.pack(seq, first, p, r, end, q, 0))
        os.close(req_w)
        req_w = -1
        got = []
        while True:  # (the worker exits when the request pipe is closed and read out)
            try:
                got.append(_skim_pool._REP.unpack(_skim_pool._read_exact(rep_r, _skim_pool._REP.size)))
            except EOFError:
                break
        assert [(s, v) for s, v, _, _ in got] == [(1, _skim_pool.CLOSED), (4, _skim_pool.PART)]
        assert got[0][3] == first_end - 1  # (the closing quote)
        assert claims.floor() == 0  # (no floor: the worker decided alone)
    finally:
        if req_w >= 0:
            os.close(req_w)
        os.close(rep_r)
        os.waitpid(pid, 0)


def test_a_line_within_two_windows_is_cut_in_halves(tmpfile: _File) -> None:
    """A frozen graph's ~2.4 MB kernel lines with 2 MB windows: two equal windows (not 2 MB and
    0.4 MB), none asked for past the line's newline, and the verdict the same as one window's."""
    data = b'x: "' + b"\\101a" * 30 + b'"\ny: 1\n'
    tmpfile.put(data)
    nl = data.index(b"\n") - 4
    sk = Skimmer(tmpfile.fd, 0, len(data), 0, window=96, slack=8)
    size, stop, first = sk._split(4, len(data))
    assert (size, stop, first) == (-(-(nl + 1) // 2), 4 + nl + 1, data[4 : 4 + size + 8])
    assert _verdict(tmpfile, data, 96, 8) == _verdict(tmpfile, data, 4096, 8) == (nl + 3, True)
    # a line that ends in window 0 (or its slack), or past two windows, keeps the window
    assert sk._split(4, 4 + 50)[0] == 96
    assert Skimmer(tmpfile.fd, 0, len(data), 0, window=40, slack=8)._split(4, len(data))[:2] == (40, len(data))
