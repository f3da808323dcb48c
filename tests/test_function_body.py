"""The library function that holds the training step is read in bounded memory: only its blocks'
offsets are kept (``_body.FunctionBody``), and its blocks are read again forward (fp) or backward
(bp). Before, every block of the function was held: 308 MB peak on a 51 MB function."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pbtxt_scan.fpbp._body import FUNCTION_NODES, _Args, training_function
from pbtxt_scan.graph._input import GraphFile
from pbtxt_scan._model import Block, Head

DATA = Path(__file__).parent / "data"


def _function_graph(path: Path, n: int) -> None:
    """A TF2-style graph: the top level only calls the step; the step function holds ``n``
    forward MatMuls fed by its argument ``x``, then ``n`` gradient_tape MatMuls."""
    with path.open("w") as f:
        f.write('node {\n  name: "it"\n  op: "Placeholder"\n  attr {\n    key: "dtype"\n    value {\n      type: DT_RESOURCE\n    }\n  }\n}\n')
        f.write('node {\n  name: "call"\n  op: "StatefulPartitionedCall"\n  input: "it"\n}\n')
        f.write('library {\n  function {\n    signature {\n      name: "__inference_step_1"\n'
                '      input_arg {\n        name: "x"\n        type: DT_FLOAT\n      }\n    }\n')
        prev = "x"
        for scope in ("", "gradient_tape/"):
            for i in range(n):
                name = "%sdense_%d/MatMul" % (scope, i)
                f.write('    node_def {\n      name: "%s"\n      op: "MatMul"\n      input: "%s"\n      input: "w%d:output:0"\n'
                        '      attr {\n        key: "T"\n        value {\n          type: DT_FLOAT\n        }\n      }\n    }\n'
                        % (name, prev, i))
                prev = name + ":product:0"
        f.write('  }\n}\nversions {\n  producer: 1000\n}\n')


_RSS = r"""
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
sys.stdout.write("%d %d %s" % (p.returncode, rss, p.stdout.decode().strip()))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KiB: Linux")
@pytest.mark.slow  # a 26 MB graph, two measured processes
def test_a_large_step_function_is_read_in_bounded_memory(tmp_path: Path) -> None:
    g = tmp_path / "fn.pbtxt"
    _function_graph(g, 50000)  # 26 MB: the old code held ~160 MB of blocks
    env = dict(os.environ)  # (the cache folder: tmp_path / "cache", conftest.py)
    want = {"fp": "dense_0/MatMul", "bp": "gradient_tape/dense_49999/MatMul"}
    for cmd, answer in want.items():
        p = subprocess.run([sys.executable, "-c", _RSS, sys.executable, "-m", "pbtxt_scan", cmd, str(g)],
                           capture_output=True, text=True, env=env, timeout=300)
        code, rss, out = p.stdout.split(" ", 2)
        assert (int(code), out) == (0, answer)
        assert int(rss) < 100 * 1024, "%s: %d MB" % (cmd, int(rss) >> 10)


@pytest.mark.parametrize("stem", ["keras_fit", "keras_fit_steps_per_execution", "keras2_fit_steps_per_execution", "tf2_gradient_tape", "npu_geop"])
def test_the_body_hands_out_the_functions_blocks_in_both_directions(stem: str) -> None:
    path = DATA / "graphs" / (stem + ".pbtxt")
    if not path.exists():
        pytest.skip("no %s" % stem)
    with GraphFile.open(str(path)) as g:
        body = training_function(g)
        assert body is not None
        held = [b for b in g.blocks(FUNCTION_NODES) if b.parents[-1] == body.name]
        assert held and len(body) == len(held)
        assert list(body.blocks()) == [b._replace(parents=(None, body.name)) for b in held]
        assert list(body.reversed_blocks()) == [b._replace(parents=(None, body.name)) for b in reversed(held)]


def _node(name: str, *inputs: str) -> Block:
    heads = (Head("name", name, 1),) + tuple(Head("input", i, 1) for i in inputs)
    return Block(FUNCTION_NODES, 0, 1, 1, 1, heads)


def test_a_bare_input_is_an_argument_unless_a_node_bears_its_name() -> None:
    a = _Args()
    for b in [_node("early"), _node("m", "x", "early", "^ctl", "w:output:0"), _node("late_user", "late"), _node("late")]:
        a.add(b)
    assert a.result() == {"x"}


def test_a_body_that_names_its_nodes_bare_has_no_arguments_past_the_cap() -> None:
    a = _Args(cap=4)
    for i in range(10):  # graph-style: every input names a node bare, far more than the cap
        a.add(_node("n%d" % i, "src%d" % i))
    assert a.result() == frozenset()
    few = _Args()
    few.add(_node("n", "x", "y"))
    assert few.result() == {"x", "y"}
