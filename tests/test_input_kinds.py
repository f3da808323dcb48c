"""What the tool accepts as input (issue 22, items 2-4): folders (a SavedModel, a model_dir, a GE
dump root with nested folders), files told by content that are no graph (each named, with what to
give instead, exit 2), a text SavedModel or MetaGraphDef read like a graph.pbtxt, and nodes inside
library functions found by ``show`` and listed by ``nodes --functions``.

The inputs are built at test time from the fixtures (tests/support/containers.py); the expected
answers are the fixtures' hand-written ``expected.json``. The tests on every graph whose points are
in a function run those of ``support.data.QUICK_GRAPHS`` in the quick set, all in CI's ``slow`` run.
"""
from __future__ import annotations

import gzip
import json
import re
import shutil
import struct
from pathlib import Path
from typing import Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.cli import CliRunner
from support.containers import event_file, model_dir, text_meta_graph, text_saved_model, tfrecord
from support.data import DATA, GRAPHS
from support.examples import examples
from support.marks import quick_graphs

from pbtxt_scan import GraphFile, PbtxtError
from pbtxt_scan.cli import app

GIVE = ("give a graph.pbtxt, a binary graph (.pb, .meta, saved_model.pb), a TensorBoard event file, a SavedModel, model_dir "
        "or logs folder, or a GE dump")


def run(*args: str, stdin: "bytes | None" = None):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args), input=stdin)


def expected(stem: str) -> Dict[str, object]:
    return json.loads((GRAPHS / (stem + ".expected.json")).read_text())


