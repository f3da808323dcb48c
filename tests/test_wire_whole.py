"""Whole-file commands on binary graphs (issue 21): ``nodes``, ``stats`` and ``check`` read only
what they need (``wire._wire_whole``), and ``--jobs N`` splits a binary GraphDef at node starts.

The references are the block reader every other command uses (``iter_wire_blocks``: every node
read field by field, and with ``validate`` every node checked by ``check_node``) and ``--jobs 1``:
the same rows, counts, op order, and the same first error at the same offset.

The tests on every fixture run the twins of ``support.data.QUICK_GRAPHS`` in the quick set (every
container: GraphDef, gzip, MetaGraphDef, SavedModel; ``--jobs 3`` on those up to 40 KB), all of them in
CI's ``slow`` run.
"""
from __future__ import annotations

import collections
import functools
import io
import re
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st
from support.cli import CliRunner
from support.data import DATA
from support.examples import examples
from support.marks import quick_graphs, slow_if_big
from support.wire_encoder import Fixed32, Packed, encode, graph, node, tag, varint

import pbtxt_scan as ps
from pbtxt_scan.cli import app
from pbtxt_scan.graph import _parallel
from pbtxt_scan.graph._input import GraphFile
from pbtxt_scan.wire import _wire as w
from pbtxt_scan.wire._wire_check import Seen, node_ok
from pbtxt_scan.wire._wire_text import check_node
from pbtxt_scan.wire._wire_whole import split_finder

BINARY = DATA / "binary"
FIXTURES = sorted(p for p in BINARY.rglob("*") if p.is_file() and p.suffix in (".pb", ".meta", ".gz"))
GRAPHDEFS = [p for p in FIXTURES if p.suffix == ".pb" and p.parent == BINARY]
COMMANDS = (["stats"], ["stats", "--json", "--top", "0"], ["check"], ["nodes"], ["nodes", "--jsonl"])
NAME_OP = frozenset({"name", "op"})
_SECONDS = re.compile(r'(seconds\s+|"seconds": )[0-9.e-]+')
runner = CliRunner()
_STATS, _ROWS = _parallel.stats, _parallel.rows


