"""fp on many input pipelines: the real Estimator queue graph (tests/data/graphs/estimator_queue) with
its node blocks repeated under renamed scopes (support.copies), every copy with its own
``input_producer`` and ``batch`` queues, variables and gradients (issue 21).

The rule (``points._rules``): copies of the model fed by different inputs are told apart by their
gradient ops, ``gradients/<op>_grad/``; the copy they differentiate is the step's, else the first in
file order, and the answer is ambiguous. So the expected answer comes from the fixture's own
(tests/data/graphs/estimator_queue.expected.json), renamed as the first copy is.
"""
from __future__ import annotations

import json

import pytest
from support.copies import renamed_copies
from support.data import GRAPHS

from pbtxt_scan.fpbp._rules import find_fp

FIXTURE = GRAPHS / "estimator_queue.pbtxt"
EXPECTED = json.loads((GRAPHS / "estimator_queue.expected.json").read_text())


def _copies(tmp_path, prefixes, name="copies.pbtxt"):
    path = tmp_path / name
    path.write_text(renamed_copies(FIXTURE, prefixes).text, encoding="ascii")
    return path


@pytest.mark.parametrize("first", [None, "copy_0/"], ids=["original-first", "all-renamed"])
def test_fp_is_the_first_copys_and_ambiguous(tmp_path, first):
    # Original first: its gradients are the ones named gradients/hidden/MatMul_grad/ (a renamed
    # copy's are copy_K/gradients/hidden/..., which name no copy_K/hidden/MatMul_grad). All renamed:
    # no gradient op names any copy's op, so the first in file order.
    path = _copies(tmp_path, [first, "copy_1/", "copy_2/"])
    ans = find_fp(path)
    assert (ans.point.name, ans.point.line) == ((first or "") + EXPECTED["fp"], EXPECTED["fp_line"])
    assert ans.confidence == "ambiguous"
    others = {a.point.name for a in ans.alternatives}
    assert {"copy_1/" + EXPECTED["fp"], "copy_2/" + EXPECTED["fp"]} <= others


@pytest.mark.slow  # (over a second: the slow step runs it)
def test_copies_far_below_the_answer_change_nothing(tmp_path):
    # 40 copies (6 MB) reach past where fp looks for another copy of the model (as far again as
    # its answer lies, at least 4 MiB); 40 more after them must not change the answer, its doubt
    # or its alternatives. (Before issue 21, every copy's batch queue held fp to the next copy: it
    # read the whole file and kept every copy's names, and listed every copy.)
    prefixes = [None] + ["copy_%d/" % k for k in range(1, 80)]
    answers = [find_fp(_copies(tmp_path, prefixes[:n], "c%d.pbtxt" % n)) for n in (40, 80)]
    a, b = ((x.point.name, x.point.line, x.confidence, x.doubt, [(y.point.name, y.point.line) for y in x.alternatives])
            for x in answers)
    assert a == b
    assert a[:2] == (EXPECTED["fp"], EXPECTED["fp_line"])


def test_the_doubt_names_a_few_inputs_however_many_copies(tmp_path):
    # A file of copies has an input per copy: the stderr line (and the JSON doubt) names the first
    # few and counts the rest, so it stays one readable line.
    ans = find_fp(_copies(tmp_path, [None] + ["copy_%d/" % k for k in range(1, 12)]))
    assert ans.confidence == "ambiguous"
    listed = ans.doubt[ans.doubt.index("(") + 1 : ans.doubt.index(")")]
    assert listed.endswith(", and 7 more") and listed.count(",") == 5, ans.doubt
    assert ans.doubt.startswith("12 inputs (")
