"""Did you mean: the names closest to one that matched nothing, and how to say them.

A graph can hold millions of names (a multi-GB file): :class:`Closest` sees them one at a time and
keeps only the best few, so memory is bounded by ``k`` whatever the file. Most names are ruled
out by their length alone (difflib's ratio is at most ``2*min/(n+m)``), then by difflib's cheap
upper bounds, before the real ratio is computed.
"""
from __future__ import annotations

import difflib
import heapq
import re
from typing import Iterable, List, Optional, Set, Tuple

_OUTPUT = re.compile(r"^(.*):(\d+)$")  # a tensor name: node:output


class Closest:
    """The names closest to ``wanted`` among those :meth:`offer`-ed: one that differs only in
    case (:attr:`case`), the node a tensor name ``node:N`` names (:attr:`node`), and the ``k``
    closest spellings (:meth:`best`)."""

    def __init__(self, wanted: str, k: int = 3, cutoff: float = 0.6) -> None:
        self.wanted = wanted
        m = _OUTPUT.match(wanted)
        self._node = m.group(1) if m else None
        self._low = wanted.lower()
        self.k, self.cutoff = k, cutoff
        self.case: Optional[str] = None
        self.node: Optional[str] = None
        self._heap: List[Tuple[float, _Later]] = []  # the k best, worst first (ties: the later name)
        self._sm = difflib.SequenceMatcher(None, "", self._low)  # seq2 is analysed once, here
        self._seen: Set[str] = set()  # the names in the heap (at most k)

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
        full = len(self._heap) >= self.k
        floor = self._heap[0][0] if full else self.cutoff
        n, m = len(low), len(self._low)
        if 2.0 * min(n, m) / (n + m) < floor:  # the length alone rules it out
            return
        sm = self._sm
        sm.set_seq1(low)
        if sm.real_quick_ratio() < floor or sm.quick_ratio() < floor:
            return
        r = sm.ratio()
        if r < floor or name in self._seen:
            return
        item = (r, _Later(name))
        if not full:
            heapq.heappush(self._heap, item)
        elif self._heap[0] < item:
            _, dropped = heapq.heapreplace(self._heap, item)
            self._seen.discard(dropped.name)
        else:
            return
        self._seen.add(name)

    def offer_all(self, names: Iterable[Optional[str]]) -> "Closest":
        for n in names:
            self.offer(n)
        return self

    def best(self) -> List[str]:
        """The names meant: the node of a tensor name or the name in another case if there is one, else the
        close spellings, closest first (then by name)."""
        first = [n for n in (self.node, self.case) if n is not None]
        if first:  # the name meant, surely: close spellings would only blur it
            return first
        return [x.name for _, x in sorted(self._heap, reverse=True)]

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
    """A name in the heap, where a later name (in sort order) counts as worse: among close names
    of equal ratio the first ones stay (as a full sort by ratio, then name, would keep)."""

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
