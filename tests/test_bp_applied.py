"""bp is a gradient an optimizer applies: on every real graph, bp's data reaches a state update
(an ``Apply*``, ``Assign*`` or ``Scatter*`` op), followed here node by node with a reader of the
test's own (TensorFlow's writer layout, read naively), inside functions too; and several
optimizers that no one train op runs make bp ``ambiguous``, ``--train-op`` choosing one. The tests on
every graph run those of ``support.data.QUICK_GRAPHS`` in the quick set, all in CI's ``slow`` run."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from support.cli import CliRunner
from support.data import expect_known_wrong
from support.marks import quick_graphs

from pbtxt_scan.cli import app
from pbtxt_scan.fpbp._rules import Options, find_bp

DATA = Path(__file__).parent / "data"
GRAPHS = DATA / "graphs"
CASES = sorted(p for p in GRAPHS.glob("*.expected.json") if json.loads(p.read_text())["bp"])
assert CASES
UPDATE = re.compile(r"(Resource)?(Sparse)?Apply[A-Z]|Assign|(Resource)?Scatter[A-Z]")
# data that leaves a body for the caller (a gradient a called backward function returns) or
# whose function updates state; checked only as a last resort (see below)
LEAVES = {"_Retval", "PartitionedCall", "StatefulPartitionedCall", "While", "StatelessWhile", "If", "StatelessIf"}

Node = Tuple[str, str, List[str]]  # name, op, inputs


def bodies(text: str) -> Dict[Optional[str], List[Node]]:
    """Every body's nodes (``None``: the top level), from the writer layout's lines."""
    out: Dict[Optional[str], List[Node]] = {None: []}
    fn: Optional[str] = None
    cur: Optional[List] = None
    for line in text.splitlines():
        s = line.strip()
        if line == "node {" or s == "node_def {":
            cur = [None, None, []]
            out.setdefault(fn if s == "node_def {" else None, []).append(cur)  # type: ignore[arg-type]
        elif line.startswith("    signature {"):
            cur = None
        elif cur is None and re.match(r"^      name: ", line) and fn is not False:
            fn = json.loads(line.split(": ", 1)[1])
        elif cur is not None and s.startswith("name: ") and cur[0] is None:
            cur[0] = json.loads(s[6:])
        elif cur is not None and s.startswith("op: ") and cur[1] is None:
            cur[1] = json.loads(s[4:])
        elif cur is not None and s.startswith("input: "):
            cur[2].append(json.loads(s[7:]))
        if line == "  function {":
            fn, cur = None, None
    return {k: [tuple(n) for n in v] for k, v in out.items()}  # type: ignore[misc]


def reaches_update(nodes: List[Node], start: str) -> Optional[List[str]]:
    """The data path from ``start`` to a state update in one body (``None``: there is none)."""
    users: Dict[str, List[Tuple[str, str]]] = {}
    for name, op, inputs in nodes:
        for i in inputs:
            if not i.startswith("^"):
                users.setdefault(i.split(":", 1)[0], []).append((name, op))
    prev: Dict[str, str] = {start: ""}
    work = [start]
    while work:
        n = work.pop(0)
        for u, op in users.get(n, ()):
            if u in prev:
                continue
            prev[u] = n
            if UPDATE.match(op):
                path = [u]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return path[::-1]
            work.append(u)
    return None


@pytest.mark.parametrize("case", quick_graphs(CASES), ids=lambda p: p.name.split(".")[0])
def test_bps_data_reaches_a_state_update(case):
    exp = json.loads(case.read_text())
    text = case.with_name(case.name.replace(".expected.json", ".pbtxt")).read_text()
    body = bodies(text)[exp["bp_function"]]
    assert any(n[0] == exp["bp"] for n in body)
    path = reaches_update(body, exp["bp"])
    if path is None:  # a backward function the step calls: its gradients leave by its results
        assert exp["bp_function"] is not None and "ret" in text, exp["bp"]
        pytest.skip("the gradient leaves function %s by its results" % exp["bp_function"])
    assert path[0] == exp["bp"] and UPDATE.match(dict((n[0], n[1]) for n in body)[path[-1]])


@pytest.mark.parametrize("case", quick_graphs(CASES), ids=lambda p: p.name.split(".")[0])
def test_the_same_bp_in_the_binary_twin(case, request):
    exp = json.loads(case.read_text())
    stem = case.name.split(".")[0]
    expect_known_wrong(request, stem, ("bp",))
    twins = [p for p in (DATA / "binary" / (stem + ".pb"), DATA / "binary" / (stem + ".meta")) if p.exists()]
    if not twins:
        pytest.skip("no binary twin")
    for twin in twins:
        bp = find_bp(twin).point
        assert (bp.name, bp.function) == (exp["bp"], exp["bp_function"])


# --- several optimizers -------------------------------------------------------------------

TWO = """\
node { name: "x" op: "Placeholder" attr { key: "shape" value { shape { dim { size: -1 } dim { size: 4 } } } } }
node { name: "w" op: "VariableV2" }
node { name: "v" op: "VariableV2" }
node { name: "a/MatMul" op: "MatMul" input: "x" input: "w" }
node { name: "b/MatMul" op: "MatMul" input: "a/MatMul" input: "v" }
node { name: "gradients/b/MatMul_grad/MatMul_1" op: "MatMul" input: "a/MatMul" input: "b/MatMul" }
node { name: "gradients/b/MatMul_grad/Unused" op: "Mul" input: "a/MatMul" input: "b/MatMul" }
node { name: "actor/update_v/ApplyGradientDescent" op: "ApplyGradientDescent" input: "v" input: "lr" input: "gradients/b/MatMul_grad/MatMul_1" }
node { name: "actor" op: "NoOp" input: "^actor/update_v/ApplyGradientDescent" }
node { name: "gradients_1/a/MatMul_grad/MatMul_1" op: "MatMul" input: "x" input: "b/MatMul" }
node { name: "gradients_1/a/MatMul_grad/Summed" op: "Sum" input: "gradients_1/a/MatMul_grad/MatMul_1" }
node { name: "critic/update_w/ApplyGradientDescent" op: "ApplyGradientDescent" input: "w" input: "lr" input: "gradients_1/a/MatMul_grad/MatMul_1" }
node { name: "critic" op: "NoOp" input: "^critic/update_w/ApplyGradientDescent" }
node { name: "summary" op: "HistogramSummary" input: "gradients_1/a/MatMul_grad/Summed" }
"""


def test_two_optimizers_make_bp_ambiguous_and_train_op_chooses(tmp_path):
    g = tmp_path / "two.pbtxt"
    g.write_text(TWO)
    ans = find_bp(g)
    # (the Sum after it feeds a summary only: it runs, but no optimizer applies it)
    assert (ans.point.name, ans.confidence) == ("gradients_1/a/MatMul_grad/MatMul_1", "ambiguous")
    assert "critic" in ans.doubt and "actor" in ans.doubt and "--train-op" in ans.doubt
    assert [(a.point.name, a.why) for a in ans.alternatives] == [
        ("gradients_1/a/MatMul_grad/Summed", "dead"),  # (it runs, for the summary; nothing applies it)
        ("gradients/b/MatMul_grad/MatMul_1", "other_optimizer"),
    ]
    for name in ("actor", "actor/update_v/ApplyGradientDescent"):
        assert find_bp(g, Options(train_op=name)).point.name == "gradients/b/MatMul_grad/MatMul_1"
    assert find_bp(g, Options(train_op="critic")).point.name == "gradients_1/a/MatMul_grad/MatMul_1"
    r = CliRunner().invoke(app, ["bp", str(g)])
    assert r.exit_code == 0 and r.stdout == "gradients_1/a/MatMul_grad/MatMul_1\n"
    assert len([ln for ln in r.stderr.splitlines() if "ambiguous" in ln]) == 1
    r = CliRunner().invoke(app, ["points", "--train-op", "actor", "--json", str(g)])
    assert json.loads(r.stdout)["bp"]["name"] == "gradients/b/MatMul_grad/MatMul_1"
    r = CliRunner().invoke(app, ["bp", "--train-op", "nothing_named_so", str(g)])
    assert r.exit_code == 1 and "nothing_named_so" in r.stderr


def test_one_group_running_both_optimizers_is_certain(tmp_path):
    g = tmp_path / "group.pbtxt"
    g.write_text(TWO + 'node { name: "train_op" op: "NoOp" input: "^actor" input: "^critic" }\n')
    ans = find_bp(g)
    assert (ans.point.name, ans.confidence) == ("gradients_1/a/MatMul_grad/MatMul_1", "certain")
    assert [a.why for a in ans.alternatives] == ["dead"]  # (no other optimizer: one step runs both)
    assert find_bp(g, Options(train_op="train_op")).point.name == "gradients_1/a/MatMul_grad/MatMul_1"


def test_gan_joined_by_one_train_op_each_optimizer_chosen():
    # gan_two_optimizers runs tf.group(d_train, g_train): one step, one bp; --train-op picks D's
    g = GRAPHS / "gan_two_optimizers.pbtxt"
    assert find_bp(g).confidence == "certain"
    d = find_bp(g, Options(train_op="d_adam")).point.name
    assert d.startswith("gradients/") and find_bp(g, Options(train_op="g_adam")).point.name == find_bp(g).point.name
    body = bodies(g.read_text())[None]
    assert reaches_update(body, d)[-1].startswith("d_adam/update_discriminator/")


TRAIN_OPS = [(c, t) for c in CASES for t in sorted(json.loads(c.read_text()).get("train_ops", {}))]
assert TRAIN_OPS


@pytest.mark.parametrize("case,train_op", TRAIN_OPS, ids=["%s-%s" % (c.name.split(".")[0], t) for c, t in TRAIN_OPS])
def test_train_op_gives_that_optimizers_bp(case, train_op):
    # each train op the expected.json names (as the user's script does) gives its own step's bp
    want = json.loads(case.read_text())["train_ops"][train_op]
    graph = case.with_name(case.name.replace(".expected.json", ".pbtxt"))
    bp = find_bp(graph, Options(train_op=train_op)).point
    assert bp is not None and (bp.name, bp.line) == (want["bp"], want["bp_line"])


# --- a step split into functions that one caller runs --------------------------------------

def _call(name, callee, *after, caller=None):
    from pbtxt_scan.fpbp._body import Call

    return Call(caller, name, callee, frozenset(after))


@pytest.mark.parametrize("calls,gradients,expected", [
    # the generator step waits for the discriminator's (auto control deps): it runs last
    ([_call("c", "disc"), _call("c_1", "gen", "c", "strided_slice")], {"disc": 9, "gen": 3}, ("gen", ("disc",), True)),
    # written in the other order in the file, the wait still decides
    ([_call("c_1", "gen", "c"), _call("c", "disc")], {"disc": 9, "gen": 3}, ("gen", ("disc",), True)),
    # a chain of three, the last waiting only for the middle one
    ([_call("a", "f1"), _call("b", "f2", "a"), _call("c", "f3", "b")], {"f1": 5, "f2": 1, "f3": 1}, ("f3", ("f1", "f2"), True)),
    # nothing orders them: the most gradients stay, the order is not fixed
    ([_call("c", "disc"), _call("c_1", "gen")], {"disc": 9, "gen": 3}, ("disc", ("gen",), False)),
    # a call of a function without gradients is no step, and a waiting call of one is not last
    ([_call("c", "disc"), _call("log", "summaries", "c")], {"disc": 9}, ("disc", (), True)),
    # the steps of another caller are not this step's
    ([_call("c", "disc", caller="train_d"), _call("c", "gen", caller="train_g")], {"disc": 9, "gen": 3}, ("disc", (), True)),
])
def test_the_step_that_runs_last(calls, gradients, expected):
    from pbtxt_scan.fpbp._body import last_step

    assert last_step(max(gradients, key=gradients.get), calls, gradients) == expected


def test_a_caller_that_orders_its_steps_gives_the_last_ones_bp_and_one_that_does_not_is_ambiguous(tmp_path):
    # tf2_gan_split_steps: the outer step calls disc_step, then gen_step (^StatefulPartitionedCall):
    # bp is gen_step's, though disc_step holds more gradient ops; without that control input
    # TensorFlow may run them in either order, and both steps' points are defensible.
    src = DATA / "graphs" / "tf2_gan_split_steps.pbtxt"
    exp = json.loads(src.with_name("tf2_gan_split_steps.expected.json").read_text())
    ans = find_bp(src)
    assert (ans.point.name, ans.point.function, ans.confidence) == (exp["bp"], exp["bp_function"], "certain")
    text = src.read_text()
    at = text.index('  name: "StatefulPartitionedCall_1"\n')
    block_end = text.index("\n}\n", at)
    wait = text.index('  input: "^StatefulPartitionedCall"\n', at)
    assert wait < block_end
    g = tmp_path / "unordered.pbtxt"
    g.write_text(text[:wait] + text[wait:].replace('  input: "^StatefulPartitionedCall"\n', "", 1))
    ans = find_bp(g)
    assert ans.confidence == "ambiguous" and "do" in (ans.doubt or "")
    got = {(ans.point.name, ans.point.function)} | {(a.point.name, a.point.function) for a in ans.alternatives if a.why == "other_optimizer"}
    assert (exp["bp"], exp["bp_function"]) in got
    assert ("gradient_tape/discriminator/dense_2/MatMul/MatMul_1", "__inference_disc_step_913") in got


@pytest.mark.parametrize("graph", [DATA / "graphs" / "tf2_gan_split_steps.pbtxt", DATA / "binary" / "tf2_gan_split_steps.pb"], ids=["text", "binary"])
def test_train_op_names_a_step_function(graph):
    # --train-op takes a step function's name too: that function's own bp, even one that runs
    # before another in the same step (disc_step before gen_step)
    for fname, want in (("__inference_disc_step_913", "gradient_tape/discriminator/dense_2/MatMul/MatMul_1"),
                        ("__inference_gen_step_1623", "gradient_tape/generator/dense/MatMul/MatMul")):
        ans = find_bp(graph, Options(train_op=fname))
        assert (ans.point.name, ans.point.function, ans.confidence) == (want, fname, "certain")
