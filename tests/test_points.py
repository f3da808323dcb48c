"""fp/bp on real TensorFlow graphs: expected answers picked by hand (tests/data/README.md, graphs/).

The API's answers are checked on every fixture in the quick set; the command line's JSON on the
ten of ``support.data.QUICK_GRAPHS`` there, on all of them in CI's ``slow`` run; the answers in a
non-canonical layout on mlp_sgd there, on two more graphs in the ``slow`` run."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli import CliRunner
from support.data import expect_known_wrong
from support.marks import quick_first, quick_graphs
from support.layouts import _reprint

from pbtxt_scan.fpbp._rules import Options, find_bp, find_fp, in_gradients_scope
from pbtxt_scan.cli import app

GRAPHS = Path(__file__).parent / "data" / "graphs"
CASES = sorted(GRAPHS.glob("*.expected.json"))
assert CASES


def _expected(case: Path):
    return json.loads(case.read_text()), case.with_name(case.name.replace(".expected.json", ".pbtxt"))


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name.split(".")[0])
def test_fp_bp_match_the_expert_answers(case, request):
    exp, graph = _expected(case)
    expect_known_wrong(request, case.name.split(".")[0])
    fp = find_fp(graph).point
    bp = find_bp(graph).point
    assert (fp and (fp.name, fp.line, fp.function)) == (exp["fp"] and (exp["fp"], exp["fp_line"], exp["fp_function"]))
    assert (bp and (bp.name, bp.line, bp.function)) == (exp["bp"] and (exp["bp"], exp["bp_line"], exp["bp_function"]))


@pytest.mark.parametrize("case", quick_graphs(CASES), ids=lambda p: p.name.split(".")[0])
def test_cli_json(case, request):
    exp, graph = _expected(case)
    expect_known_wrong(request, case.name.split(".")[0])
    r = CliRunner().invoke(app, ["points", "--json", str(graph)])
    obj = json.loads(r.stdout)
    assert obj["fp"]["name"] == exp["fp"]
    assert obj["bp"]["name"] == exp["bp"]
    assert r.exit_code == (0 if exp["bp"] and exp["fp"] else 1)
    if exp["fp"]:
        lines = graph.read_text().splitlines()
        assert lines[obj["fp"]["name_line"] - 1].strip() == 'name: "%s"' % exp["fp"]
        assert graph.read_bytes()[obj["fp"]["offset"] :].startswith((b"node {", b"node_def {"))


def test_recipe_worked_example_under_the_doc_rule_too():
    g = GRAPHS / "mlp_sgd.pbtxt"
    assert find_fp(g, Options(rule="doc")).point.name == "dense/MatMul"
    assert find_bp(g, Options(rule="doc")).point.name == "gradients/dense/MatMul_grad/MatMul_1"


def test_doc_rule_misses_that_dataflow_fixes():
    # Literal recipe picks the noise generator in the GAN and the initializer-free truncated_normal.
    assert find_fp(GRAPHS / "gan_two_optimizers.pbtxt", Options(rule="doc")).point.name == "noise/RandomStandardNormal"
    assert find_fp(GRAPHS / "placeholder_feed.pbtxt", Options(rule="doc")).point.name == "truncated_normal/TruncatedNormal"


@pytest.mark.parametrize(
    "name,inside",
    [
        ("gradients/dense/MatMul_grad/MatMul_1", True),
        ("gradients_1/g/MatMul_grad/MatMul", True),
        ("train_op/gradients/x", True),
        ("training/Adam/gradients/gradients/AddN_38", True),
        ("gradient_tape/sequential/dense/MatMul/MatMul", True),
        ("generator/g2/bias/gradients", False),  # a summary *named* gradients
        ("my_gradients/x", False),
        ("gradientsX/y", False),
    ],
)
def test_gradients_scope(name, inside):
    assert in_gradients_scope(name) is inside


def test_skip_op_and_keep_op_change_the_answer():
    g = GRAPHS / "tf1_iterator.pbtxt"
    assert find_fp(g).point.name == "conv1/Conv2D"
    # --keep-op: the input's Cast counts as the model's own op, not preprocessing
    assert find_fp(g, Options(keep_ops=frozenset({"Cast"}))).point.name == "Cast"
    # --skip-op: an op the user rules out is plumbing: the data passes on through it
    assert find_fp(g, Options(skip_ops=frozenset({"Conv2D"}))).point.name != "conv1/Conv2D"


def test_explain_trail_names_lines_and_reasons():
    r = CliRunner().invoke(app, ["bp", "--explain", str(GRAPHS / "mlp_sgd.pbtxt")])
    assert r.stdout.strip() == "gradients/dense/MatMul_grad/MatMul_1"
    assert "line 3301" in r.stderr and "control_dependency_1 (Identity): catalog" in r.stderr
    assert "CHOSEN line 3227" in r.stderr


# --- non-canonical layouts: the index path ------------------------------------------------


@pytest.mark.parametrize("stem", quick_first(["mlp_sgd", "gan_two_optimizers", "resource_vars"], 1))  # (all: CI's slow run)
@pytest.mark.parametrize("pointy", [False, True])
def test_same_answers_in_a_non_canonical_layout(tmp_path, stem, pointy):
    exp = json.loads((GRAPHS / (stem + ".expected.json")).read_text())
    alt = tmp_path / (stem + ".pbtxt")
    _reprint(GRAPHS / (stem + ".pbtxt"), alt, pointy)
    fp, bp = find_fp(alt).point, find_bp(alt).point
    assert (fp.name, bp.name) == (exp["fp"], exp["bp"])
    lines = alt.read_text().splitlines()
    assert lines[bp.line - 1].startswith("node ") and '"%s"' % exp["bp"] in lines[bp.line - 1]


def test_stale_index_is_detected(tmp_path):
    alt = tmp_path / "g.pbtxt"
    _reprint(GRAPHS / "mlp_sgd.pbtxt", alt, False)
    assert find_bp(alt).point.name == "gradients/dense/MatMul_grad/MatMul_1"
    assert list((tmp_path / "cache").iterdir())  # the index was cached outside the input's folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "g.pbtxt"]
    with alt.open("a") as out:
        out.write('node { name: "gradients/late/Mul" op: "Mul" input: "a" }\n')
        out.write('node { name: "late_apply" op: "ApplyGradientDescent" input: "w" input: "lr" input: "gradients/late/Mul" }\n')  # (applied)
    st = alt.stat()
    os.utime(alt, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert find_bp(alt).point.name == "gradients/late/Mul"


def test_corrupt_cache_is_rebuilt(tmp_path):
    alt = tmp_path / "g.pbtxt"
    _reprint(GRAPHS / "mlp_sgd.pbtxt", alt, False)
    find_bp(alt)
    for p in (tmp_path / "cache").iterdir():
        p.write_bytes(b"\x00garbage")
    assert find_bp(alt).point.name == "gradients/dense/MatMul_grad/MatMul_1"


def test_read_only_cache_folder_still_works(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    monkeypatch.setenv("PBTXT_SCAN_CACHE_DIR", str(ro / "sub"))
    alt = tmp_path / "g.pbtxt"
    _reprint(GRAPHS / "mlp_sgd.pbtxt", alt, True)
    assert find_bp(alt).point.name == "gradients/dense/MatMul_grad/MatMul_1"


@pytest.mark.parametrize("stem", ["resource_vars", "rnn_while", "gan_two_optimizers"])
def test_bp_from_gzip_matches_the_plain_file(tmp_path, stem):
    # gzip offsets are in the unpacked stream: bp must not seek into the packed file for inputs
    import gzip

    exp = json.loads((GRAPHS / (stem + ".expected.json")).read_text())
    gz = tmp_path / (stem + ".pbtxt.gz")
    gz.write_bytes(gzip.compress((GRAPHS / (stem + ".pbtxt")).read_bytes()))
    bp = find_bp(gz).point
    assert (bp.name, bp.line) == (exp["bp"], exp["bp_line"])


def test_scalar_placeholders_are_hyper_parameters_not_data(tmp_path):
    # A learning-rate schedule computed from a scalar placeholder comes first in the file; the
    # batch placeholder (a dimension of -1) is the data.
    g = tmp_path / "feed.pbtxt"
    g.write_text(
        'node {\n  name: "lr"\n  op: "Placeholder"\n  attr {\n    key: "shape"\n    value {\n      shape {\n'
        "      }\n    }\n  }\n}\n"
        'node {\n  name: "lr_decayed"\n  op: "Mul"\n  input: "lr"\n  input: "lr"\n}\n'
        'node {\n  name: "images"\n  op: "Placeholder"\n  attr {\n    key: "shape"\n    value {\n      shape {\n'
        "        dim {\n          size: -1\n        }\n        dim {\n          size: 784\n        }\n      }\n    }\n  }\n}\n"
        'node {\n  name: "w"\n  op: "Const"\n}\n'
        'node {\n  name: "fc/MatMul"\n  op: "MatMul"\n  input: "images"\n  input: "w"\n}\n'
    )
    ans = find_fp(g)
    opener = g.read_text().splitlines().index('  name: "fc/MatMul"')  # 0-based index of the name = opener's line
    assert (ans.point.name, ans.point.line) == ("fc/MatMul", opener)
    assert any(s.name == "lr" and "scalar placeholder" in s.why for s in ans.trail)
