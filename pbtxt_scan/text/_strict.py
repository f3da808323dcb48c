"""The fields a reader meets at the top of a graph, checked where it matches them already.

A reader that looks for ``node`` blocks skips every other top-level field: ``versions`` and
``library`` are the graph's, but ``nod {`` is a misspelt node that TensorFlow refuses, and skipping
it would drop a node silently. :class:`TopFields` is what the walk asks at a top-level field that
is not a block it yields (a name lookup, on the few lines that are not ``node``): a field the
graph's message has not is refused in ``check``'s words, or, lenient, skipped and counted
(``source._lane.Strict``).
"""
from __future__ import annotations

from typing import Any, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from .._errors import PbtxtError
from .._model import FUNCTION_NODES, Block
from ..schema._types import field_names

GRAPH = "tensorflow.GraphDef"


class TopFields:
    """The top-level fields of ``message`` (``names`` as text, ``bnames`` as bytes) and what to do
    with another one (``strict``: a ``source._lane.Strict``; ``display``: the input's name)."""

    __slots__ = ("message", "names", "bnames", "strict", "display")

    def __init__(self, message: str, strict: Any, display: Optional[str]) -> None:
        self.message = message
        self.names: FrozenSet[str] = field_names(message)
        self.bnames: FrozenSet[bytes] = frozenset(n.encode("ascii") for n in self.names)
        self.strict = strict
        self.display = display

    def met(self, name: str, line: int, column: int, at: int) -> None:
        """A top-level field ``name`` the message has not, at ``line``, ``column`` (byte ``at``)."""
        from ..schema._check import unknown_field  # (the validator, loaded for a refusal only)

        self.strict.refuse(PbtxtError(unknown_field(self.message, name), line, column, self.display), at)


class Met:
    """A ``Strict`` that keeps what it is given, in file order, for a reading that hands out its
    blocks in another (backward: a region is scanned first, then its blocks go last first)."""

    __slots__ = ("found",)

    def __init__(self) -> None:
        self.found: List[Tuple[int, PbtxtError]] = []

    def refuse(self, err: PbtxtError, at: int) -> None:
        self.found.append((at, err))


def collecting(top: TopFields, met: Met) -> TopFields:
    """``top`` with ``met`` in place of its ``Strict``."""
    return TopFields(top.message, met, top.display)


def last_first(blocks: Iterable[Block], met: Met, strict: Any) -> Iterator[Block]:
    """``blocks`` (last first), each top-level field ``met`` after one refused (or skipped) by
    ``strict`` before it is handed out, the ones before them all once they are out: a reading
    backward meets them where a forward one would, after the blocks that follow them."""
    found = sorted(met.found, key=lambda f: f[0], reverse=True)
    i = 0
    for b in blocks:
        while i < len(found) and found[i][0] > b.start:
            strict.refuse(found[i][1], found[i][0])
            i += 1
        yield b
    for at, err in found[i:]:
        strict.refuse(err, at)


def top_fields(path: Sequence[str], store: Any, dialect: Any) -> Optional[TopFields]:
    """The check of a TensorFlow graph's top-level fields, for a reading of ``path`` (its nodes, or
    its functions' nodes) in ``store`` (read as ``dialect``, unless the store says otherwise: an
    input opened with ``--input-kind``); None for another path or a GE dump (whose top level the
    TensorFlow rules may read too: no schema of it here)."""
    kind = getattr(getattr(store, "dialect", None) or dialect, "name", "graphdef")
    if kind in ("graphdef", "function") and tuple(path) in (("node",), FUNCTION_NODES):
        from ..source._lane import strict_of

        strict, display = strict_of(store), store.name
        return TopFields(GRAPH, strict, display)
    return None
