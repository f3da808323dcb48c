"""The general guard (issue 11): every command, over every hostile input and over random mutations
of real fixtures, exits 0, 1 or 2, never prints a traceback, says at most one line on stderr when it
fails (exit 2), and keeps its memory bounded on the large inputs.

The per-case messages are checked in test_hostile.py and test_hostile_round2.py; this file only
checks that nothing escapes the rules, whatever the input and the command. The commands and the
rules (``COMMANDS``, ``check_rules``) are in support/hostile.py, with the hostile inputs.
"""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import events as ev
from support.containers import tfrecord
from support.examples import fuzz_examples
from support.marks import quick_first
from support.hostile import (BIG_INT_GE, BIG_INT_TF, CASES, COMMANDS, DEEP_GE, DEEP_TF, GE_STRICT_BLOCKS, HOSTILE_CHECKPOINTS,
                             HOSTILE_RECORDS, NODE, PROF_CASES, PROF_COMMANDS, STRICT_BLOCKS, check_rules)

DATA = Path(__file__).parent / "data"

INPUTS = {name: data for name, data, _ in CASES}
INPUTS.update({p.name: p.read_bytes() for p in sorted((DATA / "hostile").iterdir()) if p.is_file()})
INPUTS.update({
    "deep_tf": DEEP_TF.encode(), "deep_ge": DEEP_GE.encode(), "big_int_tf": BIG_INT_TF.encode(),
    "big_int_ge": BIG_INT_GE.encode(), "empty": b"", "bom_only": b"\xef\xbb\xbf", "one_node": b'node { name: "a" op: "Const" }',
    "crlf": b'node {\r\n  name: "a"\r\n  op: "Const"\r\n}\r\n', "ge_empty_graph": b'graph {\n  name: "g"\n}\n',
    # issue 35: long strings kept out of Lark's parse (show --json), joined to another, or an error after one
    "long_joined": b'node { name: "n" op: "Const" attr { key: "v" value { s: "a" "' + b"b" * (3 << 20) + b'" } } }\n',
    "long_then_bad": b'node { name: "n" op: "Const" attr { key: "v" value { s: "' + b"\\001" * (1 << 20) + b'" x: 1e } } }\n',
    "odd_names": b'node {\n  name: "a\\nb\\tc\\033[31m"\n  op: "Placeholder"\n}\nnode {\n  name: "d\\\\e"\n  op: "MatMul"\n'
                 b'  input: "a\\nb\\tc\\033[31m"\n}\n',
    # issue 38: a long name under --name globs with many stars (fnmatch before 3.9 backtracks on it)
    "long_name": b'node {\n  name: "' + b"a" * 400000 + b'"\n  op: "Const"\n}\n',
})
INPUTS.update(STRICT_BLOCKS)  # (issue 37: blocks that are no valid node)
INPUTS.update(GE_STRICT_BLOCKS)
# An event file whose graph record has one flipped byte: in its data (a node's name), in its data CRC (issue 35).
_GRAPH = ev.graph_def((DATA / "binary" / "mlp_sgd.pb").read_bytes())
_EVENTS = ev.around([_GRAPH])
_AT, _CRC = _EVENTS.index(b"gradients/dense/MatMul_grad/MatMul_1"), _EVENTS.index(_GRAPH) + len(_GRAPH)
INPUTS.update({"events_data_flipped": _EVENTS[:_AT] + b"G" + _EVENTS[_AT + 1 :],
               "events_crc_flipped": _EVENTS[:_CRC] + bytes([_EVENTS[_CRC] ^ 1]) + _EVENTS[_CRC + 1 :]})
# Issue 37: binary graphs protobuf refuses deep inside (every command: one line or an answer, no
# traceback; check names the field): invalid UTF-8 in an attr key of the last node, a node's
# experimental_type nested 300 deep (protobuf's limit is 100), a packed list cut in a varint.
_PB = (DATA / "binary" / "mlp_sgd.pb").read_bytes()
_KEY = _PB.rindex(b"\x0a\x01T\x12")
_DEEP_TYPE = b""
for _ in range(300):
    _DEEP_TYPE = b"\x12" + bytes([len(_DEEP_TYPE)]) + _DEEP_TYPE if len(_DEEP_TYPE) < 128 else b"\x12" + bytes(
        [len(_DEEP_TYPE) & 0x7F | 0x80, len(_DEEP_TYPE) >> 7]) + _DEEP_TYPE
