"""fp when several optimizers train the graph in separate train ops (issue 34): each step begins at
the first op of the model it trains, so fp is ``ambiguous`` between them (the fixtures'
``fp_defensible``, checked in test_confidence.py), ``--train-op`` chooses, and a graph with one
model on its data never pays for the question (bp's backward read is not made)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app
from pbtxt_scan.fpbp import _fp_steps
from pbtxt_scan.fpbp._fp_steps import forward_of
from pbtxt_scan.fpbp._rules import Options, find_fp

DATA = Path(__file__).parent / "data"
CASES = sorted((DATA / "graphs").glob("*.expected.json"))
TRAIN_OPS = [(c, t) for c in CASES for t in sorted(json.loads(c.read_text()).get("train_ops", {}))]
assert TRAIN_OPS
runner = CliRunner()


def _twins(case: Path):
    stem = case.name.split(".")[0]
    yield case.with_name(stem + ".pbtxt")
    for twin in (DATA / "binary" / (stem + ".pb"), DATA / "binary" / (stem + ".meta")):
        if twin.exists():
            yield twin


@pytest.mark.parametrize("case,train_op", TRAIN_OPS, ids=["%s-%s" % (c.name.split(".")[0], t) for c, t in TRAIN_OPS])
def test_train_op_gives_the_first_op_its_step_runs(case, train_op):
    # each train op the expected.json names: fp is the first op of the model that step runs
    # (a GAN's discriminator step runs the generator on noise first), text and binary
    want = json.loads(case.read_text())["train_ops"][train_op]
    for graph in _twins(case):
        ans = find_fp(graph, Options(train_op=train_op))
        assert ans.point is not None and ans.point.name == want["fp"], graph
        assert ans.confidence == "certain" and train_op in ans.reason
        if graph.suffix == ".pbtxt":
            assert ans.point.line == want["fp_line"]


def test_the_cli_takes_train_op_and_a_name_of_no_step_finds_nothing():
    graph = str(DATA / "graphs" / "actor_critic_two_optimizers.pbtxt")
    r = runner.invoke(app, ["fp", graph, "--train-op", "critic/train"])
    assert (r.exit_code, r.stdout) == (0, "critic/l1/MatMul\n")
    r = runner.invoke(app, ["fp", graph, "--train-op", "no/such/op"])
    assert r.exit_code == 1 and r.stdout == "" and "no/such/op" in r.stderr
    r = runner.invoke(app, ["fp", graph, "--explain", "--train-op", "critic/train"])
    chosen = [line for line in r.stderr.splitlines() if line.lstrip().startswith("CHOSEN")]
    assert len(chosen) == 1 and "critic/l1/MatMul" in chosen[0]


@pytest.mark.parametrize("name,expected", [
    ("actor/gradients/actor/l1/MatMul_grad/MatMul_1", "actor/l1/MatMul"),
    ("gradients_1/generator/g1/MatMul_grad/MatMul_1", "generator/g1/MatMul"),
    ("gradients/conv1/Conv2D_grad/Conv2DBackpropFilter", "conv1/Conv2D"),
    ("tower_0/gradients/tower_0/dense/MatMul_grad/MatMul", "tower_0/dense/MatMul"),
    ("gradients/AddN_5", None),
    ("dense/MatMul", None),
])
def test_the_forward_op_a_gradient_names(name, expected):
    assert forward_of(name) == expected




@pytest.mark.parametrize("stem", ["mlp_sgd", "batchnorm_conv", "resource_vars", "tf1_iterator", "estimator_queue", "label_cast_one_hot"])
def test_one_model_on_the_data_never_asks_bp(stem, monkeypatch):
    # fp's cost follows its answer: bp's backward read (the several-optimizers question) is made
    # only when another compute op on the answer's data reads a trained variable; the backward
    # pass's ops on the batch (a Conv2D_grad's ShapeN reads the kernel) are no second model
    def refuse(g, o):
        raise AssertionError("bp's backward read asked for")

    monkeypatch.setattr(_fp_steps, "optimizer_points", refuse)
    exp = json.loads((DATA / "graphs" / (stem + ".expected.json")).read_text())
    ans = find_fp(DATA / "graphs" / (stem + ".pbtxt"))
    assert ans.point is not None and ans.point.name == exp["fp"]


@pytest.mark.parametrize("graph", [DATA / "graphs" / "tf2_gan_split_steps.pbtxt", DATA / "binary" / "tf2_gan_split_steps.pb"], ids=["text", "binary"])
def test_train_op_names_a_step_function(graph):
    # --train-op takes a step function's name: the first op that function runs that reads a
    # trained variable. Both GAN steps run the generator on noise first (why_fp of the fixture:
    # disc_step's fake images come before the batch's discriminator op), each its own copy.
    for fname in ("__inference_disc_step_913", "__inference_gen_step_1623"):
        ans = find_fp(graph, Options(train_op=fname))
        assert ans.point is not None and (ans.point.name, ans.point.function, ans.confidence) == ("generator/dense/MatMul", fname, "certain")
    assert find_fp(graph).point.name == "discriminator/dense_2/MatMul_1"  # (without it: the step that receives the batch)
