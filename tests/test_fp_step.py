"""fp names an op that runs in the training step, on the model's own data path (issue 19).

Data-driven: every ``graphs/*.expected.json`` that carries ``fp_confidence`` (the real graphs made
for this, how and why in ``tests/data/README.md``) states the expert's confidence, the wrong picks
a careful tool must list as alternatives, and, for graphs with copies of the model, the answer when
the user names the input with ``--source``. Hand-made graphs below pin one mechanism each.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.cli import CliRunner
from support.data import GRAPHS, expect_known_wrong
from support.graphs import _node

from pbtxt_scan.fpbp._rules import Options, find_fp
from pbtxt_scan.cli import app

CASES = sorted(p for p in GRAPHS.glob("*.expected.json") if "fp_confidence" in json.loads(p.read_text()))
runner = CliRunner()


def _load(case):
    return json.loads(case.read_text()), case.with_name(case.name.replace(".expected.json", ".pbtxt"))


def test_there_are_step_fixtures():
    assert len(CASES) >= 6


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name.split(".")[0])
def test_confidence_and_alternatives(case, request):
    exp, graph = _load(case)
    expect_known_wrong(request, case.name.split(".")[0], ("fp",), confidence=True)
    ans = find_fp(graph)
    assert ans.point is not None and ans.point.name == exp["fp"]
    assert ans.confidence == exp["fp_confidence"], ans.doubt
    names = [a.point.name for a in ans.alternatives]
    assert set(exp["fp_alternatives"]) <= set(names), names
    assert exp["fp"] not in names
    # an ambiguous answer says why; a certain one does not
    assert bool(ans.doubt) == (exp["fp_confidence"] == "ambiguous")


@pytest.mark.parametrize("case", [c for c in CASES if "fp_by_source" in json.loads(c.read_text())], ids=lambda p: p.name.split(".")[0])
def test_source_names_the_copy(case):
    exp, graph = _load(case)
    for source, want in exp["fp_by_source"].items():
        ans = find_fp(graph, Options(sources=frozenset({source})))
        assert ans.point is not None and ans.point.name == want, (source, ans.reason)
        r = runner.invoke(app, ["fp", "--source", source, str(graph)])
        assert (r.exit_code, r.stdout) == (0, want + "\n")


@pytest.mark.parametrize("case", [c for c in CASES if json.loads(c.read_text())["fp_confidence"] == "ambiguous"], ids=lambda p: p.name.split(".")[0])
def test_ambiguous_keeps_stdout_and_exit_code_and_says_so_once(case, request):
    exp, graph = _load(case)
    expect_known_wrong(request, case.name.split(".")[0], ("fp",), confidence=True)
    r = runner.invoke(app, ["fp", str(graph)])
    assert (r.exit_code, r.stdout) == (0, exp["fp"] + "\n")
    said = [line for line in r.stderr.splitlines() if "ambiguous" in line]
    # (the option that chooses: --train-op between optimizers' models, else --source between copies)
    chooser = "--train-op" if "other_optimizer" in exp.get("fp_alternative_why", {}).values() else "--source"
    assert len(said) == 1 and chooser in said[0]
    quiet = runner.invoke(app, ["fp", "--quiet", str(graph)])
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, exp["fp"] + "\n", "")
    js = json.loads(runner.invoke(app, ["points", "--json", str(graph)]).stdout)["fp"]
    assert js["confidence"] == "ambiguous" and js["doubt"]
    alt_keys = set(js["alternatives"][0])
    assert alt_keys == (set(js) - {"confidence", "doubt", "alternatives"}) | {"why"}  # the answer's own keys, and why not
    env = runner.invoke(app, ["points", "--format", "env", str(graph)])
    assert env.exit_code == 0 and '"fp_point":"%s"' % exp["fp"] in env.stdout.replace(" ", "")


def test_explain_lists_the_alternatives():
    exp, graph = _load(GRAPHS / "label_cast_one_hot.expected.json")
    r = runner.invoke(app, ["fp", "--explain", str(graph)])
    for alt in exp["fp_alternatives"]:
        assert "alternative %s (" % alt in r.stderr


# --- hand-made graphs, one mechanism each ------------------------------------------------------

def _graph(tmp_path, *nodes):
    g = tmp_path / "g.pbtxt"
    g.write_text("".join(nodes))
    return g


PH = _node("x", '"Placeholder"', shape=[-1, 4])
LABELS = _node("y", '"Placeholder"', shape=[-1])
W = _node("w", '"VariableV2"') + _node("w/read", '"Identity"', ["w"])


def test_an_op_whose_data_meets_no_variable_is_not_the_model(tmp_path):
    g = _graph(
        tmp_path, PH, LABELS, W,
        _node("Cast", '"Cast"', ["y"]),  # the labels, cast: label side
        _node("one_hot", '"OneHot"', ["Cast"]),
        _node("scale", '"Mul"', ["x", "w_const"]),  # preprocessing of the features
        _node("w_const", '"Const"'),
        _node("dense/MatMul", '"MatMul"', ["scale", "w/read"]),
    )
    ans = find_fp(g)
    assert ans.point.name == "dense/MatMul"
    assert {a.point.name for a in ans.alternatives} == {"Cast", "scale"}


def test_the_model_begins_before_the_variable_on_the_same_data(tmp_path):
    # a layout change of the model's own (dynamic_rnn's transpose) counts; the op meeting the
    # variable comes later
    g = _graph(
        tmp_path, PH, W,
        _node("rnn/transpose", '"Transpose"', ["x", "perm"]),
        _node("perm", '"Const"'),
        _node("rnn/cell/MatMul", '"MatMul"', ["rnn/transpose", "w/read"]),
    )
    assert find_fp(g).point.name == "rnn/transpose"


def test_an_input_read_before_its_enter_is_followed(tmp_path):
    # TF1 while loops write an Enter after the op that reads it
    g = _graph(
        tmp_path, PH, W,
        _node("loop/MatMul", '"MatMul"', ["loop/Enter", "loop/Enter_w"]),
        _node("loop/Enter", '"Enter"', ["x"]),
        _node("loop/Enter_w", '"Enter"', ["w/read"]),
    )
    assert find_fp(g).point.name == "loop/MatMul"


def test_gradients_are_never_fp(tmp_path):
    g = _graph(tmp_path, PH, _node("gradients/MatMul_grad/MatMul", '"MatMul"', ["x", "w/read"]), W,
               _node("m", '"MatMul"', ["x", "w/read"]))
    assert find_fp(g).point.name == "m"


def test_a_constant_is_the_data_when_nothing_else_is(tmp_path):
    big = 'node {\n  name: "data"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n        tensor_content: "%s"\n      }\n    }\n  }\n}\n' % ("\\000" * 2000)
    g = _graph(
        tmp_path, W,
        _node("range", '"Range"', ["start", "limit"]),  # shape arithmetic on small constants
        _node("start", '"Const"'), _node("limit", '"Const"'),
        big,
        _node("rnn/transpose", '"Transpose"', ["data", "range"]),
        _node("rnn/MatMul", '"MatMul"', ["rnn/transpose", "w/read"]),
    )
    ans = find_fp(g)
    assert ans.point.name == "rnn/transpose", ans.reason
    # a placeholder that feeds data wins over the constant
    g2 = _graph(tmp_path, W, big, _node("a", '"MatMul"', ["data", "w/read"]), PH, _node("b", '"MatMul"', ["x", "w/read"]))
    assert find_fp(g2).point.name == "b"


def test_unstage_is_the_steps_input_and_stage_a_later_batch(tmp_path):
    g = _graph(
        tmp_path, W,
        _node("q", '"FIFOQueueV2"'),
        _node("deq", '"QueueDequeueManyV2"', ["q", "n"]),
        _node("n", '"Const"'),
        _node("t", '"Transpose"', ["deq", "perm"]),
        _node("perm", '"Const"'),
        _node("put", '"Stage"', ["t"]),
        _node("get", '"Unstage"'),
        _node("m", '"MatMul"', ["get", "w/read"]),
    )
    ans = find_fp(g)
    assert ans.point.name == "m"
    assert "t" in {a.point.name for a in ans.alternatives}


def test_a_ge_dump_says_its_answer_is_ges_own_choice():
    dump = GRAPHS.parent / "ge" / "ge_proto_00000013_graph_3_Build.txt"
    r = runner.invoke(app, ["fp", str(dump)])
    assert r.exit_code == 0 and r.stdout.strip()
    notes = [line for line in r.stderr.splitlines() if "ge-auto" in line]
    assert len(notes) == 1 and "GE picks by itself" in notes[0] and "points GRAPH --ge" in notes[0]
    assert "TensorFlow's rules" not in r.stderr
    q = runner.invoke(app, ["fp", "--quiet", str(dump)])
    assert (q.stdout, q.stderr) == (r.stdout, "")
    # a TensorFlow graph gets no such note
    tf = runner.invoke(app, ["fp", str(GRAPHS / "mlp_sgd.pbtxt")])
    assert "ge-auto" not in tf.stderr


@pytest.mark.parametrize("stem", ["rnn_while", "const_data_lstm"])
def test_the_doc_rule_skips_shape_arithmetic_but_not_random_values(stem):
    # rnn/range and rnn/concat build the transpose's permutation from constants: shape arithmetic
    exp, graph = _load(GRAPHS / (stem + ".expected.json"))
    ans = find_fp(graph, Options(rule="doc"))
    assert ans.point.name == exp["fp"] == "rnn/transpose"
    assert any(s.name == "rnn/range" and "constants and shapes" in s.why for s in ans.trail)
    # a random op makes values from a shape alone: data (here an initial value), not shape arithmetic
    assert find_fp(GRAPHS / "placeholder_feed.pbtxt", Options(rule="doc")).point.name == "truncated_normal/TruncatedNormal"


def test_source_that_names_no_node_is_one_clear_error():
    r = runner.invoke(app, ["fp", "--source", "nosuch", str(GRAPHS / "mlp_sgd.pbtxt")])
    assert r.exit_code == 2 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "nosuch" in lines[0] and "Traceback" not in r.stderr


def test_source_reaches_into_the_step_function():
    # the top level hands `x` to the tf.function that holds the step; its argument is `x` too
    exp, graph = _load(GRAPHS / "tf2_gradient_tape.expected.json")
    ans = find_fp(graph, Options(sources=frozenset({"x"})))
    assert (ans.point.name, ans.point.function) == (exp["fp"], exp["fp_function"])


# --- the feature side: every path of the batch whose data meets a trained variable ------------

BATCH = _node("IteratorGetNext", '"IteratorGetNext"', ["iterator"])
EMB = _node("emb/weights", '"VariableV2"') + _node("emb/weights/read", '"Identity"', ["emb/weights"])
KERNEL = _node("dense/kernel", '"VariableV2"') + _node("dense/kernel/read", '"Identity"', ["dense/kernel"])


def _feature_columns(n_pad: int = 0):
    """An ``input_layer`` as feature columns write it: a numeric column (a Cast), an indicator
    column (NotEqual, then a dense one-hot sum) and an embedding column (NotEqual, then the lookup
    that meets its table first), concatenated into the first hidden layer's MatMul; the labels'
    Cast and one_hot after. ``n_pad``: more numeric columns before the concat."""
    pad = [
        _node("input_layer/n%d/Cast" % i, '"Cast"', ["IteratorGetNext:%d" % (4 + i)]) for i in range(n_pad)
    ]
    return [
        BATCH, EMB, KERNEL,
        _node("input_layer/age/Cast", '"Cast"', ["IteratorGetNext"]),  # numeric: preprocessing
        _node("input_layer/color_indicator/to_sparse_input/NotEqual", '"NotEqual"', ["IteratorGetNext:1", "empty"]),
        _node("input_layer/color_indicator/SparseToDense", '"SparseToDense"', ["input_layer/color_indicator/to_sparse_input/NotEqual"]),
        _node("input_layer/color_indicator/Sum", '"Sum"', ["input_layer/color_indicator/SparseToDense", "axis"]),
        _node("input_layer/word_embedding/to_sparse_input/NotEqual", '"NotEqual"', ["IteratorGetNext:2", "empty"]),
        _node("input_layer/word_embedding/lookup", '"GatherV2"', ["emb/weights/read", "input_layer/word_embedding/to_sparse_input/NotEqual", "axis"]),
        *pad,
        _node("input_layer/concat", '"ConcatV2"', ["input_layer/age/Cast", "input_layer/color_indicator/Sum", "input_layer/word_embedding/lookup"]
              + ["input_layer/n%d/Cast" % i for i in range(n_pad)] + ["axis"]),
        _node("dense/MatMul", '"MatMul"', ["input_layer/concat", "dense/kernel/read"]),
        _node("labels/Cast", '"Cast"', ["IteratorGetNext:3"]),
        _node("one_hot", '"OneHot"', ["labels/Cast"]),
    ]


@pytest.mark.parametrize("n_pad", [0, 3000])
def test_a_column_that_meets_the_first_layer_after_the_concat_is_a_feature(tmp_path, n_pad):
    # the embedding column meets its table at the lookup first; the indicator column, earlier in
    # the file, meets a variable only at dense/MatMul: it is the feature side, and the first
    ans = find_fp(_graph(tmp_path, *_feature_columns(n_pad)))
    assert ans.point.name == "input_layer/color_indicator/to_sparse_input/NotEqual"
    assert ans.confidence == "certain"
    whys = {a.point.name: a.why for a in ans.alternatives}
    assert whys == {"input_layer/age/Cast": "cast"}  # (the labels come after the answer)
    assert "dense/kernel" in ans.reason and "dense/MatMul" in ans.reason


def test_a_path_that_meets_no_variable_before_the_answer_is_an_alternative(tmp_path):
    nodes = _feature_columns()
    labels = nodes[-2:]
    ans = find_fp(_graph(tmp_path, *(nodes[:3] + labels + nodes[3:-2])))
    assert ans.point.name == "input_layer/color_indicator/to_sparse_input/NotEqual"
    assert {a.point.name: a.why for a in ans.alternatives} == {"input_layer/age/Cast": "cast", "labels/Cast": "label"}


def test_the_reason_names_the_variable_the_answer_reads(tmp_path):
    # the kernel comes in through a view (Conv1D's ExpandDims): the answer reads it itself
    g = _graph(
        tmp_path, PH, W,
        _node("conv/ExpandDims", '"ExpandDims"', ["x", "dim"]),
        _node("conv/ExpandDims_1", '"ExpandDims"', ["w/read", "dim"]),
        _node("conv/Conv2D", '"Conv2D"', ["conv/ExpandDims", "conv/ExpandDims_1"]),
        _node("conv/BiasAdd", '"BiasAdd"', ["conv/Conv2D", "w/read"]),
    )
    ans = find_fp(g)
    assert ans.point.name == "conv/Conv2D"
    assert "it reads trained variable w" in ans.reason, ans.reason


def test_dropout_on_a_fed_keep_prob_is_the_model(tmp_path):
    kp = _node("keep_prob", '"Placeholder"', shape=[])
    g = _graph(
        tmp_path, PH, kp, W,
        _node("dropout/div", '"RealDiv"', ["x", "keep_prob"]),
        _node("dense/MatMul", '"MatMul"', ["dropout/div", "w/read"]),
    )
    assert find_fp(g).point.name == "dropout/div"


def test_every_why_is_one_of_the_closed_set_documented():
    from pbtxt_scan.fpbp._answers import WHYS

    doc = (Path(__file__).parent.parent / "docs" / "json.md").read_text()
    table = doc[doc.index("An alternative's `why` is one of"):]
    assert set(re.findall(r"^\| `([a-z_]+)` \| ", table, re.M)) == set(WHYS)
