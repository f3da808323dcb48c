"""The schema validator agrees with TensorFlow's own parser.

``tests/data/schema/cases.json`` holds one change each to real fixture graphs (a misspelt field at
every depth, wrong scalar types, ranges, enum names and numbers, a singular field twice, two
members of a oneof, a scalar where a message is due and the reverse, Any and extensions) and
controls TensorFlow accepts, each with TensorFlow 2.21's verdict (``text_format.Parse``, recorded
once by ``tools/make_schema_corpus.py``; no TensorFlow here). The validator must accept and refuse
the same, refuse at the same line, and name the right field or enum value for a misspelt one.
"""
from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from pbtxt_scan.language._grammar import _lark, string_value
from pbtxt_scan.schema import Checker, Problem, check_tokens, default_schema

DATA = Path(__file__).parent / "data"
CORPUS = json.loads((DATA / "schema" / "cases.json").read_text(encoding="utf-8"))
CASES: List[Dict[str, Any]] = CORPUS["cases"]
ROOTS = {"GraphDef": "tensorflow.GraphDef", "SavedModel": "tensorflow.SavedModel"}


def tokens(text: str) -> List[Any]:
    return [(t.type, str(t), t.line, t.column) for t in _lark(False).lex(text) if t.type not in ("WS", "COMMENT")]


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
