"""``certain`` means one defensible answer. Every real graph's ``expected.json`` lists the answers an
expert would accept (``fp_defensible``, ``bp_defensible``, written from reading the graph): fp and
bp are ``certain`` exactly when that list has one entry, the answer is in it, and each rejected
candidate the file names is among the tool's alternatives with the ``why`` the file records. Read
as text and, where there is one, as the binary twin: in the quick set the graphs of
``support.data.QUICK_GRAPHS`` (one of each kind) and their twins, in CI's ``slow`` run all of them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.data import expect_known_wrong
from support.marks import quick_graphs

from pbtxt_scan.fpbp._answers import WHYS
from pbtxt_scan.fpbp._rules import find_bp, find_fp

DATA = Path(__file__).parent / "data"
CASES = sorted(p for p in (DATA / "graphs").glob("*.expected.json") if "fp_defensible" in json.loads(p.read_text()))
assert CASES


def _inputs(case: Path):
    stem = case.name.split(".")[0]
    yield case.with_name(stem + ".pbtxt")
    for twin in (DATA / "binary" / (stem + ".pb"), DATA / "binary" / (stem + ".meta"), DATA / "binary" / stem / "saved_model.pb"):
        if twin.exists():
            yield twin


PARAMS = [(c, g) for c in CASES for g in _inputs(c)]


@pytest.mark.parametrize("kind", ["fp", "bp"])
@pytest.mark.parametrize("case,graph", quick_graphs(PARAMS, lambda cg: cg[0]), ids=["%s-%s" % (c.name.split(".")[0], g.name) for c, g in PARAMS])
def test_certain_exactly_when_one_answer_is_defensible(case, graph, kind, request):
    expect_known_wrong(request, case.name.split(".")[0], (kind,), confidence=True)
    exp = json.loads(case.read_text())
    ans = (find_fp if kind == "fp" else find_bp)(graph)
    defensible = [d for d in exp[kind + "_defensible"] if d is not None]  # ([null]: certainly none)
    if not defensible:
        assert ans.point is None
        return
    assert ans.point is not None and ans.point.name in defensible, (ans.point, defensible)
    assert ans.confidence == ("certain" if len(defensible) == 1 else "ambiguous"), ans.doubt
    got = {a.point.name: a.why for a in ans.alternatives}
    assert all(w in WHYS for w in got.values())
    for name, why in exp.get(kind + "_alternative_why", {}).items():
        assert got.get(name) == why, (name, got)
    # a defensible answer is never called label, metric or dead
    assert not [n for n, w in got.items() if n in defensible and w in ("label", "metric", "dead")]
