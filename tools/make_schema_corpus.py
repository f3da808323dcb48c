#!/usr/bin/env python3
"""Record the schema corpus (``tests/data/schema/cases.json``) with TensorFlow's own parser (a
maintainer tool: run it where TensorFlow is installed, never in the project's environment).

    python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu==2.21.0
    /tmp/tfvenv/bin/python tools/make_schema_corpus.py

Each case is one change to a real fixture graph (``tests/data/graphs``, or a base of
``tests/data/schema``): on one line, at a column, the text cut and the text put (which may hold
line breaks). The script applies it,
runs ``google.protobuf.text_format.Parse`` into the base's message type (``GraphDef``, or
``SavedModel``), and records the verdict: accepted, or refused with protobuf's line, column and
message. ``tests/test_schema.py`` applies the same changes and runs pbtxt-scan's validator; it
needs no TensorFlow. ``near`` is the name a did-you-mean must give for a misspelt field or enum.
"""
import json
import os
import re
import sys

from google.protobuf import text_format
from tensorflow.core.framework import graph_pb2
from tensorflow.core.protobuf import saved_model_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, os.pardir, "tests", "data")
OUT = os.path.join(DATA, "schema", "cases.json")
ROOTS = {"GraphDef": graph_pb2.GraphDef, "SavedModel": saved_model_pb2.SavedModel}