def assert_refused(r, message: str) -> None:  # type: ignore[no-untyped-def]
    """Bad input: exit 2, nothing on stdout, one line on stderr that holds ``message``."""
    assert (r.exit_code, r.stdout) == (2, ""), (r.exit_code, r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


# --- folders ------------------------------------------------------------------------------------


def test_a_savedmodel_folder_is_read_and_says_which_file(tmp_path: Path) -> None:
    d = tmp_path / "export"
    shutil.copytree(DATA / "binary" / "mlp_sgd_saved_model", d)
    want = run("points", str(d / "saved_model.pb"))
    r = run("points", str(d))
    assert (r.exit_code, r.stdout) == (0, want.stdout)
    first = r.stderr.splitlines()[0]
    assert first == "%s: reading %s: a SavedModel folder" % (d, d / "saved_model.pb")


def test_a_text_savedmodel_folder_is_read(tmp_path: Path) -> None:
    d = tmp_path / "export"
    d.mkdir()
    (d / "saved_model.pbtxt").write_text(text_saved_model([("train", (GRAPHS / "mlp_sgd.pbtxt").read_text())]))
    r = run("points", "--json", str(d))
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    exp = expected("mlp_sgd")
    assert (got["fp"]["name"], got["bp"]["name"]) == (exp["fp"], exp["bp"])
    assert r.stderr.splitlines()[0] == "%s: reading %s: a SavedModel folder" % (d, d / "saved_model.pbtxt")


@pytest.mark.parametrize("newest, stem", [(1000, "mlp_sgd"), (500, "estimator_queue")])
def test_a_model_dir_reads_the_meta_its_checkpoint_file_names(tmp_path: Path, newest: int, stem: str) -> None:
    d = model_dir(tmp_path)
    shutil.copy(DATA / "binary" / "estimator_queue.meta", d / "model.ckpt-500.meta")  # (1000: mlp_sgd's)
    (d / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-%d"\nall_model_checkpoint_paths: "model.ckpt-%d"\n'
                                  % (newest, newest))
    r = run("points", "--json", str(d))
    assert r.exit_code == 0, r.stderr
    got, exp = json.loads(r.stdout), expected(stem)
    assert (got["fp"]["name"], got["bp"]["name"]) == (exp["fp"], exp["bp"])
    meta = d / ("model.ckpt-%d.meta" % newest)
    assert r.stderr.splitlines()[0] == ("%s: reading %s: the newest checkpoint's graph, as the folder's 'checkpoint' "
                                        "file names it" % (d, meta))


def test_a_model_dir_written_elsewhere_names_its_checkpoint_by_an_absolute_path(tmp_path: Path) -> None:
    d = model_dir(tmp_path)
    (d / "checkpoint").write_text('model_checkpoint_path: "/job/train/model.ckpt-1000"\n')
    r = run("fp", str(d))
    assert (r.exit_code, r.stdout.strip()) == (0, expected("mlp_sgd")["fp"])
    assert "reading %s" % (d / "model.ckpt-1000.meta") in r.stderr


def test_a_model_dir_without_checkpoint_file_reads_the_highest_step(tmp_path: Path) -> None:
    d = model_dir(tmp_path)
    (d / "checkpoint").unlink()
    shutil.copy(DATA / "binary" / "estimator_queue.meta", d / "model.ckpt-500.meta")
    r = run("fp", str(d))
    assert (r.exit_code, r.stdout.strip()) == (0, expected("mlp_sgd")["fp"])
    assert "reading %s: the checkpoint graph of the highest step (2 .meta files)" % (d / "model.ckpt-1000.meta") in r.stderr


def test_a_model_dir_with_only_graph_pbtxt(tmp_path: Path) -> None:
    d = model_dir(tmp_path)
    for p in d.iterdir():
        if p.name.startswith(("model.ckpt", "checkpoint")):
            p.unlink()
    r = run("points", str(d))
    assert r.exit_code == 0, r.stderr
    assert r.stdout == run("points", str(GRAPHS / "estimator_queue.pbtxt")).stdout
    assert r.stderr.splitlines()[0] == "%s: reading %s: the graph the training wrote to its model_dir" % (d, d / "graph.pbtxt")


def test_a_model_dir_with_only_event_files_without_a_graph_says_so(tmp_path: Path) -> None:
    d = model_dir(tmp_path)
    for p in d.iterdir():
        if not p.name.startswith("events."):
            p.unlink()
    for cmd in ("fp", "points", "nodes"):
        assert_refused(run(cmd, str(d)), "%s: no event file in this folder holds a graph (1 looked at, train/ first); "
                       "the first: %s: this TensorBoard event file holds no graph (2 records" % (d, d / "events.out.tfevents.1700000000.host"))


def _nested_and_flat(tmp_path: Path) -> "tuple[Path, Path]":
    """The same dumps in ``gedump/<pid>/`` folders and all in one folder."""
    nested, flat = tmp_path / "gedump", tmp_path / "flat"
    flat.mkdir()
    for pid, src in (("12345", DATA / "ge" / "dump_dir"), ("12346", DATA / "ge" / "mlp_sgd")):
        (nested / pid).mkdir(parents=True)
        for f in src.glob("ge_proto_*.txt"):
            shutil.copy(f, nested / pid / f.name)
            shutil.copy(f, flat / f.name)
    return nested, flat


def test_ge_auto_on_a_dump_root_with_nested_folders_picks_what_the_flat_folder_picks(tmp_path: Path) -> None:
    nested, flat = _nested_and_flat(tmp_path)
    a, b = run("ge-auto", str(nested)), run("ge-auto", str(flat))
    assert (a.exit_code, a.stdout) == (b.exit_code, b.stdout) and a.exit_code == 0, a.stderr
    picked = [line.split(":")[0][len("using "):] for line in (a.stderr, b.stderr)]
    assert Path(picked[0]).name == Path(picked[1]).name and Path(picked[0]).parent.parent == nested
    assert a.stderr.count("\n") == 1  # one line says which file
    # points --ge and resolve take the root too.
    r = run("resolve", "dense/MatMul", "--ge", str(nested))
    assert r.exit_code == run("resolve", "dense/MatMul", "--ge", str(flat)).exit_code


# --- files that are no graph, told by content ------------------------------------------------


def _png() -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">IIBBBBB", 1, 1, 8, 6, 0, 0, 0) + b"\0" * 4


