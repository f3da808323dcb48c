"""``check`` on binary graphs accepts and refuses what protobuf's own parser does (issue 37, "Binary
too"), and names where: the offset of the bad field and its path (``node[12].attr["T"].type``).

The corpus (``tests/data/schema_wire/cases.json``, made by ``tools/make_wire_corpus.py`` with
protobuf 7.36 (upb) and TensorFlow 2.21's generated modules; README there) is the fixtures of
``tests/data/binary`` with one change each: invalid UTF-8 in proto3 strings, wire types 4, 6 and 7,
11-byte varints, lengths past their message's end and cut packed fields, at every depth; and
controls protobuf accepts: a known field with another wire type, varints out of their type's range,
an unknown enum number, unknown fields, two members of a oneof, unpacked repeated fields, bytes that
are no UTF-8. No protobuf is needed here.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings, strategies as st
from support.cli import CliRunner
from support.data import DATA
from support.wire_encoder import encode, graph, node, tag, varint

import pbtxt_scan as ps
from pbtxt_scan.cli import app
from pbtxt_scan.graph import _parallel
from pbtxt_scan.wire._wire_check import Seen, node_ok
from pbtxt_scan.wire._wire_schema import spec, walk

CORPUS = DATA / "schema_wire" / "cases.json"
CASES: List[Dict[str, Any]] = json.loads(CORPUS.read_text())["cases"]
runner = CliRunner()


def _patched(case: Dict[str, Any]) -> bytes:
    out = bytearray((DATA / "binary" / case["fixture"]).read_bytes())
    for at, n, new in sorted(case["patch"], key=lambda h: -h[0]):
        out[at : at + n] = bytes.fromhex(new)
    return bytes(out)


def test_the_corpus_has_each_kind_accepted_and_refused():
    assert len(CASES) > 200
    kinds = {c["case"].split(" for ")[0].split(" in ")[0].split(" node")[0] for c in CASES if c["protobuf"] == "reject"}
    assert {"wire type 6", "wire type 7", "wire type 4", "11-byte varint", "length past the end"} <= kinds
    assert any(c["case"].startswith("utf8 ") for c in CASES)
    assert {c["kind"] for c in CASES} == {"graphdef", "metagraph", "savedmodel"}
    assert sum(c["protobuf"] == "accept" for c in CASES) > 100


@pytest.mark.parametrize("case", CASES, ids=[c["fixture"] + ": " + c["case"] for c in CASES])
def test_check_agrees_with_protobuf(case: Dict[str, Any], tmp_path: Path):
    path = tmp_path / Path(case["fixture"]).name
    path.write_bytes(_patched(case))
    if case["protobuf"] == "accept":
        ps.check(path)
        return
    with pytest.raises(ps.PbtxtError) as e:
        ps.check(path)
    err = e.value
    if case["offset"] < 4:  # (a file broken in its first field: no kind of graph can be told)
        assert "binary" in err.msg
        return
    # (the bad field's tag; or, found by the first bytes when opening, the byte in it that breaks)
    assert err.offset == case["offset"] or (" binary " in err.msg and case["offset"] < err.offset < case["end"]), str(err)
    if case["path"]:
        assert err.msg.startswith(case["path"] + ": ") or ": %s: " % case["path"] in err.msg, str(err)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_cli_says_offset_and_path(tmp_path: Path, jobs: str):
    """One line on stderr, exit 2, as for every binary error; ``stats`` refuses it too."""
    case = next(c for c in CASES if c["case"].startswith("utf8 node[") and c["fixture"] == "mlp_sgd.pb")
    path = tmp_path / "g.pb"
    path.write_bytes(_patched(case))
    for cmd in ("check", "stats"):
        r = runner.invoke(app, [cmd, str(path), "--jobs", jobs])
        assert r.exit_code == 2, r.stderr
        assert r.stdout == ""
        assert r.stderr == "%s:offset %d: %s: invalid UTF-8 in a string field (protobuf refuses it in a proto3 string)\n" % (
            path, case["offset"], case["path"])


def test_an_error_late_in_a_graph_names_its_node_on_every_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """--jobs 2 hands the chunk with the error to the parent, which counts the nodes before it."""
    nodes = [node("n%d" % k, "Const", attrs=[("T", [(6, 1)])]) for k in range(3000)]
    bad = 2500
    nodes[bad] = node("n%d" % bad, "Const", attrs=[("T", [(9, b"\xff")])])
    path = tmp_path / "big.pb"
    path.write_bytes(encode(graph(nodes)))
    profile: Dict[str, float] = {}
    monkeypatch.setattr(_parallel, "stats", functools.partial(_parallel.stats, split_bytes=4096, profile=profile))
    for jobs in ("1", "2"):
        r = runner.invoke(app, ["check", str(path), "--jobs", jobs])
        assert r.exit_code == 2
        assert ': node[%d].attr["T"].placeholder: invalid UTF-8' % bad in r.stderr, r.stderr
    assert profile["sequential_from"] > 4096  # (chunks before the error's were taken from the workers)


# --- a random NodeDef with one random change: the fast verdict is the careful one -----------------

_FIELDS = st.sampled_from([
    (1, "s"), (2, "s"), (3, "s"), (4, "s"), (99, "s"), (6, "m"), (7, "m"), (1, "v"), (5, "v"),
])


@st.composite
def _nodes(draw: Any) -> bytes:
    parts = [tag(1, 2) + varint(len(b"n")) + b"n", tag(2, 2) + varint(5) + b"Const"]
    for fn, what in draw(st.lists(_FIELDS, max_size=4)):
        if what == "s":
            s = draw(st.binary(max_size=6))
            parts.append(tag(fn, 2) + varint(len(s)) + s)
        elif what == "m":
            parts.append(tag(fn, 2) + varint(0))
        else:
            parts.append(tag(fn, 0) + varint(draw(st.integers(0, (1 << 64) - 1))))
    attr = encode([(1, b"T"), (2, [(6, draw(st.integers(0, 200)))])])
    parts.append(tag(5, 2) + varint(len(attr)) + attr)
    data = b"".join(parts)
    if draw(st.booleans()):
        k = draw(st.integers(0, len(data) - 1))
        data = data[:k] + bytes([draw(st.integers(0, 255))]) + data[k + 1 :]
    return data


@settings(max_examples=300, deadline=None)
@given(_nodes())
def test_the_memo_walk_agrees_with_the_plain_walk(data: bytes):
    """``node_ok`` (strings at once as ASCII, attr runs remembered) says what :func:`walk` says."""
    plain = walk(data, 0, len(data), spec("tensorflow.NodeDef"), 1) is None
    seen = Seen()
    assert node_ok(data, 0, 0, len(data), seen) == plain
    assert node_ok(data, 0, 0, len(data), seen) == plain  # (again, from the memo)


@pytest.mark.parametrize("case", [c for c in CASES if c["protobuf"] == "reject" and c["offset"] >= 4][::6], ids=lambda c: c["case"])
def test_messages_too_big_to_hold_give_the_same_error(case: Dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A node or a container field over the size read whole (8 MB) is read a field at a time
    (``_wire_stream``): the same verdict, offset and path (here with that size made 64 bytes)."""
    from pbtxt_scan.wire import _wire_node, _wire_stream, _wire_whole

    path = tmp_path / Path(case["fixture"]).name
    path.write_bytes(_patched(case))
    with pytest.raises(ps.PbtxtError) as held:
        ps.check(path)
    for module, name in ((_wire_node, "_INLINE_MAX"), (_wire_whole, "_INLINE_MAX"), (_wire_stream, "HOLD")):
        monkeypatch.setattr(module, name, 64)
    with pytest.raises(ps.PbtxtError) as streamed:
        ps.check(path)
    assert (streamed.value.offset, streamed.value.msg) == (held.value.offset, held.value.msg)


@pytest.mark.parametrize("case", [c for c in CASES if c["kind"] != "graphdef"][::5], ids=lambda c: c["fixture"] + ": " + c["case"])
def test_stdin_agrees_with_protobuf(case: Dict[str, Any]):
    """A stream (read once, never seeked back: a SavedModel's MetaGraphs in file order) agrees too."""
    r = runner.invoke(app, ["check", "-", "--jobs", "1"], input=_patched(case))
    assert r.exit_code == (0 if case["protobuf"] == "accept" else 2), r.stderr
    if case["protobuf"] == "reject" and case["offset"] >= 4 and case["path"]:
        assert ": %s: " % case["path"] in r.stderr or ":offset %d: %s: " % (case["offset"], case["path"]) in r.stderr, r.stderr
