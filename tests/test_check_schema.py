"""``check`` (and ``stats``, ``nodes``) refuse what TensorFlow's parser refuses, from the user's side.

``tests/data/schema/cases.json`` holds one change each to real fixture graphs, with TensorFlow
2.21's verdict (``text_format.Parse``, recorded once: see tests/test_schema.py). Here the command
line runs on each changed file: the same accept or refuse, at the same line, with the right
did-you-mean; ``--all`` lists every error of a file in order; ``--jobs 2`` says what one process
says; and the writer layout's fast path finds what the general scanner finds (its per-shape memo
included).
"""
from __future__ import annotations

import functools
import io
import json
import random
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbtxt_scan import PbtxtError, SchemaErrors
from pbtxt_scan.cli import app
from pbtxt_scan.graph import _parallel
from pbtxt_scan.schema import default_schema
from pbtxt_scan.text._canonical import scan_canonical
from pbtxt_scan.text._schema import Watch
from support.cli import CliRunner
from support.data import DATA
from support.marks import quick_graphs

CASES: List[Dict[str, Any]] = json.loads((DATA / "schema" / "cases.json").read_text(encoding="utf-8"))["cases"]
runner = CliRunner()
_STATS, _ROWS = _parallel.stats, _parallel.rows


def changed(case: Dict[str, Any]) -> str:
    lines = (DATA / case["base"]).read_text(encoding="utf-8").split("\n")
    i, col, cut = case["line"] - 1, case["column"], case["cut"]
    assert lines[i][col : col + len(cut)] == cut, "the fixture changed under the corpus: re-record it"
    lines[i] = lines[i][:col] + case["put"] + lines[i][col + len(cut) :]
    return "\n".join(lines)


def run(args: List[str]) -> Tuple[str, str, int]:
    r = runner.invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    return r.stdout, r.stderr, r.exit_code


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_check_agrees_with_tensorflow(case: Dict[str, Any], tmp_path: Path) -> None:
    f = tmp_path / "graph.pbtxt"
    f.write_text(changed(case), encoding="utf-8")
    out, err, code = run(["check", str(f)])
    tf = case["tf"]
    if tf["accept"]:
        assert code == 0 and err == "", err
        return
    assert code == 2 and out == "", (out, err)
    lines = err.strip().split("\n")
    assert len(lines) == 1, err
    where, _, message = lines[0].partition(": ")
    _, line, _ = where.rsplit(":", 2)
    if tf["line"] is not None:
        assert int(line) == tf["line"], (err, tf)
    assert message.startswith(tf["message"].replace("ValueError: ", "").rstrip(".")), (err, tf)
    if case["near"]:
        assert 'Did you mean "%s"?' % case["near"] in message or "Did you mean %s?" % case["near"] in message, message
    if "has no field named" in message:
        assert "(schema: TensorFlow 2.21.0)" in message


# The corpus's refusals of a name TensorFlow has not that are no misspelling of one: a made-up field
# (no name of NodeDef is near "xyz": no did-you-mean, rather than a wrong one), an enum value quoted
# as a string ("DT_FLOAT": protobuf refuses a string for an enum), a number for an enum (1.0).
NOT_MISSPELT = {"019_unknown_field": None, "063_enum": None, "065_enum": None}


def test_every_misspelt_name_in_the_corpus_gets_its_did_you_mean(tmp_path: Path) -> None:
    """Issue 37's done-when: every misspelt field or enum name in the corpus (each refusal of an
    unknown name, those above aside) gets a did-you-mean from ``check`` naming the right one; the
    others get none."""
    refused = [c for c in CASES if not c["tf"]["accept"] and re.search(r"has no (field|value) named", c["tf"]["message"])]
    assert {c["id"] for c in refused if not c["near"]} == set(NOT_MISSPELT)
    misspelt = [c for c in refused if c["near"]]
    assert len(misspelt) == 31 and {c["kind"] for c in misspelt} == {"unknown_field", "enum", "any"}  # (any: a field of an Any's expansion)
    for c in refused:
        f = tmp_path / "graph.pbtxt"
        f.write_text(changed(c), encoding="utf-8")
        _, err, code = run(["check", str(f)])
        said = re.findall(r'Did you mean "?([A-Za-z_]\w*)"?\?', err)
        assert code == 2 and said == ([c["near"]] if c["near"] else []), (c["id"], err)