_DEEP_NODE = b"\x0a\x01n\x12\x05Const\x3a" + bytes([len(_DEEP_TYPE) & 0x7F | 0x80, len(_DEEP_TYPE) >> 7]) + _DEEP_TYPE
INPUTS.update({
    "binary_bad_utf8_attr_key": _PB[: _KEY + 2] + b"\xff" + _PB[_KEY + 3 :],
    "binary_type_300_deep": _PB + b"\x0a" + bytes([len(_DEEP_NODE) & 0x7F | 0x80, len(_DEEP_NODE) >> 7]) + _DEEP_NODE,
    "binary_packed_cut": _PB + b"\x0a\x1b\x0a\x01n\x12\x05Const\x2a\x0f\x0a\x01s\x12\x0a\x0a\x08\x1a\x06\x01\x02\x03\x04\x05\x80",
})
# issue 38 (events): cut inside the graph's record, and a record whose CRCs hold around an Event that does not.
INPUTS.update({"events_cut_short": _EVENTS[: _AT], "events_bad_event": _EVENTS + tfrecord([b"\x09" + b"\x00" * 8 + b"\x2a\xff\x7f"]),
               "events_nan_time": ev.event_file([ev.event([(3, "brain.Event:2")], wall=float("nan")),
                                                 ev.event([(7, [(1, 99)])], step=-1, wall=1e300)]),
               "events_wrong_wire_types": ev.event_file([ev.event([(4, 5)]), ev.event([(5, 7)]), ev.event([(7, b"\xff")])])})
# issue 38: names the byte search must not believe (spelt otherwise: show reads the blocks), or meets
# only in other fields' values, and a layout cut after a name line.
INPUTS.update({
    "name_spelt_otherwise": NODE + b'node {\n  name: "n" op: "NoOp"\n}\nnode {\n  name:"a"\n}\nnode {\n  name: "\\156"\n}\n',
    "name_in_values_only": b'node {\n  name: "b"\n  op: "Identity"\n  input: "n"\n  attr {\n    key: "a"\n    value {\n      s: "n"\n'
                           b'    }\n  }\n}\n',
    "name_line_then_cut": NODE + b'node {\n  name: "n"\n  op: "NoOp"\n',
})


@pytest.mark.parametrize("name", quick_first(sorted(INPUTS), 14))
def test_every_command_on_every_hostile_input(tmp_path: Path, name: str) -> None:
    f = tmp_path / ("ge_proto_00000001_graph_1_Build.txt" if "ge" in name else name + ".pbtxt")
    f.write_bytes(INPUTS[name])
    for args in COMMANDS:
        check_rules([a.format(f=f) for a in args])


@pytest.mark.parametrize("name", sorted(STRICT_BLOCKS))
def test_no_command_answers_past_a_block_that_is_no_valid_node(tmp_path: Path, name: str) -> None:
    """Issue 37: each of these files opens with a block that is no valid node, which fp and bp (no
    compute op, no gradients: they read every block) and points meet before any answer."""
    from pbtxt_scan.cli import app
    from support.hostile import runner

    f = tmp_path / (name + ".pbtxt")
    f.write_bytes(STRICT_BLOCKS[name])
    for args in (["fp", str(f)], ["bp", str(f)], ["points", str(f)], ["fp", "--lenient", str(f)]):
        r = runner.invoke(app, args)
        if "--lenient" in args:
            assert r.exit_code in (0, 1) and "--lenient: skipped 1 block" in r.stderr, (args, r.stderr)  # (then the rest read)
            continue
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and ("Message type" in r.stderr or "Expected string" in r.stderr), (args, r.stderr)


@pytest.mark.parametrize("name", quick_first(sorted(STRICT_BLOCKS), 2))
def test_verify_reads_its_graph_as_fp_does_lenient_or_not(tmp_path: Path, name: str) -> None:
    """verify --graph reads the graph as points does: a block that is no valid node stops it with
    check's words, and --lenient skips it, saying so, as it does for fp, bp and points."""
    from pbtxt_scan.cli import app
    from support.data import DATA
    from support.hostile import runner

    f = tmp_path / (name + ".pbtxt")
    f.write_bytes(STRICT_BLOCKS[name])
    args = ["verify", str(DATA / "prof" / "mindinsight_PROF_000001"), "--graph", str(f)]
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1, (r.stdout, r.stderr)
    assert "Message type" in r.stderr or "Expected string" in r.stderr, r.stderr
    r = runner.invoke(app, args + ["--lenient"])
    assert r.exit_code in (0, 1) and "--lenient: skipped 1 block" in r.stderr and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("name", sorted(GE_STRICT_BLOCKS))
