"""The fields a reader meets at the top of a graph, checked where it matches them already.

A reader that looks for ``node`` blocks skips every other top-level field: ``versions`` and
``library`` are the graph's, but ``nod {`` is a misspelt node that TensorFlow refuses, and skipping
it would drop a node silently. :class:`TopFields` is what the walk asks at a top-level field that
is not a block it yields (a name lookup, on the few lines that are not ``node``): a field the
graph's message has not is refused in ``check``'s words, or, lenient, skipped and counted
(``source._lane.Strict``).
"""
from __future__ import annotations

from typing import Any, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from .._errors import PbtxtError
from .._model import FUNCTION_NODES, GRAPH_FIELDS, METAGRAPH_PREFIX, SAVEDMODEL_PREFIX, Block

GRAPH = "tensorflow.GraphDef"
GE_GRAPH = "ge.proto.GraphDef"


class TopFields:
    """The top-level fields of ``message`` (``names`` as text, ``bnames`` as bytes) and what to do
    with another one (``strict``: a ``source._lane.Strict``; ``display``: the input's name).
    ``depth``: how many messages hold the graph in its file (0; a text SavedModel's ``meta_graphs
    { graph_def {``: 2, a text MetaGraphDef's ``graph_def {``: 1): its fields are those met at that
    depth inside the messages of the path read."""

    __slots__ = ("message", "names", "bnames", "strict", "display", "depth")

    def __init__(self, message: str, strict: Any, display: Optional[str], depth: int = 0, names: Optional[FrozenSet[str]] = None) -> None:
        self.message = message
        self.depth = depth
        if names is None and message == GRAPH:  # (as every text graph asks: no schema table loaded)
            names = GRAPH_FIELDS
        elif names is None:
            from ..schema._types import field_names

            names = field_names(message)
        self.names: FrozenSet[str] = names
        self.bnames: FrozenSet[bytes] = frozenset(n.encode("ascii") for n in self.names)
        self.strict = strict
        self.display = display

    def met(self, name: str, line: int, column: int, at: int) -> None:
        """A top-level field ``name`` the message has not, at ``line``, ``column`` (byte ``at``)."""
        from ..schema._check import unknown_field  # (the validator, loaded for a refusal only)

        self.strict.refuse(PbtxtError(unknown_field(self.message, name), line, column, self.display), at)


class SeenFields(TopFields):
    """A GE ge_proto dump's graph fields (``ge.proto.GraphDef``'s, at depth 1: its ops'
    siblings), those seen in GE's dumps (``schema._ge``: ge_ir.proto is not vendored). Another
    is warned of once, as a note of the input (``on_note``), never refused: the reading goes on
    past it."""

    __slots__ = ("warned", "on_note")

    def __init__(self, on_note: Any, display: Optional[str]) -> None:
        from ..schema._ge import seen

        super().__init__(GE_GRAPH, None, display, 1, frozenset(seen().fields(GE_GRAPH)))
        self.warned: Set[str] = set()
        self.on_note = on_note

    def met(self, name: str, line: int, column: int, at: int) -> None:
        if name in self.warned:
            return
        self.warned.add(name)
        if self.on_note is not None:
            from ..schema._ge import unknown_ge_field

            self.on_note(str(PbtxtError(unknown_ge_field(self.message, name), line, column, self.display)))


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
    return TopFields(top.message, met, top.display, top.depth, top.names)


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
    its functions' nodes; in a text SavedModel or MetaGraphDef, the same under its graph_def) in
    ``store`` (read as ``dialect``, unless the store says otherwise: an input opened with
    ``--input-kind``); a GE dump's graph, for a reading of its ops (ge_onnx: its onnx.GraphProto's
    fields; ge_proto: those seen in GE's dumps, another warned of); None for another path."""
    kind = getattr(getattr(store, "dialect", None) or dialect, "name", "graphdef")
    path = tuple(path)
    if kind == "ge_onnx" and path == ("graph", "node"):  # (onnx.proto is vendored: refused, as check refuses it)
        from ..source._lane import strict_of

        return TopFields("onnx.GraphProto", strict_of(store), store.name, 1)
    if kind == "ge_proto" and path == ("graph", "op"):  # (no ge_ir.proto: warned of)
        return SeenFields(getattr(store, "on_note", None), store.name)
    if kind not in ("graphdef", "function"):
        return None
    for prefix in ((), METAGRAPH_PREFIX, SAVEDMODEL_PREFIX):
        if path[: len(prefix)] == prefix and path[len(prefix) :] in (("node",), FUNCTION_NODES):
            from ..source._lane import strict_of

            return TopFields(GRAPH, strict_of(store), store.name, len(prefix))
    return None
