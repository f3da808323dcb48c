"""Conventions a script relies on (issue 35): ``-o -`` is stdout, ``ge-auto --format`` takes what
``points --format`` takes, every ``--json`` miss is one object (name null, with a reason), ``show
--json`` on a block of any size, ``show`` picks the copy ``points`` names, and the candidates a
note lists are at most five and "and N more"."""
from __future__ import annotations

import codecs
import json
import os
import re
import shutil
from pathlib import Path
from typing import List

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app

DATA = Path(__file__).parent / "data"
GRAPHS = DATA / "graphs"
GE = DATA / "ge"
MLP = str(GRAPHS / "mlp_sgd.pbtxt")
GE_DIR = str(GE / "dump_dir")
GE_FILE = str(GE / "ge_proto_00000013_graph_3_Build.txt")
GE_ONNX = str(GE / "ge_onnx_00000042_graph_1_Build.pbtxt")
NO_FP_GE = str(GE / "dump_dir" / "ge_proto_00000041_graph_1_PreRunBegin.txt")
runner = CliRunner()


def run(*args: str, **kw):
    return runner.invoke(app, list(args), **kw)


# --- -o - is stdout ------------------------------------------------------------------------------


def test_report_dash_o_writes_the_page_to_stdout_and_no_file(tmp_path: Path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    (cwd / "-").write_text("keep me")  # a file named "-" is never written over
    r = run("report", MLP, "-o", "-")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.lstrip().lower().startswith("<!doctype html") and r.stdout.rstrip().endswith("</html>")
    assert (cwd / "-").read_text() == "keep me" and os.listdir(str(cwd)) == ["-"]
    assert "wrote" not in r.stderr


def test_report_dash_o_with_json_is_refused(tmp_path: Path, monkeypatch) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    r = run("report", "--json", MLP, "-o", "-")
    assert r.exit_code == 2 and os.listdir(str(cwd)) == []
    assert "error" in json.loads(r.stdout.splitlines()[-1])


# --- ge-auto --format: points' values, checked the same way --------------------------------------------


@pytest.mark.parametrize("bad", ["bogus", "JSON", ""])
def test_ge_auto_refuses_a_format_points_refuses(bad: str) -> None:
    r = run("ge-auto", "--format", bad, GE_FILE)
    p = run("points", "--format", bad, GE_FILE)
    assert (r.exit_code, p.exit_code) == (2, 2) and r.stdout == ""
    assert r.stderr.splitlines()[-1] == p.stderr.splitlines()[-1]


@pytest.mark.parametrize("dump", [GE_FILE, GE_ONNX])
def test_ge_auto_format_json_is_its_json(dump: str) -> None:
    r = run("ge-auto", "--format", "json", dump)
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout) == json.loads(run("ge-auto", "--json", dump).stdout)


@pytest.mark.parametrize("fmt", ["env", "profiling", "tf1-estimator", "tf1-session", "tf2"])
@pytest.mark.parametrize("dump", [GE_FILE, NO_FP_GE])
def test_ge_auto_paste_formats_print_what_points_prints_for_ges_choice(fmt: str, dump: str) -> None:
    extra = ["--profiling-output", "/data/prof", "--aic-metrics", "Memory", "--task-trace", "off"]
    r = run("ge-auto", "--format", fmt, dump, *extra)
    p = run("points", "--format", fmt, dump, *extra)
    assert r.stdout == p.stdout and r.stdout.strip()
    assert r.exit_code == p.exit_code


def test_ge_auto_on_a_folder_pastes_the_picked_dumps_choice() -> None:
    r = run("ge-auto", "--format", "env", GE_DIR)
    p = run("points", "--format", "env", str(GE / "dump_dir" / "ge_proto_00000042_graph_1_Build.txt"))
    assert (r.exit_code, r.stdout) == (0, p.stdout)


# --- a miss under --json is one object: name null, with a reason ------------------------------------


@pytest.mark.parametrize("args, shape", [
    (["show", "--json", MLP, "no/such/node"], "show"),
    (["show", "--json", MLP, "dense/MatMull"], "show"),
    (["show", "--format", "json", MLP, "no/such/node", "--context", "1"], "hood"),
    (["nodes", "--json", "-"], "node"),
])
def test_a_miss_under_json_is_one_object_with_name_null_and_a_reason(args: List[str], shape: str) -> None:
    r = run(*args, input=b"versions {\n  producer: 22\n}\n")
    assert r.exit_code == 1, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout
    obj = json.loads(lines[0])
    assert obj["name"] is None and obj["reason"], obj
    assert obj["reason"] in r.stderr  # (the same words as the stderr line)