def test_no_ge_command_answers_past_an_op_that_is_no_valid_node(tmp_path: Path, name: str) -> None:
    """Issue 37, on GE dumps: every GE reading reads every op before its answer (GE's own choice
    walks the whole graph), so each stops at the damaged op with check's words, or, --lenient,
    skips it with one stderr line and answers from the rest."""
    from pbtxt_scan.cli import app
    from support.hostile import runner

    f = tmp_path / ("ge_onnx_00000001_graph_1_Build.pbtxt" if "onnx" in name else "ge_proto_00000001_graph_1_Build.txt")
    f.write_bytes(GE_STRICT_BLOCKS[name])
    for args in (["ge-auto", str(f)], ["ge-auto", "--jobs", "2", str(f)], ["resolve", "n", "--ge", str(f)], ["fp", str(f)],
                 ["bp", str(f)], ["points", str(f)]):
        r = runner.invoke(app, args)
        assert r.exit_code == 2, (args, r.stdout, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and ("Message type" in r.stderr or "Expected string" in r.stderr), (args, r.stderr)
        assert any(":%s: " % at in r.stderr for at in ("3:3", "4:3", "4")), r.stderr  # (at the op, or its bad name's line)
        r = runner.invoke(app, args[:1] + ["--lenient"] + args[1:])
        assert r.exit_code in (0, 1) and "--lenient: skipped 1 block" in r.stderr, (args, r.stderr)  # (then the rest read)
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("checkpoint", quick_first(HOSTILE_CHECKPOINTS, 3), ids=range(len(HOSTILE_CHECKPOINTS)))
def test_every_command_on_a_model_dir_with_a_hostile_checkpoint_file(tmp_path: Path, checkpoint: bytes) -> None:
    d = tmp_path / "model_dir"
    d.mkdir()
    (d / "model.ckpt-1000.meta").write_bytes((DATA / "binary" / "mlp_sgd.meta").read_bytes())
    (d / "checkpoint").write_bytes(checkpoint)
    for args in COMMANDS:
        check_rules([a.format(f=d) for a in args])


# The commands that take --record (an event file's graph): the README's list.
RECORD_COMMANDS = frozenset("fp bp points nodes show stats check report".split())


@pytest.mark.parametrize("value", quick_first(HOSTILE_RECORDS, 3))
def test_every_record_command_on_a_hostile_record(value: str) -> None:
    trace = DATA / "events" / "trace_export"
    for args in [a for a in COMMANDS if a[0] in RECORD_COMMANDS]:
        for f in (trace, trace / "events.out.tfevents.1700000000.fixture.1.0.v2"):
            check_rules([a.format(f=f) for a in args] + ["--record", value])


# ``--run`` values (issue 38): none of these is a run of the logdir; each is one line, exit 2.
HOSTILE_RUNS = ["", "..", "../..", "/", "/etc", "train/../../x", "a\nb\x1b[31m", "x" * 5000, "\x00"]


@pytest.mark.parametrize("value", HOSTILE_RUNS, ids=range(len(HOSTILE_RUNS)))
def test_every_run_command_on_a_hostile_run(value: str) -> None:
    logs = DATA / "events" / "logs_runs" / "logs"
    for args in [a for a in COMMANDS if a[0] in RECORD_COMMANDS or a[0] == "events"]:
        check_rules([a.format(f=logs) for a in args] + ["--run", value])


@pytest.mark.parametrize("name", sorted(PROF_CASES))
def test_verify_on_every_hostile_profiling_folder(tmp_path: Path, name: str) -> None:
    top = tmp_path / ("PROF_" + name)
    for rel, text in PROF_CASES[name].items():
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(text)
    for args in PROF_COMMANDS:
        check_rules([a.format(d=top, g=DATA / "graphs" / "mlp_sgd.pbtxt") for a in args])


_SEEDS = [DATA / "graphs" / "inference_no_gradients.pbtxt", DATA / "ge" / "ge_proto_00000013_graph_3_Build.txt",
          DATA / "ge" / "ge_onnx_00000042_graph_1_Build.pbtxt"]
_PIECES = [b"{", b"}", b"<", b">", b"[", b"]", b":", b'"', b"'", b"\\", b"\n", b"#", b"\x00", b"\xff", b"node {", b"op {",
           b'name: "x"', b"1e999", b"-", b"9" * 5000, b"{ a " * 50]


@settings(max_examples=fuzz_examples(0.02), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          derandomize="PBTXT_SCAN_FUZZ_EXAMPLES" not in os.environ)
@given(seed=st.sampled_from(_SEEDS), edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.sampled_from(_PIECES)), min_size=1, max_size=6))
def test_every_command_on_mutated_fixtures(tmp_path: Path, seed: Path, edits: "list[tuple[float, int, bytes]]") -> None:
    data = bytearray(seed.read_bytes())
    for where, how, piece in edits:
        i = int(where * len(data))
        if how == 0:
            data[i:i] = piece  # insert
        elif how == 1:
            del data[i : i + len(piece)]  # delete
        elif how == 2:
            data[i : i + len(piece)] = piece  # overwrite
        else:
            del data[i:]  # truncate
    f = tmp_path / seed.name
    f.write_bytes(bytes(data))
    for args in COMMANDS:
        check_rules([a.format(f=f) for a in args])


