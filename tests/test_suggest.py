"""Did you mean (``cli._suggest.Closest``): the few closest names kept while millions stream past.

The bounded collector must name exactly what its definition says, computed here the plain way
over every name at once: of the names whose difflib ``quick_ratio`` (case ignored) is at least
the cutoff, the ``POOL * k`` best by it (ties by name), ranked by difflib's ``ratio`` (at least
the cutoff; ties by name), the first ``k``. A name that differs only in case, or the node of a
tensor name ``node:N``, is named instead of any of them.
"""
from __future__ import annotations

import difflib

from hypothesis import example, given, strategies as st

from pbtxt_scan.cli._suggest import POOL, Closest, tensor_node

_NAME = st.text(alphabet="abAB/_:01", min_size=1, max_size=12)


def _ranked(wanted: str, names, k: int, cutoff: float, pool: int = POOL):
    """Every name scored, sorted, cut: what Closest must agree with (without keeping them all)."""
    low = wanted.lower()
    quick = {}
    for n in set(names):
        if n == wanted or n.lower() == low:
            continue
        q = difflib.SequenceMatcher(None, n.lower(), low).quick_ratio()
        if q >= cutoff:
            quick[n] = q
    kept = sorted(quick, key=lambda n: (-quick[n], n))[: pool * k]
    ranked = sorted((-difflib.SequenceMatcher(None, n.lower(), low).ratio(), n) for n in kept)
    return [n for r, n in ranked if -r >= cutoff][:k]


@given(_NAME, st.lists(_NAME, max_size=60), st.integers(1, 4), st.sampled_from([1, 2, POOL]))
@example("ab", ["abb", "aab"], 1, 1)  # a tie at the pool's edge: the first name in sort order stays
@example("ab", ["aab", "abb"], 1, 1)
def test_the_bounded_best_equal_a_full_ranking(wanted, names, k, pool):
    # (small pools: the pool's edge, and its ties, are met with few names)
    c = Closest(wanted, k=k, pool=pool).offer_all(names)
    if c.case is None and c.node is None:
        assert c.best() == _ranked(wanted, names, k, 0.6, pool)
    assert len(c._pool) <= pool * k  # bounded, whatever was offered


@given(_NAME, st.lists(_NAME, max_size=30))
def test_a_case_twin_or_the_node_of_a_tensor_name_comes_first(wanted, names):
    c = Closest(wanted).offer_all(names)
    twins = [n for n in names if n != wanted and n.lower() == wanted.lower()]
    node = tensor_node(wanted)
    if node is not None and node in names:
        assert c.best()[0] == node
    elif twins:
        assert c.best() == [twins[0]]


def test_many_names_keep_k():
    c = Closest("dense/MatMul", k=3)
    c.offer_all("layer_%d/dense/MatMul_%d" % (i, i) for i in range(200000))
    c.offer("dense/MatMul_1")
    assert len(c._pool) == POOL * 3 and c.best()[0] == "dense/MatMul_1"


def test_hints_read_as_a_sentence():
    assert Closest("dense/matmul").offer_all(["dense/MatMul", "x"]).hint() == "did you mean dense/MatMul?"
    assert Closest("a/MatMul:0").offer_all(["a/MatMul"]).hint().startswith("did you mean a/MatMul? (")
    assert Closest("zzz").offer_all(["dense/MatMul"]).hint() == ""
    assert Closest("MatMol", k=2).offer_all(["MatMul", "MatMulV2", "Mul"]).hint() == "did you mean MatMul or MatMulV2?"
