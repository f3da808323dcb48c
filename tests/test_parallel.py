"""``--jobs N`` prints what ``--jobs 1`` prints: stdout, stderr and exit code, on every fixture, on
the non-canonical layouts and on broken files (errors at random positions).

The chunk size is forced small (the planner's ``split_bytes``, bound where the commands call
``_parallel``) so that the small fixtures really split into many chunks;
``test_fixtures_really_split`` checks that they do. ``test_every_fixture`` runs, in the quick
set, two fixtures of each dialect (TensorFlow's text, GE's ge_proto, GE's ONNX) among those up to
``support.marks.BIG_FIXTURE`` bytes; CI's ``slow`` run adds the others.
"""
from __future__ import annotations

import functools
import gzip
import re
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support.examples import examples

from pbtxt_scan.graph import _parallel
from pbtxt_scan.graph._input import GraphFile
from pbtxt_scan.cli import app

from support.cli import CliRunner
from support.data import DATA
from support.marks import input_kind, one_of_each, quick_first, slow_if_big

GRAPHS = sorted((DATA / "graphs").glob("*.pbtxt"))
GE = sorted(p for p in (DATA / "ge").rglob("*") if p.suffix in (".txt", ".pbtxt"))
FIXTURES = GRAPHS + GE
COMMANDS = (["stats"], ["stats", "--json", "--top", "0"], ["check"], ["nodes"], ["nodes", "--json"])

runner = CliRunner()
_STATS, _ROWS = _parallel.stats, _parallel.rows
_SECONDS = re.compile(r'(seconds\s+|"seconds": )[0-9.e-]+')