# --- memory on large inputs, in real processes -------------------------------------------------

_RSS = r"""
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
sys.stdout.write("%d %d %s" % (p.returncode, rss, p.stderr.decode(errors="replace")))
"""


def _large_inputs(tmp: Path) -> "dict[str, Path]":
    rng = random.Random(7)
    out = {}
    big_string = tmp / "string.pbtxt"  # a 24 MB escaped tensor_content, then the model
    with big_string.open("wb") as w:
        w.write(b'node {\n  name: "w"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n'
                b'        tensor_content: "')
        piece = b"".join(rng.choice([b"ab", b"\\\\", b"\\001", b"\\n", b"\\'"]) for _ in range(1 << 14))
        for _ in range((24 << 20) // len(piece)):
            w.write(piece)
        w.write(b'"\n      }\n    }\n  }\n}\n')
        w.write((DATA / "graphs" / "mlp_sgd.pbtxt").read_bytes())
    out["string"] = big_string
    adjacent = tmp / "adjacent.pbtxt"  # 16 MB of adjacent string literals in one field
    with adjacent.open("wb") as w:
        w.write(b'node {\n  name: "a"\n  op: "Const"\n  attr { key: "k" value { s: ')
        w.write(b'"abcdefgh" ' * (1 << 20))
        w.write(b"} }\n}\n")
    out["adjacent"] = adjacent  # (every field's adjacent literals used to be joined: 180 MB)
    many = tmp / "many.pbtxt"  # 12 MB, one node per line: no column-0 opener for bp
    line = b'node { name: "gradients/n%d" op: "Mul" input: "x" }\n'
    with many.open("wb") as w:
        for i in range(240000):
            w.write(line % i)
    out["many"] = many
    return out


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB: Linux")
@pytest.mark.slow  # 12-24 MB inputs, twelve measured processes
def test_memory_stays_bounded_on_large_inputs(tmp_path: Path) -> None:
    env = dict(os.environ)  # (the cache folder: tmp_path / "cache", conftest.py)
    names = {"string": "w", "adjacent": "a", "many": "gradients/n5"}  # a big block each, for show --json
    for name, f in _large_inputs(tmp_path).items():
        for args in (["fp", str(f)], ["bp", str(f)], ["stats", str(f)], ["show", "--json", str(f), names[name]]):
            p = subprocess.run([sys.executable, "-c", _RSS, sys.executable, "-m", "pbtxt_scan", *args],
                               capture_output=True, text=True, env=env, timeout=300)
            code, rss, err = p.stdout.split(" ", 2)
            assert int(code) in (0, 1, 2) and "Traceback" not in err, (name, args, err)
            assert int(rss) < 150 * 1024, "%s %s: %d MB" % (name, " ".join(args), int(rss) >> 10)


@pytest.mark.skipif(not hasattr(__import__("resource"), "prlimit"), reason="no prlimit: grep runs uncapped")
def test_every_command_on_a_long_line_in_the_middle_grep_cannot_hold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Session 18: a line grep fails on (its address space capped), after a node and before others:
    every command follows the rules, with the answers of reading the blocks (no grep at all)."""
    from pbtxt_scan.cli import app
    from pbtxt_scan.parallel import _grep
    from pbtxt_scan.text import _lane
    from support.hostile import LONG_LINE_CAP, LONG_LINE_MIDDLE, runner

    f = tmp_path / "long_line_middle.pbtxt"
    f.write_bytes(LONG_LINE_MIDDLE)
    monkeypatch.setattr(_grep, "MEMORY", LONG_LINE_CAP)
    for args in COMMANDS:
        argv = [a.format(f=f) for a in args]
        check_rules(argv)
        if args[0] in ("stats", "report"):  # (their times differ)
            continue
        capped = runner.invoke(app, argv)
        with monkeypatch.context() as m:
            m.setattr(_lane.TextLane, "searchable", False)
            read = runner.invoke(app, argv)
        assert (capped.exit_code, capped.stdout) == (read.exit_code, read.stdout), argv
