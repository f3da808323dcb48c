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
import shutil
from pathlib import Path
from typing import List, Tuple

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
