"""``nodes --op OP --name GLOB`` (issue 38) lists exactly the rows that filtering the whole listing
gives, on every fixture, text and binary, on one process and split across workers; ``--count`` is
their number; ``-z`` (``nodes``, ``fp``, ``bp``, ``points``) ends each row or name with a NUL, the
names as they are (a newline, a tab, a quote, non-ASCII), for ``xargs -0``. The test on every fixture
runs one of each kind in the quick set, all in CI's ``slow`` run."""
from __future__ import annotations

import collections
import fnmatch
import functools
import json
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import pytest
from hypothesis import given, strategies as st
from support import wire_encoder as we
from support.cli import CliRunner
from support.data import DATA
from support.marks import input_kind, one_of_each, slow_if_big

from pbtxt_scan import NodeFilter
from pbtxt_scan.cli import app
from pbtxt_scan.graph import _parallel

runner = CliRunner()
TEXT = sorted((DATA / "graphs").glob("*.pbtxt"))
BINARY = sorted((DATA / "binary").iterdir())
_ROWS = _parallel.rows


def _size(p: Path) -> Path:
    return p if p.is_file() else next(p.iterdir())


def _nodes(args: Sequence[str], jobs: int, monkeypatch: pytest.MonkeyPatch) -> Tuple[str, int]:
    """``nodes ARGS --jobs JOBS``' stdout and exit code; with 2 jobs, chunks of 300 bytes (the
    small fixtures really split: tests/test_parallel.py)."""
    monkeypatch.setattr(_parallel, "rows", functools.partial(_ROWS, split_bytes=300) if jobs > 1 else _ROWS)
    r = runner.invoke(app, ["nodes", *args, "--jobs", str(jobs)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.stdout, r.exit_code


def _kept(name: Optional[str], op: Optional[str], ops: Sequence[str], globs: Sequence[str]) -> bool:
    """The filter as the user reads --help: any of the ops, any of the globs (fnmatch, case and all), both."""
    return (not ops or (op or "") in ops) and (not globs or any(fnmatch.fnmatchcase(name or "", g) for g in globs))


def _glob_of(name: str) -> str:
    """A glob for the first scope of ``name`` (``scope/*``), or its first three characters and ``*``."""
    esc = "".join("[%s]" % c if c in "*?[" else c for c in name)
    return esc.split("/")[0] + "/*" if "/" in name else esc[:3] + "*"


def _filters(names: List[Optional[str]], ops: List[Optional[str]]) -> List[Tuple[List[str], List[str]]]:
    common = collections.Counter(ops).most_common(1)[0][0] or ""
    last = names[-1] or ""
    one = "".join("[%s]" % c if c in "*?[" else c for c in last[:-1]) + "?"  # (? for its last character)
    return [([common, ops[-1] or ""], []), ([], [_glob_of(names[0] or "")]), ([common], [_glob_of(last), one]),
            (["NoSuchOp"], []), ([], ["no/such/*"])]


@pytest.mark.parametrize("path", one_of_each(slow_if_big(TEXT + BINARY, _size), input_kind), ids=lambda p: p.name)
def test_a_filtered_listing_is_the_listing_filtered(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(In the quick set: one fixture of each kind, text, .pb, .pb.gz, .meta and a SavedModel
    folder, among those up to ``support.marks.BIG_FIXTURE`` bytes; all of them in CI's ``slow`` run.)"""
    rows, code = _nodes([str(path)], 1, monkeypatch)
    assert code == 0
    objs = [json.loads(x) for x in _nodes(["--json", str(path)], 1, monkeypatch)[0].splitlines()]
    rows_of = rows.splitlines()
    assert len(rows_of) == len(objs) > 0
    names, ops = [o["name"] for o in objs], [o["op"] for o in objs]
    for want_ops, globs in _filters(names, ops):
        want = [r for r, n, o in zip(rows_of, names, ops) if _kept(n, o, want_ops, globs)]
        args = [a for op in want_ops for a in ("--op", op)] + [a for g in globs for a in ("--name", g)] + [str(path)]
        for jobs in (1, 2):
            got, code = _nodes(args, jobs, monkeypatch)
            assert (got.splitlines(), code) == (want, 0 if want else 1), (args, jobs)
            assert _nodes(["--count", *args], jobs, monkeypatch) == ("%d\n" % len(want), 0 if want else 1), (args, jobs)


def test_the_fixtures_are_all_there() -> None:
    assert len(TEXT) >= 42 and len(BINARY) >= 20


def test_functions_are_filtered_too(monkeypatch: pytest.MonkeyPatch) -> None:
    path = str(DATA / "graphs" / "tf2_gradient_tape.pbtxt")
    rows = _nodes(["--functions", path], 1, monkeypatch)[0].splitlines()
    want = [r for r in rows if r.split("\t")[2] == "MatMul"]
    assert len(want) >= 2 and any(r.split("\t")[3] != "-" for r in want)
    for jobs in (1, 2):
        assert _nodes(["--functions", "--op", "MatMul", path], jobs, monkeypatch)[0].splitlines() == want


# --- names with odd characters: -z ---------------------------------------------------------------

# A name with a newline, a tab, a quote, a backslash and non-ASCII, and one with a control character,
# after plain nodes (a binary graph is told from text by its first KiB: names printable there).
ODD = ["dense/Mat\nMul\t\"q\\é", "scope\x1b/ünï\tcödé", "plain/Const"]
NAMES = ["plain/Const_%d" % k for k in range(80)] + ODD
OPS = ["Const"] * 80 + ["MatMul", "Mat\tMul", "Const"]


def _text_literal(name: str) -> str:
    return '"%s"' % name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t").replace("\x1b", "\\033")


def _odd_graphs(tmp: Path) -> List[Path]:
    """The same three nodes as a text graph and as a binary GraphDef."""
    text = tmp / "odd.pbtxt"
    text.write_text("".join('node {\n  name: %s\n  op: %s\n}\n' % (_text_literal(n), _text_literal(op))
                            for n, op in zip(NAMES, OPS)), encoding="utf-8")
    binary = tmp / "odd.pb"
    binary.write_bytes(we.encode(we.graph([we.node(n, op) for n, op in zip(NAMES, OPS)])))
    return [text, binary]


@pytest.mark.parametrize("jobs", [1, 2])
def test_nul_ended_rows_hold_the_names_as_they_are(jobs: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in _odd_graphs(tmp_path):
        out, code = _nodes(["-z", str(path)], jobs, monkeypatch)
        assert code == 0 and out.endswith("\0")
        assert [r.split("\t", 1)[1] for r in out[:-1].split("\0")] == ["%s\t%s" % no for no in zip(NAMES, OPS)], path
        out, code = _nodes(["-z", "--name", "*\n*", str(path)], jobs, monkeypatch)  # (the filter sees the name as it is)
        assert (out.count("\0"), code) == (1, 0) and ODD[0] in out
        assert _nodes(["--count", "--op", "Mat\tMul", str(path)], jobs, monkeypatch) == ("1\n", 0)
        text, _ = _nodes([str(path)], jobs, monkeypatch)  # (and text rows still escape them)
        assert text.splitlines()[80].split("\t")[1] == "dense/Mat\\nMul\\t\"q\\\\é"


def _renamed_mlp(tmp: Path) -> Tuple[Path, Dict[str, str]]:
    """mlp_sgd with its fp and bp nodes renamed to names with a newline, a tab, a quote and non-ASCII."""
    names = {"dense/MatMul": "dense/Mat\nMul\t\"é", "gradients/dense/MatMul_grad/MatMul_1": "gradients/dense/MatMul_grad/Mat\tMul_1\n\"ü"}
    data = (DATA / "graphs" / "mlp_sgd.pbtxt").read_text(encoding="utf-8")
    for old, new in names.items():
        lit = _text_literal(new)[1:-1]
        for before, after in (('"%s"', '"%s"'), ('"^%s"', '"^%s"'), ('"%s:', '"%s:')):
            data = data.replace(before % old, after % lit)
    path = tmp / "mlp_odd.pbtxt"
    path.write_text(data, encoding="utf-8")
    return path, names


def test_point_commands_print_nul_ended_names(tmp_path: Path) -> None:
    path, names = _renamed_mlp(tmp_path)
    fp, bp = names["dense/MatMul"], names["gradients/dense/MatMul_grad/MatMul_1"]
    for args, want in ((["fp"], [fp]), (["bp"], [bp]), (["points"], [fp, bp]), (["fp", str(path)], [str(path), fp, str(path), fp]),
                       (["points", str(path)], [str(path), fp, bp, str(path), fp, bp])):
        r = runner.invoke(app, args + ["-z", str(path)])
        assert r.exit_code == 0, (args, r.stderr)
        assert r.stdout.endswith("\0") and r.stdout[:-1].split("\0") == want, args
    r = runner.invoke(app, ["points", "-z", str(DATA / "graphs" / "inference_no_gradients.pbtxt")])
    assert r.exit_code == 1 and r.stdout.endswith("\0\0") and r.stdout.count("\0") == 2  # (no bp: an empty name)


@pytest.mark.parametrize("args", [["nodes", "-z", "--json"], ["nodes", "-z", "--count"], ["fp", "-z", "--json"],
                                  ["bp", "--null", "--format", "json"], ["points", "-z", "--format", "env"]], ids=" ".join)
def test_nul_ended_output_is_text_only(args: List[str]) -> None:
    r = runner.invoke(app, args + [str(DATA / "graphs" / "mlp_sgd.pbtxt")])
    assert r.exit_code == 2 and "-z" in r.stderr and "Traceback" not in r.stderr + r.stdout


def test_a_filter_that_keeps_nothing_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    r = runner.invoke(app, ["nodes", "--op", "matmul", str(DATA / "graphs" / "mlp_sgd.pbtxt")])
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr.strip().endswith("no node matches --op matmul")


# --- the filter itself ------------------------------------------------------------------------------

_NAME = st.text(st.sampled_from("ab/_*?[]!-\n\té\udcff"), max_size=8)


@given(name=st.one_of(st.none(), _NAME), op=st.one_of(st.none(), st.sampled_from(["", "MatMul", "Const", "Mat\tMul"])),
       ops=st.lists(st.sampled_from(["MatMul", "Const", ""]), max_size=2), globs=st.lists(_NAME, max_size=2))
def test_the_filter_is_fnmatch_on_the_name_and_the_op_exactly(name: Optional[str], op: Optional[str], ops: List[str], globs: List[str]) -> None:
    try:
        [fnmatch.fnmatchcase("", g) for g in globs]
    except re.error:  # (before 3.9, fnmatch writes [z-a] as a bad range): a usage error, never a traceback
        with pytest.raises(ValueError):
            NodeFilter(ops, globs)
        return
    f = NodeFilter(ops, globs)
    want = _kept(name, op, ops, globs)
    assert f(name, op) == want
    raw = (name or "").encode("utf-8", "surrogateescape"), (op or "").encode("utf-8", "surrogateescape")
    assert f.raw(*raw) == want


def test_a_glob_costs_time_linear_in_the_name() -> None:
    # (3.7's and 3.8's fnmatch would take time to the power of the stars: hours; tests/test_guard.py
    # runs it through every command too)
    f = NodeFilter((), ["*a*a*a*a*a*a*b"])
    assert not f("a" * 300000, "Const") and f("a" * 300000 + "b", "Const")