def _run(args: List[str], jobs: int, split: int, monkeypatch: pytest.MonkeyPatch) -> Tuple[str, str, int]:
    monkeypatch.setattr(_parallel, "stats", functools.partial(_STATS, split_bytes=split))
    monkeypatch.setattr(_parallel, "rows", functools.partial(_ROWS, split_bytes=split))
    r = runner.invoke(app, args + ["--jobs", str(jobs)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return _SECONDS.sub(r"\1S", r.stdout), r.stderr, r.exit_code


# ---- the references ---------------------------------------------------------------------------


def _reference_rows(path: Path) -> List[str]:
    with GraphFile.open(str(path), spool=False) as g:
        return [ps.row_tsv(b) for b in g.blocks(g.dialect.path, NAME_OP)]


def _reference_stats(data: bytes) -> Tuple[int, List[Tuple[str, int]]]:
    ops: Any = collections.Counter()
    n = 0
    for b in w.iter_wire_blocks(io.BytesIO(data), heads=NAME_OP, validate=True):
        n += 1
        ops[b.op or "?"] += 1
    return n, list(ops.items())


def _error(fn: Any) -> Optional[Tuple[str, Optional[int]]]:
    try:
        fn()
    except ps.PbtxtError as e:
        return e.msg, e.offset
    return None


def test_fixtures_found() -> None:
    assert len(FIXTURES) >= 8 and len(GRAPHDEFS) >= 5


@pytest.mark.parametrize("path", quick_graphs(FIXTURES), ids=lambda p: p.name)
def test_rows_and_stats_equal_the_block_reader(path: Path) -> None:
    assert "\n".join(ps.iter_rows(str(path), ps.row_tsv, jobs=1)) == "\n".join(_reference_rows(path))
    st_ = ps.stats(str(path), jobs=1)
    with GraphFile.open(str(path), spool=False) as g:
        ops: Any = collections.Counter()
        for b in g.blocks(g.dialect.path, NAME_OP, validate=True):
            ops[b.op or "?"] += 1
    assert st_.nodes == sum(ops.values()) and list(st_.ops.items()) == list(ops.items())


@pytest.mark.parametrize("path", quick_graphs(GRAPHDEFS), ids=lambda p: p.name)
def test_every_node_of_the_fixtures_takes_the_fast_check(path: Path) -> None:
    """node_ok passes every valid node of TensorFlow's own graphs (else ``check`` would render
    them all with check_node, as slowly as before)."""
    data = path.read_bytes()
    seen = Seen()
    blocks = list(w.iter_wire_blocks(io.BytesIO(data), heads=NAME_OP))
    assert blocks and all(node_ok(data, b.start, b.start, b.end, seen) for b in blocks)


@pytest.mark.parametrize("path", quick_graphs(slow_if_big(GRAPHDEFS)), ids=lambda p: p.name)  # (quick: mlp_sgd, tf2_gradient_tape)
@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_jobs_n_equals_jobs_1(path: Path, cmd: List[str], monkeypatch: pytest.MonkeyPatch) -> None:
    with GraphFile.open(str(path), spool=False) as g:
        bounds = _parallel.plan(g, 2, split_bytes=500)
    assert bounds is not None and len(bounds) > 2  # it really splits
    want = _run(cmd + [str(path)], 1, 500, monkeypatch)
    assert want[2] == 0
    assert _run(cmd + [str(path)], 3, 500, monkeypatch) == want, cmd  # (2 jobs: test_errors_inside_attrs_jobs_2)


def test_split_points_are_node_starts() -> None:
    for path in GRAPHDEFS:
        data = path.read_bytes()
        starts = {b.start - 1 - len(varint(b.end - b.start)) for b in w.iter_wire_blocks(io.BytesIO(data), heads=NAME_OP)}
        with GraphFile.open(str(path), spool=False) as g:
            bounds = _parallel.plan(g, 2, split_bytes=300)
        assert bounds is not None and set(bounds[1:-1]) <= starts, path.name


# ---- graphs with node starts inside tensor contents --------------------------------------------

names = st.text("abcxyz/_", min_size=1, max_size=12)
ops = st.sampled_from(["Const", "MatMul", "Add", "NoOp", "Identity"])


def _fake_nodes(k: int) -> bytes:
    """Bytes that look like ``k`` whole top-level node fields (a serialized GraphDef's own)."""
    return b"".join(tag(1, 2) + varint(len(b)) + b for b in (encode(node("fake%d" % i, "Const", ["x"])) for i in range(k)))


@st.composite
def graphs(draw: Any) -> bytes:
    nodes = []
    for k in range(draw(st.integers(3, 25))):
        attrs: List[Tuple[str, list]] = [("T", [(6, 1)])]
        if draw(st.booleans()):
            content = draw(st.binary(max_size=40)) + _fake_nodes(draw(st.integers(0, 6))) + draw(st.binary(max_size=40))
            attrs.append(("value", [(8, [(1, 1), (2, [(2, [(1, 3)])]), (4, content)])]))
        if draw(st.booleans()):
            attrs.append(("shape", [(7, [(2, [(1, draw(st.integers(-1, 1 << 40)))])])]))
        if draw(st.integers(0, 5)) == 0:
            attrs.append(("list", [(1, [(3, Packed("varint", [1, 300, 1 << 35])), (4, Fixed32(b"\0\0\x80?"))])]))
        nodes.append(node(draw(names) + str(k), draw(ops), draw(st.lists(names, max_size=3)), attrs=attrs))
    return encode(graph(nodes))


def _chunked(path: Path, bounds: List[int], row: Any) -> Tuple[Any, ...]:
    with GraphFile.open(str(path), spool=False) as g:
        job = _parallel._Job(g, ("node",), NAME_OP, row, None, tsv=row is ps.row_tsv)
        got = list(_parallel.chunks(job, bounds, 2))
    if row is None:
        ops: Any = collections.Counter()
        for c in got:
            ops.update(c.ops)
        return sum(c.nodes for c in got), list(ops.items())
    return ("\n".join(c.text for c in got if c.text),)


@settings(max_examples=examples(0.1), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                           HealthCheck.function_scoped_fixture])
@given(graphs(), st.lists(st.floats(0, 1), max_size=6), st.booleans(), st.data())
def test_any_split_gives_the_same_rows(tmp_path: Path, data: bytes, cuts: List[float], verified: bool, more: Any) -> None:
    """Chunk boundaries anywhere (or where the finder puts them): the rows and counts of ``--jobs
    1``. A wrong boundary makes the chunk before it fail, and the parent reads on alone."""
    path = tmp_path / "g.pb"
    path.write_bytes(data)
    if verified:
        find = split_finder(lambda at, n: data[at : at + n], len(data))
        bounds = sorted({b for b in (find(int(c * len(data)), len(data)) for c in cuts) if b})
    else:
        bounds = sorted({int(c * len(data)) for c in cuts} - {0, len(data)})
    bounds = [0] + bounds + [len(data)]
    want_rows = "\n".join(ps.iter_rows(str(path), ps.row_tsv, jobs=1))
    assert want_rows == "\n".join(_reference_rows(path))
    assert _chunked(path, bounds, ps.row_tsv) == (want_rows,)
    jsonl = more.draw(st.booleans())
    if jsonl:  # another row format: the nodes read the usual way in the chunks too
        row = _other_row
        assert _chunked(path, bounds, row) == ("\n".join(row(b) for b in _blocks(data)),)
    n, ops_ = _reference_stats(data)
    assert _chunked(path, bounds, None) == (n, ops_)


def _other_row(b: ps.Block) -> str:
    return "%d|%s|%s" % (b.start, b.name, b.op)


def _blocks(data: bytes) -> List[ps.Block]:
    return list(w.iter_wire_blocks(io.BytesIO(data), heads=NAME_OP))


# ---- damaged input: the same first error at the same offset ------------------------------------

SMALL = encode(graph([
    node("a", "Const", ["x"], "/cpu:0", [("dtype", [(6, 1)]), ("value", [(8, [(1, 1), (2, [(2, [(1, 2)])]), (4, b"zz" * 20)])])]),
    node("b", "Add", ["a", "a"], attrs=[("T", [(6, 1)]), ("list", [(1, [(3, Packed("varint", [5, 1 << 40]))])])]),
    node("c", "NoOp"),
]))


def _check_error(data: bytes, tmp_path: Path) -> Optional[Tuple[str, Optional[int]]]:
    path = tmp_path / "bad.pb"
    path.write_bytes(data)
    return _error(lambda: ps.check(str(path)))


def test_every_truncation_gives_the_old_error(tmp_path: Path) -> None:
    for cut in range(1, len(SMALL)):
        data = SMALL[:cut]
        if w.sniff(data) is None:
            continue
        want = _error(lambda: _reference_stats(data))
        assert _check_error(data, tmp_path) == want, cut


@settings(max_examples=examples(0.5), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, len(SMALL) - 1), st.sampled_from([0x80, 0xFF, 0x07, 0x0E, 0x0F, 0x00, 0x7F, 0x2A, 0x03])), min_size=1, max_size=3))
@example(edits=[(147, 0x80)])  # node c's name tag made 0x80 0x01 (field 16, a varint): valid; the old
# reader's validation used to check other bytes once its careful path had refilled the buffer
def test_damaged_bytes_give_the_old_error(tmp_path: Path, edits: List[Tuple[int, int]]) -> None:
    """Bad varints (0x80, 0xff runs), bad wire types (6, 7), field 0, groups, wrong lengths:
    ``check`` fails where the block reader with ``check_node`` fails, with its message and
    offset, or passes where it passes; and node_ok never passes a node check_node refuses."""
    buf = bytearray(SMALL)
    for at, byte in edits:
        buf[at] = byte
    data = bytes(buf)
    if w.sniff(data) is None:
        return
    want = _error(lambda: _reference_stats(data))
    assert _check_error(data, tmp_path) == want
    if want is None:
        assert ps.stats(str(tmp_path / "bad.pb")).nodes == _reference_stats(data)[0]
    for b in _blocks_or_none(data):
        if node_ok(data, b.start, b.start, b.end, Seen()):
            check_node(data[b.start : b.end], b.start)  # (raises if node_ok was wrong)


