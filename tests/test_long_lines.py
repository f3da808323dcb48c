"""Long string lines (frozen ``tensor_content``) through the fast path, against the general scanner.

The fast path skips a long literal with ``_skip.body_end`` in windows of the buffer; the general
scanner (``_scan``, proved against Lark in test_scanner.py) is the reference. For valid files and
for files broken inside the long line (at a window's edge or deep in it), both must yield the same
blocks and raise the same error, whatever the chunk size. A valid long line must also stay on the
fast path: that is what makes ``fp`` over a frozen graph skim.
"""
from __future__ import annotations

import io
import random
from typing import Any, List, Tuple

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.examples import examples

from pbtxt_scan.text import _canonical, _scan
from pbtxt_scan.text._canonical import scan_canonical
from pbtxt_scan._errors import PbtxtError
from pbtxt_scan._model import Block
from pbtxt_scan.text._scan import scan

HEADS = frozenset({"name", "op", "input"})
PATH = ("node",)


def _pieces(n: int, seed: int, specials: bool = False) -> List[bytes]:
    """``n`` random bytes escaped as writers do (octal, \\n \\r \\t, \\\\ \\' \\"), and with
    ``specials`` some \\x, \\u, \\U escapes too: one piece per byte."""
    rng = random.Random(seed)
    named = {9: b"\\t", 10: b"\\n", 13: b"\\r", 34: b'\\"', 39: b"\\'", 92: b"\\\\"}
    esc = [named.get(b) or (bytes((b,)) if 32 <= b < 127 else b"\\%03o" % b) for b in range(256)]
    out = [esc[rng.getrandbits(8)] for _ in range(n)]
    if specials:
        for k in range(0, n, 97):
            out[k] = rng.choice([b"\\x4", b"\\x4f", b"\\u00e9", b"\\U0001F600", b"\\\\x"])
    return out


def _tensor(n: int, seed: int, specials: bool = False) -> bytes:
    return b"".join(_pieces(n, seed, specials))


def _graph(content: bytes) -> bytes:
    const = (
        b'node {\n  name: "w"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n'
        b"        dtype: DT_FLOAT\n        tensor_content: \"" + content + b'"\n      }\n    }\n  }\n}\n'
    )
    return const + b'node {\n  name: "x"\n  op: "MatMul"\n  input: "w"\n}\n'


def _run(data: bytes, chunk: int, fast: bool, warm: int = _canonical._WARMUP_LINES) -> List[Any]:
    out: List[Any] = []
    try:
        if fast:
            it = scan_canonical(io.BytesIO(data), PATH, HEADS, chunk_size=chunk, display="t", warm_up=warm)
        else:
            it = scan(io.BytesIO(data), PATH, HEADS, chunk)
        out.extend(it)
    except PbtxtError as e:
        out.append(("error", e.line, e.column, e.msg))
    return out


def _same(data: bytes, chunks: Tuple[int, ...]) -> List[Any]:
    """The fast path as the general scanner, with and without the warm-up (whole blocks and
    batches are tried only after it)."""
    ref = _run(data, 1 << 16, fast=False)
    for c in chunks:
        for warm in (_canonical._WARMUP_LINES, 0):
            assert _run(data, c, fast=True, warm=warm) == ref, (c, warm)
    return ref


@pytest.fixture()
def small_long(monkeypatch: pytest.MonkeyPatch) -> None:
    """A "long" line of a few KB, so windows and refills fall everywhere in a small test."""
    monkeypatch.setattr(_canonical, "_LONG", 1000)
    monkeypatch.setattr(_canonical, "_BIG", 4000)