def _utf16() -> bytes:
    return (GRAPHS / "mlp_sgd.pbtxt").read_text()[:20000].encode("utf-16")  # (with its BOM, as Windows tools write it)


NOT_GRAPHS: Dict[str, "tuple[str, Callable[[], bytes], str]"] = {
    # case: (file name, its bytes, what stderr says)
    "event_file": ("events.out.tfevents.1700000000.host", event_file,
                   "this TensorBoard event file holds no graph (2 records; summary plugins: none named)"),
    "tfrecord_data": ("train.tfrecord", lambda: tfrecord([b"\x0a\x05hello", b"\x0a\x03abc"]),
                      "this is a TFRecord file (records of training data, not a graph)"),
    "checkpoint_file": ("checkpoint", lambda: b'model_checkpoint_path: "model.ckpt-1000"\nall_model_checkpoint_paths: "model.ckpt-1000"\n',
                        "this is a checkpoint's 'checkpoint' file (it names the newest checkpoint), not a graph: give model.ckpt-1000.meta"),
    "checkpoint_data": ("model.ckpt-1000.data-00000-of-00001", lambda: struct.pack("<64f", *range(64)),
                        "this is a checkpoint's data file (the variables' values), not a graph: give model.ckpt-1000.meta"),
    "checkpoint_index": ("model.ckpt-1000.index", lambda: b"\x00\x00\x01\x02" * 30 + bytes.fromhex("57fb808b247547db"),
                         "this is a checkpoint's index file (where each variable's values are), not a graph: give model.ckpt-1000.meta"),
    "empty": ("empty.pbtxt", lambda: b"", "the file is empty: there is no graph in it; " + GIVE),
    "utf16": ("graph_utf16.pbtxt", _utf16, "this is UTF-16 text; pbtxt-scan reads UTF-8: convert it first (iconv -f UTF-16 -t UTF-8"),
    "utf16_le_no_bom": ("graph_le.pbtxt", lambda: (GRAPHS / "mlp_sgd.pbtxt").read_text()[:5000].encode("utf-16-le"),
                        "this is UTF-16 text"),
    "png": ("loss.png", _png, "this is an image (PNG), not a graph: " + GIVE),
    "jpeg": ("photo.jpg", lambda: b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(200)), "this is an image (JPEG), not a graph"),
    "markdown": ("notes.md", lambda: b"# Training notes\n\nThe fp point is dense/MatMul.\n", "this does not look like a graph: it is not "
                 "protobuf text format (it starts with 'The fp point is dense/MatMul.'); " + GIVE),
    "python": ("x.py", lambda: b'"""Train the model."""\nimport tensorflow as tf\n', "this does not look like a graph: it is not "
               "protobuf text format (it starts with '\"\"\"Train the model.\"\"\"')"),
    "python_import": ("train.py", lambda: b"#!/usr/bin/env python3\nimport os\n", "(it starts with 'import os')"),
    "json": ("config.json", lambda: b'{"fp_point": "dense/MatMul"}\n', "it is not protobuf text format"),
}


@pytest.mark.parametrize("case", sorted(NOT_GRAPHS))
@pytest.mark.parametrize("cmd", ["fp", "points", "check", "nodes", "ge-auto"])
def test_a_file_that_is_no_graph_is_named_with_what_to_give(tmp_path: Path, case: str, cmd: str) -> None:
    name, data, message = NOT_GRAPHS[case]
    f = tmp_path / name
    f.write_bytes(data())
    r = run(cmd, str(f))
    assert_refused(r, message)
    assert r.stderr.startswith("%s: " % f)