# (base, root, the kind of change, a regex for the line, which match (0: the first), the line it becomes
# (``\1``... the regex's groups), the did-you-mean expected or "")
G, T, I, S, B = "graphs/mlp_sgd.pbtxt", "graphs/tf2_gradient_tape.pbtxt", "graphs/inference_no_gradients.pbtxt", "schema/saved_model_any.pbtxt", "graphs/batchnorm_conv.pbtxt"
CASES = [
    # misspelt field names, at every depth
    (G, "GraphDef", "unknown_field", r"^node \{$", 0, "nod {", "node"),
    (G, "GraphDef", "unknown_field", r"^node \{$", 40, "Node {", "node"),
    (G, "GraphDef", "unknown_field", r"^(  )name: (.*)$", 0, r"\1nme: \2", "name"),
    (G, "GraphDef", "unknown_field", r"^(  )op: (.*)$", 7, r"\1opp: \2", "op"),
    (G, "GraphDef", "unknown_field", r"^(  )input: (.*)$", 3, r"\1inputs: \2", "input"),
    (G, "GraphDef", "unknown_field", r"^(  )attr \{$", 5, r"\1atr {", "attr"),
    (G, "GraphDef", "unknown_field", r"^(    )key: (.*)$", 2, r"\1kye: \2", "key"),
    (G, "GraphDef", "unknown_field", r"^(    )value \{$", 4, r"\1vale {", "value"),
    (G, "GraphDef", "unknown_field", r"^(      )type: (.*)$", 1, r"\1tpye: \2", "type"),
    (G, "GraphDef", "unknown_field", r"^(        )dtype: (.*)$", 0, r"\1dtpye: \2", "dtype"),
    (G, "GraphDef", "unknown_field", r"^(        )tensor_shape \{$", 0, r"\1tensor_shap {", "tensor_shape"),
    (G, "GraphDef", "unknown_field", r"^(\s+)size: (.*)$", 0, r"\1szie: \2", "size"),
    (G, "GraphDef", "unknown_field", r"^(\s+)dim \{$", 0, r"\1dims {", "dim"),
    (G, "GraphDef", "unknown_field", r"^(\s+)producer: (.*)$", 0, r"\1prodcer: \2", "producer"),
    (G, "GraphDef", "unknown_field", r"^versions \{$", 0, "version {", ""),
    (G, "GraphDef", "unknown_field", r"^(  )device: (.*)$", 0, r"\1devise: \2", "device"),
    (G, "GraphDef", "unknown_field", r"^(\s+)tensor_content: (.*)$", 0, r"\1tensor_contents: \2", "tensor_content"),
    (G, "GraphDef", "unknown_field", r"^(\s+)list \{$", 0, r"\1lst {", "list"),
    (G, "GraphDef", "unknown_field", r"^(  )name: (.*)$", 3, r"\1Name: \2", "name"),
    (G, "GraphDef", "unknown_field", r"^(  )op: (.*)$", 2, r"\1xyz: \2", ""),
    (T, "GraphDef", "unknown_field", r"^library \{$", 0, "libary {", "library"),
    (T, "GraphDef", "unknown_field", r"^(  )function \{$", 0, r"\1functions {", "function"),
    (T, "GraphDef", "unknown_field", r"^(    )signature \{$", 0, r"\1signture {", "signature"),
    (T, "GraphDef", "unknown_field", r"^(      )input_arg \{$", 0, r"\1input_ag {", "input_arg"),
    (T, "GraphDef", "unknown_field", r"^(    )node_def \{$", 1, r"\1nodedef {", "node_def"),
    (T, "GraphDef", "unknown_field", r"^(      )op: (.*)$", 3, r"\1ops: \2", "op"),
    (T, "GraphDef", "unknown_field", r"^(    )ret \{$", 0, r"\1rets {", "ret"),
    (T, "GraphDef", "unknown_field", r"^(        )type: (.*)$", 0, r"\1typ: \2", "type"),
    # wrong scalar types
    (G, "GraphDef", "scalar_type", r"^(  )op: (.*)$", 0, r"\1op: 5", ""),
    (G, "GraphDef", "scalar_type", r"^(  )op: \"(.*)\"$", 1, r"\1op: \2", ""),
    (G, "GraphDef", "scalar_type", r"^(  )name: (.*)$", 5, r"\1name: true", ""),
    (G, "GraphDef", "scalar_type", r"^(  )input: (.*)$", 0, r"\1input: 1.5", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)size: (\d+)$", 0, r'\1size: "\2"', ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)size: (\d+)$", 1, r"\1size: \2.5", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)size: (\d+)$", 2, r"\1size: \2f", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)size: (\d+)$", 3, r"\1size: 1e3", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)size: (\d+)$", 4, r"\1size: inf", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)producer: (\d+)$", 0, r'\1producer: "\2"', ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)s: \"(.*)\"$", 0, r"\1s: 5", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)s: \"(.*)\"$", 1, r"\1s: loc", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)int64_val: (\d+)$", 0, r'\1int64_val: "\2"', ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)b: (false|true)$", 0, r'\1b: "\2"', ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)b: (false|true)$", 1, r"\1b: maybe", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)b: (false|true)$", 2, r"\1b: 2", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)b: (false|true)$", 3, r"\1b: TRUE", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)b: (false|true)$", 4, r"\1b: 1.0", ""),
    (B, "GraphDef", "scalar_type", r"^(\s+)f: (.*)$", 0, r'\1f: "0.5"', ""),
    (B, "GraphDef", "scalar_type", r"^(\s+)f: (.*)$", 1, r"\1f: 0x10", ""),
    (B, "GraphDef", "scalar_type", r"^(\s+)f: (.*)$", 2, r"\1f: infinite", ""),
    (B, "GraphDef", "scalar_type", r"^(\s+)f: (.*)$", 3, r"\1f: 010", ""),
    (G, "GraphDef", "scalar_type", r"^(\s+)float_val: (.*)$", 0, r"\1float_val: true", ""),
    (G, "GraphDef", "scalar_type", r"^(  )name: \"(.*)\"$", 6, r'\1name: "\\xff\2"', ""),
    # integer ranges
    (G, "GraphDef", "range", r"^(\s+)producer: (\d+)$", 0, r"\1producer: 4294967297", ""),
    (G, "GraphDef", "range", r"^(\s+)producer: (\d+)$", 0, r"\1producer: 2147483648", ""),
    (G, "GraphDef", "range", r"^(\s+)producer: (\d+)$", 0, r"\1producer: -2147483649", ""),
    (G, "GraphDef", "range", r"^(\s+)size: (\d+)$", 5, r"\1size: 9223372036854775808", ""),
    (G, "GraphDef", "range", r"^(\s+)size: (\d+)$", 6, r"\1size: -9223372036854775809", ""),
    (G, "GraphDef", "range", r"^(\s+)int64_val: (\d+)$", 0, r"\1int64_val: 18446744073709551616", ""),
    (G, "GraphDef", "range", r"^(\s+)int_val: (\d+)$", 0, r"\1int_val: 2147483648", ""),
    # enums
    (G, "GraphDef", "enum", r"^(\s+)type: DT_FLOAT$", 0, r"\1type: DT_FLAOT", "DT_FLOAT"),
    (G, "GraphDef", "enum", r"^(\s+)type: DT_FLOAT$", 1, r"\1type: dt_float", "DT_FLOAT"),
    (G, "GraphDef", "enum", r"^(\s+)type: DT_INT64$", 0, r"\1type: DT_INT46", "DT_INT64"),
    (G, "GraphDef", "enum", r"^(\s+)dtype: DT_(\w+)$", 0, r"\1dtype: DT_INT", "DT_INT8"),
    (G, "GraphDef", "enum", r"^(\s+)type: DT_FLOAT$", 2, r'\1type: "DT_FLOAT"', ""),
    (G, "GraphDef", "enum", r"^(\s+)type: DT_FLOAT$", 3, r"\1type: DT_FLOAT_REFF", "DT_FLOAT_REF"),
    (G, "GraphDef", "enum", r"^(\s+)type: DT_FLOAT$", 4, r"\1type: 1.0", ""),
    (G, "GraphDef", "enum", r"^(\s+)type: DT_FLOAT$", 5, r"\1type: 2147483648", ""),
    # a singular field twice
    (G, "GraphDef", "duplicate", r"^(  )op: (.*)$", 3, r"\1op: \2\n\1op: \2", ""),
    (G, "GraphDef", "duplicate", r"^(  )name: (.*)$", 4, r'\1name: \2\n\1name: "again"', ""),
    (G, "GraphDef", "duplicate", r"^(    )key: (.*)$", 6, r'\1key: \2\n\1key: "again"', ""),
    (G, "GraphDef", "duplicate", r"^(      )type: (.*)$", 6, r"\1type: \2\n\1type: \2", ""),
    (G, "GraphDef", "duplicate", r"^(\s+)producer: (.*)$", 0, r"\1producer: \2\n\1producer: 3", ""),
    (G, "GraphDef", "duplicate", r"^(      )shape \{$", 0, r"\1shape {\n\1}\n\1shape {", ""),
    (G, "GraphDef", "duplicate", r"^(    )value \{$", 8, r"\1value {\n\1}\n\1value {", ""),
    (G, "GraphDef", "duplicate", r"^versions \{$", 0, "versions {\n}\nversions {", ""),
    (G, "GraphDef", "duplicate", r"^(\s+)size: (\d+)$", 7, r"\1size: \2\n\1size: 5", ""),
    # two members of a oneof
    (G, "GraphDef", "oneof", r"^(      )type: (.*)$", 8, r"\1type: \2\n\1i: 1", ""),
    (G, "GraphDef", "oneof", r"^(      )s: (.*)$", 0, r"\1s: \2\n\1b: true", ""),
    (G, "GraphDef", "oneof", r"^(      )list \{$", 1, r"\1i: 3\n\1list {", ""),
    (G, "GraphDef", "oneof", r"^(      )shape \{$", 1, r"\1f: 1.5\n\1shape {", ""),
    # a scalar where a message is due, and the reverse
    (G, "GraphDef", "kind", r"^(      )shape \{$", 2, r"\1shape: 3\n\1unused {", ""),
    (G, "GraphDef", "kind", r"^(    )value \{$", 10, r"\1value: 5\n\1unused {", ""),
    (G, "GraphDef", "kind", r"^(  )op: (.*)$", 4, r"\1op {\n\1}", ""),
    (G, "GraphDef", "kind", r"^(  )op: (.*)$", 5, r"\1op: {\n\1}", ""),
    (G, "GraphDef", "kind", r"^(  )name: (.*)$", 7, r"\1name: [\2]", ""),
    (G, "GraphDef", "kind", r"^(\s+)tensor_shape \{$", 1, r'\1tensor_shape: "x"\n\1unused {', ""),
    (G, "GraphDef", "kind", r"^(\s+)s: (.*)$", 2, r"\1s {\n\1}", ""),
    # Any and extensions
    (S, "SavedModel", "any", r"^(\s+)\[type\.googleapis\.com/tensorflow\.VersionDef\] \{$", 0,
     r"\1[type.googleapis.com/tensorflow.VersionDf] {", ""),
    (S, "SavedModel", "any", r"^(\s+)producer: (.*)$", 0, r"\1producr: \2", "producer"),
    (S, "SavedModel", "any", r"^(\s+)producer: (.*)$", 0, r"\1producer: x", ""),
    (G, "GraphDef", "extension", r"^(  )op: (.*)$", 6, r"\1[tensorflow.op]: \2", ""),
    # controls: forms TensorFlow accepts
    (G, "GraphDef", "control", r"^node \{$", 3, "node {", ""),
    (G, "GraphDef", "control", r"^(\s+)type: DT_FLOAT$", 0, r"\1type: 1", ""),
    (G, "GraphDef", "control", r"^(\s+)type: DT_FLOAT$", 1, r"\1type: 0x1", ""),
    (G, "GraphDef", "control", r"^(\s+)type: DT_FLOAT$", 2, r"\1type: 1000", ""),
    (G, "GraphDef", "control", r"^(\s+)type: DT_FLOAT$", 3, r"\1type: -1", ""),
    (G, "GraphDef", "control", r"^(  )attr \{$", 0, r"\1attr: {", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 0, r"\1f: 1.5f", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 1, r"\1f: inf", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 2, r"\1f: -inf", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 3, r"\1f: nan", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 4, r"\1f: 1e5", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 5, r"\1f: 5", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 6, r"\1f: Infinity", ""),
    (B, "GraphDef", "control", r"^(\s+)f: (.*)$", 7, r"\1f: -2.5E-3F", ""),
    (G, "GraphDef", "control", r"^(\s+)b: (false|true)$", 0, r"\1b: t", ""),
    (G, "GraphDef", "control", r"^(\s+)b: (false|true)$", 1, r"\1b: f", ""),
    (G, "GraphDef", "control", r"^(\s+)b: (false|true)$", 2, r"\1b: 1", ""),
    (G, "GraphDef", "control", r"^(\s+)b: (false|true)$", 3, r"\1b: True", ""),
    (G, "GraphDef", "control", r"^(\s+)b: (false|true)$", 4, r"\1b: 0", ""),
    (G, "GraphDef", "control", r"^(\s+)size: (\d+)$", 0, r"\1size: 0x10", ""),
    (G, "GraphDef", "control", r"^(\s+)size: (\d+)$", 1, r"\1size: 010", ""),
    (G, "GraphDef", "control", r"^(\s+)size: (\d+)$", 2, r"\1size: -9223372036854775808", ""),
    (G, "GraphDef", "control", r"^(\s+)producer: (\d+)$", 0, r"\1producer: 2147483647", ""),
    (G, "GraphDef", "control", r"^(  )input: (.*)$", 0, r"\1input: [\2, \2]", ""),
    (G, "GraphDef", "control", r"^(  )op: (.*)$", 0, r"\1op: \2;  # a comment", ""),
    (G, "GraphDef", "control", r"^(  )op: (.*)$", 1, r'\1op: "" "Const"', ""),
    (G, "GraphDef", "control", r"^(  )name: (.*)$", 1, r'\1name: ""\n\1name: \2', ""),
    (G, "GraphDef", "control", r"^(\s+)s: \"(.*)\"$", 0, r'\1s: "\\xff\2"', ""),
    (G, "GraphDef", "control", r"^(\s+)int64_val: (\d+)$", 0, r"\1int64_val: [1, 2, 3]", ""),
    (G, "GraphDef", "control", r"^(      )list \{$", 0, r"\1list {\n\1  i: []", ""),
    (G, "GraphDef", "control", r"^(      )shape \{$", 0, r"\1shape {\n\1  unknown_rank: f", ""),
    (S, "SavedModel", "control", r"^(\s+)producer: (.*)$", 0, r"\1producer: 9", ""),
    (I, "GraphDef", "control", r"^node \{$", 0, "node {", ""),
    (T, "GraphDef", "control", r"^library \{$", 0, "library {", ""),
]


