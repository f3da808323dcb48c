"""Which nodes a listing keeps: ``nodes --op OP --name GLOB``, tested where the scan hands out each
node, on the heads it reads anyway (text), or on a binary node's name and op bytes."""
from __future__ import annotations

import fnmatch
import os
import re
from typing import Iterable, List, Optional


class NodeFilter:
    """Which nodes a listing keeps (``nodes --op``, ``--name``): those whose op is one of ``ops``
    (none given: any op) and whose name matches one of the shell globs ``names`` (none: any name).
    A glob is ``fnmatch``'s, case-sensitive, matched against the whole name: ``*`` stands for any
    characters, ``/`` included (``layer_1/*`` keeps every node under ``layer_1/``), ``?`` for one,
    ``[...]`` for one of a set. A node without the field is matched as if it were empty.

    It is applied where the scan hands out each node (on every core: ``graph._parallel``), on the
    heads the scan reads anyway; a binary GraphDef's nodes are tested on their name and op bytes
    (:meth:`raw`), before any row is made. A glob ``re`` cannot read raises ``ValueError``."""

    __slots__ = ("ops", "names", "_ops_raw", "_match", "_prefix", "_prefix_raw")

    def __init__(self, ops: Iterable[str] = (), names: Iterable[str] = ()) -> None:
        self.ops = frozenset(ops)
        self.names = tuple(names)
        self._ops_raw = frozenset(op.encode("utf-8", "surrogateescape") for op in self.ops)
        # The text every glob starts with (before its first * ? or [): most names fail on it alone,
        # at the cost of a startswith.
        self._prefix = os.path.commonprefix([re.split(r"[*?[]", g, 1)[0] for g in self.names]) if self.names else ""
        self._prefix_raw = self._prefix.encode("utf-8", "surrogateescape")
        rx = "|".join("(?:%s)" % glob_re(g, k) for k, g in enumerate(self.names))
        try:
            self._match = re.compile(rx, re.S).match if self.names else None
        except re.error as e:  # (before 3.9 fnmatch writes a set such as [z-a] as the bad range it is)
            raise ValueError("not a glob this Python reads: %s" % e) from None

    def __call__(self, name: Optional[str], op: Optional[str]) -> bool:
        """Whether a node of this name and op is kept."""
        if self.ops and (op or "") not in self.ops:
            return False
        if self._match is None:
            return True
        name = name or ""
        return name.startswith(self._prefix) and self._match(name) is not None

    def raw(self, name: bytes, op: bytes) -> bool:
        """The same test on a binary node's name and op, as its bytes."""
        if self._ops_raw and op not in self._ops_raw:
            return False
        if self._match is None:
            return True
        return name.startswith(self._prefix_raw) and self._match(name.decode("utf-8", "surrogateescape")) is not None

    def __repr__(self) -> str:
        return "NodeFilter(ops=%r, names=%r)" % (sorted(self.ops), self.names)


def glob_re(glob: str, k: int = 0) -> str:
    """``glob`` as a regex (``re.S``) matching what ``fnmatch.fnmatchcase`` matches, in time
    linear in the name whatever the stars (as ``fnmatch`` does from 3.9; 3.7's and 3.8's
    ``.*a.*b.*c`` take time to the power of the stars on a long name that fails): the text between
    stars is found by a lazy search that is never re-entered (a look-ahead, then a back-reference
    to it, the groups named ``gK_I``: ``k`` tells several globs apart in one regex)."""
    parts = [_part(p) for p in _between_stars(glob)]
    if len(parts) == 1:
        return parts[0] + r"\Z"
    middle = "".join("(?=(?P<g%d_%d>.*?%s))(?P=g%d_%d)" % (k, i, p, k, i) for i, p in enumerate(parts[1:-1]) if p)
    return parts[0] + middle + ".*" + parts[-1] + r"\Z"


def _part(text: str) -> str:
    """A glob without stars as ``fnmatch`` translates it, without its ``(?s:...)\\Z`` wrapper."""
    rx = fnmatch.translate(text)
    assert rx.startswith("(?s:") and rx.endswith(r")\Z"), rx
    return rx[4:-3]


def _between_stars(glob: str) -> List[str]:
    """The pieces of ``glob`` between its stars, a ``[...]`` set kept whole (where ``fnmatch`` sees
    one: a ``[`` with no ``]`` after it is a literal)."""
    pieces: List[str] = []
    at = i = 0
    n = len(glob)
    while i < n:
        c = glob[i]
        i += 1
        if c == "*":
            pieces.append(glob[at : i - 1])
            at = i
        elif c == "[":
            j = i + (glob[i : i + 1] == "!")
            j += glob[j : j + 1] == "]"
            j = glob.find("]", j)
            if j >= 0:
                i = j + 1
    pieces.append(glob[at:])
    return pieces