@pytest.mark.parametrize("case", ["event_file", "png", "utf16", "markdown", "checkpoint_file"])
def test_the_same_on_stdin_and_gzipped(tmp_path: Path, case: str) -> None:
    _, data, message = NOT_GRAPHS[case]
    r = run("fp", "-", stdin=data())
    assert_refused(r, message)
    assert r.stderr.startswith("<stdin>: ")
    f = tmp_path / "x.gz"
    f.write_bytes(gzip.compress(data()))
    r = run("fp", str(f))
    assert_refused(r, message)
    assert r.stderr.startswith("%s: " % f)


def test_empty_stdin_is_no_graph() -> None:
    for cmd in ("fp", "bp", "points", "nodes", "check", "stats"):
        assert_refused(run(cmd, "-", stdin=b""), "<stdin>: stdin is empty: there is no graph in it; " + GIVE)


def test_check_does_not_say_ok_for_an_empty_file(tmp_path: Path) -> None:
    f = tmp_path / "empty.pbtxt"
    f.write_bytes(b"")
    r = run("check", str(f), str(GRAPHS / "mlp_sgd.pbtxt"))
    assert r.exit_code == 2
    assert r.stdout.startswith("%s: ok (" % (GRAPHS / "mlp_sgd.pbtxt")) and "empty" not in r.stdout
    assert r.stderr.startswith("%s: the file is empty" % f)


def _no_graph_event_files() -> List[Path]:
    """The event fixtures TensorFlow's reader found no graph in (tests/test_event_fixtures.py)."""
    out = []
    for m in (DATA / "events").glob("*/MANIFEST.json"):
        for f in json.loads(m.read_text())["event_files"]:
            if not any(r["field"] in ("graph_def", "meta_graph_def") or any(
                    v.get("plugin") == "graph_run_metadata_graph" for v in r.get("values", ())) for r in f["records"]):
                out.append(m.parent / f["path"])
    return out


def _fixtures() -> List[Path]:
    no_graph = set(_no_graph_event_files())
    files = [p for p in DATA.rglob("*") if p.is_file() and not p.name.endswith((".json", ".md", ".jsonl"))
             and "hostile" not in p.parts and "_external" not in p.parts and p not in no_graph
             and "prof" not in p.parts]  # (profiler output, for verify: no graphs)
    assert len(files) > 40
    return sorted(files)


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: str(p.relative_to(DATA)))
def test_every_fixture_is_still_accepted(path: Path) -> None:
    with GraphFile.open(path) as g:  # (raises PbtxtError when it takes the file for no graph)
        assert g.head(16)


def test_valid_protobuf_text_is_never_taken_for_prose() -> None:
    # Every valid case of the conformance corpus (protobuf's, protobuf-go's, txtpbfmt's): the
    # prose test may only refuse a file that holds no field at all.
    from pbtxt_scan.source._kinds import not_a_graph

    seen = 0
    for corpus in sorted((DATA / "_external").glob("*.jsonl")):
        for line in corpus.read_text().splitlines():
            case = json.loads(line)
            if not case.get("valid") or not isinstance(case.get("input"), str):
                continue
            text = case["input"].encode("utf-8", "surrogatepass")
            why = not_a_graph(text, complete=True, name="case.pbtxt")
            if why is not None:
                assert "there is no graph in it" in why or "checkpoint" in why or "control bytes" in why or "NUL" in why, (case, why)
            seen += 1
    assert seen > 300


_FIELD = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True).filter(lambda w: not w.startswith("model_checkpoint"))
_LEAD = st.lists(st.sampled_from(["", "\n", "  ", "\t", "# a comment\n", "#\n", "\r\n"]), max_size=6).map("".join)


@settings(max_examples=examples(1), deadline=None, derandomize=True, database=None)
@given(lead=_LEAD, field=_FIELD, gap=st.sampled_from(["", " ", "\n", "  # c\n  "]), opener=st.sampled_from([":", "{", "<", "["]),
       rest=st.binary(max_size=64).map(lambda b: b.decode("latin-1").encode("utf-8")))
