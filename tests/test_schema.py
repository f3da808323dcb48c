"""The schema validator agrees with TensorFlow's own parser.

``tests/data/schema/cases.json`` holds one change each to real fixture graphs (a misspelt field at
every depth, wrong scalar types, ranges, enum names and numbers, a singular field twice, two
members of a oneof, a scalar where a message is due and the reverse, Any and extensions) and
controls TensorFlow accepts, each with TensorFlow 2.21's verdict (``text_format.Parse``, recorded
once by ``tools/make_schema_corpus.py``; no TensorFlow here). The validator must accept and refuse
the same, refuse at the same line, and name the right field or enum value for a misspelt one.

That no real graph gets a false alarm is checked on the ten of ``support.data.QUICK_GRAPHS`` in
the quick set (one of each kind), on all 42 in CI's ``slow`` run.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from support.marks import quick_graphs

from pbtxt_scan.language._grammar import _lark, string_value
from pbtxt_scan.schema import Checker, Problem, check_tokens, default_schema

DATA = Path(__file__).parent / "data"
CORPUS = json.loads((DATA / "schema" / "cases.json").read_text(encoding="utf-8"))
CASES: List[Dict[str, Any]] = CORPUS["cases"]
ROOTS = {"GraphDef": "tensorflow.GraphDef", "SavedModel": "tensorflow.SavedModel"}


def tokens(text: str) -> Iterator[Any]:
    """The text's tokens as the checker takes them, lexed as the checker asks for them: a check that
    stops at its ``limit`` of problems leaves the rest of the text unlexed."""
    return ((t.type, str(t), t.line, t.column) for t in _lark(False).lex(text) if t.type not in ("WS", "COMMENT"))


def check(text: str, root: str = "tensorflow.GraphDef", limit: int = 1000) -> List[Problem]:
    return check_tokens(tokens(text), Checker(root, limit=limit), decode=string_value)


@functools.lru_cache(maxsize=None)
def base_lines(base: str) -> List[str]:
    return (DATA / base).read_text(encoding="utf-8").split("\n")


def changed(case: Dict[str, Any]) -> str:
    lines = list(base_lines(case["base"]))
    i, col, cut = case["line"] - 1, case["column"], case["cut"]
    assert lines[i][col : col + len(cut)] == cut, "the fixture changed under the corpus: re-record it"
    lines[i] = lines[i][:col] + case["put"] + lines[i][col + len(cut) :]
    return "\n".join(lines)


def test_the_corpus_has_every_kind_of_change() -> None:
    kinds = {c["kind"] for c in CASES}
    assert kinds >= {"unknown_field", "scalar_type", "range", "enum", "duplicate", "oneof", "kind", "any", "extension", "control"}
    assert sum(c["tf"]["accept"] for c in CASES) >= 20 and sum(not c["tf"]["accept"] for c in CASES) >= 80


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_the_validator_agrees_with_tensorflow(case: Dict[str, Any]) -> None:
    text = changed(case)
    problems = check(text, ROOTS[case["root"]], limit=1)
    tf = case["tf"]
    if tf["accept"]:
        assert problems == [], "TensorFlow accepts this"
        return
    assert problems, "TensorFlow refuses this: %s" % tf["message"]
    if tf["line"] is not None:
        assert problems[0].line == tf["line"], (problems[0], tf)
    said = tf["message"].replace("ValueError: ", "")  # (a value the message refused: no position)
    assert problems[0].message.startswith(said.rstrip(".")), (problems[0], tf)
    if case["near"]:
        said = problems[0].message
        assert 'Did you mean "%s"?' % case["near"] in said or "Did you mean %s?" % case["near"] in said, said


def test_the_fixtures_as_they_are_are_valid() -> None:
    for base in sorted({c["base"] for c in CASES}):
        root = "tensorflow.SavedModel" if "saved_model_any" in base else "tensorflow.GraphDef"
        assert check("\n".join(base_lines(base)), root) == [], base


# --- property: a random well-formed GraphDef from the table is accepted; one violation is refused at its line


_VALUES = {
    "int": ["1", "42", "0x1F", "017", "-7"],
    "uint": ["1", "42", "0x1F", "4294967295"],
    "float": ["1.5", "2", "1e3", "inf", "-2.5f", "nan", "-inf"],
    "bool": ["true", "t", "True", "1"],
    "string": ['"abc"', "'x/y:0'", '"a" "b"', '"\\303\\251"'],
}
_WRONG = {"int": '"3"', "uint": "-1", "float": '"1.5"', "bool": "maybe", "string": "5"}


def _family(type_name: str) -> str:
    if type_name in ("string", "bytes"):
        return "string"
    if type_name in ("float", "double", "bool"):
        return type_name if type_name == "bool" else "float"
    return "uint" if type_name.startswith(("uint", "fixed")) else "int"


class _Writer:
    """A random message of a type, one field a line, every value not the default (so that a
    singular field given twice is always refused); each line remembers the field it holds."""

    def __init__(self, rnd: Any) -> None:
        self.rnd = rnd
        self.schema = default_schema()
        self.lines: List[Any] = []  # (text, FieldType or None, indent)

    def message(self, type_name: str, depth: int) -> None:
        fields = [f for f in self.schema.fields(type_name).values() if f.kind != "message" or depth < 3]
        chosen = self.rnd.sample(fields, min(len(fields), self.rnd.randint(0, 4)))
        oneofs: set = set()
        for f in chosen:
            if f.oneof and f.oneof in oneofs:
                continue
            oneofs.add(f.oneof)
            for _ in range(self.rnd.randint(1, 2) if f.repeated else 1):
                self.field(f, depth)

    def field(self, f: Any, depth: int) -> None:
        pad = "  " * depth
        if f.kind == "message":
            self.lines.append(("%s%s {" % (pad, f.name), f, depth))
            self.message(f.type, depth + 1)
            self.lines.append(("%s}" % pad, None, depth))
            return
        if f.kind == "enum":
            names = [n for n, v in self.schema.enums[f.type].items() if v != 0]
            if not names:
                return
            value = self.rnd.choice(names)
        else:
            value = self.rnd.choice(_VALUES[_family(f.type)])
        self.lines.append(("%s%s: %s" % (pad, f.name, value), f, depth))


@given(st.randoms(use_true_random=False), st.sampled_from(["none", "name", "type", "twice", "kind"]))
def test_a_random_graph_is_accepted_and_one_violation_refused_at_its_line(rnd: Any, violation: str) -> None:
    w = _Writer(rnd)
    w.message("tensorflow.GraphDef", 0)
    lines = w.lines
    text = "\n".join(t for t, _, _ in lines)
    assert check(text) == [], text
    if violation == "none":
        return
    singular = [i for i, (_, f, _) in enumerate(lines) if f is not None and f.kind != "message" and not f.repeated]
    scalars = [i for i, (_, f, _) in enumerate(lines) if f is not None and f.kind != "message"]
    messages = [i for i, (_, f, _) in enumerate(lines) if f is not None and f.kind == "message"]
    named = [i for i, (_, f, _) in enumerate(lines) if f is not None]
    pick = {"name": named, "type": scalars, "twice": singular, "kind": messages}[violation]
    assume(pick)
    i = rnd.choice(pick)
    line, f, depth = lines[i]
    new = [t for t, _, _ in lines]
    at = i + 1
    if violation == "name":
        new[i] = line.replace(f.name, f.name + "_zz", 1)
    elif violation == "type":
        wrong = "NO_SUCH_VALUE" if f.kind == "enum" else _WRONG[_family(f.type)]
        new[i] = "%s%s: %s" % ("  " * depth, f.name, wrong)
    elif violation == "twice":
        new.insert(i + 1, line)
        at = i + 2
    else:
        end = next(j for j in range(i + 1, len(lines)) if lines[j][2] == depth and lines[j][1] is None)
        new[i : end + 1] = ["%s%s: 3" % ("  " * depth, f.name)]
    problems = check("\n".join(new))
    assert problems and problems[0].line == at, (violation, at, problems, "\n".join(new))


def test_every_problem_is_listed_not_only_the_first() -> None:
    text = 'node {\n  nme: "a"\n  op: 5\n  attr { key: "T" value { type: DT_FLAOT } }\n}\nnode { name: "b" op: "c" op: "d" }\nversions { producer: 1 }\n'
    problems = check(text)
    assert [p.line for p in problems] == [2, 3, 4, 6]
    assert 'Did you mean "name"?' in problems[0].message and "Did you mean DT_FLOAT?" in problems[2].message
    assert "(schema: TensorFlow 2.21.0)" in problems[0].message
    assert len(check(text, limit=2)) == 2


def test_a_fast_path_feeds_the_fields_it_matched() -> None:
    """The events without tokens: what a reader that matched the writer's layout already knows."""
    c = Checker()
    c.name("node", 1, 1)
    c.open(1, 6, False)
    c.name("name", 2, 3)
    c.value("STRING", '"a"', 2, 9, decoded="a")
    c.name("opp", 3, 3)
    c.value("STRING", '"Const"', 3, 8)
    c.close()
    c.name("node", 4, 1)
    c.open(4, 6, False)
    c.close()
    assert [(p.line, p.column) for p in c.problems] == [(3, 3)]
    assert c.problems[0].message.startswith('Message type "tensorflow.NodeDef" has no field named "opp". Did you mean "op"?')


