"""TensorBoard event files as a graph source (issue 23): TFRecord framing and its CRCs, the graph
found in an Event (graph_def, meta_graph_def, trace_export's function graphs) among summary
records, the pick among several graphs and ``--record``, folders, and what a file without a graph
is said to hold.

The event files are built at test time (tests/support/events.py) around the binary fixtures; the
expected answers are those of the same graph read as a ``.pb`` or ``.meta`` file, so every
comparison is between two readings, never a copied answer.
"""
from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import List, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import events as ev
from support.cli import CliRunner
from support.containers import crc32c_masked, tfrecord
from support.data import DATA
from support.marks import quick_first
from support.opens import needs_audit, opens

from pbtxt_scan import PbtxtError
from pbtxt_scan.cli import app
from pbtxt_scan.source._crc32c import crc32c, masked_crc32c
from pbtxt_scan.wire import _events
from pbtxt_scan.wire._tfrecord import CutShort, check_data, iter_records

BINARY = DATA / "binary"
MLP = (BINARY / "mlp_sgd.pb").read_bytes()
TAPE_META = (BINARY / "tf2_gradient_tape.meta").read_bytes()
TAPE_PB = (BINARY / "tf2_gradient_tape.pb").read_bytes()


def run(*args: str, stdin: "bytes | None" = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), input=stdin)


def answers(path: "Path | str", *extra: str, commands: Sequence[str] = ("fp", "bp")) -> List[dict]:
    """fp and bp's JSON answers on ``path``: name, op, offset, function, rule."""
    out = []
    for cmd in commands:
        r = run(cmd, "--json", str(path), *extra)
        assert r.exit_code == 0, r.stderr
        a = json.loads(r.stdout)
        out.append({k: a[k] for k in ("name", "op", "offset", "function", "rule")})
    return out


def write(tmp: Path, name: str, data: bytes) -> Path:
    p = tmp / name
    p.write_bytes(data)
    return p


# --- framing ---------------------------------------------------------------------------------


def test_crc32c_check_value() -> None:
    assert crc32c(b"123456789") == 0xE3069283  # (RFC 3720 B.4)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.binary(max_size=200))
def test_crc32c_agrees_with_a_bitwise_one_and_continues(a: bytes, b: bytes) -> None:
    assert masked_crc32c(a + b) == crc32c_masked(a + b)
    assert crc32c(b, crc32c(a)) == crc32c(a + b)


def _read_at(blob: bytes):  # type: ignore[no-untyped-def]
    return lambda pos, n: blob[pos : pos + n]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_records_round_trip(datas: List[bytes]) -> None:
    blob = tfrecord(datas)
    records = list(iter_records(_read_at(blob), len(blob)))
    assert [blob[r.data_start : r.data_start + r.length] for r in records] == datas
    for r in records:
        check_data(_read_at(blob), r)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=40), min_size=1, max_size=5), st.data())
def test_a_flipped_bit_is_caught_at_its_record(datas: List[bytes], data: st.DataObject) -> None:
    blob = bytearray(tfrecord(datas))
    pos = data.draw(st.integers(0, len(blob) - 1))
    blob[pos] ^= 1 << data.draw(st.integers(0, 7))
    starts = [0]
    for d in datas:
        starts.append(starts[-1] + 16 + len(d))
    hit = max(k for k, s in enumerate(starts[:-1]) if s <= pos)
    read_at = _read_at(bytes(blob))
    with pytest.raises(PbtxtError) as e:
        for r in iter_records(read_at, len(blob)):
            check_data(read_at, r)
    # A flipped length bit may make the record look longer than the file: that is a cut record.
    assert ("record %d" % hit) in e.value.msg
    assert e.value.offset == starts[hit]


@pytest.mark.parametrize("cut", [1, 4, 5, 13, 16])
def test_a_record_cut_short_is_not_the_end(cut: int) -> None:
    blob = tfrecord([b"one", b"twotwo"])[:-cut]
    with pytest.raises(CutShort, match="record 1 is cut short.*still writing"):
        list(iter_records(_read_at(blob), len(blob)))


# --- the graph in an Event, among summaries ------------------------------------------------


@pytest.mark.parametrize("where", ["graph_def", "meta_graph_def", "trace_export"])
def test_fp_and_bp_read_the_graph_as_its_own_file_reads(tmp_path: Path, where: str) -> None:
    if where == "graph_def":
        own, record = write(tmp_path, "g.pb", MLP), ev.graph_def(MLP)
    elif where == "meta_graph_def":
        own, record = write(tmp_path, "g.meta", TAPE_META), ev.meta_graph_def(TAPE_META)
    else:  # (a forward-only function graph first: the pick is the one with the gradients)
        own, record = write(tmp_path, "g.pb", TAPE_PB), ev.trace_export([ev.forward_only(TAPE_PB), TAPE_PB])
    events = write(tmp_path, "events.out.tfevents.1700000000.host.1.v2", ev.around([record]))
    assert answers(events) == answers(own)
    r = run("points", str(events))
    assert r.exit_code == 0
    said = "13.1 (records 0 to 25, graphs 13.0 to 13.1;" if where == "trace_export" else "13 (records 0 to 25;"
    assert "reading record %s" % said in r.stderr  # (the file_version, 12 summaries, then the graph)


