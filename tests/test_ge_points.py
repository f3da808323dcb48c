"""fp, bp and points on a GE dump file: GE's own choice (rule ``ge``), exactly what ``ge-auto``
computes, never TensorFlow's rules read on GE's graph (issue 34).

Data-driven: every GE dump file under tests/data/ge (dump_dir/, mlp_sgd*/ included), each told
by its content, is run through ``ge-auto`` and through ``fp``, ``bp``, ``points`` (text, ``--json``,
``--format env``, ``--explain``) and the Python API, and they must agree; where GE would pick
none, the point commands exit 1 and name ``pbtxt-scan points GRAPH --ge DUMP`` on stderr.
"""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Dict, Optional

import pytest
from support.cli import CliRunner

import pbtxt_scan
from pbtxt_scan import GraphFile
from pbtxt_scan.cli import app

GE = Path(__file__).parent / "data" / "ge"
DUMPS = sorted(p for p in GE.rglob("*") if p.is_file() and not p.name.endswith(".json"))
assert len(DUMPS) >= 8, DUMPS
INSTEAD = "pbtxt-scan points GRAPH --ge"

runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, [str(a) for a in args])


def _id(p: Path) -> str:
    return str(p.relative_to(GE))


def _ge_auto(dump: Path) -> Dict[str, Optional[str]]:
    """ge-auto's own answer (the command's JSON): each point's GE op name, None where GE picks none."""
    r = run("ge-auto", "--json", dump)
    assert r.exit_code in (0, 1), r.output
    out = json.loads(r.stdout)
    return {"fp": out["fp"]["name"], "bp": out["bp"]["name"]}


def _tf_rule(dump: Path) -> Dict[str, Optional[str]]:
    """What TensorFlow's rules answer when read on GE's graph (what the commands must never say)."""
    from pbtxt_scan.fpbp import _rules

    with GraphFile.open(dump) as g:
        fp = _rules.find_fp(g).point
    with GraphFile.open(dump) as g:
        bp = _rules.find_bp(g).point
    return {"fp": fp.name if fp else None, "bp": bp.name if bp else None}


def test_every_fixture_is_a_ge_dump_and_some_differ_from_tensorflows_rules():
    differ = 0
    for dump in DUMPS:
        with GraphFile.open(dump) as g:
            assert g.dialect.name in ("ge_proto", "ge_onnx"), dump
        differ += _ge_auto(dump) != _tf_rule(dump)
    assert differ >= 6  # (so the tests below tell the two apart)


@pytest.mark.parametrize("dump", DUMPS, ids=_id)
@pytest.mark.parametrize("kind", ["fp", "bp"])
def test_fp_and_bp_on_a_dump_are_ge_autos(dump: Path, kind: str):
    want = _ge_auto(dump)[kind]
    r = run(kind, dump)
    if want is None:
        assert r.exit_code == 1 and r.stdout == "", r.output
        lines = [line for line in r.stderr.splitlines() if ": no %s:" % kind in line]
        assert len(lines) == 1 and "GE would pick no %s" % kind in lines[0], r.stderr
        assert "%s %s" % (INSTEAD, dump) in lines[0]
    else:
        assert r.exit_code == 0, r.output
        assert r.stdout == want + "\n"
    assert "Traceback" not in r.stderr and "TensorFlow's rules" not in r.stderr
    # --json: the documented answer, rule ge
    j = run(kind, "--json", dump)
    assert j.exit_code == r.exit_code
    ans = json.loads(j.stdout)
    assert (ans["kind"], ans["name"], ans["rule"]) == (kind, want, "ge")
    assert ans["confidence"] == (None if want is None else "certain")
    assert all(a["rule"] == "ge" and a["name"] != want for a in ans["alternatives"])


