"""The right file (issue 35): a folder's own files before a path its ``checkpoint`` file writes out of
it, and ``--record`` that reaches every graph of an event file, numbered one way in notes and option.

- A model_dir copied or moved, its original then retrained: ``checkpoint`` still names the original
  (TF1 writes absolute paths; a relative ``../other/`` path leads out too). The copy's own
  ``.meta`` of that name is read; without it, its newest ``.meta``, then its ``graph.pbtxt``, then its
  event files; only a folder with none of them follows the path out, saying so with the path resolved.
- ``--record R`` reads record R's graph; ``--record R.G`` the graph G of record R (a ``trace_export``
  summary holds one graph per traced function). Both count from 0, and the note's ``record R.G`` is
  what ``--record`` takes back. On a folder, ``--record`` refers to the event file the folder gives.

The folders are built at test time from the fixtures; the answers are the fixtures' ``expected.json``
and the event fixtures' MANIFEST.json (what TensorFlow's reader said).
"""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from support.cli import CliRunner
from support.data import DATA, GRAPHS

from pbtxt_scan.cli import app

EVENTS = DATA / "events"
TRACE = EVENTS / "trace_export" / "events.out.tfevents.1700000000.fixture.1.0.v2"


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args))


def points_of(stem: str) -> Tuple[str, str]:
    exp = json.loads((GRAPHS / (stem + ".expected.json")).read_text())
    return exp["fp"], exp["bp"]


def answered(*args: str) -> Tuple[str, str]:
    r = run("points", "--json", *args)
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    return got["fp"]["name"], got["bp"]["name"]


# --- a model_dir's own files first ------------------------------------------------------------------

OWN, OTHER = "mlp_sgd", "estimator_queue"  # (the copy's graph, and the retrained original's: other answers)


def _two_runs(tmp_path: Path, written: str, own: List[Tuple[str, str]]) -> Tuple[Path, Path]:
    """``orig/`` (retrained: its ``model.ckpt-1000.meta`` is another graph) and ``copy/``, whose
    ``checkpoint`` names the original's checkpoint as ``written`` ("abs" or "rel"), holding ``own``
    (file name, fixture path under tests/data) besides an index file."""
    orig, copy = tmp_path / "orig", tmp_path / "copy"
    orig.mkdir()
    copy.mkdir()
    shutil.copy(DATA / "binary" / (OTHER + ".meta"), orig / "model.ckpt-1000.meta")
    path = str(orig / "model.ckpt-1000") if written == "abs" else "../orig/model.ckpt-1000"
    (copy / "checkpoint").write_text('model_checkpoint_path: "%s"\nall_model_checkpoint_paths: "%s"\n' % (path, path))
    (copy / "model.ckpt-1000.index").write_bytes(b"\x00\x01" * 40)
    for name, fixture in own:
        shutil.copy(DATA / fixture, copy / name)
    return orig, copy


OWN_FILES = [
    pytest.param([("model.ckpt-1000.meta", "binary/mlp_sgd.meta")], "model.ckpt-1000.meta", id="same-name-meta"),
    pytest.param([("model.ckpt-500.meta", "binary/mlp_sgd.meta")], "model.ckpt-500.meta", id="other-meta"),
    pytest.param([("graph.pbtxt", "graphs/mlp_sgd.pbtxt")], "graph.pbtxt", id="graph-pbtxt"),
    pytest.param([("model.ckpt-500.meta", "binary/mlp_sgd.meta"), ("graph.pbtxt", "graphs/estimator_queue.pbtxt")],
                 "model.ckpt-500.meta", id="meta-before-graph-pbtxt"),
]


@pytest.mark.parametrize("written", ["abs", "rel"])
@pytest.mark.parametrize("own, read", OWN_FILES)
def test_a_copied_model_dir_reads_its_own_files(tmp_path: Path, written: str, own: List[Tuple[str, str]], read: str) -> None:
    orig, copy = _two_runs(tmp_path, written, own)
    r = run("points", "--json", str(copy))
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    assert (got["fp"]["name"], got["bp"]["name"]) == points_of(OWN)
    assert r.stderr.startswith("%s: reading %s: " % (copy, copy / read)), r.stderr
    assert str(orig) not in r.stderr.split(": reading ")[1].split(":")[0]  # (the file read is the copy's)


@pytest.mark.parametrize("written", ["abs", "rel"])
def test_the_same_name_here_is_said_to_stand_for_the_path_out(tmp_path: Path, written: str) -> None:
    orig, copy = _two_runs(tmp_path, written, [("model.ckpt-1000.meta", "binary/mlp_sgd.meta")])
    first = run("fp", str(copy)).stderr.splitlines()[0]
    assert "out of this folder: the file of that name here is read" in first and "model.ckpt-1000" in first, first