def test_offsets_are_the_graphs_own_and_show_reads_them(tmp_path: Path) -> None:
    events = write(tmp_path, "events.out.tfevents.1", ev.around([ev.graph_def(MLP)]))
    own = write(tmp_path, "g.pb", MLP)
    for args in (("show", "dense/MatMul"), ("show", "dense/MatMul", "--context", "1"), ("nodes",), ("stats",)):
        a, b = run(args[0], str(events), *args[1:]), run(args[0], str(own), *args[1:])
        assert a.exit_code == b.exit_code == 0, a.stderr
        drop = lambda text, name: [x for x in text.replace(name, "F").splitlines() if not x.startswith("seconds")]  # noqa: E731
        # (stats on the event file also labels the graph's bytes and gives the file's: issue 38)
        said = [x.replace(" (the graph: record 13)", "") for x in drop(a.stdout, str(events)) if not x.startswith("file_bytes ")]
        assert said == drop(b.stdout, str(own))


def test_the_last_training_graph_is_read_and_record_picks_another(tmp_path: Path) -> None:
    forward = ev.forward_only(MLP)
    events = write(tmp_path, "events.out.tfevents.1", ev.around([ev.graph_def(forward), ev.graph_def(MLP), ev.graph_def(forward)]))
    fwd = write(tmp_path, "fwd.pb", forward)
    r = run("fp", str(events))
    assert "reading record 14 (records 0 to 27;" in r.stderr and "the last graph with a gradients scope of the 3 graphs" in r.stderr
    assert answers(events) == answers(write(tmp_path, "g.pb", MLP))
    assert answers(events, "--record", "15", commands=["fp"]) == answers(fwd, commands=["fp"])  # (no bp there)
    r = run("bp", str(events), "--record", "15")
    assert "--record 15 (it has no gradients scope" in r.stderr
    r = run("fp", str(events), "--record", "3")
    assert r.exit_code == 2 and "--record 3: record 3 holds no graph; records with a graph: 13, 14, 15" in r.stderr
    r = run("fp", str(events), "--record", "99")
    assert r.exit_code == 2 and "--record 99: the file has 28 records (0 to 27)" in r.stderr


def test_only_forward_graphs_say_so(tmp_path: Path) -> None:
    events = write(tmp_path, "events.out.tfevents.1", ev.around([ev.graph_def(ev.forward_only(MLP))]))
    r = run("bp", str(events))
    assert "forward graph only" in r.stderr.replace("\n", " ")


def test_record_on_a_graph_file_is_refused(tmp_path: Path) -> None:
    r = run("fp", str(BINARY / "mlp_sgd.pb"), "--record", "1")
    assert r.exit_code == 2 and "--record applies to TensorBoard event files, and this is a binary GraphDef" in r.stderr
    r = run("fp", str(BINARY / "mlp_sgd.pb"), "--record", "-1")
    assert r.exit_code == 2 and "negative" in r.stderr


def test_stdin_and_gzip(tmp_path: Path) -> None:
    blob = ev.around([ev.graph_def(MLP)])
    want = answers(write(tmp_path, "g.pb", MLP))
    gz = write(tmp_path, "events.out.tfevents.1.gz", gzip.compress(blob))
    assert answers(gz) == want
    r = run("fp", "-", stdin=blob)
    assert r.exit_code == 0 and r.stdout.strip() == want[0]["name"]


def test_summaries_are_stepped_over_not_read(tmp_path: Path) -> None:
    """Big image summaries before the graph: the scan reads their headers, never their bytes."""
    rng = random.Random(1)
    images = [ev.image("input", rng, s, 100_000) for s in range(3)]
    blob = ev.event_file(images + [ev.graph_def(MLP)])
    path = write(tmp_path, "events.out.tfevents.1", blob)
    from pbtxt_scan.wire import _events

    asked = []

    def read_at(pos: int, n: int) -> bytes:
        asked.append(n)
        return blob[pos : pos + n]

    found = _events.scan(read_at, len(blob), window=1 << 16)
    assert found.graphs == 1 and found.records == 5
    assert sum(asked) < 5 * 70_000  # (a window a record at most)
    assert max(asked) < 100_000  # (no image read whole)
    assert answers(path) == answers(write(tmp_path, "g.pb", MLP))


# --- check and damage ------------------------------------------------------------------------


