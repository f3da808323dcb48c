"""``pbtxt-scan events`` (issue 38): what an event file holds, a record a line, numbered as
``--record`` numbers them; ``--run`` choosing a run under a logdir for every graph command; ``stats``
on an event file saying the graph's bytes and the file's.

- Every fixture event file (tests/data/events/, written by TensorFlow) is listed as its case's
  ``events.expected.json`` records it (text and ``--json``; checked by hand against the table in
  tests/data/README.md), and as TensorFlow's own reader saw it when it was made (MANIFEST.json:
  each record's number, offset, length, field, summary tags and plugins, graphs).
- ``logs_runs/logs`` holds copies of two of them as the runs ``train`` and ``validation``.
- Damaged event files list the records before the damage, then say where it is (exit 2).
- A record is never held whole: the reads are bounded whatever its size.
"""
from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from support import events as ev
from support.cli import CliRunner
from support.containers import tfrecord
from support.data import DATA

from pbtxt_scan.cli import app

EVENTS = DATA / "events"
CASES = sorted(p.parent.name for p in EVENTS.glob("*/events.expected.json"))
LOGS = EVENTS / "logs_runs" / "logs"
NAME = "events.out.tfevents.1700000000.fixture.1.0"
TRAIN, VALIDATION = LOGS / "train" / NAME, LOGS / "validation" / NAME
MLP = (DATA / "binary" / "mlp_sgd.pb").read_bytes()


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, [str(a) for a in args])


def test_every_case_has_its_listing():
    assert len(CASES) == 7 and "logs_runs" in CASES


@pytest.mark.parametrize("case", CASES)
def test_events_lists_every_record_as_recorded(case: str) -> None:
    folder = EVENTS / case
    want = json.loads((folder / "events.expected.json").read_text())
    r = run("events", folder)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.replace(str(folder) + os.sep, "").splitlines() == want["text"]
    r = run("events", "--json", folder)
    assert r.exit_code == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    for o in got:
        o["file"] = os.path.relpath(o["file"], str(folder))
    assert got == want["json"]


# --- against TensorFlow's own reading (MANIFEST.json) ----------------------------------------------


def _graphs_of(record: Dict[str, Any]) -> int:
    if record["field"] in ("graph_def", "meta_graph_def"):
        return 1
    return sum(len(v["run_metadata"]["function_graphs"]) for v in record.get("values", ())
               if v.get("plugin") in ("graph_run_metadata_graph", "graph_run_metadata"))


def _manifest_files() -> List[Tuple[str, Dict[str, Any]]]:
    return [(m.parent.name, f) for m in sorted(EVENTS.glob("*/MANIFEST.json")) for f in json.loads(m.read_text())["event_files"]]


@pytest.mark.parametrize("case, f", _manifest_files(), ids=lambda x: x if isinstance(x, str) else x["path"])
def test_the_listing_is_what_tensorflow_read(case: str, f: Dict[str, Any]) -> None:
    r = run("events", "--json", EVENTS / case / f["path"])
    assert r.exit_code == 0, r.stderr
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(got) == len(f["records"])
    for o, rec in zip(got, f["records"]):
        assert (o["record"], o["offset"], o["bytes"], o["what"]) == (rec["index"], rec["offset"], rec["length"], rec["field"])
        assert [(v["tag"], v["plugin"]) for v in o["values"]] == [(v["tag"], v.get("plugin")) for v in rec.get("values", ())]
        assert len(o["graphs"]) == _graphs_of(rec)
        if rec["field"] == "file_version":
            assert o["text"] == rec["file_version"]
        assert o["run"] is None and o["file"] == str(EVENTS / case / f["path"])
    read = [g["graph"] for o in got for g in o["graphs"] if g["read"]]
    assert len(read) == (1 if any(o["graphs"] for o in got) else 0)


def test_the_graph_marked_read_is_the_one_fp_reads():
    trace = EVENTS / "trace_export" / (NAME + ".v2")
    r = run("events", trace)
    assert "1.0,1.1,1.2,1.3,1.4" in r.stdout and "1.4 (read)" in r.stdout
    assert "reading record 1.4 " in run("fp", trace).stderr