def _broken(pieces: List[bytes]) -> List[bytes]:
    """The content broken between two escapes near its start, middle and end (each break then
    a ``Z``, so that none of them completes into something valid)."""
    out = []
    for k in (2, len(pieces) // 2, len(pieces) - 2):
        for bad in (b"\\q", b"\\\\\"", b"\x00", b"\\x", b"\\u12", b"\\uD800", b"\\"):
            out.append(b"".join(pieces[:k]) + bad + b"Z" + b"".join(pieces[k:]))
    return out


@pytest.mark.parametrize("specials", [False, True])
def test_long_tensor_lines_agree(small_long: None, specials: bool) -> None:
    pieces = _pieces(6000, 1, specials)
    ref = _same(_graph(b"".join(pieces)), chunks=(1 << 20, 4096, 997, 1000, 1003))
    assert [b.name for b in ref] == ["w", "x"]
    for bad in _broken(pieces):
        got = _same(_graph(bad), chunks=(4096, 997))
        assert got[-1][0] == "error", bad  # (every break is an error)


def test_a_valid_long_line_is_not_handed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 MB of tensor (over _LONG) is skipped by the fast path: the general scanner never runs."""
    data = _graph(_tensor(800_000, 2, specials=True))
    assert len(data) > 2 * _canonical._LONG

    def no_hand_over(*a: Any, **k: Any) -> Any:
        raise AssertionError("handed over to the general scanner")

    monkeypatch.setattr(_scan, "scan_tokens", no_hand_over)  # (what a hand-over runs, loaded when it runs)
    blocks = list(scan_canonical(io.BytesIO(data), PATH, HEADS, display="t"))
    assert [b.name for b in blocks] == ["w", "x"]


def test_no_batch_regex_is_built_around_a_long_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks that hold a long line are walked line by line up to it and over the closers
    after it: a batch there would compile a regex for each depth (~40 ms each) for a few lines."""
    from pbtxt_scan.text import _layout

    depths: List[int] = []
    real = _layout.field_re

    def spy(d: int, names: Tuple[str, ...]) -> Any:
        depths.append(d)
        return real(d, names)

    monkeypatch.setattr(_layout, "field_re", spy)
    content = _tensor(800_000, 3)
    data = _graph(content) + _graph(content).replace(b'"w"', b'"w2"').replace(b'"x"', b'"x2"')
    blocks = list(scan_canonical(io.BytesIO(data), PATH, HEADS, display="t", warm_up=0))  # (batches everywhere else)
    assert [b.name for b in blocks] == ["w", "x", "w2", "x2"]
    assert set(depths) <= {0}


# --- the same lines checked on two processes (_skim_pool) -------------------------------------


@pytest.fixture()
def two_procs(monkeypatch: pytest.MonkeyPatch, small_long: None) -> List[Any]:
    """Long lines of a few KB checked in windows of 512 bytes by the parent and one forked worker
    (whatever the machine's cores); returns the skimmers made, to look at their workers."""
    import functools

    from pbtxt_scan.parallel._pool import can_fork
    from pbtxt_scan.text import _skim_pool

    if not can_fork():
        pytest.skip("no fork")
    monkeypatch.setattr(_skim_pool, "for_reader", functools.partial(_skim_pool.for_reader, window=512, slack=32, workers=1))
    made: List[Any] = []
    real = _skim_pool.Skimmer.body

    def spy(self: Any, start: int, quote: int) -> Any:
        out = real(self, start, quote)
        made.append((self, list(self.pids)))
        return out

    monkeypatch.setattr(_skim_pool.Skimmer, "body", spy)
    return made


def _file_run(tmp_path: Any, data: bytes, validate: bool = True) -> List[Any]:
    """The blocks of ``data`` read from a file (the skim pool's input), validated as ``check``
    reads (``validate``) or as fp and the listings read."""
    from pbtxt_scan.graph._input import GraphFile

    p = tmp_path / "g.pbtxt"
    p.write_bytes(data)
    out: List[Any] = []
    with GraphFile.open(str(p)) as g:
        try:
            out.extend(g.blocks(PATH, HEADS, chunk_size=997, validate=validate))
        except PbtxtError as e:
            out.append(("error", e.line, e.column, e.msg))
    return out


def _reaped(made: List[Any]) -> None:
    import os

    pids = {pid for _, ps in made for pid in ps}
    assert pids, "no worker was forked"
    for sk, _ in made:
        assert not sk.pids  # closed
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # killed and waited for: no zombie, no orphan


@pytest.mark.parametrize("specials", [False, True])
def test_long_lines_on_two_processes_agree(tmp_path: Any, two_procs: List[Any], specials: bool) -> None:
    pieces = _pieces(6000, 1, specials)
    data = _graph(b"".join(pieces))
    ref = _run(data, 1 << 16, fast=False)
    assert _file_run(tmp_path, data) == ref and [b.name for b in ref] == ["w", "x"]
    assert two_procs and all(ps for _, ps in two_procs)  # the parallel path really ran
    _reaped(two_procs)
    for bad in _broken(pieces):  # (errors after the worker ran, and before it ran)
        del two_procs[:]
        got = _file_run(tmp_path, _graph(bad))
        assert got == _run(_graph(bad), 1 << 16, fast=False), bad
        assert got[-1][0] == "error"
        if two_procs and two_procs[0][1]:
            _reaped(two_procs)


@pytest.mark.slow  # 108 runs through the worker pool
def test_a_line_broken_near_a_cut_gives_the_serial_error(tmp_path: Any, two_procs: List[Any]) -> None:
    """Breaks right before, at and after the nominal cuts of the windows (512 bytes from the
    body's start), so that a window starts or ends inside the broken escape."""
    body = b"".join(_pieces(3000, 7))
    start = _graph(body).index(b'tensor_content: "') + len(b'tensor_content: "')
    for cut in (512, 1024, 1536):
        for d in (-3, -2, -1, 0, 1, 2):
            for bad in (b"\\q", b"\\", b"\\u12", b"\x00", b'"', b"\n"):
                k = cut + d
                data = _graph(body[:k] + bad + body[k:])
                assert data[start + k : start + k + len(bad)] == bad
                assert _file_run(tmp_path, data) == _run(data, 1 << 16, fast=False), (cut, d, bad)


def test_no_worker_is_left_after_an_early_stop(tmp_path: Any, two_procs: List[Any]) -> None:
    from pbtxt_scan.graph._input import GraphFile

    content = _tensor(3000, 3)
    p = tmp_path / "g.pbtxt"
    p.write_bytes(_graph(content) + _graph(content).replace(b'"w"', b'"w2"'))
    with GraphFile.open(str(p)) as g:
        it = g.blocks(PATH, HEADS, chunk_size=997, validate=True)
        assert next(it).name == "w"  # (the worker ran for w's line, and is idle now)
        assert two_procs and two_procs[0][1]
        it.close()  # what a consumer that stops early does (or the generator being collected)
    _reaped(two_procs)


def test_fp_forks_no_worker_without_long_lines(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files without lines longer than one window fork nothing (nor load what forking needs)."""
    from pbtxt_scan.text import _skim_pool

    def no_fork(self: Any) -> bool:
        raise AssertionError("forked")

    monkeypatch.setattr(_skim_pool.Skimmer, "_start", no_fork)
    content = _tensor(450_000, 2)
    assert _canonical._LONG < len(content) < _skim_pool.WINDOW  # a long line inside one window
    data = _graph(content)
    assert _file_run(tmp_path, data) == _run(data, 1 << 16, fast=False)


# --- validate=False: fp and the listings read where a long literal ends, not its escapes ----------


@pytest.fixture()
def small_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every size of the structure-only skim small, so chunks and kept tails fall everywhere."""
    monkeypatch.setattr(_canonical, "_LONG", 1000)
    monkeypatch.setattr(_canonical, "_BIG", 4000)
    monkeypatch.setattr(_canonical, "_SKIP_FROM", 600)
    monkeypatch.setattr(_canonical, "_KEEP", 8)


def _skim_run(data: bytes, chunk: int) -> List[Any]:
    out: List[Any] = []
    try:
        out.extend(scan_canonical(io.BytesIO(data), PATH, HEADS, chunk_size=chunk, display="t", validate=False))
    except PbtxtError as e:
        out.append(("error", e.line, e.column, e.msg))
    return out


def _places(out: List[Any]) -> List[Any]:
    return [(x.name, x.op, x.line, x.column) if isinstance(x, Block) else x for x in out]


def _skims_as(tmp_path: Any, monkeypatch: pytest.MonkeyPatch, data: bytes, want: List[Any]) -> None:
    """``data`` read with validate=False, from a stream and from a file (positioned reads into
    one buffer), at several chunk sizes: ``want`` each time (compared by name, op and place)."""
    for skip_chunk in (257, 1000, 4096):
        monkeypatch.setattr(_canonical, "_SKIP_CHUNK", skip_chunk)
        for c in (997, 4096, 1 << 16):
            assert _places(_skim_run(data, c)) == _places(want), (skip_chunk, c)
        assert _places(_file_run(tmp_path, data, validate=False)) == _places(want), skip_chunk


@pytest.mark.parametrize("specials", [False, True])
def test_a_long_literal_is_read_to_where_it_ends(small_skip: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, specials: bool) -> None:
    pieces = _pieces(6000, 4, specials)
    for content in (b"".join(pieces), b"".join(pieces) + b"\\\\" * 5, b"\\\\" * 40 + b"".join(pieces)):
        data = _graph(content)
        ref = _run(data, 1 << 16, fast=False)
        assert [b.name for b in ref] == ["w", "x"]
        _skims_as(tmp_path, monkeypatch, data, ref)


def test_what_decides_where_a_long_literal_ends_is_checked(small_skip: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A NUL, a newline, no closing quote, an escaped one (after 1 or 21 backslashes, more than the
    kept tail): the general scanner's own error, at its place."""
    body = b"".join(_pieces(3000, 5))
    cases = [body[:1500] + b"\x00" + body[1500:], body[:1500] + b"\n" + body[1500:], body + b"\\", body + b"\\" * 21]
    for content in cases:
        data = _graph(content)
        ref = _run(data, 1 << 16, fast=False)
        assert ref[-1][0] == "error"
        _skims_as(tmp_path, monkeypatch, data, ref)
    data = _graph(body)[:-60]  # the input ends inside the literal
    _skims_as(tmp_path, monkeypatch, data, _run(data, 1 << 16, fast=False))


def test_escapes_inside_a_long_literal_are_left_to_check(small_skip: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad escape or a bare quote inside the body (not NUL: that one is checked) changes
    nothing fp reads: the blocks of the valid file come out, at the same lines. validate=True
    still reports each, as the general scanner does."""
    pieces = _pieces(6000, 6)
    valid = _run(_graph(b"".join(pieces)), 1 << 16, fast=False)
    for bad in _broken(pieces):
        data = _graph(bad)
        ref = _run(data, 1 << 16, fast=False)
        assert ref[-1][0] == "error"
        assert _file_run(tmp_path, data, validate=True) == ref
        _skims_as(tmp_path, monkeypatch, data, ref if b"\x00" in bad else valid)


def test_nodes_lists_a_graph_whose_tensor_check_rejects(tmp_path: Any) -> None:
    """From the user's side: `nodes` reads past a 200 KB tensor with a bad escape deep inside;
    `check` names the string's line and column (where its literal opens), exit 2."""
    from pbtxt_scan.cli import app  # (every command registered)
    from support.cli import CliRunner

    pieces = _pieces(80_000, 7)
    k = len(pieces) // 2
    bad = b"".join(pieces[:k]) + b"\\q" + b"".join(pieces[k:])
    p = tmp_path / "g.pbtxt"
    p.write_bytes(_graph(bad))
    runner = CliRunner()
    for jobs in ("1", "2"):  # (one process, or chunks on two: the same reading)
        listed = runner.invoke(app, ["nodes", "--jobs", jobs, str(p)])
        assert listed.exit_code == 0, listed.output
        assert [r.split("\t")[1:] for r in listed.stdout.splitlines()] == [["w", "Const"], ["x", "MatMul"]]
    line = _graph(bad)[: _graph(bad).index(b"tensor_content")].count(b"\n") + 1
    col = _graph(bad).split(b"\n")[line - 1].index(b'"') + 1
    for cmd in (["check"], ["stats", "--jobs", "1"], ["stats", "--jobs", "2"]):
        checked = runner.invoke(app, cmd + [str(p)])
        assert checked.exit_code == 2, cmd
        assert checked.stderr.strip().startswith("%s:%d:%d:" % (p, line, col)), (cmd, checked.stderr)


_ESCAPED = [b"\\%03o" % b for b in (0, 7, 200, 255)] + [b"\\n", b"\\t", b'\\"', b"\\'", b"\\\\", b"a", b"Z", b"\\x4f", b"\\u00e9"]


@settings(max_examples=examples(1), deadline=None)
@given(
    parts=st.lists(st.sampled_from(_ESCAPED), min_size=1, max_size=400),
    ending=st.sampled_from([b"", b"\\\\", b"\\\\" * 9, b"\\", b"\\" * 9, b"\x00", b"\\q"]),
    size=st.integers(1100, 3000),
    skip_chunk=st.integers(16, 700),
    keep=st.integers(1, 24),
    chunk=st.sampled_from([997, 4096, 1 << 16]),
)
# The closing quote the last byte of a skip chunk, the newline the next one's first: the skim must
# still see the byte before the quote (it once kept the quote alone and gave the literal to the
# exact road, which read the \q).
@example(parts=[b"\\000", b"a"], ending=b"\\q", size=1270, skip_chunk=16, keep=1, chunk=997)
def test_the_skim_ends_each_literal_where_the_grammar_does(
    parts: List[bytes], ending: bytes, size: int, skip_chunk: int, keep: int, chunk: int
) -> None:
    """Any body of writer escapes, padded past the long-line size, then one ending (even or odd
    backslash runs longer and shorter than the kept tail, a NUL, a bad escape): validate=False
    gives the general scanner's blocks or error, except that a bad escape is left to check."""
    body = b"".join(parts)
    body = body * (size // len(body) + 1) + ending
    data = _graph(body)
    ref = _run(data, 1 << 16, fast=False)
    want = _run(_graph(body[: -len(ending)]), 1 << 16, fast=False) if ending == b"\\q" else ref
    assert want[-1][0] != "error" or ref == want
    with pytest.MonkeyPatch.context() as mp:
        for name, value in (("_LONG", 1000), ("_BIG", 4000), ("_SKIP_FROM", 600), ("_KEEP", keep), ("_SKIP_CHUNK", skip_chunk)):
            mp.setattr(_canonical, name, value)
        assert _places(_skim_run(data, chunk)) == _places(want)