def _split_at(split: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands' parallel path cuts chunks of about ``split`` bytes."""
    monkeypatch.setattr(_parallel, "stats", functools.partial(_STATS, split_bytes=split))
    monkeypatch.setattr(_parallel, "rows", functools.partial(_ROWS, split_bytes=split))


def _run(args: List[str], jobs: int, split: int, monkeypatch: pytest.MonkeyPatch, stdin: bytes = b"") -> Tuple[str, str, int]:
    _split_at(split, monkeypatch)
    r = runner.invoke(app, args + ["--jobs", str(jobs)], input=stdin)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return _SECONDS.sub(r"\1S", r.stdout), r.stderr, r.exit_code


def _same(args: List[str], monkeypatch: pytest.MonkeyPatch, split: int = 300, jobs: Tuple[int, ...] = (2, 3)) -> Tuple[str, str, int]:
    want = _run(args, 1, split, monkeypatch)
    for j in jobs:
        assert _run(args, j, split, monkeypatch) == want, (args, j, split)
    return want


def _splits(path: Path, split: int) -> int:
    with GraphFile.open(str(path), spool=False) as g:
        bounds = _parallel.plan(g, 2, split_bytes=split)
    return 0 if bounds is None else len(bounds) - 2


def test_fixtures_found() -> None:
    assert len(GRAPHS) >= 12 and len(GE) >= 5


def test_fixtures_really_split(monkeypatch: pytest.MonkeyPatch) -> None:
    for p in GRAPHS:
        # (split points are column-0 top-level openers: a graph whose model sits in a library
        # function, such as npu_geop, has few)
        openers = p.read_bytes().count(b"\nnode {\n")
        assert _splits(p, 300) >= min(5, openers // 10), p
    # A GE ge_proto dump is one top-level graph block: nothing to split at.
    assert _splits(DATA / "ge" / "ge_proto_00000013_graph_3_Build.txt", 300) == 0


@pytest.mark.parametrize("path", one_of_each(slow_if_big(FIXTURES), input_kind, 2), ids=lambda p: p.name)
@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_every_fixture(path: Path, cmd: List[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, code = _same(cmd + [str(path)], monkeypatch)
    assert code in (0, 1)


# --- layouts ------------------------------------------------------------------------------------

MLP = (DATA / "graphs" / "mlp_sgd.pbtxt").read_bytes()


def _crlf(b: bytes) -> bytes:
    return b.replace(b"\n", b"\r\n")


def _one_line(b: bytes) -> bytes:
    return b.replace(b"\n", b" ")


def _angle(b: bytes) -> bytes:
    b = re.sub(rb"(?m) \{$", b" <", b)
    return re.sub(rb"(?m)^( *)\}$", rb"\1>", b)


def _flush_left(b: bytes) -> bytes:
    """No indentation: nested openers (attr {, value {) sit in column 0, so splits land inside
    blocks, the chunks fail, and the rest is scanned again sequentially."""
    return re.sub(rb"(?m)^ +", b"", b)


def _bom_comments(b: bytes) -> bytes:
    """A BOM (chunk 0 only), comment lines and blank lines between the top-level blocks."""
    return b"\xef\xbb\xbf# a comment\n" + b.replace(b"\n}\nnode {\n", b"\n}\n\n# node {\n  # }\nnode {\n")


LAYOUTS = {"crlf": _crlf, "one_line": _one_line, "angle": _angle, "flush_left": _flush_left, "bom_comments": _bom_comments}


@pytest.mark.parametrize("layout", quick_first(sorted(LAYOUTS), 2))
@pytest.mark.parametrize("cmd", COMMANDS, ids=" ".join)
def test_layouts(layout: str, cmd: List[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / ("mlp_%s.pbtxt" % layout)
    p.write_bytes(LAYOUTS[layout](MLP))
    _, err, code = _same(cmd + [str(p)], monkeypatch)
    assert code == 0, err
    splits = _splits(p, 300)
    if layout in ("crlf", "one_line"):
        assert splits == 0
    else:
        assert splits >= 5


def test_flush_left_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A split inside a block makes a chunk end inside a field: the rest is rescanned, same answer."""
    from pbtxt_scan.graph._dialect import NAME_AND_OP
    from pbtxt_scan.graph._stats import stats

    p = tmp_path / "flush.pbtxt"
    p.write_bytes(_flush_left(MLP))
    _split_at(200, monkeypatch)
    with GraphFile.open(str(p), spool=False) as g:
        a = stats(g, jobs=1)._replace(seconds=0)
        b = stats(g, jobs=2)._replace(seconds=0)
        profile: dict = {}
        got = _STATS(g, ("node",), NAME_AND_OP, 2, split_bytes=200, profile=profile)
        assert 0 <= profile["sequential_from"] < len(MLP)
    assert a == b and a.nodes == 155 and got == (a.nodes, a.ops, a.bytes, a.lines)
    with GraphFile.open(str(GRAPHS[0]), spool=False) as g:  # (a writer-layout file: no fallback)
        profile = {}
        assert _STATS(g, ("node",), NAME_AND_OP, 2, split_bytes=200, profile=profile) is not None
        assert "sequential_from" not in profile and "merge" in profile


def test_streams_and_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gz = tmp_path / "mlp.pbtxt.gz"
    gz.write_bytes(gzip.compress(MLP))
    for cmd in COMMANDS:
        want = _run(cmd + [str(DATA / "graphs" / "mlp_sgd.pbtxt")], 1, 300, monkeypatch)
        got_gz = _run(cmd + [str(gz)], 2, 300, monkeypatch)
        got_in = _run(cmd + ["-"], 2, 300, monkeypatch, stdin=MLP)
        assert got_gz[1:] == want[1:] and got_in[1:] == want[1:]
        if cmd[0] == "nodes":
            assert got_gz[0] == want[0] == got_in[0]


def test_check_many_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.pbtxt"
    bad.write_bytes(MLP[:50000] + b"}\n" + MLP[50000:])
    files = [str(GRAPHS[0]), str(bad), str(GRAPHS[1])]
    out, err, code = _same(["check"] + files, monkeypatch)
    assert code == 2 and out.count(": ok") == 2 and err.count("\n") == 1


def test_jobs_option(monkeypatch: pytest.MonkeyPatch) -> None:
    r = runner.invoke(app, ["stats", "--jobs", "0", str(GRAPHS[0])])
    assert r.exit_code == 2 and "--jobs" in r.stderr
    from pbtxt_scan.parallel._cores import usable_cores

    assert usable_cores() >= 1
    # The default is every usable core: the same output as one.
    _split_at(300, monkeypatch)
    a = runner.invoke(app, ["nodes", str(GRAPHS[0])])
    b = runner.invoke(app, ["nodes", "--jobs", "1", str(GRAPHS[0])])
    assert a.exit_code == b.exit_code == 0 and a.stdout == b.stdout


@pytest.mark.slow
def test_errors_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An error in the middle, the first of two errors, and a file cut short in a chunk's middle."""
    a, b, c = (MLP.index(b"\n", at) + 1 for at in (20000, 40000, 60000))
    cases = {
        "middle": MLP[:b] + b"@\n" + MLP[b:],
        "two": MLP[:a] + b"}\n" + MLP[a:c] + b"{\n" + MLP[c:],
        "cut": MLP[:45000],
        "unterminated": MLP[:b] + b'x: "abc\n' + MLP[b:],
        "bad_utf8": MLP[:a] + b"x: 1\xff\n" + MLP[a:],
    }
    for name, text in cases.items():
        p = tmp_path / (name + ".pbtxt")
        p.write_bytes(text)
        for cmd in (["check"], ["nodes"], ["stats"]):
            _, err, code = _same(cmd + [str(p)], monkeypatch)
            assert code == 2 and err.count("\n") == 1, (name, err)


# --- broken files, errors at random positions ---------------------------------------------------

SMALL = [p for p in GRAPHS if p.stat().st_size < 150_000]
EDITS = [b"{", b"}", b"<", b">", b'"', b"'", b"\\", b"\n", b"#", b":", b"\xff", b"node {\n", b"}\n", b"\nnode {\n", b" ", b"-", b"[", b","]


@settings(max_examples=examples(0.04), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fixture=st.sampled_from(SMALL),
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.sampled_from(EDITS)), min_size=1, max_size=3),
    cut=st.one_of(st.none(), st.floats(0.05, 1)),
    split=st.sampled_from([64, 250, 1000, 5000]),
)
def test_broken_files(fixture: Path, edits: list, cut: object, split: int, tmp_path_factory: pytest.TempPathFactory,
                      monkeypatch: pytest.MonkeyPatch) -> None:
    text = bytearray(fixture.read_bytes())
    for where, drop, ins in edits:
        at = int(where * len(text))
        text[at : at + drop] = ins
    if cut is not None:
        del text[int(cut * len(text)) :]  # type: ignore[operator]
    p = tmp_path_factory.mktemp("broken") / "g.pbtxt"
    p.write_bytes(bytes(text))
    _same(["check", str(p)], monkeypatch, split=split)
    _same(["nodes", str(p)], monkeypatch, split=split, jobs=(2,))


# --- workers ----------------------------------------------------------------------------------


def test_a_dying_worker_is_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed mid-task (here: exiting at its third chunk) leaves the rest to the parent."""
    import os

    real = _parallel._Job.scan

    def dying(self, task):  # type: ignore[no-untyped-def]
        if task[0] > 2000:
            os._exit(3)
        return real(self, task)

    want = _run(["nodes", str(GRAPHS[0])], 1, 300, monkeypatch)
    monkeypatch.setattr(_parallel._Job, "scan", dying)
    assert _run(["nodes", str(GRAPHS[0])], 2, 300, monkeypatch) == want
    assert _run(["stats", str(GRAPHS[0])], 2, 300, monkeypatch)[1:] == want[1:]


def test_closing_early_stops_the_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """`nodes | head`: the reader stops after the first rows; no worker is left behind."""
    import os

    from pbtxt_scan.graph._dialect import NAME_AND_OP

    with GraphFile.open(str(GRAPHS[0]), spool=False) as g:
        texts = _parallel.rows(g, ("node",), NAME_AND_OP, str, 2, split_bytes=300)
        assert texts is not None
        first = next(texts)
        texts.close()
    assert first
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # (no child, not even a zombie)


def test_huge_heads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Names and ops past the lexer's long-token size (1 MiB) read the same from any chunk start."""
    cut = MLP.index(b"\nnode {\n", 40000) + 1
    big = b'node {\n  name: "' + b"x" * 1_500_000 + b'"\n  op: "' + b"y" * 1_200_000 + b'"\n}\n'
    p = tmp_path / "big.pbtxt"
    p.write_bytes(MLP[:cut] + big + MLP[cut:])
    for split in (300, 100_000):
        out, _, code = _same(["nodes", str(p)], monkeypatch, split=split, jobs=(2,))
        assert code == 0 and "\tx" in out  # (whole on 3.11; the general scanner keeps a long string's head)