# --- --run: a logdir's run, for every graph command ---------------------------------------------------

GRAPH_COMMANDS = [["fp"], ["bp"], ["points"], ["nodes"], ["show", "hidden/MatMul"], ["stats", "--json"], ["check"],
                  ["report", "-o", "-"]]


def _same(r1: Any, r2: Any, run_of: str = "", path_of: Any = None) -> None:
    assert r1.exit_code == r2.exit_code, (r1.stderr, r2.stderr)
    out1, out2 = r1.stdout, r2.stdout
    if out1.startswith("<!DOCTYPE"):  # (report: the page says the command line that makes it)
        out1 = out1.replace("%s --run %s" % (LOGS, run_of), str(path_of))
    if out1.startswith("{"):  # (stats: its time)
        out1, out2 = (json.dumps({k: v for k, v in json.loads(o).items() if k != "seconds"}) for o in (out1, out2))
    assert out1 == out2


@pytest.mark.parametrize("args", GRAPH_COMMANDS, ids=lambda a: a[0])
def test_run_reads_that_runs_event_file(args: List[str]) -> None:
    cmd, rest = args[0], args[1:]
    for name, path in (("validation", VALIDATION), ("train", TRAIN)):
        by_run = run(cmd, LOGS, "--run", name, *rest)
        _same(by_run, run(cmd, path, *rest), name, path)
        if cmd != "report":
            assert "of run %s that holds a graph" % name in by_run.stderr


def test_without_run_the_train_run_is_read_and_a_run_may_be_spelt_as_a_path():
    _same(run("points", LOGS), run("points", TRAIN))
    _same(run("points", LOGS.parent, "--run", "./logs/validation/"), run("points", VALIDATION))
    r = run("bp", LOGS, "--run", "validation")
    assert r.exit_code == 1  # (a forward graph: no bp)


def test_a_missing_run_is_one_line_naming_the_runs_there():
    r = run("fp", LOGS, "--run", "eval")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines() == ["%s: no run eval under this folder (its runs: train, validation)" % LOGS]
    r = run("events", "--json", LOGS, "--run", "../logs/train")
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "its runs: train, validation" in r.stderr
    assert json.loads(r.stdout)["error"].startswith("no run ../logs/train under")


def test_run_on_a_file_or_stdin_is_one_line():
    for path in (TRAIN, "-"):
        r = run("fp", path, "--run", "train")
        assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and "--run picks a run" in r.stderr, r.stderr
    r = run("events", TRAIN, "--run", "train")
    assert r.exit_code == 2 and "--run picks a run" in r.stderr


def test_events_run_lists_that_run_only():
    r = run("events", "--json", LOGS, "--run", "validation")
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == 0 and {o["run"] for o in got} == {"validation"} and len(got) == 6
    r = run("events", LOGS)
    heads = [line for line in r.stdout.splitlines() if line.startswith("# ")]
    assert heads == ["# %s (run train)" % TRAIN, "# %s (run validation)" % VALIDATION]


# --- stats on an event file: both sizes, labelled --------------------------------------------------


def test_stats_on_an_event_file_labels_the_graphs_bytes_and_the_files():
    r = run("stats", TRAIN)
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    assert "bytes    31173 (the graph: record 2)" in lines
    assert "file_bytes %d (the event file: 5 records)" % TRAIN.stat().st_size in lines
    st = json.loads(run("stats", "--json", TRAIN).stdout)
    assert (st["bytes"], st["file_bytes"]) == (31173, TRAIN.stat().st_size)
    graph = json.loads(run("events", "--json", TRAIN).stdout.splitlines()[2])["graphs"][0]
    assert graph["bytes"] == st["bytes"]
    plain = json.loads(run("stats", "--json", DATA / "binary" / "mlp_sgd.pb").stdout)
    assert plain["file_bytes"] is None and "file_bytes" not in run("stats", DATA / "binary" / "mlp_sgd.pb").stdout


# --- damaged event files: what can be listed, then where it stops ---------------------------------------