@pytest.mark.slow  # (5 s: every corpus case at every depth; CI's slow step runs it)
def test_the_corpus_refuses_at_every_depth_of_the_fast_path() -> None:
    """The corpus's changes sit in node blocks matched whole, in batches, and in lines walked one
    by one: the first problem is the same whichever reader met it."""
    for case in CASES:
        text = changed(case).encode("utf-8")
        root = "tensorflow.SavedModel" if case["root"] == "SavedModel" else "tensorflow.GraphDef"
        got = [_problems(text, root, fast, warm) for fast, warm in ((True, 0), (True, 10 ** 9), (False, 0))]
        assert got[0] == got[1] == got[2], (case["id"], got)


def _problems(text: bytes, root: str, fast: bool, warm: int, limit: int = 1000) -> List[str]:
    w = Watch(root, limit=limit, display="g")
    try:
        list(scan_canonical(io.BytesIO(text), ("node",), frozenset({"name", "op"}), watch=w, fast=fast, warm_up=warm))
    except SchemaErrors as e:
        return [str(x) for x in e.errors]
    except PbtxtError as e:
        return [str(e)]
    return []


PLANTED = (
    'node {\n  nme: "a"\n  op: "Const"\n}\n'
    'node {\n  name: "b"\n  op: 5\n}\n'
    'node {\n  name: "c"\n  op: "Cast"\n  attr {\n    key: "T"\n    value {\n      type: DT_FLAOT\n    }\n  }\n}\n'
    'node {\n  name: "d"\n  op: "Const"\n  op: "Const"\n}\n'
    'versions {\n  producer: 4294967297\n}\n'
    'versions {\n  producer: 1\n}\n'
)


def test_all_lists_every_error_in_order(tmp_path: Path) -> None:
    f = tmp_path / "g.pbtxt"
    f.write_text(PLANTED, encoding="utf-8")
    out, err, code = run(["check", str(f)])
    assert code == 2 and err.count("\n") == 1 and ":2:3: " in err  # (without --all: the first)
    out, err, code = run(["check", "--all", str(f)])
    assert code == 2 and out == ""
    got = [line.split(": ", 1)[0].replace(str(f), "F") for line in err.strip().split("\n")]
    assert got == ["F:2:3", "F:7:7", "F:15:13", "F:22:7", "F:25:13", "F:27:10"], err
    assert 'Did you mean "name"?' in err and "Did you mean DT_FLOAT?" in err
    # a syntax error ends the list, after the schema errors before it
    f.write_text(PLANTED + "node {\n  name: }\n", encoding="utf-8")
    _, err2, code = run(["check", "--all", str(f)])
    lines = err2.strip().split("\n")
    assert code == 2 and len(lines) == 7 and ":31:9: unexpected" in lines[-1], err2


def test_all_caps_the_list_and_counts_the_rest(tmp_path: Path) -> None:
    f = tmp_path / "g.pbtxt"
    f.write_text("".join('node {\n  nme: "n%d"\n}\n' % i for i in range(1005)), encoding="utf-8")
    _, err, code = run(["check", "--all", "--json", str(f)])
    lines = err.strip().split("\n")
    assert code == 2 and len(lines) == 1001 and lines[-1].endswith("and 5 more schema errors"), lines[-1]


def test_all_json_gives_an_error_object_each(tmp_path: Path) -> None:
    f = tmp_path / "g.pbtxt"
    f.write_text(PLANTED, encoding="utf-8")
    out, _, code = run(["check", "--all", "--json", str(f)])
    objs = [json.loads(line) for line in out.strip().split("\n")]
    assert code == 2 and [o["line"] for o in objs] == [2, 7, 15, 22, 25, 27] and objs[0]["column"] == 3


@pytest.mark.parametrize("cmd", [["stats"], ["nodes"], ["nodes", "--json"], ["stats", "--input-kind", "function"]])
def test_stats_and_nodes_refuse_a_schema_error(cmd: List[str], tmp_path: Path) -> None:
    f = tmp_path / "g.pbtxt"
    text = (DATA / "graphs" / "mlp_sgd.pbtxt").read_text(encoding="utf-8")
    f.write_text(text.replace("  op: ", "  opp: ", 1), encoding="utf-8")
    _, err, code = run(cmd + [str(f)])
    assert code == 2 and 'has no field named "opp". Did you mean "op"?' in err, err


def test_a_misspelt_node_is_no_longer_dropped(tmp_path: Path) -> None:
    """The issue's first row: ``nod {`` passed check, and stats counted one node less."""
    f = tmp_path / "g.pbtxt"
    f.write_text((DATA / "graphs" / "mlp_sgd.pbtxt").read_text(encoding="utf-8").replace("node {", "nod {", 1), encoding="utf-8")
    for cmd in (["check"], ["stats"], ["nodes"]):
        _, err, code = run(cmd + [str(f)])
        assert code == 2 and ':1:1: Message type "tensorflow.GraphDef" has no field named "nod". Did you mean "node"?' in err