# --- show --json on a block of any size ---------------------------------------------------------------

RAW = bytes(range(256)) * 6144  # 1.5 MB of tensor: ~4 MB escaped, over the full parse's 2 MB


def _escaped(raw: bytes) -> bytes:
    return codecs.escape_encode(raw)[0].replace(b'"', b"\\x22")  # type: ignore[attr-defined]


def _big_const(tmp_path: Path, layout: str) -> Path:
    body = _escaped(RAW)
    if layout == "binary":
        from support import wire_encoder as w

        f = tmp_path / "big.pb"
        f.write_bytes(w.encode(w.graph([w.node("big", "Const", attrs=[("value", [(8, [(1, 4), (4, RAW)])])]),
                                        w.node("x", "Identity", ["big"])])))
        return f
    if layout == "writer":
        node = (b'node {\n  name: "big"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n'
                b'        dtype: DT_UINT8\n        tensor_content: "' + body + b'"\n      }\n    }\n  }\n}\n')
    else:  # one line, as no writer lays it out (Lark's path), a field after the long string
        node = b'node { name: "big" op: "Const" attr { key: "value" value { tensor { tensor_content: "' + body + b'" dtype: DT_UINT8 } } } }\n'
    f = tmp_path / ("big_%s.pbtxt" % layout)
    f.write_bytes(node + b'node {\n  name: "x"\n  op: "Identity"\n  input: "big"\n}\n')
    return f


@pytest.mark.parametrize("layout", ["writer", "one_line", "binary"])
def test_show_json_parses_a_const_with_a_big_tensor(tmp_path: Path, layout: str) -> None:
    f = _big_const(tmp_path, layout)
    assert run("show", str(f), "big").exit_code == 0
    r = run("show", "--json", str(f), "big")
    assert r.exit_code == 0, r.stderr
    got = json.loads(r.stdout)
    assert (got["name"], got["op"], got["line"]) == ("big", "Const", None if layout == "binary" else 1)
    tensor = got["block"]["attr"][0]["value"]["value"][0]["value"]["tensor"][0]["value"]
    assert tensor["tensor_content"][0]["value"].encode("utf-8", "surrogateescape") == RAW  # exact, as for a small tensor
    dtype = tensor["dtype"][0]
    assert dtype["value"] == "DT_UINT8"
    if layout == "one_line":  # (its column is the file's, past the 4 MB string before it on its line)
        assert dtype["column"] == f.read_bytes().index(b"dtype:") + 1


# --- show picks the copy points names ------------------------------------------------------------------


def test_show_picks_the_function_body_points_names_and_lists_the_others() -> None:
    f = str(GRAPHS / "tf2_called_function.pbtxt")
    exp = json.loads((GRAPHS / "tf2_called_function.expected.json").read_text())
    r = run("show", f, exp["fp"])
    assert r.exit_code == 0, r.stderr
    assert r.stdout.split()[0] == str(exp["fp_line"])  # __forward_forward_509's, not __inference_forward_408's
    assert r.stderr.splitlines()[-1] == (
        "%s: %s is in library function %s, the copy points names (also in __inference_forward_408: --function NAME picks one)"
        % (f, exp["fp"], exp["fp_function"]))
    got = json.loads(run("show", "--json", f, exp["fp"]).stdout)
    assert (got["line"], got["function"]) == (exp["fp_line"], exp["fp_function"])
    # the neighbourhood too: its centre is the copy points names
    r = run("show", f, exp["fp"], "--context", "1")
    assert r.exit_code == 0, r.stderr
    centre = [row for row in r.stdout.splitlines() if row.split()[:1] == ["0"]]
    assert len(centre) == 1 and centre[0].split()[1] == str(exp["fp_line"]), r.stdout
    assert "the copy points names (also in __inference_forward_408" in r.stderr
    hood = json.loads(run("show", "--json", f, exp["fp"], "--context", "1").stdout)
    assert exp["fp_function"] in json.dumps(hood)


# --- points --ge FOLDER says which dump; lists of candidates are capped ------------------------------------


def test_points_ge_folder_says_which_dump_it_used() -> None:
    r = run("points", MLP, "--ge", str(GE / "mlp_sgd"))
    assert r.exit_code == 0, r.stderr
    assert re.search(r"^using \S*ge_proto_00000003_graph_1_Build\.txt: ", r.stderr, re.M), r.stderr
    assert "using" not in run("points", "--quiet", MLP, "--ge", str(GE / "mlp_sgd")).stderr