def _damaged() -> Dict[str, Tuple[bytes, int, str]]:
    """name: (file bytes, records listed before the damage, the message's words)."""
    good = ev.around([ev.graph_def(MLP)], summaries=2)
    frames = []
    pos = 0
    while pos < len(good):
        n = int.from_bytes(good[pos : pos + 8], "little")
        frames.append((pos, n))
        pos += 16 + n
    graph_at, graph_len = frames[5]
    flipped_data = bytearray(good)
    flipped_data[graph_at + 12 + graph_len + 1] ^= 1  # (its data CRC)
    flipped_len = bytearray(good)
    flipped_len[frames[3][0] + 9] ^= 0x40  # (record 3's length CRC)
    bad_event = tfrecord([ev.file_version(), ev.scalar("loss", 1.0, 1), b"\x09\x00\x00\x00\x00\x00\x00\xf0\x3f\x2a\xff\x7f"])
    return {
        "cut_short": (good[: graph_at + 100], 5, "record 5 is cut short"),
        "data_crc_flipped": (bytes(flipped_data), 5, "record 5: data CRC mismatch"),
        "length_crc_flipped": (bytes(flipped_len), 3, "record 3: its length's CRC does not hold"),
        "not_an_event": (bad_event, 2, "record 2 is not a valid Event"),
    }


DAMAGED = _damaged()


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_event_file_lists_what_it_can_then_says_where_it_stops(tmp_path: Path, name: str) -> None:
    data, listed, words = DAMAGED[name]
    f = tmp_path / NAME
    f.write_bytes(data)
    r = run("events", f)
    assert r.exit_code == 2 and "Traceback" not in r.stderr
    assert [line.split("\t")[0] for line in r.stdout.splitlines()] == [str(i) for i in range(listed)]
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith("%s:offset " % f) and words in r.stderr, r.stderr
    r = run("events", "--json", f)
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert [o.get("record") for o in objs[:-1]] == list(range(listed)) and words in objs[-1]["error"]


def test_a_file_that_is_no_event_file_is_named_so(tmp_path: Path):
    r = run("events", DATA / "graphs" / "mlp_sgd.pbtxt")
    assert r.exit_code == 2 and r.stdout == "" and "not a TensorBoard event file" in r.stderr
    assert len(r.stderr.splitlines()) == 1
    r = run("events", tmp_path)
    assert r.exit_code == 2 and "no TensorBoard event file" in r.stderr


# --- bounded: a record is never held whole -------------------------------------------------------------


@pytest.mark.slow  # (3 s: a big record written and read; CI's slow step runs it)
def test_a_big_record_is_read_in_bounded_pieces_and_many_tags_are_counted():
    from pbtxt_scan.wire import events_list

    rng = random.Random(5)
    big = ev.graph_def(MLP + bytes(rng.getrandbits(8) for _ in range(3 << 20)))  # (a 3 MB record, nothing like a graph)
    many = ev.event([(5, [(1, [(1, "tag%d" % i)]) for i in range(5000)])], step=3)
    data = tfrecord([ev.file_version(), big, many])
    reads: List[int] = []

    def read_at(pos: int, n: int) -> bytes:
        reads.append(n)
        return data[pos : pos + n]

    got = list(events_list.listing(read_at, len(data)))
    assert [r.what for r in got] == ["file_version", "graph_def", "summary"]
    assert got[1].graphs[0].bytes > 3 << 20 and max(reads) <= (1 << 20) + 4
    assert got[2].value_count == 5000 and len(got[2].values) == events_list.TAGS_MAX and got[2].step == 3
    assert got[2].values[0].tag == "tag0" and got[2].values[0].plugin == ""


def test_without_the_crc_library_pure_python_checks_its_budget_and_says_what_it_left(monkeypatch, tmp_path: Path):
    from pbtxt_scan.wire import _events_list

    monkeypatch.setattr(_events_list, "fast", lambda: False)
    monkeypatch.setattr(_events_list, "PURE_BUDGET", 3000)  # (the summaries before the graph, not the graph)
    f = tmp_path / NAME
    f.write_bytes(ev.around([ev.graph_def(MLP)], summaries=2))
    r = run("events", f)
    assert r.exit_code == 0 and len(r.stdout.splitlines()) == 10
    assert r.stderr.startswith("%s: 1 record's data CRC not checked" % f) or "records' data CRC not checked" in r.stderr
    assert "pip install google-crc32c" in r.stderr
    assert run("events", "--quiet", f).stderr == ""