def test_memory_is_bounded_by_the_depth_not_the_file() -> None:
    c = Checker()
    for i in range(2000):
        c.name("node", i, 1)
        c.open(i, 6, False)
        c.name("name", i, 3)
        c.value("STRING", '"n%d"' % i, i, 9)
        c.close()
    assert c.problems == [] and len(c._stack) == 1 and len(c._stack[0].seen) == 0


def test_any_and_extensions() -> None:
    root = "tensorflow.MetaGraphDef"
    ok = "meta_info_def {\n  any_info {\n    [type.googleapis.com/tensorflow.VersionDef] {\n      producer: 3\n    }\n  }\n}\n"
    assert check(ok, root) == []
    assert check(ok.replace("producer", "producr"), root)[0].line == 4
    assert check(ok.replace("VersionDef]", "Nothing]"), root)[0].message == "Type tensorflow.Nothing not found in descriptor pool"
    assert check("node {\n  [a.b]: 1\n}\n")[0].message == 'Message type "tensorflow.NodeDef" does not have extensions.'


def test_lists_and_colons_as_protobuf_reads_them() -> None:
    assert check('node {\n  input: ["a", "b"]\n  input: []\n}\n') == []
    assert check('node {\n  input ["a"]\n}\n')[0][:2] == (2, 9)  # a scalar list needs its ":"
    assert check('node {\n  name: []\n}\n')[0].message == "Expected string but found: '['"
    assert check("library {\n  function: [{}, {}]\n}\n") == []
    assert check('versions: [{}]\n')[0].message == 'Expected "{".'