def _jobs(args: List[str], jobs: int, monkeypatch: pytest.MonkeyPatch) -> Tuple[str, str, int]:
    monkeypatch.setattr(_parallel, "stats", functools.partial(_STATS, split_bytes=300))
    monkeypatch.setattr(_parallel, "rows", functools.partial(_ROWS, split_bytes=300))
    return run(args + ["--jobs", str(jobs)])


@pytest.mark.parametrize("cmd", [["check"], ["check", "--all"], ["stats"], ["nodes"]])
@pytest.mark.parametrize("change", ["none", "versions_twice", "early", "late", "two"])
def test_jobs_2_says_what_one_process_says(cmd: List[str], change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = (DATA / "graphs" / "mlp_sgd.pbtxt").read_text(encoding="utf-8")
    if change == "versions_twice":  # (a singular top-level field in two chunks: each alone is valid)
        text = text.replace("node {", "versions {\n  producer: 3\n}\nnode {", 1)
    elif change == "early":
        text = text.replace("  op: ", "  opp: ", 1)
    elif change == "late":
        i = text.rindex("  op: ")
        text = text[:i] + "  op: 5\n" + text[text.index("\n", i) + 1 :]
    elif change == "two":
        text = text.replace("  op: ", "  opp: ", 1)
        text = text.replace("type: DT_FLOAT", "type: DT_FLAOT")
    f = tmp_path / "g.pbtxt"
    f.write_text(text, encoding="utf-8")
    want = _jobs(cmd + [str(f)], 1, monkeypatch)
    got = _jobs(cmd + [str(f)], 2, monkeypatch)
    assert got[1:] == want[1:] and (cmd[0] == "stats" or got[0] == want[0]), (got, want)
    assert (want[2] == 0) == (change == "none"), want


TEXT_FIXTURES = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".pbtxt", ".txt")
                       and not {"hostile", "_external", "prof", "schema"} & set(p.parts))


@pytest.mark.parametrize("path", [quick_graphs([p])[0] if p.parent.name == "graphs" else p for p in TEXT_FIXTURES],
                         ids=lambda p: str(p.relative_to(DATA)))
def test_every_text_fixture_passes_check(path: Path) -> None:
    """Real files TensorFlow (or GE) wrote: no false alarm (of graphs/, those of
    ``support.data.QUICK_GRAPHS`` in the quick set, all in CI's ``slow`` run)."""
    out, err, code = run(["check", str(path)])
    assert code == 0, err


# --- property: the fast path and the general scanner find the same problems -------------------

_VALUES = {
    "int": ["1", "42", "0x1F", "-7", "4294967297", "3.5"],
    "uint": ["1", "4294967295", "-1"],
    "float": ["1.5", "2", "1e3", "inf", "-2.5f", "nan", "x"],
    "bool": ["true", "t", "False", "0", "maybe"],
    "string": ['"abc"', "'x/y:0'", '"\\303\\251"', '"\\377"', '""', "5"],
}
_WRONG_NAMES = ("nme", "Node", "opp", "attrs", "type_zz")


def _family(type_name: str) -> str:
    if type_name in ("string", "bytes"):
        return "string"
    if type_name in ("float", "double", "bool"):
        return type_name if type_name == "bool" else "float"
    return "uint" if type_name.startswith(("uint", "fixed")) else "int"


def _writer_layout(seed: int) -> str:
    """A random GraphDef in the writer layout, from the schema: nodes of a few repeated shapes (so
    the memo is hit) with random values, some of them wrong, a name misspelt now and then, a
    singular field given twice now and then."""
    schema = default_schema()
    rnd = random.Random(seed)
    out: List[str] = []

    def message(type_name: str, depth: int) -> None:
        fields = [f for f in schema.fields(type_name).values() if f.kind != "message" or depth < 4]
        for f in rnd.sample(fields, min(len(fields), rnd.randint(0, 3))):
            for _ in range(rnd.choice((1, 1, 1, 2))):
                field(f, depth)

    def field(f: Any, depth: int) -> None:
        pad = "  " * depth
        name = f.name if rnd.random() > 0.03 else rnd.choice(_WRONG_NAMES)
        if f.kind == "message":
            out.append("%s%s {" % (pad, name))
            message(f.type, depth + 1)
            out.append("%s}" % pad)
        elif f.kind == "enum":
            names = list(schema.enums[f.type])
            value = rnd.choice(names + ["1", "NO_SUCH"]) if rnd.random() < 0.2 else rnd.choice(names)
            out.append("%s%s: %s" % (pad, name, value))
        else:
            values = _VALUES[_family(f.type)]
            value = rnd.choice(values) if rnd.random() < 0.3 else values[0]
            out.append("%s%s: %s" % (pad, name, value))

    shapes = [rnd.getstate()]
    for _ in range(rnd.randint(1, 30)):
        if rnd.random() < 0.7 and shapes:
            state = rnd.getstate()
            rnd.setstate(rnd.choice(shapes))
            message("tensorflow.GraphDef", 0)
            rnd.setstate(state)
            rnd.random()
        else:
            shapes.append(rnd.getstate())
            message("tensorflow.GraphDef", 0)
    return "\n".join(out) + "\n"


