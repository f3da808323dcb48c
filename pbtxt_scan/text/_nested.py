"""A graph inside a container, in text format: a text SavedModel (``saved_model.pbtxt``, what
``SavedModelBuilder.save(as_text=True)`` writes: ``meta_graphs { graph_def { node { ... } } }``) or
a text MetaGraphDef (``export_meta_graph(as_text=True)``: ``graph_def { node { ... } }``).

:class:`NestedTextLane` is the text lane with the container's path put in front of every block
path asked for and taken off every block handed out, so the rules, the listings and the CLI see a
GraphDef's ``node`` and ``library.function.node_def`` blocks as from a ``graph.pbtxt`` (lines and
offsets are the file's own).

A SavedModel may hold several MetaGraphs (``serve`` and ``train``): as for a binary one, the one
tagged ``train`` is read, else the first. Telling them apart costs one pass over the file (each
MetaGraph's ``meta_info_def``, where its tags are, comes before its ``graph_def``: TensorFlow
writes fields in number order); a stream read once (``nodes``, ``stats``, ``check`` on stdin)
cannot look ahead, so there every MetaGraph's nodes are read, and a note says so.
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, Generator, List, Optional, Sequence, Tuple

from .._model import METAGRAPH_PREFIX, SAVEDMODEL_PREFIX, Block
from ._lane import TextLane

_INFO_PATH = ("meta_graphs", "meta_info_def")
_TAGS = frozenset({"tags"})


class NestedTextLane(TextLane):
    """The text lane of a graph at ``prefix`` in its file (``SAVEDMODEL_PREFIX`` or ``METAGRAPH_PREFIX``)."""

    # Blocks are not the file's top-level fields: the top-level fast paths (splitting the file at
    # column-0 openers, the byte searches of fp) would read the container, not the graph.
    text = False
    searchable = False

    # Read as bytes only, not as the top level's lines: no line is counted for an offset, and a
    # block's inputs are read again rather than taken off its lines.
    def lines_of(self, offsets: Any) -> Dict[int, int]:
        return {}

    def inputs_naming(self, block: Block, raw: bytes, word: bytes, *, every: bool) -> Optional[List[str]]:
        return None if every or word in raw else []

    def may_hold(self, raw: bytes, field: bytes) -> bool:
        return True

    def may_name(self, raw: bytes, word: bytes) -> bool:
        return word in raw

    def __init__(self, store: Any, dialect_of: Any, prefix: Tuple[str, ...]) -> None:
        super().__init__(store, dialect_of)
        self._whole = TextLane(store, dialect_of)  # the file's own paths (the container's), for whole paths
        self.prefix = prefix
        self._span: Optional[Tuple[int, Optional[int]]] = None  # the MetaGraph read: [start, end)
        self._chosen = False

    def forward(
        self,
        block_path: Sequence[str],
        heads: FrozenSet[str],
        *,
        chunk_size: int,
        end_state: Optional[Dict[str, Any]],
        validate: bool,
        schema: int = 0,
    ) -> Generator[Block, None, None]:
        from ._canonical import scan_canonical

        start, end = self._meta_graph()
        # (the whole file's reader, as ``_whole``'s; its schema is the container's: a SavedModel, a MetaGraphDef)
        watch = self.watch(schema)
        whole = self.prefix + tuple(block_path)
        inner = scan_canonical(
            self.store.reader(), whole, heads, chunk_size=chunk_size, display=self.store.name,
            end_state=end_state, validate=validate, watch=watch,
            top=None if validate or watch is not None else self._whole.top_fields(whole),  # (the graph_def's fields: _strict)
        )
        try:
            for b in inner:
                if end is not None and b.start >= end:
                    if schema:
                        continue  # (the MetaGraph read is over; the schema is checked to the end)
                    break  # (blocks come in file order: the MetaGraph read is over)
                if b.start >= start:
                    yield self._inner(b, block_path)
        finally:
            inner.close()

    def schema_root(self) -> Optional[str]:
        return "tensorflow.SavedModel" if self.prefix == SAVEDMODEL_PREFIX else "tensorflow.MetaGraphDef"

    def backward(self, block_path: Sequence[str], heads: FrozenSet[str], cache: Any) -> Generator[Block, None, None]:
        start, end = self._meta_graph()
        inner = self._whole.backward(self.prefix + tuple(block_path), heads, cache)
        try:
            for b in inner:
                if b.start < start:
                    break  # (backward: the MetaGraph read is over)
                if end is None or b.start < end:
                    yield self._inner(b, block_path)
        finally:
            inner.close()

    def _inner(self, b: Block, block_path: Sequence[str]) -> Block:
        return b._replace(path=tuple(block_path), parents=b.parents[len(self.prefix) :])

    def _meta_graph(self) -> Tuple[int, Optional[int]]:
        """The byte range of the MetaGraph read (the whole file for a MetaGraphDef), chosen once."""
        if self._chosen:
            return self._span or (0, None)
        self._chosen = True
        if self.prefix != SAVEDMODEL_PREFIX:
            return 0, None
        store = self.store
        if not store.can_seek:
            self._say("reading the nodes of every MetaGraph (a stream read once cannot look ahead for the one tagged train)")
            return 0, None
        infos: List[Tuple[int, Tuple[str, ...]]] = []
        for b in self._whole.forward(_INFO_PATH, _TAGS, chunk_size=1 << 20, end_state=None, validate=False):
            infos.append((b.start, tuple(h.value for h in b.heads_named("tags"))))
        if len(infos) < 2:
            return 0, None
        i = next((k for k, (_, tags) in enumerate(infos) if "train" in tags), None)
        why = "tagged train" if i is not None else "none is tagged train: the first"
        i = i or 0
        self._span = (infos[i][0], infos[i + 1][0] if i + 1 < len(infos) else None)
        self._say("reading MetaGraph %d of %d (tags: %s): %s" % (i + 1, len(infos), ", ".join(infos[i][1]) or "none", why))
        return self._span

    def _say(self, text: str) -> None:
        on_note = getattr(self.store, "on_note", None)
        if on_note is not None:
            on_note("%s: text SavedModel: %s" % (self.store.name, text))

__all__ = ["METAGRAPH_PREFIX", "NestedTextLane", "SAVEDMODEL_PREFIX"]