def test_check_checks_every_crc_and_fp_reads_on(tmp_path: Path) -> None:
    blob = bytearray(ev.around([ev.graph_def(MLP)]))
    r = run("check", str(write(tmp_path, "events.out.tfevents.1", bytes(blob))))
    assert r.exit_code == 0 and "ok (26 records, every CRC holds; the graph in record 13" in r.stdout
    recs = list(iter_records(_read_at(bytes(blob)), len(blob)))
    blob[recs[2].data_start + 3] ^= 0x40  # a summary's data
    bad = write(tmp_path, "events.out.tfevents.2", bytes(blob))
    r = run("check", str(bad))
    assert r.exit_code == 2 and "%s:offset %d: record 2: data CRC mismatch" % (bad, recs[2].offset) in r.stderr
    assert run("fp", str(bad)).exit_code == 0  # (fp reads the graph record, not the summaries' data)


def test_a_file_still_being_written(tmp_path: Path) -> None:
    blob = ev.around([ev.graph_def(MLP)])
    cut = write(tmp_path, "events.out.tfevents.1", blob[:-7])
    r = run("fp", str(cut))
    assert r.exit_code == 0 and "the last, is cut short: the training may still be writing it" in r.stderr
    r = run("check", str(cut))
    assert r.exit_code == 2 and "record 25 is cut short" in r.stderr


def test_a_bad_event_is_one_line(tmp_path: Path) -> None:
    body = ev.event([(4, MLP)])[:-10]  # (a graph_def whose length runs past its record)
    blob = ev.event_file([body[:9] + bytes([0x22]) + ev.varint(len(MLP)) + MLP[:100]])
    r = run("fp", str(write(tmp_path, "events.out.tfevents.1", blob)))
    assert r.exit_code == 2 and "record 1 is not a valid Event: a field runs past the end of its message" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


# --- no graph --------------------------------------------------------------------------------


@pytest.mark.parametrize("records, says", [
    ([], "holds no graph (13 records; summary plugins: scalars). Keras 3 (3.7 and later) writes no op graph"),
    ([ev.keras_model()], "only a Keras model's config (graph_keras_model: layers as JSON, not ops)"),
])
def test_no_graph_says_what_the_file_holds(tmp_path: Path, records: Sequence[bytes], says: str) -> None:
    rng = random.Random(0)
    blob = ev.event_file([ev.scalar("epoch_loss", rng.random(), s) for s in range(12)] + list(records))
    for cmd in ("fp", "bp", "points", "nodes", "stats", "check"):
        r = run(cmd, str(write(tmp_path, "events.out.tfevents.1", blob)))
        assert r.exit_code == 2 and says in r.stderr.replace("\n", " "), (cmd, r.stderr)


# --- folders ---------------------------------------------------------------------------------


def test_a_logs_folder_reads_train_first_and_the_newest_with_a_graph(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "train").mkdir(parents=True)
    (logs / "validation").mkdir()
    forward = ev.forward_only(MLP)
    write(logs / "validation", "events.out.tfevents.1700000009.h.1.v2", ev.around([ev.graph_def(forward)]))
    write(logs / "train", "events.out.tfevents.1700000001.h.1.v2", ev.around([ev.graph_def(MLP)]))
    write(logs / "train", "events.out.tfevents.1700000005.h.1.v2", ev.around([]))  # newer, no graph
    r = run("fp", str(logs))
    assert r.exit_code == 0
    assert "reading %s: the newest event file in train/ that holds a graph; the 1 tried before it hold none" % (
        logs / "train" / "events.out.tfevents.1700000001.h.1.v2") in r.stderr
    assert answers(logs) == answers(write(tmp_path, "g.pb", MLP))


def test_a_folder_of_event_files_without_a_graph(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "train").mkdir(parents=True)
    write(logs / "train", "events.out.tfevents.1700000001.h.1.v2", ev.around([]))
    r = run("fp", str(logs))
    assert r.exit_code == 2
    assert "no event file in this folder holds a graph (1 looked at, train/ first)" in r.stderr