def _blocks_or_none(data: bytes) -> List[ps.Block]:
    try:
        return _blocks(data)
    except ps.PbtxtError:
        return []


@settings(max_examples=examples(0.3), deadline=None)
@given(st.binary(min_size=1, max_size=60))
def test_node_ok_never_passes_what_check_node_refuses(body: bytes) -> None:
    data = encode(node("n", "Op", attrs=[("k", [(8, [(1, 1)])])])) + body
    if node_ok(data, 0, 0, len(data), Seen()):
        check_node(data)


@pytest.mark.parametrize("edit", [
    (b"\x30\x01", b"\x30\x80"),  # a varint cut by its message's end
    (b"\x30\x01", b"\x36\x01"),  # wire type 6
    (b"\x30\x01", b"\x00\x01"),  # field 0
    (b"\x12\x02\x08\x02", b"\x12\x05\x08\x02"),  # a length past its message's end
    (b"\x05\xac\x02", b"\x05\xac\x82"),  # a packed varint cut by the list's end
])
def test_errors_inside_attrs_jobs_2(edit: Tuple[bytes, bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error deep in an attr of a node in the middle of a split file: the same stderr and exit
    code with --jobs 2 as with --jobs 1, and the offset of the block reader's check."""
    attrs = [("dtype", [(6, 1)]), ("list", [(1, [(3, Packed("varint", [5, 300]))])]), ("value", [(8, [(1, 1), (2, [(2, [(1, 2)])])])])]
    ok = [node("n%d" % i, "Const", ["x"], attrs=attrs) for i in range(60)]
    good = encode(graph(ok))
    at = len(good) // 2
    k = good.index(edit[0], at)
    data = good[:k] + edit[1] + good[k + len(edit[0]) :]
    path = tmp_path / "bad.pb"
    path.write_bytes(data)
    want = _error(lambda: _reference_stats(data))
    assert want is not None and want[1] is not None
    assert _error(lambda: ps.check(str(path))) == want
    for cmd in (["check"], ["stats"]):
        one = _run(cmd + [str(path)], 1, 300, monkeypatch)
        assert one[2] == 2 and "offset %d" % want[1] in one[1]
        assert _run(cmd + [str(path)], 2, 300, monkeypatch) == one
