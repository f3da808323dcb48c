"""Kind ``queues``: many input pipelines. The real Estimator graph
``tests/data/graphs/estimator_queue.pbtxt`` (``slice_input_producer`` and ``train.batch`` FIFO queues,
resource variables, a ``library`` of ``If`` branches, written by TensorFlow 2.15), its node blocks
written once as they are and then again and again under renamed scopes, the way
``tf.import_graph_def(graph_def, name="copy_K")`` names them: every node name, every input
(``X``, ``X:1``, ``^X``) and every colocation (``loc:@X``) gets the prefix ``copy_K/``. So every copy
has its own ``input_producer`` and ``batch`` queues, enqueues, variables and gradients. The fixture's
``library`` and ``versions`` follow once, at the end, as TensorFlow prints them.

fp's answer is the fixture's own (copy 0 comes first, unrenamed, and its gradients are the ones named
``gradients/<op>_grad/``); bp's is the last copy's. Byte for byte what TensorFlow wrote, with names
longer by the prefix; ``seed`` changes nothing (the bytes are TensorFlow's). Standard library only.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, NamedTuple

from ._stamp import Tmpl, Writer

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "graphs",
                       "estimator_queue.pbtxt")
# The fields that name a top-level node, as TensorFlow's printer writes them: a node's ``name`` and
# ``input`` (2 spaces in), and the ``loc:@`` colocation entries of its ``_class`` attr (any depth).
_NAMES = re.compile(r'^(  name: "|  input: "\^?|\s+s: "loc:@)', re.M)
PREFIX = "copy_%d/"


class Fixture(NamedTuple):
    """The fixture split as TensorFlow printed it: the node blocks (a template whose ``@@P@@`` is a
    copy's scope prefix), the tail (``library`` and ``versions``) and the expected answer."""

    nodes: Tmpl
    tail: bytes
    expected: Dict[str, Any]


def load(path: str = FIXTURE) -> Fixture:
    with open(path, encoding="ascii") as f:
        text = f.read()
    cut = text.index("\nlibrary {\n") + 1
    body = _NAMES.sub(lambda m: m.group(1) + "@@P@@", text[:cut])
    with open(path[: -len(".pbtxt")] + ".expected.json", encoding="utf-8") as f:
        expected = json.load(f)
    return Fixture(Tmpl(body), text[cut:].encode("ascii"), expected)


def write(w: Writer, size: int, seed: int) -> Dict[str, Any]:
    fx = load()
    copies = 0
    while copies == 0 or w.bytes + len(fx.tail) < size:
        w.put(fx.nodes, {b"p": (PREFIX % copies).encode("ascii") if copies else b""})
        copies += 1
    w.f.write(fx.tail)
    w.bytes += len(fx.tail)
    w.lines += fx.tail.count(b"\n")
    e = fx.expected
    last = PREFIX % (copies - 1) if copies > 1 else ""
    return {"copies": copies, "expected": {
        "fp": e["fp"], "fp_line": e["fp_line"],
        "bp": last + e["bp"], "bp_line": (copies - 1) * fx.nodes.nlines + e["bp_line"]}}