@pytest.mark.parametrize("dump", DUMPS, ids=_id)
def test_points_json_on_a_dump_is_ge_autos(dump: Path):
    want = _ge_auto(dump)
    r = run("points", "--json", dump)
    assert r.exit_code == (0 if want["fp"] and want["bp"] else 1), r.output
    out = json.loads(r.stdout)
    for kind in ("fp", "bp"):
        assert out[kind]["name"] == want[kind], kind
        assert out[kind]["rule"] == "ge"
        if want[kind] is None:
            assert "GE would pick no %s" % kind in out[kind]["reason"] and INSTEAD in out[kind]["reason"]
            assert "%s: no %s: GE would pick no %s" % (dump, kind, kind) in r.stderr
        else:
            assert out[kind]["reason"].startswith("GE's own choice")
            assert out[kind]["line"] and out[kind]["offset"] is not None
    # text: the same names, rule ge
    t = run("points", dump)
    assert t.exit_code == r.exit_code
    for kind, row in zip(("fp", "bp"), t.stdout.splitlines()):
        if want[kind] is None:
            assert row.startswith("%s_point  -  (GE would pick no %s" % (kind, kind)), row
        else:
            assert row.startswith("%s_point  %s  (" % (kind, want[kind])) and row.endswith(", rule ge)"), row


@pytest.mark.parametrize("dump", DUMPS, ids=_id)
def test_points_env_on_a_dump_never_prints_a_tensorflow_rule_name(dump: Path):
    want, tf = _ge_auto(dump), _tf_rule(dump)
    r = run("points", "--format", "env", dump)
    assert r.exit_code == (0 if want["fp"] and want["bp"] else 1), r.output
    line = next(x for x in r.stdout.splitlines() if x.startswith("export PROFILING_OPTIONS="))
    opts = json.loads(shlex.split(line.split("=", 1)[1])[0])
    for kind in ("fp", "bp"):
        assert opts[kind + "_point"] == (want[kind] or ""), kind
        if tf[kind] and tf[kind] != want[kind]:
            assert tf[kind] not in (opts["fp_point"], opts["bp_point"]), (kind, tf[kind])


@pytest.mark.parametrize("dump", DUMPS, ids=_id)
def test_explain_on_a_dump_is_ges_reasoning_only(dump: Path):
    want = _ge_auto(dump)
    trail = run("ge-auto", "--explain", dump).stderr
    r = run("points", "--explain", dump)
    for kind in ("fp", "bp"):
        head = r.stderr.index("%s (rule ge):" % kind)
        part = r.stderr[head:].split("\n%s (rule" % ("bp" if kind == "fp" else "fp"), 1)[0]
        chosen = [x for x in part.splitlines() if x.strip().startswith("CHOSEN")]
        assert len(chosen) == (1 if want[kind] else 0), part
        if want[kind]:
            assert " %s (" % want[kind] in chosen[0]
        # every step is one of ge-auto's, none a TensorFlow rule's
        steps = [x.split(None, 4)[3] for x in part.splitlines() if x.strip().split(" ")[0] in ("pass", "skip", "CHOSEN")]
        assert all(s in trail for s in steps), (steps, trail)
    assert "rule dataflow" not in r.stderr and "rule doc" not in r.stderr


@pytest.mark.parametrize("dump", DUMPS, ids=_id)
def test_the_python_api_on_a_dump_answers_ges_choice(dump: Path):
    want = _ge_auto(dump)
    both = pbtxt_scan.points(dump)
    assert (both.fp_name, both.bp_name) == (want["fp"], want["bp"])
    from_bytes = pbtxt_scan.points(dump.read_bytes())  # (a training script's bytes: the same answers)
    assert (from_bytes.fp_name, from_bytes.bp_name) == (want["fp"], want["bp"])
    for kind, find in (("fp", pbtxt_scan.find_fp), ("bp", pbtxt_scan.find_bp)):
        ans = find(str(dump), pbtxt_scan.Options(rule="doc"))  # (TensorFlow's options do not apply)
        assert ans.rule == "ge" and ans.kind == kind
        assert (ans.point.name if ans.point else None) == want[kind]
        if ans.point is None:
            assert "GE would pick no %s" % kind in ans.reason and INSTEAD in ans.reason
        else:
            assert ans.point.rule == "ge" and ans.confidence == "certain"
            assert sum(s.verdict == "chosen" for s in ans.trail) == 1
            assert [line for line in pbtxt_scan.explain(ans) if line.startswith("CHOSEN")][0].split()[3] == want[kind]