@pytest.mark.parametrize("written", ["abs", "rel"])
def test_a_model_dir_with_nothing_of_its_own_follows_the_path_out_and_says_so(tmp_path: Path, written: str) -> None:
    orig, copy = _two_runs(tmp_path, written, [])
    r = run("points", "--json", str(copy))
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    assert (got["fp"]["name"], got["bp"]["name"]) == points_of(OTHER)
    resolved = os.path.abspath(str(orig / "model.ckpt-1000.meta"))
    first = r.stderr.splitlines()[0]
    assert first.startswith("%s: reading %s: " % (copy, resolved)), first
    assert "out of this folder" in first and "/../" not in first, first


def test_a_checkpoint_path_into_the_folder_itself_is_no_path_out(tmp_path: Path) -> None:
    d = tmp_path / "model_dir"
    d.mkdir()
    shutil.copy(DATA / "binary" / "mlp_sgd.meta", d / "model.ckpt-1000.meta")
    shutil.copy(DATA / "binary" / "estimator_queue.meta", d / "model.ckpt-2000.meta")  # (highest step: not it)
    (d / "checkpoint").write_text('model_checkpoint_path: "%s"\n' % (d / "model.ckpt-1000"))
    r = run("fp", str(d))
    assert (r.exit_code, r.stdout.strip()) == (0, points_of(OWN)[0])
    assert r.stderr.splitlines()[0] == ("%s: reading %s: the newest checkpoint's graph, as the folder's 'checkpoint' "
                                        "file names it" % (d, d / "model.ckpt-1000.meta"))


@pytest.mark.parametrize("written", [r"model.ckpt-\x", r"model.ckpt-\000", "\\", r"../\xff\xfe/model.ckpt-1000", "/"])
def test_a_checkpoint_file_with_any_path_is_read_around(tmp_path: Path, written: str) -> None:
    d = tmp_path / "model_dir"
    d.mkdir()
    shutil.copy(DATA / "binary" / "mlp_sgd.meta", d / "model.ckpt-1000.meta")
    (d / "checkpoint").write_text('model_checkpoint_path: "%s"\n' % written)
    r = run("fp", str(d))
    assert (r.exit_code, r.stdout.strip()) == (0, points_of(OWN)[0]), r.stderr
    assert "reading %s" % (d / "model.ckpt-1000.meta") in r.stderr


# --- --record: every graph, one numbering -------------------------------------------------------


def _manifest(case: str) -> Dict[str, Any]:
    return json.loads((EVENTS / case / "MANIFEST.json").read_text())


