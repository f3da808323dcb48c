"""GE dumps: name resolution, GE's automatic fp/bp, dump directories, the resolve/ge-auto commands.

Data-driven: every ``tests/data/ge/**/*.expected.json`` (hand-worked answers, tests/data/README.md
"## ge/") is checked, through every attribute reader (Lark parse, the chunked skim, the writer
layout's lines) and on several processes.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from support.cli import CliRunner

from pbtxt_scan import GraphFile, ge as _ge
from pbtxt_scan import profiling_options
from pbtxt_scan.cli._paste import paste, profiling_json
from pbtxt_scan.ge import _attrs, _skim
from pbtxt_scan.cli import app

GE = Path(__file__).parent / "data" / "ge"
DUMP_DIR = GE / "dump_dir"
EXPECTED = sorted(p for p in GE.glob("**/*.expected.json") if p.name != "dump_dir.expected.json")
assert EXPECTED, "no GE fixtures found"
DUMPS = [p.with_name(p.name[: -len(".expected.json")]) for p in EXPECTED]
TRAIN = DUMP_DIR / "ge_proto_00000042_graph_1_Build.txt"

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


# --- the hand-worked answers -----------------------------------------------------------------


# Every road to the attributes: the Lark parse, the skim, the writer layout's lines (fast), and
# the fast road on two processes with chunks of a few hundred bytes (split at every op).
ROADS = [dict(full_parse_max=_ge.FULL_PARSE_MAX, fast=False), dict(full_parse_max=0, fast=False), {}, dict(jobs=2)]
ROAD_IDS = ["lark", "skim", "fast", "split"]


@pytest.fixture(params=ROADS, ids=ROAD_IDS)
def road(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> dict:
    if request.param.get("jobs"):
        import functools

        from pbtxt_scan.ge import _split

        monkeypatch.setattr(_split, "load", functools.partial(_split.load, split_bytes=300))
    return request.param


@pytest.mark.parametrize("exp_path", EXPECTED, ids=lambda p: p.name)
def test_ge_auto_matches_expected(exp_path: Path, road: dict):
    exp = _load(exp_path)
    b = _ge.load_build(exp_path.with_name(exp["file"]), **road)
    got = _ge.ge_auto(b)
    for key in ("fp_source", "fp", "bp_target", "bp"):
        assert got[key] == exp["ge_auto"][key], key
    assert b.has_gradients == exp["has_gradients"]
    assert (b.root_netoutput is not None) == exp["has_root_netoutput"]


@pytest.mark.parametrize("exp_path", EXPECTED, ids=lambda p: p.name)
def test_resolve_matches_expected(exp_path: Path, road: dict):
    exp = _load(exp_path)
    b = _ge.load_build(exp_path.with_name(exp["file"]), **road)
    results = _ge.resolve(b, [r["tf_name"] for r in exp["resolve"]])
    assert [r["tf_name"] for r in results] == [r["tf_name"] for r in exp["resolve"]]
    for got, want in zip(results, exp["resolve"]):
        assert [{k: m[k] for k in ("ge_name", "kind", "line")} for m in got["matches"]] == want["matches"], want["tf_name"]


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_lines_are_op_openers(dump: Path):
    lines = dump.read_text(encoding="utf-8").split("\n")
    for op in _ge.load_build(dump).ops:
        assert lines[op.line - 1].strip() in ("op {", "node {"), op


@pytest.mark.parametrize("dump", DUMPS, ids=lambda p: p.name)
def test_skim_agrees_with_lark_on_every_op(dump: Path):
    """The fast path (chunked skim) reads the same attributes as the Lark parse, op by op."""
    with GraphFile.open(dump) as g:
        d = g.dialect.name
        for b in g.nodes():
            lark = _attrs._attrs_of(g.parse(b)[0].value, d)
            skim = _attrs._attrs_of(_skim.skim_block(g, b, d), d)
            assert skim == lark, b.name


def test_accepted_as_is_marks_original_names():
    r = _ge.resolve(TRAIN, ["resnet_model/conv2d/Conv2D", "resnet_model/dense/BiasAdd", "resnet_model/Relu"])
    assert r[0]["accepted_as_is"] and r[0]["accepted_via"] == "trans_TransData_5"
    assert not r[1]["accepted_as_is"]  # only a _1 suffix and a substring: give the GE name
    assert r[2]["accepted_as_is"] and r[2]["accepted_via"] == "resnet_model/Relu"


def test_explain_trail_says_why_each_op_was_dropped():
    trail = _ge.ge_auto(TRAIN)["explain"]
    why = {(t["step"], t["name"]): (t["verdict"], t["why"]) for t in trail}
    assert why[("fp", "arg_is_training_0_0")][0] == "dropped"
    assert why[("fp", "resnet_model/Identity")] == ("dropped", "reads IteratorV2:0 but has no task: _no_task is true")
    assert why[("bp", "HcomAllReduce_2")][0] == "dropped"
    assert why[("bp", "gradients/resnet_model/dense/BiasAdd_grad/BiasAddGrad")] == ("dropped", "stream 0, target stream 1")
    assert why[("bp", "ge_global_step")] == ("dropped", "ge_global_step is skipped")
    assert why[("bp", "gradients/AddN")][0] == "dropped"


# --- dump directories --------------------------------------------------------------------------


def test_dump_dir_discovery_and_pick():
    exp = _load(GE / "dump_dir.expected.json")
    files = _ge.dump_files(DUMP_DIR)
    want = [{k: f[k] for k in ("file", "index", "graph_id", "stage", "is_build")} for f in exp["ge_proto_files"]]
    assert [{k: f[k] for k in ("file", "index", "graph_id", "stage", "is_build")} for f in files] == want
    assert not set(exp["not_dumps"]) & {f["file"] for f in files}
    builds = _ge.find_build_files(DUMP_DIR)
    assert [Path(p).name for p in builds] == exp["build_files"]
    pick = _ge.pick_training_graph(builds)
    assert Path(pick["file"]).name == exp["training_build_file"]
    assert "gradients" in pick["reason"]
    grads = {f["file"]: f["has_gradients"] for f in exp["ge_proto_files"]}
    for s in pick["files"]:
        assert s["has_gradients"] == grads[s["file"]]
    # The same through names, and through open_ge on the directory.
    b, pick2 = _ge.open_ge(DUMP_DIR, ["resnet_model/Relu"])
    assert Path(b.path).name == exp["training_build_file"] and pick2["files"]


def test_names_steer_the_pick():
    # model/encoder/Cast exists only in graph 0 (inference-like): a user asking for it gets that file.
    b, pick = _ge.open_ge(DUMP_DIR, ["model/encoder/Cast"])
    assert Path(b.path).name == "ge_proto_00000007_graph_0_Build.txt"
    assert "1 of 1 names resolve here" in pick["reason"]


def test_map_points():
    m = _ge.map_points("resnet_model/conv2d/Conv2D", "gradients/resnet_model/dense/MatMul_grad/MatMul_1", DUMP_DIR)
    assert Path(m["file"]).name == "ge_proto_00000042_graph_1_Build.txt"
    assert m["fp"]["ge_name"] == "trans_TransData_5" and m["fp"]["kind"] == "original_op_names"
    assert m["fp"]["accepted_as_is"]
    assert m["bp"]["kind"] == "exact"
    assert m["ge_auto"]["fp"]["name"] == "trans_Cast_4"
    assert m["ge_auto"]["bp"]["id"] == 45
    none = _ge.map_points("IteratorGetNext", None, TRAIN)
    assert none["fp"]["ge_name"] is None and none["fp"]["kind"] is None and none["bp"] is None


def test_profiling_options_and_env_quoting():
    opts = profiling_options("user's_op/Relu", None, output="/tmp/prof dir")
    assert opts == {"output": "/tmp/prof dir", "training_trace": "on", "task_trace": "on",
                    "fp_point": "user's_op/Relu", "bp_point": "", "aic_metrics": "PipeUtilization"}
    js = profiling_json(opts)
    assert " " not in js.replace("/tmp/prof dir", "") and json.loads(js) == opts
    env = paste("env", opts).split("\n")
    assert env[0] == "export PROFILING_MODE=true"
    words = shlex.split(env[1])  # what the shell would see
    assert words[0] == "export" and words[1].startswith("PROFILING_OPTIONS=")
    assert json.loads(words[1][len("PROFILING_OPTIONS="):]) == opts


# --- the big-weight skim -----------------------------------------------------------------------


def _big_dump(path: Path, weight_bytes: int) -> None:
    # A single-line weight string holding text that looks like fields (escaped, as GE writes it).
    noise = b'\\000\\377key: \\"_no_task\\" value { b: true } }\\n\\"\\\\'
    data = noise * (weight_bytes // len(noise) + 1)
    with open(path, "wb") as f:
        f.write(b'graph {\n  name: "g"\n')
        f.write(b'  op {\n    name: "x"\n    type: "Data"\n    attr {\n      key: "_ge_attr_op_kernel_lib_name"\n'
                b'      value {\n        s: "DNN_VM_GE_LOCAL_OP_STORE"\n      }\n    }\n  }\n')
        f.write(b'  op {\n    name: "w"\n    type: "Const"\n    attr {\n      key: "_datadump_original_op_names"\n'
                b'      value {\n        list {\n          s: "dense/kernel"\n          val_type: VT_LIST_STRING\n'
                b'        }\n      }\n    }\n    attr {\n      key: "_ge_attr_op_kernel_lib_name"\n      value {\n'
                b'        s: "DNN_VM_GE_LOCAL_OP_STORE"\n      }\n    }\n    attr {\n      key: "value"\n      value {\n'
                b'        t {\n          desc {\n            dtype: DT_FLOAT\n          }\n          data: "')
        f.write(data)
        f.write(b'"\n        }\n      }\n    }\n    id: 1\n    output_desc {\n      dtype: DT_FLOAT\n      attr {\n'
                b'        key: "_datadump_origin_name"\n        value {\n          s: "dense/kernel/read"\n        }\n'
                b'      }\n    }\n  }\n')
        f.write(b'  op {\n    name: "dense/MatMul_1"\n    type: "MatMulV2"\n    input: "x:0"\n    input: "w:0"\n'
                b'    attr {\n      key: "_ge_attr_op_kernel_lib_name"\n      value {\n        s: "AIcoreEngine"\n'
                b'      }\n    }\n    id: 2\n  }\n')
        f.write(b'  op {\n    name: "Node_Output"\n    type: "NetOutput"\n    input: "dense/MatMul_1:0"\n'
                b'    input: "w:-1"\n    attr {\n      key: "_ge_attr_op_kernel_lib_name"\n      value {\n'
                b'        s: "DNN_VM_GE_LOCAL_OP_STORE"\n      }\n    }\n    id: 3\n  }\n}\n')


def test_20mb_weight_is_skimmed_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    dump = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    _big_dump(dump, 20 << 20)
    assert dump.stat().st_size > 20 << 20
    real = GraphFile.parse

    def small_only(g, block, *a, **k):
        assert block.end - block.start <= _ge.FULL_PARSE_MAX, "a big block went to the Lark parse"
        return real(g, block, *a, **k)

    monkeypatch.setattr(GraphFile, "parse", small_only)
    b = _ge.load_build(dump)
    w = b.by_name["w"]
    assert w.original_names == ("dense/kernel",) and w.origin_names == ("dense/kernel/read",)
    assert not w.no_task and w.has_task and w.id == 1 and w.line == 13
    r = _ge.resolve(b, ["dense/kernel", "dense/kernel/read", "dense/MatMul"])
    assert [(m["ge_name"], m["kind"]) for m in r[0]["matches"]] == [("w", "original_op_names")]
    assert [(m["ge_name"], m["kind"]) for m in r[1]["matches"]] == [("w", "origin_name")]
    assert [(m["ge_name"], m["kind"]) for m in r[2]["matches"]] == [("dense/MatMul_1", "suffix")]
    auto = _ge.ge_auto(b)
    assert auto["fp"]["name"] == "dense/MatMul_1"
    assert auto["bp"]["name"] == "dense/MatMul_1"  # w (id 1) is a control producer with a smaller id
    r = run("resolve", "dense/kernel", "--ge", dump)
    assert r.exit_code == 0 and "original_op_names  w  (line 13)" in r.stdout


# --- the commands ------------------------------------------------------------------------------


def test_cli_resolve_text():
    r = run("resolve", "resnet_model/conv2d/Conv2D", "resnet_model/dense/BiasAdd", "--ge", TRAIN)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "resnet_model/conv2d/Conv2D"
    assert lines[1].split() == ["original_op_names", "trans_TransData_5", "(line", "388)"]
    assert any(l.startswith("  note: GE accepts \"resnet_model/conv2d/Conv2D\" as is") for l in lines)
    assert "  suffix             resnet_model/dense/BiasAdd_1  (line 974)" in lines


def test_cli_resolve_json_and_dir():
    r = run("resolve", "resnet_model/Cast", "--ge", DUMP_DIR, "--json")
    assert r.exit_code == 0, r.output
    out = [json.loads(line) for line in r.stdout.splitlines()]  # one object per name, one a line
    assert out[0]["matches"][0]["name"] == "trans_Cast_4" and out[0]["matches"][0]["match"] == "original_op_names"
    assert out[0]["best"] == out[0]["matches"][0]
    assert Path(out[0]["file"]).name == "ge_proto_00000042_graph_1_Build.txt"
    assert "using " in r.stderr and "ge_proto_00000042_graph_1_Build.txt" in r.stderr


def test_cli_resolve_no_match_exits_1():
    r = run("resolve", "IteratorGetNext", "resnet_model/Relu", "--ge", TRAIN)
    assert r.exit_code == 1
    assert "no GE op matches \"IteratorGetNext\"" in r.stderr
    assert "resnet_model/Relu" in r.stdout  # the others are still answered


def test_cli_ge_auto():
    r = run("ge-auto", TRAIN)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[:2] == [
        "fp  trans_Cast_4  (Cast, id 5, line 308)",
        ("bp  gradients/resnet_model/batch_normalization/FusedBatchNormV3_grad/FusedBatchNormGradV3_Update  "
         "(BNTrainingUpdateGrad, id 45, line 1345)"),
    ]
    r = run("ge-auto", TRAIN, "--explain")
    assert "dropped    ge_global_step" in r.stderr  # the trail on stderr: stdout keeps the answer alone
    assert "dropped" not in r.stdout


def test_cli_ge_auto_json():
    exp = _load(GE / "ge_onnx_00000042_graph_1_Build.pbtxt.expected.json")
    r = run("ge-auto", GE / "ge_onnx_00000042_graph_1_Build.pbtxt", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) == {"fp", "bp", "file", "pick"}  # no top-level fp_reason: each point carries its reason
    for kind in ("fp", "bp"):
        want = exp["ge_auto"][kind]
        assert {k: out[kind][k] for k in ("name", "op", "id", "line")} == {
            "name": want["name"], "op": want["type"], "id": want["id"], "line": want["line"]}
        assert out[kind]["kind"] == kind and out[kind]["reason"]
    r = run("ge-auto", DUMP_DIR, "--json", "--explain")
    out = json.loads(r.stdout)
    assert out["bp"]["id"] == 45 and Path(out["pick"]["file"]).name == TRAIN.name
    assert "explain" not in out and "dropped" in r.stderr


def test_cli_ge_auto_nothing_found_exits_1():
    r = run("ge-auto", DUMP_DIR / "ge_proto_00000041_graph_1_PreRunBegin.txt")
    assert r.exit_code == 1
    assert "fp  (none)" in r.stdout and "GE would find no fp and no bp" in r.stderr


def test_cli_bad_input_exits_2(tmp_path: Path):
    r = run("ge-auto", tmp_path / "missing.txt")
    assert r.exit_code == 2 and r.stderr.strip().endswith("no such file")
    r = run("resolve", "x", "--ge", Path(__file__).parent / "data" / "graphs" / "mlp_sgd.pbtxt")
    assert r.exit_code == 2 and "not a GE dump" in r.stderr
    r = run("ge-auto", tmp_path)  # a directory without dumps
    assert r.exit_code == 2 and "no GE Build dumps" in r.stderr
    bad = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    bad.write_text('graph {\n  op {\n    name: "a"\n    type: \n  }\n}\n')
    r = run("ge-auto", bad)
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith(str(bad) + ":")


class _Chunks:
    def __init__(self, data: bytes, size: int) -> None:
        self.data, self.size, self.pos = data, size, 0

    def read(self, n: int = -1) -> bytes:
        out = self.data[self.pos : self.pos + self.size]
        self.pos += len(out)
        return out


@pytest.mark.parametrize("seed", range(40))
def test_squash_cuts_strings_safely(seed: int, monkeypatch: pytest.MonkeyPatch):
    """The string cutter before the skim's lexer: same tokens, bodies cut to a prefix, never
    leaving a backslash that would escape the closing quote, whatever the chunk edges."""
    import io
    import random

    from pbtxt_scan.text._lexer import Lexer

    rng = random.Random(seed)
    keep = rng.choice([1, 2, 3, 5, 8])
    monkeypatch.setattr(_skim, "_STRING_KEEP", keep)
    atoms = ["\\\\", '\\"', "\\'", "\\n", "\\345", "a", "b", "#"]
    parts = []
    for i in range(rng.randint(1, 12)):
        q = rng.choice(['"', "'"])
        other = "'" if q == '"' else '"'  # the other quote may appear raw
        body = "".join(rng.choice(atoms + [other]) for _ in range(rng.randint(0, 12)))
        parts.append('f%d: %s%s%s  # c "x\' \\\n' % (i, q, body, q))
    text = ("op {\n" + "".join(parts) + "}\n").encode()

    def toks(src):
        return [(k, t) for k, _, _, t in Lexer(src, 4096).tokens()]

    want = toks(io.BytesIO(text))
    got = toks(_skim._Squash(_Chunks(text, rng.randint(1, 7))))
    assert [k for k, _ in got] == [k for k, _ in want]
    for (k, g), (_, w) in zip(got, want):
        if k != "STRING":
            assert g == w
            continue
        gb, wb = g[1:-1], w[1:-1]
        assert wb.startswith(gb) and (gb == wb or len(gb) >= keep - 1)