def test_any_start_of_protobuf_text_is_accepted(lead: str, field: str, gap: str, opener: str, rest: bytes) -> None:
    # Comments and blank lines, then a field name and its ':', '{', '<' or '[': whatever follows,
    # the detection leaves it to the scanner (it looks no further than the first field).
    from pbtxt_scan.source._kinds import not_a_graph

    head = (lead + field + gap + opener).encode() + rest.replace(b"\x00", b" ")
    why = not_a_graph(head, complete=True, name="g.pbtxt")
    assert why is None or "control bytes" in why, (head, why)


# --- a text SavedModel or MetaGraphDef ------------------------------------------------------


def _line_shift(text: str, before: str) -> int:
    """How many lines of ``text`` come before its last MetaGraph's graph (``before``: the text up
    to that MetaGraph)."""
    last = text[len(before):].splitlines()
    return before.count("\n") + last.index("  graph_def {") + 1


@pytest.mark.parametrize("stem", ["mlp_sgd", "tf2_gradient_tape", "keras_fit", "resource_vars"])
def test_a_text_savedmodel_reads_its_train_metagraph(tmp_path: Path, stem: str) -> None:
    graph = (GRAPHS / (stem + ".pbtxt")).read_text()
    serve = (GRAPHS / "inference_no_gradients.pbtxt").read_text()
    text = text_saved_model([("serve", serve), ("train", graph)])
    f = tmp_path / "saved_model.pbtxt"
    f.write_text(text)
    shift = _line_shift(text, text_saved_model([("serve", serve)]))
    exp = expected(stem)
    for args in (["points", "--json", str(f)], ["points", "--json", "-"]):
        r = run(*args, stdin=text.encode() if args[-1] == "-" else None)
        assert r.exit_code == 0, r.stderr
        got = json.loads(r.stdout)
        for kind in ("fp", "bp"):
            assert (got[kind]["name"], got[kind]["function"]) == (exp[kind], exp[kind + "_function"])
            assert got[kind]["line"] == exp[kind + "_line"] + shift
        assert "text SavedModel: reading MetaGraph 2 of 2 (tags: train): tagged train" in r.stderr


def test_a_text_savedmodel_show_and_nodes(tmp_path: Path) -> None:
    graph = (GRAPHS / "mlp_sgd.pbtxt").read_text()
    text = text_saved_model([("serve", (GRAPHS / "inference_no_gradients.pbtxt").read_text()), ("train", graph)])
    f = tmp_path / "saved_model.pbtxt"
    f.write_text(text)
    exp = expected("mlp_sgd")
    r = run("show", str(f), str(exp["fp"]))
    assert r.exit_code == 0 and ('name: "%s"' % exp["fp"]) in r.stdout.splitlines()[1]
    listed = run("nodes", str(f)).stdout.splitlines()
    assert [line.split("\t")[1:] for line in listed] == [line.split("\t")[1:] for line in run("nodes", str(GRAPHS / "mlp_sgd.pbtxt")).stdout.splitlines()]
    assert run("check", str(f)).exit_code == 0


def test_a_text_metagraph_is_read(tmp_path: Path) -> None:
    f = tmp_path / "model.ckpt-1.meta"
    f.write_text(text_meta_graph((GRAPHS / "keras_fit.pbtxt").read_text()))
    r = run("points", "--json", str(f))
    assert r.exit_code == 0, r.stderr
    got, exp = json.loads(r.stdout), expected("keras_fit")
    assert [(got[k]["name"], got[k]["function"]) for k in ("fp", "bp")] == [(exp[k], exp[k + "_function"]) for k in ("fp", "bp")]


# --- nodes in library functions -------------------------------------------------------------

FUNCTION_POINTS = [(stem, kind) for stem in sorted(p.name[: -len(".expected.json")] for p in GRAPHS.glob("*.expected.json"))
                   for kind in ("fp", "bp") if expected(stem).get(kind + "_function")]