def _graphs(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    if record["field"] == "graph_def":
        return [record]
    if record["field"] == "meta_graph_def":
        return [record["graph_def"]]
    return [g["pre_optimization_graph"] for v in record.get("values", ())
            if v.get("plugin") in ("graph_run_metadata_graph", "graph_run_metadata")
            for g in v["run_metadata"]["function_graphs"]]


TRACE_GRAPHS = [(r["index"], k, g["nodes"]) for r in _manifest("trace_export")["event_files"][0]["records"]
                for k, g in enumerate(_graphs(r))]


def test_the_trace_fixture_has_several_graphs_in_one_record() -> None:
    assert [(i, k) for i, k, _ in TRACE_GRAPHS] == [(1, k) for k in range(5)]


@pytest.mark.parametrize("index, k, nodes", TRACE_GRAPHS, ids=["%d.%d" % x[:2] for x in TRACE_GRAPHS])
def test_record_reaches_each_graph_of_a_trace(index: int, k: int, nodes: int) -> None:
    r = run("nodes", str(TRACE), "--record", "%d.%d" % (index, k))
    assert r.exit_code == 0, r.stderr
    assert len(r.stdout.splitlines()) == nodes
    assert ": reading record %d.%d (" % (index, k) in r.stderr


def test_record_reads_the_graph_written_beside_the_trace() -> None:
    want = run("fp", str(EVENTS / "trace_export" / "function_graph_0.pbtxt"))
    got = run("fp", str(TRACE), "--record", "1.0")
    assert (got.exit_code, got.stdout) == (want.exit_code, want.stdout), got.stderr


def _event_paths() -> List[Path]:
    return [EVENTS / case / f["path"] for case in sorted(p.parent.name for p in EVENTS.glob("*/MANIFEST.json"))
            for f in _manifest(case)["event_files"] if any(_graphs(r) for r in f["records"])]


_SAID = re.compile(r": reading record ([0-9]+(?:\.[0-9]+)?) \(records 0 to ([0-9]+)")


@pytest.mark.parametrize("path", _event_paths(), ids=lambda p: "%s/%s" % (p.parent.name, p.name))
def test_the_record_a_note_names_is_the_one_record_reads(path: Path) -> None:
    first = run("points", str(path))
    m = _SAID.search(first.stderr)
    assert m is not None, first.stderr
    again = run("points", str(path), "--record", m.group(1))
    assert (again.exit_code, again.stdout) == (first.exit_code, first.stdout)
    assert ": reading record %s (" % m.group(1) in again.stderr, again.stderr
    assert int(m.group(2)) == _records(path) - 1


def _records(path: Path) -> int:
    for case in EVENTS.iterdir():
        if (case / "MANIFEST.json").is_file():
            for f in _manifest(case.name)["event_files"]:
                if EVENTS / case.name / f["path"] == path:
                    return len(f["records"])
    raise AssertionError(path)


def test_record_of_a_trace_without_a_graph_index_reads_its_training_graph_and_says_which() -> None:
    r = run("fp", str(TRACE), "--record", "1")
    assert r.exit_code == 0, r.stderr
    assert ": reading record 1.4 (records 0 to 4, graphs 1.0 to 1.4;" in r.stderr, r.stderr
    assert r.stdout == run("fp", str(TRACE), "--record", "1.4").stdout


@pytest.mark.parametrize("value, says", [
    ("1.5", "--record 1.5: record 1 holds graphs 1.0 to 1.4"),
    ("2.0", "--record 2.0: record 2 holds no graph; records with a graph: 1"),
    ("9.0", "--record 9.0: the file has 5 records (0 to 4)"),
    ("1.x", "'1.x': give a record, R, or a graph in it, R.G (both counted from 0)"),
    ("1.", "'1.': give a record, R, or a graph in it, R.G (both counted from 0)"),
    ("-1", "-1 is negative: records are counted from 0"),
])
def test_a_record_that_is_not_there(value: str, says: str) -> None:
    r = run("fp", str(TRACE), "--record", value)
    assert (r.exit_code, r.stdout) == (2, ""), r.stderr
    assert says in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("value", ["1.x", "1.", "", " ", "-0", "1e3", "0x1", "1.4.2", "\x00", "1,4", "1.-4"])
def test_a_record_that_is_no_number_is_a_usage_error(value: str) -> None:
    r = run("fp", str(TRACE), "--record", value)
    assert (r.exit_code, r.stdout) == (2, ""), r.stderr
    assert "--record" in r.stderr and "Traceback" not in r.stderr
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_a_graph_index_on_a_record_of_one_graph() -> None:
    path = EVENTS / "v1_filewriter" / "events.out.tfevents.1700000000.fixture.1.0"
    assert run("fp", str(path), "--record", "2.0").stdout == run("fp", str(path), "--record", "2").stdout
    r = run("fp", str(path), "--record", "2.1")
    assert r.exit_code == 2 and "--record 2.1: record 2 holds one graph, 2.0" in r.stderr, r.stderr


# --- --record on a folder -----------------------------------------------------------------------


@pytest.mark.parametrize("folder, event_file, record, said", [
    ("tf_keras_callback/logs", "tf_keras_callback/logs/train/events.out.tfevents.1700000000.fixture.1.0.v2", "2", "2"),
    ("estimator", "estimator/events.out.tfevents.1700000000.fixture.1.0", "3", "3"),  # (a model_dir: graph.pbtxt beside)
    ("estimator", "estimator/events.out.tfevents.1700000000.fixture.1.0", "14.0", "14"),  # (its one graph)
    ("trace_export", "trace_export/events.out.tfevents.1700000000.fixture.1.0.v2", "1.2", "1.2"),
])
def test_record_on_a_folder_reads_the_event_file_it_picks(folder: str, event_file: str, record: str, said: str) -> None:
    want = run("points", str(EVENTS / event_file), "--record", record)
    got = run("points", str(EVENTS / folder), "--record", record)
    assert (got.exit_code, got.stdout) == (want.exit_code, want.stdout), got.stderr
    assert "%s: reading %s: " % (EVENTS / folder, EVENTS / event_file) in got.stderr, got.stderr
    assert ": reading record %s (" % said in got.stderr


def test_record_on_a_folder_without_event_files_says_what_it_applies_to(tmp_path: Path) -> None:
    d = tmp_path / "export"
    shutil.copytree(DATA / "binary" / "mlp_sgd_saved_model", d)
    r = run("points", str(d), "--record", "2")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.strip() == ("%s: --record applies to TensorBoard event files, and this folder has none (without "
                                "--record: %s, a SavedModel folder)" % (d, d / "saved_model.pb")), r.stderr


def test_record_on_a_graph_file_names_the_file_and_what_it_is() -> None:
    meta = DATA / "binary" / "mlp_sgd.meta"
    r = run("points", str(meta), "--record", "2")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.strip() == "%s: --record applies to TensorBoard event files, and this is a binary MetaGraphDef" % meta, r.stderr