def _many_dumps(tmp_path: Path, n: int) -> Path:
    d = tmp_path / "dumps"
    d.mkdir()
    src = GE / "dump_dir" / "ge_proto_00000007_graph_0_Build.txt"
    for i in range(n):
        shutil.copy(str(src), str(d / ("ge_proto_%08d_graph_%d_Build.txt" % (100 + i, i))))
    shutil.copy(str(GE / "dump_dir" / "ge_proto_00000042_graph_1_Build.txt"), str(d / "ge_proto_00000099_graph_9_Build.txt"))
    return d


@pytest.mark.parametrize("args", [["ge-auto", "{d}"], ["resolve", "dense/MatMul", "--ge", "{d}"], ["points", MLP, "--ge", "{d}"]])
def test_a_list_of_dumps_on_stderr_is_five_names_and_n_more(tmp_path: Path, args: List[str]) -> None:
    d = _many_dumps(tmp_path, 12)
    r = run(*[a.format(d=d) for a in args])
    assert r.exit_code in (0, 1), r.stderr
    using = [line for line in r.stderr.splitlines() if line.startswith("using ")]
    assert len(using) == 1 and "ge_proto_00000099_graph_9_Build.txt: " in using[0], r.stderr
    assert len(re.findall(r"ge_proto_\d+_graph_\d+_Build\.txt \(", using[0])) == 5
    assert using[0].endswith(", and 7 more"), using[0]
    j = run(*[a.format(d=d) for a in args] + ["--json"])  # (the JSON keeps every dump: pick.files)
    first = json.loads(j.stdout.splitlines()[0])
    pick = first["ge"]["pick"] if "ge" in first else first["pick"]
    assert len(pick["files"]) == 13


def test_show_lists_at_most_five_other_functions(tmp_path: Path) -> None:
    fn = 'function {\n    signature {\n      name: "f%d"\n    }\n    node_def {\n      name: "n"\n      op: "Relu"\n    }\n  }\n'
    text = 'node {\n  name: "a"\n  op: "Const"\n}\nlibrary {\n  ' + "  ".join(fn % i for i in range(9)) + "}\n"
    f = tmp_path / "lib.pbtxt"
    f.write_text(text)
    r = run("show", str(f), "n")
    assert r.exit_code == 0, r.stderr
    assert r.stderr.strip().endswith("(also in f1, f2, f3, f4, f5, and 3 more: --function NAME picks one)"), r.stderr


def _long_texts() -> List[str]:
    long1 = '"' + _escaped(RAW[:40000]).decode("ascii") + '"'  # (over 64 KiB escaped)
    long2 = "'" + "ab\\'c" * 20000 + "'"
    return [
        "node { name: 'n' # a \"comment\" with 'quotes'\n attr { s: %s i: 1 s: %s f: 2.5 }\n  op: \"Const\" }" % (long1, long2),
        "node {\n  x: %s\n  y: [1, 2] z { s: %s } w: \"%s\"\n}" % (long2, long1, "short"),
        "node { a: 'x' %s b: 3 }" % long1,  # (joined to another literal: one value, Lark's own parse)
    ]


@pytest.mark.parametrize("text", _long_texts(), ids=["one_line", "lines", "joined"])
def test_lark_on_all_but_the_long_strings_gives_larks_values_and_positions(text: str) -> None:
    from pbtxt_scan.language._grammar import parse_text, parse_text_within

    got = parse_text_within(text, 7, "f", 1 << 10)
    want = parse_text(text, 7, "f")
    if "'x' \"" in text:
        assert got is None  # (the caller refuses it as too big for a full parse)
    else:
        assert got == want


@pytest.mark.parametrize("bad, where", [("node { s: %s x: 1e }", "x: 1e"), ("node { s: %s\n q: \"\\q\" }", '"\\q"')])
def test_an_error_after_a_long_string_is_where_lark_says(bad: str, where: str) -> None:
    from pbtxt_scan import PbtxtError
    from pbtxt_scan.language._grammar import parse_text, parse_text_within

    text = bad % ('"' + "a" * 70000 + '"')
    with pytest.raises(PbtxtError) as want:
        parse_text(text, 3, "f")
    with pytest.raises(PbtxtError) as got:
        parse_text_within(text, 3, "f", 1 << 10)
    assert str(got.value) == str(want.value)