def test_no_traceback_on_what_the_scanner_would_refuse() -> None:
    """The validator is fed valid syntax; what is not, it leaves to the scanner without raising."""
    for text in ("}\n}\n", "node {\n  name: -", "node { name: ", "node { [a", "versions { producer: 1 } } }"):
        check(text)


def test_fields_by_number_for_a_wire_reader() -> None:
    by = default_schema().by_number("tensorflow.NodeDef")
    assert (by[1].name, by[2].name, by[5].name, by[5].kind) == ("name", "op", "attr", "message")


def test_a_ge_onnx_dump_against_onnx_proto() -> None:
    text = (DATA / "ge" / "ge_onnx_00000042_graph_1_Build.pbtxt").read_text(encoding="utf-8")
    assert check(text, "onnx.ModelProto") == []
    lines = text.split("\n")
    i = next(n for n, line in enumerate(lines) if line.strip().startswith("op_type:"))
    lines[i] = lines[i].replace("op_type:", "op_typ:")
    problems = check("\n".join(lines), "onnx.ModelProto")
    assert problems[0].line == i + 1 and 'Did you mean "op_type"?' in problems[0].message
    assert "(schema: ONNX 1.23.2)" in problems[0].message


@pytest.mark.parametrize("path", quick_graphs(sorted((DATA / "graphs").glob("*.pbtxt"))), ids=lambda p: p.name)
def test_every_fixture_graph_is_valid(path: Path) -> None:
    """TensorFlow wrote them all: the validator finds nothing in any (no false alarm on a real graph)."""
    assert check(path.read_text(encoding="utf-8"), limit=3) == []