def _edit(old, new):
    """The change of one line, compactly: at ``column`` (0-based), ``cut`` becomes ``put``."""
    a = 0
    while a < min(len(old), len(new)) and old[a] == new[a]:
        a += 1
    b = 0
    while b < min(len(old), len(new)) - a and old[-1 - b] == new[-1 - b]:
        b += 1
    return {"column": a, "cut": old[a:len(old) - b], "put": new[a:len(new) - b]}


def parse(text, root):
    try:
        text_format.Parse(text, ROOTS[root]())
        return {"accept": True}
    except text_format.ParseError as e:
        msg = str(e)
        msg = re.sub(r"^\d+:\d+ : ", "", msg)
        msg = re.sub(r"^'.*?': ", "", msg) if msg.startswith("'") else msg
        return {"accept": False, "line": e.GetLine(), "column": e.GetColumn(), "message": msg}
    except (ValueError, TypeError) as e:  # a value protobuf's parser took but the message refused
        return {"accept": False, "line": None, "column": None, "message": "%s: %s" % (type(e).__name__, e)}


def main():
    out = []
    texts = {}
    for n, (base, root, kind, pattern, which, becomes, near) in enumerate(CASES):
        if base not in texts:
            with open(os.path.join(DATA, base), encoding="utf-8") as f:
                texts[base] = f.read()
            assert parse(texts[base], root) == {"accept": True}, base
        lines = texts[base].split("\n")
        rx = re.compile(pattern)
        hits = [i for i, line in enumerate(lines) if rx.match(line)]
        if not hits:
            print("%s: no line matches %s: left out" % (base, pattern), file=sys.stderr)
            continue
        i = hits[which % len(hits)]
        new = rx.sub(becomes, lines[i])
        changed = lines[:i] + [new] + lines[i + 1:]
        verdict = parse("\n".join(changed), root)
        out.append({"id": "%03d_%s" % (n, kind), "base": base, "root": root, "kind": kind, "line": i + 1}
                   | _edit(lines[i], new) | {"near": near, "tf": verdict})
        print(out[-1]["id"], verdict, file=sys.stderr)
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        json.dump({"recorded_with": "tensorflow-cpu 2.21.0, protobuf %s, text_format.Parse" % __import__("google.protobuf").protobuf.__version__,
                   "cases": out}, f, indent=1, ensure_ascii=True)
        f.write("\n")


if __name__ == "__main__":
    main()