@pytest.mark.memory  # (opt-in: writes about 260 MB)
def test_peak_memory_is_bounded_on_a_big_event_file(tmp_path: Path):
    import struct

    from support.hostile import run_measured

    from support.wire_encoder import varint

    from pbtxt_scan.source._crc32c import crc32c, masked, masked_crc32c

    def frame(data: bytes) -> bytes:
        n = struct.pack("<Q", len(data))
        return n + struct.pack("<I", masked_crc32c(n)) + data + struct.pack("<I", masked_crc32c(data))

    f = tmp_path / NAME
    rng = random.Random(3)
    summaries = b"".join(frame(ev.scalar("loss", rng.random(), s)) for s in range(20000))
    blob = bytes(rng.getrandbits(8) for _ in range(1 << 20))
    with f.open("wb") as w:
        w.write(frame(ev.file_version()) + summaries)
        graph = len(MLP) + 256 * len(blob)  # (a 256 MB graph_def record, written a MB at a time)
        head = ev.event([]) + b"\x22" + varint(graph)
        n = struct.pack("<Q", len(head) + graph)
        w.write(n + struct.pack("<I", masked_crc32c(n)) + head + MLP)
        crc = crc32c(MLP, crc32c(head))
        for _ in range(256):
            w.write(blob)
            crc = crc32c(blob, crc)
        w.write(struct.pack("<I", masked(crc)))
        w.write(summaries)
    p, seconds, rss_mb = run_measured(tmp_path, "events", "--json", str(f), timeout=600)
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) == 40002
    assert rss_mb <= 100, "peak %d MB in %.1f s" % (rss_mb, seconds)


@pytest.mark.skipif(sys.version_info < (3, 8), reason="sys.addaudithook is new in Python 3.8")
@pytest.mark.parametrize("given", [TRAIN, LOGS], ids=["file", "logdir"])
def test_each_event_file_is_opened_once(tmp_path: Path, given: Path) -> None:
    from support.opens import opens

    n, r = opens(TRAIN, "events", "--json", str(given), tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr
    assert n == 1, "opened %d times" % n


def _outcome(data: bytes) -> Any:
    """The listing of ``data`` (as far as it goes) and the error that stops it."""
    from pbtxt_scan import PbtxtError
    from pbtxt_scan.wire import events_list

    got: List[Any] = []
    try:
        for r in events_list.listing(lambda pos, n: data[pos : pos + n], len(data)):
            got.append(r)
    except PbtxtError as e:
        return got, (e.msg, e.offset)
    return got, None


def test_a_small_record_held_reads_as_a_big_one_walked(monkeypatch):
    """The fast path (a record up to HELD_MAX read once and walked in memory) against the walk by
    the length prefixes, on every fixture event file and on records mutated at random (their CRCs
    made to hold): the same records, the same fields, the same errors."""
    from pbtxt_scan.wire import _events_list

    rng = random.Random(38)
    files = [p.read_bytes() for p in sorted(EVENTS.rglob("events.out.tfevents.*"))]
    cases = list(files)
    for _ in range(1000):
        payload = bytearray(rng.choice([ev.scalar("loss", 1.0, 3), ev.keras_model(), ev.trace_export([MLP[:300], MLP[:50]]),
                                        ev.graph_def(MLP[:200]), ev.file_version(), ev.event([(7, [(1, 3)])])]))
        for _ in range(rng.randrange(1, 4)):
            i = rng.randrange(len(payload))
            payload[i] = rng.choice([0x00, 0x08, 0x0A, 0x12, 0x22, 0x2A, 0x4A, 0x7F, 0x80, 0xFF, payload[i] ^ 1])
        cases.append(tfrecord([ev.file_version(), bytes(payload), ev.scalar("loss", 2.0, 4)]))
    for data in cases:
        held = _outcome(data)
        monkeypatch.setattr(_events_list, "HELD_MAX", -1)
        walked = _outcome(data)
        monkeypatch.setattr(_events_list, "HELD_MAX", 1 << 16)
        assert held == walked