@settings(deadline=None, max_examples=150)
@given(st.integers(0, 2 ** 32), st.sampled_from([0, 10 ** 9]), st.floats(0, 1))
def test_the_fast_path_finds_what_the_general_scanner_finds(seed: int, warm: int, joined: float) -> None:
    """``joined``: where in the file two lines are joined into one (out of the writer layout: the
    fast path hands over to the general scanner there, with the schema's state)."""
    text = _writer_layout(seed)
    if joined < 0.5:
        lines = text.split("\n")
        k = int(joined * 2 * (len(lines) - 1))
        text = "\n".join(lines[:k] + [lines[k] + " " + lines[k + 1].lstrip()] + lines[k + 2 :]) if k + 1 < len(lines) else text
    text = text.encode("utf-8")
    general = _problems(text, "tensorflow.GraphDef", False, 0)
    assert _problems(text, "tensorflow.GraphDef", True, warm) == general
    assert _problems(text, "tensorflow.GraphDef", True, warm, limit=1) == general[:1]


def test_a_shape_valid_once_is_not_trusted_where_content_decides() -> None:
    """The memo keeps a shape's verdict only where no string's content can change it: an escape in a
    string field (UTF-8), a singular field given twice (whether the first was the default)."""
    def nodes(*bodies: str) -> bytes:
        return "".join('node {\n  name: "n%d"\n  op: "Const"\n%s}\n' % (i, b) for i, b in enumerate(bodies)).encode("utf-8")

    utf8 = '  device: "\\303\\251"\n'
    bad = '  device: "\\377"\n'
    twice_ok = '  device: ""\n  device: "x"\n'
    twice_bad = '  device: "y"\n  device: "x"\n'
    raw = '  attr {\n    key: "value"\n    value {\n      tensor {\n        tensor_content: "%s"\n      }\n    }\n  }\n'
    for text, line in ((nodes(utf8, utf8, bad), 15), (nodes(twice_ok, twice_ok, twice_bad), 17),
                       (nodes(raw % "\\303", raw % "\\377", utf8, bad), 34)):
        for fast, warm in ((True, 0), (True, 10 ** 9), (False, 0)):
            got = _problems(text, "tensorflow.GraphDef", fast, warm)
            assert len(got) == 1 and got[0].startswith("g:%d:" % line), (fast, warm, got, text.decode())
    clean = nodes(*[raw % "\\001\\377"] * 5)
    assert _problems(clean, "tensorflow.GraphDef", True, 0) == []


# --- GE dumps: ge_onnx against onnx.proto; ge_proto against the fields seen in GE's dumps -----------

GE = DATA / "ge"
GE_PROTO = GE / "dump_dir" / "ge_proto_00000042_graph_1_Build.txt"  # (a root graph and a subgraph: two top-level blocks)
GE_NOTE = "(schema: the fields seen in GE's ge_proto dumps; no ge_ir.proto here, so a warning: the file is read on)"


def _ge_changed(tmp_path: Path, *changes: Tuple[str, str, int]) -> Path:
    """GE_PROTO with each ``(old, new, count)`` replaced (``count`` times; -1: every one)."""
    text = GE_PROTO.read_text(encoding="utf-8")
    for old, new, count in changes:
        assert old in text
        text = text.replace(old, new, count)
    f = tmp_path / GE_PROTO.name
    f.write_text(text, encoding="utf-8")
    return f


def _warning(f: Path, text: str, old: str, kind: str, name: str, near: str) -> str:
    """The warning ``check`` gives for the first ``old`` (a line's start, its indent included)."""
    at = text.index(old)
    line = text.count("\n", 0, at) + 1
    col = len(old) - len(old.lstrip()) + (0 if old.startswith("\n") else 1)
    return '%s:%d:%d: warning: Message type "%s" has no field named "%s". Did you mean "%s"? %s' % (
        f, line + (1 if old.startswith("\n") else 0), col, kind, name, near, GE_NOTE)


