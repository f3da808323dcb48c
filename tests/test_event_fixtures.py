"""Real TensorBoard event files (tests/data/events/, written by TensorFlow 2.15.1 and Keras 3.15.1:
tools/make_event_fixtures.py) against what TensorFlow's own reader said about them when they were
made (each case's MANIFEST.json) and against the graph written beside them (issue 23).

- The records' framing: offsets and lengths as TensorFlow's iterator read them.
- The graphs found: which records hold one, and how many graphs (a trace's RunMetadata holds several).
- The graph read by default is the last with a gradients scope (else the last), and fp and bp on
  the event file (or its logs folder) name what they name on the graph written beside it;
  ``--record N`` reads each other record's graph the same way.
- A file or folder with no op graph says what it holds.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from support.cli import CliRunner
from support.data import DATA

from pbtxt_scan.cli import app
from pbtxt_scan.wire import _events
from pbtxt_scan.wire._tfrecord import iter_records

EVENTS = DATA / "events"
CASES = sorted(p.parent.name for p in EVENTS.glob("*/MANIFEST.json"))


def manifest(case: str) -> Dict[str, Any]:
    return json.loads((EVENTS / case / "MANIFEST.json").read_text())


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args))


def graphs_of(record: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The graphs in one manifest record, in file order (each with ``nodes``, ``gradients_scope``, ``same_as``)."""
    if record["field"] == "graph_def":
        return [record]
    if record["field"] == "meta_graph_def":
        return [record["graph_def"]]
    out = []
    for v in record.get("values", ()):
        if v.get("plugin") in ("graph_run_metadata_graph", "graph_run_metadata"):
            out += [g["pre_optimization_graph"] for g in v["run_metadata"]["function_graphs"]]
    return out


def event_files() -> Iterator[Tuple[str, Dict[str, Any]]]:
    for case in CASES:
        for f in manifest(case)["event_files"]:
            yield case, f


FILES = list(event_files())
IDS = ["%s/%s" % (c, f["path"]) for c, f in FILES]


def _read_at(path: Path):  # type: ignore[no-untyped-def]
    data = path.read_bytes()
    return (lambda pos, n: data[pos : pos + n]), len(data)


@pytest.mark.parametrize("case, f", FILES, ids=IDS)
def test_records_as_tensorflow_read_them(case: str, f: Dict[str, Any]) -> None:
    read_at, size = _read_at(EVENTS / case / f["path"])
    got = [(r.index, r.offset, r.length) for r in iter_records(read_at, size)]
    assert got == [(r["index"], r["offset"], r["length"]) for r in f["records"]]


@pytest.mark.parametrize("case, f", FILES, ids=IDS)
def test_the_graphs_found_are_tensorflows(case: str, f: Dict[str, Any]) -> None:
    read_at, size = _read_at(EVENTS / case / f["path"])
    found = _events.scan(read_at, size)
    want = [(r["index"], len(graphs_of(r))) for r in f["records"] if graphs_of(r)]
    got: Dict[int, int] = {}
    for p in found.places:
        got[p.record] = got.get(p.record, 0) + 1
    assert sorted(got.items()) == want
    assert found.records == len(f["records"])


def _expected_record(f: Dict[str, Any]) -> Optional[Tuple[int, Dict[str, Any]]]:
    """The record (and graph) the manifest says a reader should take: the last graph with a
    gradients scope, else the last graph."""
    graphs = [(r["index"], g) for r in f["records"] for g in graphs_of(r)]
    if not graphs:
        return None
    training = [x for x in graphs if x[1]["gradients_scope"]]
    return (training or graphs)[-1]


def _names(*args: str) -> List[Optional[str]]:
    out = []
    for cmd in ("fp", "bp"):
        r = run(cmd, "--json", *args)
        assert r.exit_code in (0, 1), r.stderr
        out.append(json.loads(r.stdout.splitlines()[-1])["name"] if r.stdout.strip() else None)
    return out


WITH_GRAPHS = [(c, f) for c, f in FILES if _expected_record(f) is not None]


@pytest.mark.parametrize("case, f", WITH_GRAPHS, ids=["%s/%s" % (c, f["path"]) for c, f in WITH_GRAPHS])
def test_fp_and_bp_on_the_event_file_are_the_beside_graphs(case: str, f: Dict[str, Any]) -> None:
    path = EVENTS / case / f["path"]
    index, graph = _expected_record(f)  # type: ignore[misc]
    r = run("fp", str(path))
    assert re.search(r": reading record %d(\.[0-9]+)? \(records 0 to %d[;,]" % (index, len(f["records"]) - 1), r.stderr), r.stderr
    if not graph["same_as"]:
        return  # (no graph was written beside this one: the Estimator's eval graph)
    beside = EVENTS / case / graph["same_as"][0]
    assert _names(str(path)) == _names(str(beside))


RECORDS = [(c, f, r["index"], g["same_as"][0]) for c, f in FILES for r in f["records"] for g in graphs_of(r)[-1:]
           if g["same_as"] and r["field"] != "summary"]


@pytest.mark.parametrize("case, f, index, beside", RECORDS, ids=["%s/%s@%d" % (c, f["path"], i) for c, f, i, _ in RECORDS])
def test_record_reads_that_records_graph(case: str, f: Dict[str, Any], index: int, beside: str) -> None:
    path = EVENTS / case / f["path"]
    assert _names(str(path), "--record", str(index)) == _names(str(EVENTS / case / beside))


@pytest.mark.parametrize("case", [c for c in CASES if (EVENTS / c / "logs").is_dir()])
def test_a_logs_folder_reads_its_train_graph(case: str) -> None:
    logs = EVENTS / case / "logs"
    train = [f for c, f in FILES if c == case and f["path"].startswith("logs/train/")]
    picked = _expected_record(train[0]) if train else None
    r = run("fp", str(logs))
    if picked is None:
        assert r.exit_code == 2 and "no event file in this folder holds a graph" in r.stderr
        assert _config_said(case) in r.stderr  # (Keras 3 writes its config, no ops)
        return
    assert r.exit_code == 0 and "reading %s" % (EVENTS / case / train[0]["path"]) in r.stderr
    assert _names(str(logs)) == _names(str(EVENTS / case / picked[1]["same_as"][0]))


def _config_said(case: str) -> str:
    """What a file with a Keras model config and no op graph is said to hold, by who wrote it."""
    keras3 = manifest(case)["made_with"].startswith("Keras 3")
    return "only a Keras 3 model's config (graph_keras_model" if keras3 else "only a Keras model's config (graph_keras_model"


NO_GRAPH = [(c, f) for c, f in FILES if _expected_record(f) is None]


@pytest.mark.parametrize("case, f", NO_GRAPH, ids=["%s/%s" % (c, f["path"]) for c, f in NO_GRAPH])
def test_a_file_without_a_graph_says_what_it_holds(case: str, f: Dict[str, Any]) -> None:
    plugins = sorted({v["plugin"] for r in f["records"] for v in r.get("values", ()) if v.get("plugin")})
    r = run("fp", str(EVENTS / case / f["path"]))
    assert r.exit_code == 2 and r.stdout == ""
    said = r.stderr.replace("\n", " ")
    assert "holds no graph (%d records; summary plugins: %s)" % (len(f["records"]), ", ".join(plugins) or "none named") in said
    if "graph_keras_model" in plugins:
        assert _config_said(case) in said
