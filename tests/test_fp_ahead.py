"""fp reads only up to its answer: the byte search that replaces reading the rest never changes an
answer (fixtures, hostile spellings, random graphs); fp and bp agree on the step's body; placeholder
roles. See the ``_rules`` module docstring for the design.

The two tests on every fixture run the ten of ``support.data.QUICK_GRAPHS`` in the quick set (one
of each kind), all of them in CI's ``slow`` run."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.data import GRAPHS
from support.examples import examples
from support.graphs import _node
from support.layouts import _reprint
from support.marks import quick_graphs

from pbtxt_scan import GraphFile, parse_text
from pbtxt_scan.fpbp import _fp_scan, _needles
from pbtxt_scan.parallel import _grep
from pbtxt_scan.text._needles import judge_line
from pbtxt_scan.fpbp._rules import Options, find_bp, find_fp, placeholder_role, step_body

CASES = sorted(GRAPHS.glob("*.expected.json"))


def _key(ans):
    p = ans.point
    return p and (p.name, p.line, p.function, p.rule)


@pytest.mark.parametrize("case", quick_graphs(CASES), ids=lambda p: p.name.split(".")[0])
def test_byte_search_gives_the_answer_reading_everything_gives(case):
    graph = case.with_name(case.name.replace(".expected.json", ".pbtxt"))
    exp = json.loads(case.read_text())
    fast = find_fp(graph)
    slow = find_fp(graph, search=False)
    assert _key(fast) == _key(slow)
    assert fast.point and fast.point.name == exp["fp"]


@pytest.mark.parametrize("case", quick_graphs(CASES), ids=lambda p: p.name.split(".")[0])
def test_fp_and_bp_answer_from_the_same_body(case):
    # (unless the step calls its model as a function: fp is then in the forward function and bp
    # in the backward one, as the expected answers say)
    exp = json.loads(case.read_text())
    graph = case.with_name(case.name.replace(".expected.json", ".pbtxt"))
    fp, bp = find_fp(graph).point, find_bp(graph).point
    if fp is not None and bp is not None and exp["fp_function"] == exp["bp_function"]:
        assert fp.function == bp.function


def test_tf2_fixtures_exist_and_name_their_function():
    with_fn = [c for c in CASES if json.loads(c.read_text())["bp_function"]]
    assert len(with_fn) >= 3  # tf2_gradient_tape, keras_fit, keras_fit_steps_per_execution, npu_geop


@pytest.mark.parametrize("stem", ["placeholder_feed", "keras_style", "estimator_queue", "tf10_placeholders"])
@pytest.mark.parametrize("pointy", [False, True])
def test_byte_search_on_one_line_layouts(tmp_path, stem, pointy):
    # Every node on one line: the search cannot judge these lines and must fall back to reading.
    exp = json.loads((GRAPHS / (stem + ".expected.json")).read_text())
    alt = tmp_path / (stem + ".pbtxt")
    _reprint(GRAPHS / (stem + ".pbtxt"), alt, pointy)
    assert find_fp(alt).point.name == exp["fp"]


# --- hand-made graphs: a data source after the first op fed by a placeholder ------------------


# `w` a variable: where the data meets it the model begins. fp reads on past its first candidate
# for another copy of the model (at least _COPY_BUDGET blocks): the filler is longer than that, so
# what comes after it is found by the byte search.
HEAD = _node("x", '"Placeholder"', shape=[-1, 4]) + _node("w", '"VariableV2"') + _node("fed/MatMul", '"MatMul"', ["x", "w"])
FILLER = "".join(_node("pad/Add_%d" % i, '"Add"', ["w", "w"]) for i in range(_fp_scan._COPY_BUDGET + 100))
TAIL = _node("src/MatMul", '"MatMul"', ["it", "w"])


@pytest.mark.parametrize(
    "spelling",
    [
        '"IteratorGetNext"',
        '"Iterator\\107etNext"',  # octal escape of G
        '"Iterator\\x47etNext"',  # hex escape
        '"Iterator\\u0047etNext"',
        '"IteratorGetNe" "xt"',  # adjacent literals concatenate
        "'IteratorGetNext'",
        '"IteratorGet"\n    "Next"',  # ... across lines
        '"QueueDequeueV2"',
    ],
)
def test_a_later_data_source_wins_however_it_is_spelled(tmp_path, spelling):
    g = tmp_path / "g.pbtxt"
    g.write_text(HEAD + FILLER + _node("it", spelling) + TAIL)
    ans = find_fp(g)
    assert ans.point.name == "src/MatMul", ans.reason


def test_a_later_data_source_on_one_line(tmp_path):
    g = tmp_path / "g.pbtxt"
    g.write_text(HEAD + FILLER + 'node { name: "it" op: "IteratorGetNext" }\n' + TAIL)
    assert find_fp(g).point.name == "src/MatMul"


def test_names_that_merely_mention_a_data_source_do_not_stop_the_answer(tmp_path):
    g = tmp_path / "g.pbtxt"
    mention = _node("IteratorGetNext_copy", '"Identity"', ["w"]) + _node("q", '"Add"', ["IteratorGetNext_copy", "w"])
    g.write_text(HEAD + FILLER + mention)
    ans = find_fp(g)
    assert ans.point.name == "fed/MatMul"
    assert any("byte search" in s.why for s in ans.trail)  # it stopped at the answer, told by the search


def test_a_later_enqueue_turns_the_first_queue_into_a_pipeline_stage(tmp_path):
    g = tmp_path / "g.pbtxt"
    text = (
        _node("q1", '"FIFOQueueV2"')
        + _node("q1/Dequeue", '"QueueDequeueV2"', ["q1"])
        + _node("w", '"VariableV2"')
        + _node("c", '"Const"')
        + _node("pre/Mul", '"Mul"', ["q1/Dequeue", "c"])
        + FILLER
        + _node("q2", '"FIFOQueueV2"')
        + _node("q2/Enqueue", '"QueueEnqueueV2"', ["q2", "pre/Mul"])
        + _node("batch", '"QueueDequeueManyV2"', ["q2", "w"])
        + _node("model/MatMul", '"MatMul"', ["batch", "w"])
    )
    g.write_text(text)
    assert find_fp(g).point.name == "model/MatMul"


# --- property: the byte search never changes the answer ---------------------------------------

_OPS = ["Placeholder", "IteratorGetNext", "QueueDequeueV2", "QueueEnqueueV2", "MatMul", "Identity", "Const", "Add"]


@st.composite
def _graphs(draw):
    n = draw(st.integers(3, 14))
    nodes = []
    for i in range(n):
        op = draw(st.sampled_from(_OPS))
        k = draw(st.integers(0, min(2, i)))
        inputs = draw(st.lists(st.integers(0, i - 1), min_size=k, max_size=k)) if i else []
        shape = draw(st.sampled_from([None, [], [-1, 3]])) if op == "Placeholder" else None
        nodes.append(("n%d" % i, op, ["n%d" % j for j in inputs], shape))
    one_line = draw(st.booleans())
    return nodes, one_line


def _write(nodes, one_line):
    out = []
    for name, op, inputs, shape in nodes:
        if one_line:
            ins = " ".join('input: "%s"' % i for i in inputs)
            sh = ""
            if shape is not None:
                sh = ' attr { key: "shape" value { shape { %s } } }' % " ".join("dim { size: %d }" % d for d in shape)
            out.append('node { name: "%s" op: "%s" %s%s }\n' % (name, op, ins, sh))
        else:
            out.append(_node(name, '"%s"' % op, inputs, shape))
    return "".join(out)


@settings(max_examples=examples(0.1), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(g=_graphs(), rule=st.sampled_from(["auto", "dataflow"]))
@example(  # found by this test: an iterator met before a queue's op still feeds a later op, which wins
    g=(
        [("n0", "IteratorGetNext", [], None), ("n1", "QueueDequeueV2", [], None), ("n2", "Add", ["n1"], None)]
        + [("n%d" % i, "Placeholder", [], None) for i in range(3, 9)]
        + [("n9", "MatMul", ["n0"], None)],
        False,
    ),
    rule="auto",
)
def test_property_byte_search_agrees_with_reading_everything(tmp_path, g, rule):
    path = tmp_path / "g.pbtxt"
    path.write_text(_write(*g))
    opts = Options(rule=rule)
    fast = find_fp(path, opts)
    slow = find_fp(path, opts, search=False)
    assert _key(fast) == _key(slow)


# --- the pieces --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prev,line,nxt,want",
    [
        (b'  name: "a"', b'  op: "IteratorGetNext"', b'  input: "b"', ("IteratorGetNext", None)),
        (b'  name: "a"', b'  op: "Iterator\\107etNext"', b"  }", ("IteratorGetNext", None)),
        (b'  name: "a"', b'  op: "IteratorGet"', b'    "Next"', ("?", "?")),  # continued on the next line
        (b"node {", b'  name: "gradients/a/Mul"', b'  op: "Mul"', (None, "gradients/a/Mul")),
        (b"    node_def {", b'      name: "gradient_tape/a"', b'      op: "Mul"', (None, None)),
        (b'  op: "Mul"', b'  name: "gradients/a"', b"}", (None, "?")),  # name after op: cannot tell
        (b"node {", b'  input: "IteratorGetNext:1"', b"}", (None, None)),
        (b"", b'node { name: "it" op: "IteratorGetNext" }', b"", ("?", "?")),
        (b"  op {", b'    type: "ge:GetNext"', b"", ("GetNext", None)),
    ],
)
def test_judge_line(prev, line, nxt, want):
    assert judge_line(prev, line, nxt) == want


def test_step_body_is_the_top_level_when_it_holds_gradients():
    called = []
    assert step_body(True, lambda: called.append(1)) is None and not called
    assert step_body(False, lambda: ("f", [])) == ("f", [])
    assert step_body(False, lambda: None) is None


def _placeholder(shape_text, extra=""):
    text = 'node {\n  name: "p"\n  op: "Placeholder"\n  attr {\n    key: "dtype"\n    value {\n      type: DT_FLOAT\n    }\n  }\n'
    text += '  attr {\n    key: "shape"\n    value {\n      shape {\n%s      }\n    }\n  }\n%s}\n' % (shape_text, extra)
    return parse_text(text)[0].value


OUT_784 = (
    '  attr {\n    key: "_output_shapes"\n    value {\n      list {\n        shape {\n          dim {\n'
    "            size: -1\n          }\n          dim {\n            size: 784\n          }\n        }\n"
    "      }\n    }\n  }\n"
)
OUT_SCALAR = '  attr {\n    key: "_output_shapes"\n    value {\n      list {\n        shape {\n        }\n      }\n    }\n  }\n'


@pytest.mark.parametrize(
    "shape,extra,producer,holds",
    [
        ("", "", 22, False),  # scalar from version 22 on: a hyper-parameter
        ("", "", 1286, False),
        ("", "", None, False),  # no versions block found: today's meaning
        ("", "", 21, True),  # TF 1.0 era: empty shape = unknown
        ("", OUT_784, 21, True),
        ("", OUT_SCALAR, 21, False),  # the writer inferred a scalar
        ("        dim {\n          size: -1\n        }\n", "", 1286, True),
        ("        unknown_rank: true\n", "", 1286, True),
    ],
)
def test_placeholder_role(shape, extra, producer, holds):
    assert placeholder_role(_placeholder(shape, extra), producer)[0] is holds


def test_explain_says_what_a_tf2_functions_placeholders_are():
    trail = find_fp(GRAPHS / "tf2_gradient_tape.pbtxt").trail
    handles = [s for s in trail if s.name == "465"]
    assert handles and "resource handle" in handles[0].why and "scalar" not in handles[0].why


def test_grep_missing_gives_the_same_answers(tmp_path, monkeypatch):
    want = {c: _key(find_fp(c.with_name(c.name.replace(".expected.json", ".pbtxt")))) for c in CASES}
    monkeypatch.setenv("PATH", str(tmp_path))  # (an empty folder: no grep on the PATH)
    got = {c: _key(find_fp(c.with_name(c.name.replace(".expected.json", ".pbtxt")))) for c in CASES}
    assert got == want


@pytest.mark.slow  # the whole filler read block by block
def test_grep_that_fails_is_not_taken_for_no_match(tmp_path, monkeypatch):
    # A grep that exits 2 (bad option): the search must not be read as "nothing later".
    fake = tmp_path / "grep"
    fake.write_text("#!/bin/sh\nexit 2\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))  # (the fake is the only grep on the PATH)
    g = tmp_path / "g.pbtxt"
    g.write_text(HEAD + FILLER + _node("it", '"IteratorGetNext"') + TAIL)
    assert find_fp(g).point.name == "src/MatMul"


def test_no_library_no_grad_graph_still_answers(tmp_path):
    g = tmp_path / "g.pbtxt"
    g.write_text(HEAD)
    assert find_fp(g).point.name == "fed/MatMul"
    assert find_bp(g).point is None


def test_data_path():
    assert Path(GRAPHS).is_dir()


@pytest.mark.parametrize("cores", [2, 5])
@pytest.mark.parametrize("stem", ["mlp_sgd", "estimator_queue", "tf2_gradient_tape"])
def test_the_search_cut_in_parts_finds_what_one_search_finds(stem, cores):
    import shutil

    grep = shutil.which("grep")
    if grep is None:
        pytest.skip("no grep")
    g = GraphFile.open(str(GRAPHS / (stem + ".pbtxt")))
    pattern = _needles._pattern(_needles._OP_WORDS + _needles._GRAD_WORDS, ["library"])
    whole = list(_grep._grep_range(grep, g, 100, g.size, pattern))
    cut = list(_grep._grep(grep, g, 100, pattern, split=1000, cores=cores))  # (these files cut in parts, one a core)
    assert whole and cut == whole
    import threading

    threads = threading.active_count()
    stopped = _grep._grep(grep, g, 100, pattern)  # closed early: no process or thread left
    next(stopped)
    stopped.close()
    assert threading.active_count() == threads
    tasks = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else []  # (Linux)
    children = [t for t in tasks if os.path.exists("/proc/self/task/%s/children" % t)]
    assert all(not open("/proc/self/task/%s/children" % t).read().strip() for t in children)
    g.close()
