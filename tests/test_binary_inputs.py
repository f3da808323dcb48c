"""Every graph command on binary graphs (issue 13): the binary twins in tests/data/binary give the
answers written in their text twin's ``graphs/<stem>.expected.json``, and the node names read from
the text twin's own bytes (a regex here, not the scanner). Positions are byte offsets: ``line`` is
null in JSON, and text output says ``offset N`` where a text file says ``line N``.

The twins and how they were made: tests/data/README.md, section "binary/".

Each test on every twin runs, in the quick set, one twin of each kind (``QUICK``: a GraphDef, a
gzipped one, a MetaGraphDef, a SavedModel, and a GraphDef and a MetaGraphDef whose points are in a
function body: six of the 25); CI's ``slow`` run adds the other 19.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from support.marks import one_of_each, quick_first
from support.cli import CliRunner
from support.data import expect_known_wrong
from support.pipes import _feed

from pbtxt_scan.cli import app

DATA = Path(__file__).parent / "data"
GRAPHS = DATA / "graphs"
BINARY = DATA / "binary"
GE_DIR = DATA / "ge" / "mlp_sgd"  # the GE Build dump of mlp_sgd (test_workflow.py)

# (file under binary/, its text twin's stem, what it is)
TWINS = [
    ("mlp_sgd.pb", "mlp_sgd", "graphdef"),
    ("mlp_sgd.pb.gz", "mlp_sgd", "graphdef"),
    ("mlp_sgd.meta", "mlp_sgd", "metagraph"),
    ("mlp_sgd_saved_model/saved_model.pb", "mlp_sgd", "savedmodel"),
    ("tf2_gradient_tape.pb", "tf2_gradient_tape", "graphdef"),
    ("tf2_gradient_tape.meta", "tf2_gradient_tape", "metagraph"),
    ("estimator_queue.pb", "estimator_queue", "graphdef"),
    ("estimator_queue.meta", "estimator_queue", "metagraph"),
    ("gan_two_optimizers.pb", "gan_two_optimizers", "graphdef"),
    ("gan_two_optimizers.meta", "gan_two_optimizers", "metagraph"),
    # issue 19: copies of the model, a model called as a function, an unused gradients chain
    ("global_local_copies.pb", "global_local_copies", "graphdef"),
    ("tf2_called_function.pb", "tf2_called_function", "graphdef"),
    ("unused_gradients.pb", "unused_gradients", "graphdef"),
    # issue 34: feature columns, several optimizers, replicas, SavedModels of a model called as a function
    ("dnn_linear_combined_fc.pb", "dnn_linear_combined_fc", "graphdef"),
    ("dnn_classifier_fc.pb", "dnn_classifier_fc", "graphdef"),
    ("keras_dense_features.pb", "keras_dense_features", "graphdef"),
    ("keras_string_lookup.pb", "keras_string_lookup", "graphdef"),
    ("gan_one_group.pb", "gan_one_group", "graphdef"),
    ("actor_critic_two_optimizers.pb", "actor_critic_two_optimizers", "graphdef"),
    ("a3c_workers.pb", "a3c_workers", "graphdef"),
    ("dropout_rate_placeholder.pb", "dropout_rate_placeholder", "graphdef"),
    ("tf2_gan_two_tapes.pb", "tf2_gan_two_tapes", "graphdef"),
    ("tf2_gan_split_steps.pb", "tf2_gan_split_steps", "graphdef"),
    ("mirrored_keras_fit.pb", "mirrored_keras_fit", "graphdef"),
    ("mirrored_custom_loop.pb", "mirrored_custom_loop", "graphdef"),
]
# SavedModels of inference graphs whose text is their graph alone (no twin): fp and bp in test_confidence
OTHER = ["saved_model_module/saved_model.pb", "saved_model_keras/saved_model.pb"]
IDS = [t[0] for t in TWINS]
KIND_NAMES = {"graphdef": "binary GraphDef", "metagraph": "binary MetaGraphDef", "savedmodel": "binary SavedModel"}


def test_every_binary_fixture_is_covered() -> None:
    found = sorted(str(p.relative_to(BINARY)) for p in BINARY.rglob("*") if p.is_file())
    assert found and found == sorted([t[0] for t in TWINS] + OTHER)


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def expected(stem: str) -> Dict[str, Any]:
    with open(str(GRAPHS / (stem + ".expected.json")), encoding="utf-8") as f:
        return json.load(f)  # type: ignore[no-any-return]


def text_names(stem: str) -> Tuple[List[str], List[str]]:
    """The names of the text twin's top-level nodes and library node_defs, in file order, read
    from its bytes (the writer's layout: `node {` at column 0, `node_def {` at column 4)."""
    text = (GRAPHS / (stem + ".pbtxt")).read_text(encoding="utf-8")
    top = re.findall(r'^node \{\n  name: "([^"]*)"', text, re.M)
    fn = re.findall(r'^    node_def \{\n      name: "([^"]*)"', text, re.M)
    return top, fn


def text_block(stem: str, name: str, function: bool, line: int = 1) -> str:
    """The text twin's own text of one node (a function's node_def dedented to column 0), the
    first from ``line`` on (a name in several function bodies: the one the answer names)."""
    text = (GRAPHS / (stem + ".pbtxt")).read_text(encoding="utf-8")
    pad = "    " if function else ""
    field = "node_def" if function else "node"
    at = len("".join(text.splitlines(True)[: line - 1]))
    m = re.compile(r'^%s%s \{\n%s  name: "%s"\n.*?^%s\}\n' % (pad, field, pad, re.escape(name), pad), re.M | re.S).search(text, at)
    assert m, name
    return "".join(line[len(pad):] + "\n" for line in m.group(0).splitlines())


def binary_path(name: str) -> str:
    return str(BINARY / name)


def decompressed_size(name: str) -> int:
    data = (BINARY / name).read_bytes()
    return len(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def _kind(twin: Tuple[str, str, str]) -> Tuple[str, bool, bool]:
    """What makes a twin another kind of input: its container, gzip, and points in a function body."""
    name, stem, kind = twin
    want = expected(stem)
    return kind, name.endswith(".gz"), bool(want["fp_function"] or want["bp_function"])


QUICK = one_of_each(TWINS, _kind)  # (the others: CI's slow run)

SAVE_TAIL = 21  # the saved_model.pb's train MetaGraph: the text twin's nodes, then the Builder's save/* nodes


# --- answers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_fp_and_bp(name: str, stem: str, kind: str, request: Any) -> None:
    expect_known_wrong(request, stem)
    want = expected(stem)
    for command in ("fp", "bp"):
        r = run(command, binary_path(name))
        assert (r.exit_code, r.stdout) == (0, want[command] + "\n"), r.stderr


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_points_json(name: str, stem: str, kind: str, request: Any) -> None:
    expect_known_wrong(request, stem)
    want = expected(stem)
    r = run("points", "--json", binary_path(name))
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    text = json.loads(run("points", "--json", str(GRAPHS / (stem + ".pbtxt"))).stdout)
    for kind_ in ("fp", "bp"):
        p = got[kind_]
        assert (p["name"], p["function"]) == (want[kind_], want[kind_ + "_function"])
        assert p["line"] is None and p["name_line"] is None and isinstance(p["offset"], int) and p["offset"] > 0
        assert list(p) == list(text[kind_])  # the same keys for text and binary
    if kind == "savedmodel":
        assert "SavedModel: reading MetaGraph 2 of 2 (tags: train): tagged train" in r.stderr


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_points_text_says_offset(name: str, stem: str, kind: str, request: Any) -> None:
    expect_known_wrong(request, stem)
    want = expected(stem)
    r = run("points", binary_path(name))
    assert r.exit_code == 0, r.stderr
    rows = r.stdout.splitlines()
    for row, kind_ in zip(rows, ("fp", "bp")):
        fn = want[kind_ + "_function"]
        pattern = r"%s_point  %s  \(\w+, offset \d+%s, rule \w+\)$" % (kind_, re.escape(want[kind_]), " in function " + re.escape(fn) if fn else "")
        assert re.match(pattern, row), row


@pytest.mark.parametrize("command", ["fp", "bp"])
def test_explain_trail_in_offsets(command: str) -> None:
    r = run(command, "--explain", binary_path("gan_two_optimizers.meta"))
    assert r.exit_code == 0
    assert "line " not in r.stderr and re.search(r"CHOSEN offset \d+ ", r.stderr), r.stderr
    assert re.search(r"=> \S+ at offset \d+: ", r.stderr)


def test_points_with_ge_from_a_binary_graph() -> None:
    text = run("points", "--json", str(GRAPHS / "mlp_sgd.pbtxt"), "--ge", str(GE_DIR))
    for name in ("mlp_sgd.pb", "mlp_sgd.meta", "mlp_sgd_saved_model/saved_model.pb"):
        r = run("points", "--json", binary_path(name), "--ge", str(GE_DIR))
        assert r.exit_code == 0, r.stderr
        got = json.loads(r.stdout)
        assert got["ge"] == json.loads(text.stdout)["ge"]
        assert got["ge"]["fp"]["best"]["name"] == "dense/MatMuldense/BiasAdd"
        prof = json.loads(run("points", binary_path(name), "--ge", str(GE_DIR), "--format", "profiling").stdout)
        assert prof["bp_point"] == "gradients/dense/MatMul_grad/MatMul_1_1"


# --- listings, show, stats, check -------------------------------------------------------------------


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_nodes(name: str, stem: str, kind: str) -> None:
    top, fn = text_names(stem)
    r = run("nodes", binary_path(name))
    assert r.exit_code == 0, r.stderr
    rows = [row.split("\t") for row in r.stdout.splitlines()]
    names = [row[1] for row in rows]
    extra = SAVE_TAIL if kind == "savedmodel" else 0
    assert names[: len(top)] == top and len(names) == len(top) + extra
    assert all(n.startswith("save/") for n in names[len(top):])
    offsets = [int(row[0]) for row in rows]  # offset<TAB>name<TAB>op
    assert offsets == sorted(offsets) and len(set(offsets)) == len(offsets)
    r = run("nodes", "--input-kind", "function", binary_path(name))
    assert [row.split("\t")[1] for row in r.stdout.splitlines()] == fn
    jl = [json.loads(x) for x in run("nodes", "--json", binary_path(name)).stdout.splitlines()]
    assert [o["name"] for o in jl] == names and all(o["line"] is None and o["offset"] == off for o, off in zip(jl, offsets))


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_show(name: str, stem: str, kind: str) -> None:
    want = expected(stem)
    for kind_ in ("fp", "bp"):
        node, fn = want[kind_], want[kind_ + "_function"]
        fmt = ["--input-kind", "function"] if fn else []
        r = run("show", *fmt, binary_path(name), node)
        assert r.exit_code == 0, r.stderr
        first, _, rest = r.stdout.partition("\n")
        assert re.match(r"# %s offset \d+ \(%s, a \d+-byte NodeDef\)$" % (re.escape(binary_path(name)), kind), first), first
        if kind == "savedmodel":  # the Builder added _output_shapes to the train graph's nodes
            rest = re.sub(r'^  attr \{\n    key: "_output_shapes"\n.*?^  \}\n', "", rest, flags=re.M | re.S)
        assert rest == text_block(stem, node, bool(fn), want[kind_ + "_line"])  # (show: the copy the points name)
        r = run("show", "--json", *fmt, binary_path(name), node)
        obj = json.loads(r.stdout)
        assert (obj["name"], obj["line"]) == (node, None) and obj["block"]["name"][0]["value"] == node


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_stats(name: str, stem: str, kind: str) -> None:
    top, _ = text_names(stem)
    r = run("stats", "--json", "--top", "0", binary_path(name))
    assert r.exit_code == 0, r.stderr
    st = json.loads(r.stdout)
    assert st["nodes"] == len(top) + (SAVE_TAIL if kind == "savedmodel" else 0) == sum(st["ops"].values())
    assert (st["format"], st["binary"], st["lines"]) == ("graphdef", kind, None)
    assert st["bytes"] == decompressed_size(name)
    text = json.loads(run("stats", "--json", "--top", "0", str(GRAPHS / (stem + ".pbtxt"))).stdout)
    assert list(st) == list(text) and text["binary"] is None
    if kind != "savedmodel":
        assert st["ops"] == text["ops"]
    r = run("stats", binary_path(name))
    assert "lines    -\n" in r.stdout and "format   graphdef (%s)\n" % KIND_NAMES[kind] in r.stdout


@pytest.mark.parametrize("name, stem, kind", QUICK, ids=IDS)
def test_check(name: str, stem: str, kind: str) -> None:
    top, _ = text_names(stem)
    n = len(top) + (SAVE_TAIL if kind == "savedmodel" else 0)
    r = run("check", binary_path(name))
    assert (r.exit_code, r.stdout) == (0, "%s: ok (%d bytes, %d nodes, %s)\n" % (binary_path(name), decompressed_size(name), n, KIND_NAMES[kind]))


# --- streams ------------------------------------------------------------------------------------------


def _run(*args: str, **kw: Any) -> "subprocess.CompletedProcess[str]":
    return subprocess.run([sys.executable, "-m", "pbtxt_scan", *args], capture_output=True, text=True, timeout=120, **kw)  # type: ignore[call-overload,no-any-return]


@pytest.mark.parametrize("command", ["points", "nodes", "stats", "check"])
def test_saved_model_on_stdin_reads_the_train_meta_graph(command: str) -> None:
    """A stream is spooled once it is known to be a SavedModel, so the train MetaGraph (the second)
    is found on stdin too, and the answers are the file's."""
    path = binary_path("mlp_sgd_saved_model/saved_model.pb")
    opts = ["--json"] if command in ("points", "stats") else []
    with open(path, "rb") as f:
        got = _run(command, *opts, "-", stdin=f)
    want = _run(command, *opts, path)
    assert got.returncode == want.returncode == 0, got.stderr
    assert got.stderr.replace("<stdin>", path) == want.stderr
    if command == "stats":
        got_st, want_st = json.loads(got.stdout), json.loads(want.stdout)
        assert [got_st[k] for k in ("nodes", "ops", "bytes", "binary")] == [want_st[k] for k in ("nodes", "ops", "bytes", "binary")]
    else:
        assert got.stdout.replace("<stdin>", path) == want.stdout


@pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="needs /dev/fd (process substitution)")
@pytest.mark.parametrize("command", quick_first(["fp", "bp", "points", "nodes", "show", "check"]))
def test_dev_fd_pipe_of_a_gzipped_pb(command: str) -> None:
    """`pbtxt-scan bp <(cat mlp_sgd.pb.gz)`: gzip through a pipe, read like the file."""
    path = binary_path("mlp_sgd.pb.gz")
    extra = ["dense/MatMul"] if command == "show" else []
    want = _run(command, path, *extra)
    assert want.returncode == 0, want.stderr
    r_fd, w_fd = os.pipe()
    t = _feed(w_fd, (BINARY / "mlp_sgd.pb.gz").read_bytes())
    fd_path = "/dev/fd/%d" % r_fd
    got = _run(command, fd_path, *extra, pass_fds=(r_fd,))
    os.close(r_fd)
    t.join(10)
    assert got.returncode == 0, got.stderr
    assert got.stdout.replace(fd_path, path) == want.stdout


# --- damaged binary graphs: one line, exit 2 -----------------------------------------------------------

MLP_PB = (BINARY / "mlp_sgd.pb").read_bytes()
BP_TAG = 29541  # the bp node's tag byte in mlp_sgd.pb (tests/data/README.md, binary/)
DAMAGED = [
    ("cut_in_bp_node", MLP_PB[: BP_TAG + 40], "offset %d: truncated: a length-delimited field runs past the end of the file" % BP_TAG),
    ("wire_type_7", MLP_PB[:BP_TAG] + b"\x0f" + MLP_PB[BP_TAG + 1 :], "offset %d: wire type 7 is not valid" % BP_TAG),
    ("bad_varint", MLP_PB[:BP_TAG + 1] + b"\xff" * 11 + MLP_PB[BP_TAG + 12 :], "offset %d: bad varint: more than 10 bytes" % (BP_TAG + 1)),
]


@pytest.mark.parametrize("command", quick_first(["check", "stats", "nodes", "bp", "points"]))
@pytest.mark.parametrize("case, data, message", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_damaged_pb_one_clean_line(tmp_path: Path, case: str, data: bytes, message: str, command: str) -> None:
    path = tmp_path / (case + ".pb")
    path.write_bytes(data)
    args = [command, str(path)]
    r = run(*args)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.stderr == "%s:%s\n" % (path, message)
    assert r.exit_code == 2
    if command == "points":  # the fp before the damage is still printed (a file still being written)
        assert r.stdout.startswith("fp_point  dense/MatMul  (MatMul, offset 9909, ")
    r = _run(*args)  # the installed entry point: the same one line
    assert (r.returncode, r.stderr) == (2, "%s:%s\n" % (path, message))


@pytest.mark.parametrize("case, data, message", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_show_reads_its_node_alone_on_a_damaged_pb(tmp_path: Path, case: str, data: bytes, message: str) -> None:
    # show finds a name by one byte search and reads that node's bytes alone (issue 38), as the text
    # lane does: damage after it is not read; a name that is not there is a plain miss, exit 1.
    path = tmp_path / (case + ".pb")
    path.write_bytes(data)
    whole = tmp_path / "whole.pb"
    whole.write_bytes(MLP_PB)
    r, want = run("show", str(path), "dense/MatMul"), run("show", str(whole), "dense/MatMul")
    assert (r.exit_code, r.stderr) == (0, ""), r.stderr
    assert r.stdout == want.stdout.replace(str(whole), str(path))
    r = run("show", str(path), "no/such/node")
    assert r.exit_code == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("%s: no node named 'no/such/node'" % path), r.stderr


def test_fp_before_the_damage_is_answered(tmp_path: Path) -> None:
    """fp reads forward and stops at its answer: damage after it is not reached (as for text)."""
    path = tmp_path / "cut.pb"
    path.write_bytes(MLP_PB[: BP_TAG + 40])
    r = run("fp", str(path))
    assert (r.exit_code, r.stdout) == (0, "dense/MatMul\n")


def test_damage_inside_an_attr_value_is_found_by_check_and_stats(tmp_path: Path) -> None:
    """check and stats decode every attr value (wire's validate=); listings and the searches read
    names, ops and inputs and skip attrs by their length, as they skip tensors."""
    at = MLP_PB.find(b"\x0a\x01T\x12\x02\x30\x01", BP_TAG)  # the bp node's attr T: {type: DT_FLOAT}
    assert at > BP_TAG
    path = tmp_path / "attr.pb"
    path.write_bytes(MLP_PB[: at + 5] + b"\x37" + MLP_PB[at + 6 :])  # type's tag with wire type 7
    for command in ("check", "stats"):
        r = run(command, str(path))
        assert (r.exit_code, r.stderr) == (2, '%s:offset %d: node[143].attr["T"]: wire type 7 is not valid\n' % (path, at + 5))
    r = run("bp", str(path))
    assert (r.exit_code, r.stdout) == (0, "gradients/dense/MatMul_grad/MatMul_1\n")


def test_bp_index_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The backward index (one pass over every node's length prefix) is built once per file, like
    the text index: a second bp reads it from the cache; a stale or damaged entry is rebuilt."""
    import pbtxt_scan.wire._wire as wire

    path = binary_path("mlp_sgd_saved_model/saved_model.pb")
    built = []
    real = wire.build_index
    monkeypatch.setattr(wire, "build_index", lambda *a, **k: built.append(1) or real(*a, **k))
    for _ in range(2):
        r = run("bp", "--json", path)
        assert json.loads(r.stdout)["offset"] == 63369
        assert "MetaGraph 2 of 2 (tags: train)" in r.stderr
    assert built == [1]
    for entry in (tmp_path / "cache").iterdir():
        entry.write_bytes(entry.read_bytes()[:-3])  # damaged: its checksum fails
    assert json.loads(run("bp", "--json", path).stdout)["offset"] == 63369 and built == [1, 1]


# --- the guard (test_guard.py) over random damage to binary twins ------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from support.examples import fuzz_examples  # noqa: E402
from support.hostile import COMMANDS, check_rules  # noqa: E402

_BIN_SEEDS = ["tf2_gradient_tape.meta", "mlp_sgd_saved_model/saved_model.pb", "mlp_sgd.pb.gz"]


@settings(max_examples=fuzz_examples(0.02), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          derandomize="PBTXT_SCAN_FUZZ_EXAMPLES" not in os.environ)
@given(seed=st.sampled_from(_BIN_SEEDS), edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 3), st.binary(min_size=1, max_size=12)), min_size=1, max_size=6))
def test_every_command_on_damaged_binary_graphs(tmp_path: Path, seed: str, edits: "list[tuple[float, int, bytes]]") -> None:
    """Exit 0, 1 or 2, no traceback, one stderr line on failure: whatever the damage (bytes of the
    decompressed graph, so that a .gz seed stays gzip)."""
    raw = (BINARY / seed).read_bytes()
    packed = raw[:2] == b"\x1f\x8b"
    data = bytearray(gzip.decompress(raw) if packed else raw)
    for where, how, piece in edits:
        i = int(where * len(data))
        if how == 0:
            data[i:i] = piece
        elif how == 1:
            del data[i : i + len(piece)]
        elif how == 2:
            data[i : i + len(piece)] = piece
        else:
            del data[max(i, 1):]
    f = tmp_path / Path(seed).name
    f.write_bytes(gzip.compress(bytes(data)) if packed else bytes(data))
    for args in COMMANDS:
        check_rules([a.format(f=f) for a in args])


@pytest.mark.parametrize("args", [["bp"], ["points", "--explain"], ["nodes"], ["check"], ["show", "--json"]], ids=lambda a: " ".join(a))
def test_a_failure_is_one_line_without_the_saved_model_note(tmp_path: Path, args: "list[str]") -> None:
    """The note saying which MetaGraph is read comes with results; a failure is the error alone."""
    path = tmp_path / "saved_model.pb"
    path.write_bytes((BINARY / "mlp_sgd_saved_model" / "saved_model.pb").read_bytes()[:70000])  # cut in the train graph
    r = run(*args, str(path), *(["no/such/node"] if args[0] == "show" else []))
    assert r.exit_code == 2 and len(r.stderr.splitlines()) == 1 and ":offset " in r.stderr, r.stderr