@pytest.mark.parametrize("path", sorted(p for p in GE.rglob("ge_*") if p.suffix in (".txt", ".pbtxt")), ids=lambda p: p.name)
def test_a_ge_dump_as_ge_wrote_it_is_checked_without_a_word(path: Path) -> None:
    for cmd in (["check"], ["stats"], ["nodes"]):
        out, err, code = run(cmd + [str(path)])
        assert code == 0 and err == "", err


@pytest.mark.parametrize("cmd", [["check"], ["stats"], ["nodes"], ["check", "--all"]])
def test_an_unknown_ge_proto_field_is_warned_once_a_kind_and_the_answer_stands(cmd: List[str], tmp_path: Path) -> None:
    """GE's schema is not vendored: a field no GE dump shows is warned of (one stderr line each,
    where it first is, with a did-you-mean), never refused, and the answer is what it was."""
    f = _ge_changed(tmp_path, ("    stream_id:", "    stream_di:", -1), ("      layout:", "      layuot:", 1))
    text = f.read_text(encoding="utf-8")
    want_out, _, _ = run(cmd + [str(GE_PROTO)])
    out, err, code = run(cmd + [str(f)])
    timeless = [line for line in want_out.replace(str(GE_PROTO), str(f)).splitlines() if "seconds" not in line]  # (stats' time)
    assert code == 0 and [line for line in out.splitlines() if "seconds" not in line] == timeless, err
    assert text.count("stream_di:") > 2  # (every op's: still one line)
    assert sorted(err.splitlines()) == sorted([
        _warning(f, text, "\n    stream_di:", "ge.proto.OpDef", "stream_di", "stream_id"),
        _warning(f, text, "\n      layuot:", "ge.proto.TensorDescriptor", "layuot", "layout"),
    ]), err


def test_check_jobs_2_warns_what_one_process_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = _ge_changed(tmp_path, ("    stream_id:", "    stream_di:", -1))
    want = _jobs(["check", str(f)], 1, monkeypatch)
    got = _jobs(["check", str(f)], 2, monkeypatch)
    assert got == want and want[2] == 0 and "stream_di" in want[1], (got, want)


def test_a_ge_onnx_dump_is_held_to_onnx_proto(tmp_path: Path) -> None:
    """ONNX's schema is vendored (onnx.proto): a misspelt field is an error, as for TensorFlow's."""
    src = GE / "ge_onnx_00000042_graph_1_Build.pbtxt"
    text = src.read_text(encoding="utf-8")
    f = tmp_path / src.name
    f.write_text(text.replace("    attribute {", "    atribute {", 1), encoding="utf-8")
    line = text.count("\n", 0, text.index("    attribute {")) + 1
    for cmd in (["check"], ["stats"], ["nodes"]):
        _, err, code = run(cmd + [str(f)])
        assert code == 2 and err == ('%s:%d:5: Message type "onnx.NodeProto" has no field named "atribute". Did you mean '
                                     '"attribute"? (schema: ONNX 1.23.2)\n' % (f, line)), err


GE_PROTO_DUMPS = sorted(p for p in GE.rglob("ge_proto_*.txt"))


@settings(deadline=None, max_examples=60)
@given(st.data())
def test_any_field_renamed_in_a_ge_proto_dump_is_warned_at_its_place(data: Any) -> None:
    """Property: a field of a real ge_proto dump (below its top level) given a name no GE dump
    shows is warned of at its line and column, by one stderr line, and check still passes."""
    path = data.draw(st.sampled_from(GE_PROTO_DUMPS))
    lines = path.read_text(encoding="utf-8").split("\n")
    i = data.draw(st.sampled_from([k for k, line in enumerate(lines) if re.match(r"  +[a-z_]+(: | \{$)", line)]))
    new = data.draw(st.from_regex(r"zz[a-z_]{1,8}", fullmatch=True))
    body = lines[i].lstrip(" ")
    col = len(lines[i]) - len(body) + 1
    lines[i] = " " * (col - 1) + new + body[len(re.split(r"[: ]", body, 1)[0]):]
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / path.name
        f.write_text("\n".join(lines), encoding="utf-8")
        out, err, code = run(["check", str(f)])
    assert code == 0 and out.startswith("%s: ok (" % f), err
    assert len(err.splitlines()) == 1 and err.startswith('%s:%d:%d: warning: Message type "ge.proto.' % (f, i + 1, col)), err
    assert 'has no field named "%s"' % new in err
