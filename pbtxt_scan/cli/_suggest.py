"""Did you mean: the names closest to one that matched nothing, and how to say them.

A graph can hold millions of names (a multi-GB file), many alike (``gradients/layer_N/...``):
:class:`Closest` sees them one at a time and keeps only a small pool, so memory is bounded
whatever the file, and time stays near the scan's own. Two stages:

1. every name gets a cheap score, difflib's ``quick_ratio`` (the characters two names share, as
   a multiset), counted with ``str.count`` for the wanted name's few distinct characters; names
   whose length alone bounds it below the pool's worst are dropped first. The pool keeps the
   ``POOL * k`` best by that score (ties: the first names in sort order);
2. :meth:`Closest.best` ranks the pool by difflib's real ratio (at least ``cutoff``) and gives the
   first ``k``. The real ratio never exceeds the cheap score, so a close name is missed only if
   more than ``POOL * k`` names share at least as many characters with the one typed.
"""
from __future__ import annotations

import difflib
import heapq
from typing import Iterable, List, Optional, Set, Tuple

from .._kit import regex

_OUTPUT = regex(r"^(.*):(\d+)$")  # a tensor name: node:output
POOL = 8  # candidates kept per name asked for


class Closest:
    """The names closest to ``wanted`` among those :meth:`offer`-ed: one that differs only in
    case (:attr:`case`), the node a tensor name ``node:N`` names (:attr:`node`), and the ``k``
    closest spellings (:meth:`best`)."""

    def __init__(self, wanted: str, k: int = 3, cutoff: float = 0.6, *, pool: int = POOL) -> None:
        self.wanted = wanted
        self._node = tensor_node(wanted)
        self._low = wanted.lower()
        self._chars = [(c, self._low.count(c)) for c in sorted(set(self._low))]
        self.k, self.cutoff = k, cutoff
        self._size = pool * k
        self.case: Optional[str] = None
        self.node: Optional[str] = None
        self._pool: List[Tuple[float, _Later]] = []  # the best by the cheap score, worst first
        self._seen: Set[str] = set()  # the names in the pool

    def offer(self, name: Optional[str]) -> None:
        if not name or name == self.wanted:
            return
        if self._node is not None and name == self._node:
            self.node = name
            return
        low = name.lower()
        if low == self._low:
            self.case = self.case or name
            return
        full = len(self._pool) >= self._size
        floor = self._pool[0][0] if full else self.cutoff
        total = len(low) + len(self._low)
        if 2.0 * min(len(low), len(self._low)) / total < floor:  # the length alone rules it out
            return
        score = 2.0 * sum(min(low.count(c), n) for c, n in self._chars) / total  # = quick_ratio
        if score < floor or name in self._seen:
            return
        item = (score, _Later(name))
        if not full:
            heapq.heappush(self._pool, item)
        elif self._pool[0] < item:
            _, dropped = heapq.heapreplace(self._pool, item)
            self._seen.discard(dropped.name)
        else:
            return
        self._seen.add(name)

    def offer_all(self, names: Iterable[Optional[str]]) -> "Closest":
        for n in names:
            self.offer(n)
        return self

    def best(self) -> List[str]:
        """The names meant: the node of a tensor name or the name in another case if there is
        one, else the pool's closest spellings by difflib's ratio (then by name), at most ``k``."""
        first = [n for n in (self.node, self.case) if n is not None]
        if first:  # the name meant, surely: close spellings would only blur it
            return first
        sm = difflib.SequenceMatcher(None, "", self._low)  # seq2 is analysed once, here
        ranked = []
        for _, x in self._pool:
            sm.set_seq1(x.name.lower())
            r = sm.ratio()
            if r >= self.cutoff:
                ranked.append((-r, x.name))
        return [n for _, n in sorted(ranked)[: self.k]]

    def hint(self) -> str:
        """``did you mean X?`` (``X or Y``, ``X, Y or Z``), with why for a tensor name; ``""`` if none."""
        names = self.best()
        if not names:
            return ""
        quoted = [_q(n) for n in names]
        text = "did you mean %s?" % (quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1])
        if self.node is not None:
            text += " (%s names output %s of node %s: give the node's name)" % (
                _q(self.wanted), self.wanted.rsplit(":", 1)[1], _q(self.node))
        return text


class _Later:
    """A name in the pool, where a later name (in sort order) counts as worse: among names of
    equal score the first ones stay (as a full sort by score, then name, would keep)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __lt__(self, other: "_Later") -> bool:
        return self.name > other.name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Later) and self.name == other.name


def _q(name: str) -> str:
    return name if name and not any(c.isspace() for c in name) and "'" not in name else repr(name)


def tensor_node(name: str) -> Optional[str]:
    """The node a tensor name ``node:N`` names (``None`` for a plain node name)."""
    m = _OUTPUT.match(name)
    return m.group(1) if m else None


__all__ = ["Closest", "tensor_node"]