def test_tensorflows_options_on_a_dump_are_said_to_be_ignored():
    dump = GE / "mlp_sgd" / "ge_proto_00000003_graph_1_Build.txt"
    r = run("fp", "--rule", "doc", "--source", "IteratorV2", dump)
    assert r.exit_code == 0 and r.stdout == "dense/MatMuldense/BiasAdd\n"
    assert "--rule, --source ignored" in r.stderr
    q = run("fp", "--quiet", "--rule", "doc", dump)
    assert (q.exit_code, q.stdout, q.stderr) == (0, r.stdout, "")


def test_a_tensorflow_graph_still_gets_tensorflows_rules():
    graph = Path(__file__).parent / "data" / "graphs" / "mlp_sgd.pbtxt"
    r = run("points", "--json", graph)
    out = json.loads(r.stdout)
    assert out["fp"]["rule"] in ("dataflow", "doc") and out["bp"]["rule"] in ("dataflow", "doc")
    assert "GE dump" not in r.stderr


def _op(name: str, typ: str, op_id: int, inputs=(), lib: bool = True) -> str:
    s = '  op {\n    name: "%s"\n    type: "%s"\n' % (name, typ)
    s += "".join('    input: "%s"\n' % x for x in inputs) + "    id: %d\n" % op_id
    if lib:
        s += '    attr {\n      key: "_ge_attr_op_kernel_lib_name"\n      value {\n        s: "DNN_VM_RTS_OP_STORE"\n      }\n    }\n'
    return s + "  }\n"


def test_a_variable_initialisation_graph_has_no_fp_and_says_what_to_run(tmp_path: Path):
    """GE's graph 0 of a session: initialisers, an Assign, a _Send; no data source, so GE picks no
    fp (TensorFlow's doc rule read on it answered _Send_0, certain, before sends joined the
    communication catalog and GE dumps got GE's own rule)."""
    init = "dense/kernel/Initializer/random_uniform/"
    dump = tmp_path / "ge_proto_00000001_graph_0_Build.txt"
    dump.write_text("graph {\n  name: \"ge_default_init\"\n" + "".join([
        _op("dense/kernel", "Variable", 0, lib=False),
        _op(init + "shape", "Const", 1),
        _op(init + "RandomUniform", "RandomUniform", 2, [init + "shape:0"]),
        _op("dense/kernel/Assign", "Assign", 3, ["dense/kernel:0", init + "RandomUniform:0"]),
        _op("_Send_0", "Send", 4, ["dense/kernel/Assign:0"]),
        _op("Node_Output", "NetOutput", 5, ["dense/kernel/Assign:-1"]),
    ]) + "}\n", encoding="utf-8")
    assert _ge_auto(dump) == {"fp": None, "bp": "dense/kernel/Assign"}
    r = run("fp", dump)
    assert (r.exit_code, r.stdout) == (1, "")
    assert r.stderr.strip() == ("%s: no fp: GE would pick no fp here: no candidate (task-generating) node of type or "
                                "original_type in AippData/AnnData/Data/GetNext/IteratorV2/RefData; to profile this model, "
                                "give its TensorFlow graph with this dump: %s %s" % (dump, INSTEAD, dump))
    env = run("points", "--format", "env", dump)
    assert env.exit_code == 1 and "_Send_0" not in env.stdout
    assert '"fp_point":"","bp_point":"dense/kernel/Assign"' in env.stdout
    assert "%s: no fp: GE would pick no fp" % dump in env.stderr
    assert pbtxt_scan.find_fp(dump).point is None
