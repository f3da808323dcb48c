"""The ``copies`` shape of the ``binary`` kind: a real transformer training graph followed by renamed
copies of its nodes, as concatenated GraphDef messages, and its text twin (the same nodes).

The graph is ``tests/data/graphs/bert_unused_feature.pbtxt``, written by ``tf.io.write_graph``
(tensorflow-cpu 2.15.1, see ``tests/data/README.md``): BERT's embeddings and an encoder layer fed by
a tf.data iterator, with its Adam step, saver and the dataset factory in ``library``. It is
written whole (nodes, ``library``, ``versions``), then copy 1, 2, ... of its nodes only, each node
named ``copy_<k>/<name>`` and every reference renamed with it (``input``, ``^`` control inputs,
``loc:@`` colocation). In the wire format each copy is one more GraphDef message appended: the
concatenation of serialized messages is their merge, so the file parses as one GraphDef (what
``cat a.pb b.pb`` of two ``SerializeToString`` outputs gives). Every copy holds a data source
(``copy_<k>/IteratorGetNext``), placeholders and a gradients scope, so a reader that follows the
answer must tell those later nodes cannot change it without reading them.

The binary file is compiled from the text by ``binary``'s line compiler (the writer layout has one
field per line), so the two are the same graph; ``twin=PATH`` writes the text twin. Deterministic:
the fixture is fixed and nothing is drawn at random (``seed`` is recorded only).
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Dict, Optional, Tuple

from ._stamp import Tmpl, Writer, slot_values

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRAPH = os.path.join(_ROOT, "tests", "data", "graphs", "bert_unused_feature.pbtxt")
PREFIX = "copy_@@K@@/"

# The writer layout's reference lines: a top-level node's name (2 spaces), its inputs, and the
# colocation strings of ``_class`` (``loc:@NAME``); nothing else names a node.
_NAME = re.compile(r'^(  name: ")', re.M)
_INPUT = re.compile(r'^(  input: "\^?)', re.M)
_LOC = re.compile(r'^( +s: "loc:@)', re.M)


def _split(text: str) -> Tuple[str, str]:
    """The graph's top-level nodes, and what follows them (``library``, ``versions``)."""
    i = text.find("\nlibrary {\n")
    if i < 0:
        i = text.find("\nversions {\n")
    return text[: i + 1], text[i + 1 :]


def copy_template(nodes: str) -> Tmpl:
    """The nodes renamed into ``copy_@@K@@/``: a template stamped with the copy's number."""
    t = _NAME.sub(r"\g<1>" + PREFIX, nodes)
    t = _INPUT.sub(r"\g<1>" + PREFIX, t)
    return Tmpl(_LOC.sub(r"\g<1>" + PREFIX, t))


class _Pair:
    """The binary writer and, for the twin, the text writer, fed the same templates."""

    __slots__ = ("wire", "text")

    def __init__(self, wire: Any, text: Optional[Writer]) -> None:
        self.wire = wire
        self.text = text

    def put(self, t: Tmpl, vals: Optional[Dict[bytes, bytes]] = None) -> int:
        self.wire.put(t, vals)
        return self.text.put(t, vals) if self.text is not None else 0


def write(wire: Any, size: int, text: Optional[Writer] = None) -> Dict[str, Any]:
    """The graph, then copies of its nodes until ``wire`` holds about ``size`` bytes; the answers
    (from the fixture's ``expected.json``: fp stays in the first graph, bp is the last copy's)."""
    with open(GRAPH, encoding="ascii") as f:
        whole = f.read()
    with open(GRAPH.replace(".pbtxt", ".expected.json"), encoding="utf-8") as f:
        exp = json.load(f)
    nodes, _tail = _split(whole)
    out = _Pair(wire, text)
    out.put(Tmpl(whole))
    t = copy_template(nodes)
    bp_in = t.line_of('  name: "%s%s"\n' % (PREFIX, exp["bp"]))
    k = 0
    start = 0
    while wire.bytes < size:
        k += 1
        start = out.put(t, slot_values(k=k))
    e = {"fp": exp["fp"], "fp_line": exp["fp_line"], "bp": exp["bp"], "bp_line": exp["bp_line"]}
    if k:
        e["bp"] = "copy_%d/%s" % (k, exp["bp"])
        e["bp_line"] = start + bp_in
    return {"copies": k, "graph": os.path.relpath(GRAPH, _ROOT), "expected": e}