@pytest.mark.parametrize("stem, kind", quick_graphs(FUNCTION_POINTS, lambda p: p[0]))
def test_show_finds_a_point_inside_a_library_function(stem: str, kind: str) -> None:
    exp = expected(stem)
    f = str(GRAPHS / (stem + ".pbtxt"))
    r = run("show", f, str(exp[kind]))
    assert r.exit_code == 0, r.stderr
    # The function the answer names (issue 35: the copy points names, when several hold the name);
    # stderr names it, and any other that holds one too.
    m = re.fullmatch(r"%s: %s is in library function (\S+?)(, the copy points names)?(?: \(also in (.*): --function NAME picks one\))?\n"
                     % (re.escape(f), re.escape(str(exp[kind]))), r.stderr)
    assert m, r.stderr
    holders = [m.group(1)] + (m.group(3).split(", ") if m.group(3) else [])
    assert exp[kind + "_function"] in holders
    if m.group(2):  # (the points name it there; a GAN's generator bp is --train-op's, not the default's)
        assert m.group(1) == exp[kind + "_function"]
    if m.group(1) == exp[kind + "_function"]:
        assert r.stdout.split()[0] == str(exp[kind + "_line"])
    r = run("show", "--json", f, str(exp[kind]))
    assert json.loads(r.stdout)["function"] == m.group(1)
    # --function: the one the answer names.
    r = run("show", "--function", str(exp[kind + "_function"]), f, str(exp[kind]))
    assert r.exit_code == 0 and r.stdout.split()[0] == str(exp[kind + "_line"])
    assert r.stderr == "%s: %s is in library function %s\n" % (f, exp[kind], exp[kind + "_function"])
    r = run("show", "--json", "--function", str(exp[kind + "_function"]), f, str(exp[kind]))
    got = json.loads(r.stdout)
    assert (got["line"], got["function"]) == (exp[kind + "_line"], exp[kind + "_function"])


def test_show_finds_a_function_node_of_a_binary_graph() -> None:
    exp = expected("tf2_gradient_tape")
    f = str(DATA / "binary" / "tf2_gradient_tape.pb")
    r = run("show", "--json", f, str(exp["fp"]))
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["function"] == exp["fp_function"]


def test_show_in_another_function_finds_nothing() -> None:
    exp = expected("keras_fit")
    f = str(GRAPHS / "keras_fit.pbtxt")
    r = run("show", "--function", "no_such_function", f, str(exp["fp"]))
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr == "%s: no node named %r in function no_such_function\n" % (f, exp["fp"])


@pytest.mark.parametrize("stem", quick_graphs(sorted({s for s, _ in FUNCTION_POINTS})))
def test_nodes_functions_lists_function_bodies_with_their_function(stem: str) -> None:
    f = str(GRAPHS / (stem + ".pbtxt"))
    exp = expected(stem)
    rows = run("nodes", "--functions", f).stdout.splitlines()
    own = run("nodes", f).stdout.splitlines()
    bodies = run("nodes", "--format", "function", f).stdout.splitlines()
    assert rows[: len(own)] == [r + "\t-" for r in own]
    assert len(rows) == len(own) + len(bodies)
    assert [r.rsplit("\t", 1)[0] for r in rows[len(own):]] == bodies
    for kind in ("fp", "bp"):
        if exp.get(kind + "_function"):
            assert "%s\t%s\t" % (exp[kind + "_line"], exp[kind]) in "\n".join(rows)
            row = next(r for r in rows if r.startswith("%s\t%s\t" % (exp[kind + "_line"], exp[kind])))
            assert row.endswith("\t" + str(exp[kind + "_function"]))
    objs = [json.loads(line) for line in run("nodes", "--functions", "--jsonl", f).stdout.splitlines()]
    assert [o["function"] for o in objs[: len(own)]] == [None] * len(own)
    assert all(o["function"] for o in objs[len(own):])


def test_opening_raises_the_one_error_type(tmp_path: Path) -> None:
    f = tmp_path / "loss.png"
    f.write_bytes(_png())
    with pytest.raises(PbtxtError, match="an image"):
        GraphFile.open(f)
