"""Did you mean: the name of a message's fields (or an enum's values) closest to a misspelt one,
by edit distance (a swap of two neighbours counts one edit, as a typo is one)."""
from __future__ import annotations

from typing import Iterable, Optional


def distance(a: str, b: str, cap: int) -> int:
    """The optimal string alignment distance of ``a`` and ``b``, or ``cap + 1`` once it is past ``cap``."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    prev2: "list[int]" = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            d = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d = min(d, prev2[j - 2] + 1)
            cur[j] = d
        if min(cur) > cap:
            return cap + 1
        prev2, prev = prev, cur
    return prev[-1]


def nearest(name: str, names: Iterable[str]) -> Optional[str]:
    """The closest of ``names`` to ``name``: one differing only in case first, else the fewest edits,
    at most a third of the name's length (at least one, at most three); of those as near,
    one with the same letters (a swap), then the first."""
    low = name.lower()
    cap = max(1, min(3, len(name) // 3))
    best, best_key = None, (cap + 1, True)
    letters = sorted(low)
    for n in names:
        if n.lower() == low:
            return n
        # (among names as near, one with the same letters first: a swap is the likelier typo)
        key = (distance(low, n.lower(), cap), sorted(n.lower()) != letters)
        if key < best_key:
            best, best_key = n, key
    return best
