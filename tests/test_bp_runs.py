"""bp is an op that runs in the step: a gradients-scope op whose result nothing that runs uses is
pruned by TensorFlow, so it is never bp (``_bp._Live``, read backward with the blocks).

The graphs in tests/data/bp_runs are a few nodes each, in ``tf.io.write_graph``'s layout:

- ``unused_saliency``: ``minimize``, then ``tf.gradients(MatMul, x)`` (scope ``gradients_1/``)
  never fetched: bp is the optimizer's gradient, not the last ``gradients_1/`` op;
- ``control_only``: the gradients reach the train op only through control inputs
  (``^.../tuple/group_deps``): they count as used;
- ``all_unused``: gradients that nothing uses: the safety net answers the gradients-scope rule's
  op, and says so;
- ``function_unused_tape``: a ``tf.function`` step (inputs ``x:out:0``) whose last tape gradient
  is unused;
- ``function_returns_gradient``: a step whose gradients leave only through its return value
  (``ret``), which no node_def shows: the safety net.

Each is also read as a binary GraphDef and (top-level ones) as a GE ge_proto dump, and in a
one-line-per-node layout (no writer-layout input lines: the blocks are scanned again).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest
import support.wire_encoder as we

from pbtxt_scan.fpbp._body import FUNCTION_NODES
from pbtxt_scan.fpbp._bp_reach import _Reach
from pbtxt_scan._model import Block, Head
from pbtxt_scan.graph._paths import iter_blocks
from pbtxt_scan.fpbp._rules import Options, find_bp

RUNS = Path(__file__).parent / "data" / "bp_runs"
DEAD = "nothing that runs uses its result (TensorFlow prunes it)"
NET = "nothing that runs uses any"

# stem: (bp, its function, whether the safety net answers, what the old rule answered)
CASES = {
    "unused_saliency": ("gradients/MatMul_grad/MatMul_1", None, False, "gradients_1/MatMul_grad/Abs"),
    "control_only": ("gradients/MatMul_grad/MatMul_1", None, False, "gradients_1/MatMul_grad/Abs"),
    "all_unused": ("gradients/MatMul_grad/MatMul_1", None, True, "gradients/MatMul_grad/MatMul_1"),
    "function_unused_tape": (
        "gradient_tape/MatMul/MatMul_1", "__inference_train_step_7", False, "gradient_tape/MatMul/MatMul",
    ),
    "function_returns_gradient": (
        "gradient_tape/MatMul/MatMul", "__inference_train_step_7", True, "gradient_tape/MatMul/MatMul",
    ),
}
TOP_LEVEL = [k for k, v in CASES.items() if v[1] is None]


def _check(path: Path, stem: str) -> None:
    name, fn, net, _ = CASES[stem]
    ans = find_bp(path)
    assert ans.point is not None
    assert (ans.point.name, ans.point.function) == (name, fn)
    assert (NET in ans.reason) == net, ans.reason
    assert (NET in ans.trail[-1].why) == net
    if not net:
        assert ans.trail[-1].verdict == "chosen" and ans.trail[-1].name == name


@pytest.mark.parametrize("stem", sorted(CASES))
def test_text(stem):
    _check(RUNS / (stem + ".pbtxt"), stem)


def test_unused_chain_is_dead_not_just_its_last_op():
    ans = find_bp(RUNS / "unused_saliency.pbtxt")
    dead = [s.name for s in ans.trail if s.why == DEAD]
    assert dead == ["gradients_1/MatMul_grad/Abs", "gradients_1/MatMul_grad/MatMul", "gradients_1/grad_ys_0"]


def test_the_safety_net_says_what_it_passed():
    ans = find_bp(RUNS / "all_unused.pbtxt")
    assert [s.name for s in ans.trail if s.why == DEAD] == [
        "gradients/MatMul_grad/MatMul_1", "gradients/MatMul_grad/MatMul", "gradients/grad_ys_0",
    ]
    assert ans.trail[-1].verdict == "chosen"


@pytest.mark.parametrize("stem", sorted(CASES))
def test_rule_doc_is_unchanged(stem):
    ans = find_bp(RUNS / (stem + ".pbtxt"), Options(rule="doc"))
    assert ans.point is not None and ans.point.name == CASES[stem][3]
    assert all(s.why != DEAD for s in ans.trail)
    assert NET not in ans.reason and ans.trail[-1].why == "last op in a gradients scope that computes"


def _nodes(path: Path) -> Tuple[List[Block], List[Tuple[str, List[Block]]]]:
    top = list(iter_blocks(path, ("node",)))
    funcs: List[Tuple[str, List[Block]]] = []
    for b in iter_blocks(path, FUNCTION_NODES):
        fname = b.parents[-1] or "?"
        if not funcs or funcs[-1][0] != fname:
            funcs.append((fname, []))
        funcs[-1][1].append(b)
    return top, funcs


def _wire(b: Block) -> list:
    return we.node(b.name or "", b.op or "", b.inputs)


@pytest.mark.parametrize("stem", sorted(CASES))
def test_binary(tmp_path, stem):
    top, funcs = _nodes(RUNS / (stem + ".pbtxt"))
    out = tmp_path / (stem + ".pb")
    out.write_bytes(we.encode(we.graph([_wire(b) for b in top], [(f, [_wire(b) for b in bs]) for f, bs in funcs])))
    _check(out, stem)


def _ge_input(inp: str) -> str:
    return inp[1:] + ":-1" if inp.startswith("^") else (inp if ":" in inp else inp + ":0")


@pytest.mark.parametrize("stem", TOP_LEVEL)
def test_ge_dump(tmp_path, stem):
    top, _ = _nodes(RUNS / (stem + ".pbtxt"))
    text = 'graph {\n  name: "ge_default"\n'
    for b in top:
        text += '  op {\n    name: "%s"\n    type: "%s"\n' % (b.name, b.op)
        text += "".join('    input: "%s"\n' % _ge_input(i) for i in b.inputs)
        text += "  }\n"
    out = tmp_path / ("ge_proto_00000001_graph_1_Build.txt")
    out.write_text(text + "}\n")
    _check(out, stem)


def _one_line(b: Block) -> str:
    fields = [("name", b.name), ("op", b.op)] + [("input", i) for i in b.inputs]
    return " ".join("%s: %s" % (k, json.dumps(v)) for k, v in fields)


@pytest.mark.parametrize("stem", TOP_LEVEL)
def test_other_layout(tmp_path, stem):
    top, _ = _nodes(RUNS / (stem + ".pbtxt"))
    out = tmp_path / (stem + ".pbtxt")
    out.write_text("".join("node { %s }\n" % _one_line(b) for b in top))
    _check(out, stem)


def _blk(name: str, op: str, inputs: Sequence[str] = ()) -> Block:
    heads = (Head("name", name, 1), Head("op", op, 1)) + tuple(Head("input", i, 1) for i in inputs)
    return Block(("node",), 0, 0, 1, 1, heads)


def test_used_holds_only_gradients_names_not_yet_passed():
    live = _Reach(lambda b: b.inputs)
    init = _blk("init", "NoOp", ["^v%d/Assign" % i for i in range(1000)] + ["^gradients/a/tuple/group_deps"])
    assert live.visit(init, False)[0] and live.used == {"gradients/a/tuple/group_deps"}
    gd = _blk("gradients/a/tuple/group_deps", "NoOp", ["^gradients/a/Mul", "^gradients/a/Mul_1:0"])
    assert live.visit(gd, True)[0] and live.used == {"gradients/a/Mul", "gradients/a/Mul_1"}
    assert not live.visit(_blk("gradients_1/b/Mul", "Mul", ["gradients_1/c"]), True)[0]
    assert live.used == {"gradients/a/Mul", "gradients/a/Mul_1"}  # (a dead node adds nothing)
    assert live.visit(_blk("gradients/a/Mul", "Mul", ["x", "gradients/d:z:0"]), True)[0]
    assert live.used == {"gradients/a/Mul_1", "gradients/d"}
    # an update reaches its optimizer; its data inputs (not the state it writes) are marked so
    runs, labels = live.visit(_blk("sgd/update_w/ApplyGradientDescent", "ApplyGradientDescent", ["w", "lr", "gradients/a/Mul_1"]), False)
    assert runs and labels == {"sgd"} and live.reach["gradients/a/Mul_1"] == {"sgd"} and "w" not in live.reach
    assert live.visit(_blk("gradients/a/Mul_1", "Mul", ["gradients/e", "^gradients/f"]), True) == (True, {"sgd"})
    assert live.reach["gradients/e"] == {"sgd"} and not live.reach["gradients/f"]  # (control: runs, applies nothing)


@pytest.mark.parametrize("spelling", [
    r'"\147radients/MatMul_grad/tuple/control_dependency_1"',
    r'"gradi" "ents/MatMul_grad/tuple/control_dependency_1"',
    "'gr' \"adients/MatMul_grad/tuple/control_dependency_1\"",
    r'"gradie\156ts/MatMul_grad/tuple/control_dependency_1"',
])
def test_a_use_spelled_otherwise_is_seen(tmp_path, spelling):
    text = (RUNS / "unused_saliency.pbtxt").read_text()
    use = '"gradients/MatMul_grad/tuple/control_dependency_1"\n'
    assert text.count("  input: " + use) == 1  # (the optimizer's only use of the gradients)
    out = tmp_path / "g.pbtxt"
    out.write_text(text.replace("  input: " + use, "  input: " + spelling + "\n"))
    _check(out, "unused_saliency")


@pytest.mark.slow  # (over a second: the slow step runs it)
def test_past_a_dead_candidate_bp_reads_back_a_bounded_stretch(tmp_path):
    # A live gradient far before the dead ones: further back than the bound (as far again as the
    # read so far, at least _NET_BLOCKS blocks), so bp stops and answers the dead candidate, saying
    # why; the cost stays a bounded stretch, not the whole file (a graph whose gradients are
    # fetched, not consumed, would otherwise be read back to its start).
    from pbtxt_scan.fpbp import _bp_scan as _bp

    def node(name, op, *inputs):
        return "node {\n  name: \"%s\"\n  op: \"%s\"\n%s}\n" % (name, op, "".join('  input: "%s"\n' % i for i in inputs))

    far = node("x", "Placeholder") + node("gradients/far/MatMul", "MatMul", "x", "x") + node("w", "VariableV2") + node("apply", "ApplyGradientDescent", "w", "x", "gradients/far/MatMul")
    filler = "".join(node("f%d" % i, "Add", "x", "x") for i in range(_bp._NET_BLOCKS + 10))
    dead = node("gradients_1/a/MatMul", "MatMul", "x", "x") + node("gradients_1/b/MatMul", "MatMul", "gradients_1/a/MatMul", "x")
    g = tmp_path / "g.pbtxt"
    g.write_text(far + filler + dead)
    ans = find_bp(g)
    assert ans.point.name == "gradients_1/b/MatMul"
    assert any("the search stops" in s.why for s in ans.trail)
    # within the bound, the live one is found
    g.write_text(far + dead)
    assert find_bp(g).point.name == "gradients/far/MatMul"
