"""Which nodes a listing keeps: ``nodes --op OP --name GLOB``, tested where the scan hands out each
node, on the heads it reads anyway (text), or on a binary node's name and op bytes."""
from __future__ import annotations

import fnmatch
import re
from typing import Iterable, Optional


class NodeFilter:
    """Which nodes a listing keeps (``nodes --op``, ``--name``): those whose op is one of ``ops``
    (none given: any op) and whose name matches one of the shell globs ``names`` (none: any name).
    A glob is ``fnmatch``'s, case-sensitive, matched against the whole name: ``*`` stands for any
    characters, ``/`` included (``layer_1/*`` keeps every node under ``layer_1/``), ``?`` for one,
    ``[...]`` for one of a set. A node without the field is matched as if it were empty.

    It is applied where the scan hands out each node (on every core: ``graph._parallel``), on the
    heads the scan reads anyway; a binary GraphDef's nodes are tested on their name and op bytes
    (:meth:`raw`), before any row is made."""

    __slots__ = ("ops", "names", "_ops_raw", "_match")

    def __init__(self, ops: Iterable[str] = (), names: Iterable[str] = ()) -> None:
        self.ops = frozenset(ops)
        self.names = tuple(names)
        self._ops_raw = frozenset(op.encode("utf-8", "surrogateescape") for op in self.ops)
        rx = "|".join("(?:%s)" % fnmatch.translate(g) for g in self.names)
        self._match = re.compile(rx, re.S).match if self.names else None

    def __call__(self, name: Optional[str], op: Optional[str]) -> bool:
        """Whether a node of this name and op is kept."""
        if self.ops and (op or "") not in self.ops:
            return False
        return self._match is None or self._match(name or "") is not None

    def raw(self, name: bytes, op: bytes) -> bool:
        """The same test on a binary node's name and op, as its bytes."""
        if self._ops_raw and op not in self._ops_raw:
            return False
        return self._match is None or self._match(name.decode("utf-8", "surrogateescape")) is not None

    def __repr__(self) -> str:
        return "NodeFilter(ops=%r, names=%r)" % (sorted(self.ops), self.names)