def test_the_benchmark_event_file_reads_as_its_graph(tmp_path: Path) -> None:
    """benchmarks.generate's ``events`` kind (the 1 GB measurement's input), small: fp and bp on it
    are those on the graph written beside it, and those the generator expects."""
    from benchmarks.generate import generate

    meta = generate("events", str(tmp_path / "events.out.tfevents.1.v2"), 1_500_000, graph_size=400_000)
    assert answers(meta["path"]) == answers(meta["graph"])
    names = [a["name"] for a in answers(meta["path"])]
    assert names == [meta["expected"]["fp"], meta["expected"]["bp"]]
    r = run("check", meta["path"])
    assert r.exit_code == 0 and "ok (%d records, every CRC holds; the graph in record %d" % (meta["records"], meta["graph_record"]) in r.stdout


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_check_on_several_workers_finds_the_first_bad_record(jobs: int) -> None:
    from pbtxt_scan.wire._tfrecord import check_every

    rng = random.Random(5)
    blob = bytearray(ev.event_file([ev.histogram("w%d" % (s % 7), rng, s) for s in range(300)]))
    recs = list(iter_records(_read_at(bytes(blob)), len(blob)))
    assert check_every(_read_at(bytes(blob)), len(blob), jobs=jobs, parallel_min=0) == len(recs)
    for k in (250, 120):  # (two bad records: the first in file order is said)
        blob[recs[k].data_start + 5] ^= 2
    with pytest.raises(PbtxtError) as e:
        check_every(_read_at(bytes(blob)), len(blob), jobs=jobs, parallel_min=0)
    assert (e.value.msg.split(" (")[0], e.value.offset) == ("record 120: data CRC mismatch", recs[120].offset)


@needs_audit
@pytest.mark.parametrize("args", quick_first([["fp"], ["check"], ["bp"], ["points"], ["stats"], ["show", "{f}", "dense/MatMul", "--context", "1"]]),
                         ids=lambda a: a[0] if len(a) == 1 else "show --context")
def test_an_event_file_is_opened_once(tmp_path: Path, args: List[str]) -> None:
    events = write(tmp_path, "events.out.tfevents.1", ev.around([ev.graph_def(ev.forward_only(MLP)), ev.graph_def(MLP)]))
    argv = [a.format(f=events) for a in args] if len(args) > 1 else args + [str(events)]
    n, r = opens(events, *argv, tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert n == 1, "opened %d times" % n


def _random_file(kinds: List[str], rng: random.Random, *, image_max: int) -> bytes:
    """An event file of one record of each kind, in order (graphs: a graph's bytes, only found here)."""
    small = ev.forward_only(MLP)[:600]
    make = {
        "scalar": lambda s: ev.scalar("loss", rng.random(), s), "histogram": lambda s: ev.histogram("w", rng, s),
        "image": lambda s: ev.image("img", rng, s, rng.randrange(10, image_max)), "graph": lambda s: ev.graph_def(small, s),
        "meta": lambda s: ev.meta_graph_def(small, s), "trace": lambda s: ev.trace_export([small, small[:100]], step=s),
        "keras": lambda s: ev.keras_model(), "log": lambda s: ev.event([(7, [(1, 1)])], s),
    }
    return ev.event_file([make[k](s) for s, k in enumerate(kinds)])


_RECORD_KINDS = st.sampled_from(["scalar", "histogram", "image", "graph", "meta", "trace", "keras", "log"])


@settings(max_examples=40, deadline=None)
@given(st.lists(_RECORD_KINDS, min_size=1, max_size=14), st.integers(80, 5000), st.integers(0, 3), st.randoms(use_true_random=False))
def test_the_fast_loop_finds_what_a_full_walk_finds(kinds: List[str], window: int, walk_first: int, rng: random.Random) -> None:
    """Any window size (summaries across its end, records longer than it) and any number of
    summaries walked first: the same records, graphs and Keras configs as walking every field."""
    blob = _random_file(kinds, rng, image_max=3000)
    read_at = _read_at(blob)
    fast = _events.scan(read_at, len(blob), window=window, walk_first=walk_first)
    full = _events.scan(read_at, len(blob), window=len(blob) + 1, walk_first=len(blob))
    assert fast.records == full.records == len(kinds) + 1
    assert list(fast.places) == list(full.places)
    assert fast.keras_models == full.keras_models == kinds.count("keras")
    assert fast.graphs == kinds.count("graph") + kinds.count("meta") + 2 * kinds.count("trace")


@settings(max_examples=25, deadline=None)
@given(st.lists(_RECORD_KINDS, min_size=1, max_size=30), st.integers(2, 5), st.integers(2, 12), st.booleans(),
       st.randoms(use_true_random=False))
def test_parts_on_several_workers_join_into_one_pass(kinds: List[str], jobs: int, per: int, cut: bool,
                                                      rng: random.Random) -> None:
    """Split anywhere (inside records, records longer than a part, a last record cut short): the
    workers' parts join into what one pass reads."""
    from pbtxt_scan.wire._events_split import scan_split

    blob = _random_file(kinds, rng, image_max=6000)
    if cut:
        blob = blob[:-3]
    read_at = _read_at(blob)
    one = _events.scan(read_at, len(blob), walk_first=0)
    split = scan_split(read_at, len(blob), jobs, window=1 << 20, walk_first=0, split_min=0, part_min=len(blob) // per)
    assert split is not None
    assert (split.records, list(split.places), split.graphs, split.keras_models, split.end) == (
        one.records, list(one.places), one.graphs, one.keras_models, one.end)
    assert (split.cut is None) == (one.cut is None) == (not cut)
