"""The wire lane: binary graphs (``.pb``, ``.meta``, ``saved_model.pb``) behind the same protocol as
text (:class:`pbtxt_scan.source._lane.Lane`).

=====================  =====================================================================
``blocks``             ``_wire.iter_wire_blocks``, forward, in constant memory
``backward``           ``_wire.build_index`` (one pass over the length prefixes; cached like the
                       text index), then ``_wire.iter_wire_blocks_reversed``
``read``               the NodeDef as text format (``_wire_text.node_to_text``)
``parse``              the grammar's parse of that text (so ``show --json``, the placeholder rule
                       and everything that reads attrs work unchanged)
``rescan``             the NodeDef's heads read again (``_wire.reread_block``)
``fold``               whole-file commands (``nodes``, ``stats``, ``check``): only what each
                       needs read (``_wire_whole``)
=====================  =====================================================================

The rules, the GE mapping and the CLI see the same :class:`Block` objects as from text. Binary
has no lines: a block's ``line`` is ``0`` and its position is its byte ``offset`` (``Block.start``,
the first byte of the serialized NodeDef, counted in the decompressed file); answers print
``offset N`` where text prints ``line N``, and JSON has ``"line": null`` beside ``"offset"``.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence

from . import _wire
from ._binary import SAVEDMODEL, describe
from ._wire_index import dump_index, load_index
from .._errors import PbtxtError
from .._model import Block, Message
from ..source._lane import PARSE_MAX, Ahead, Found, Lane, Named, NameQuery, Near


class WireLane(Lane):
    """The nodes of a binary graph of kind ``kind``, read through the byte store ``store``.

    ``info`` holds what was read (a SavedModel's MetaGraph, and why: :class:`_wire.WireInfo`'s
    fields); which one is said once through ``store.on_note`` when it is known.
    """

    text = False
    searchable = True
    unit = "offset"

    def __init__(self, store: Any, kind: str, dialect: Any) -> None:
        super().__init__(store)
        self.kind = kind
        self._dialect = dialect
        self.info: Dict[str, Any] = {}
        self.noted = False
        self._marks: Any = None  # (``_hood.Marks``: node boundaries met by the searches' walks)

    @property
    def dialect(self) -> Any:
        return self._dialect

    def forward(
        self,
        block_path: Sequence[str],
        heads: FrozenSet[str],
        *,
        chunk_size: int,
        end_state: Optional[Dict[str, Any]],
        validate: bool,
        schema: int = 0,
    ) -> Iterator[Block]:
        """The containers and each node's fields are always checked; ``validate`` also checks every
        node's attr values, which listings skip (``check`` and ``stats`` ask for it). (``schema``:
        the lane protocol's; not read here yet.)"""
        self._paths(block_path)
        it = _wire.iter_wire_blocks(
            self.store.reader(), [tuple(block_path)], heads, kind=self.kind, chunk_size=chunk_size, info=self.info,
            validate=validate,
        )
        for b in it:
            self._note()
            yield b
        self._note()
        if end_state is not None:
            end_state["bytes"] = self.store.bytes_read()
            end_state["lines"] = None

    def fold(
        self,
        block_path: Sequence[str],
        fold: Any,
        heads: FrozenSet[str],
        *,
        on_progress: Optional[Callable[[int], None]] = None,
        end_state: Optional[Dict[str, Any]] = None,
    ) -> Iterator[None]:
        """A whole-file command's pass (``_wire_whole.fold_wire``): ``fold`` (a
        ``_wire_whole.Fold``) gets every node, read as far as the command needs; yields after
        each run of nodes. Errors and ``end_state`` as for :meth:`blocks`."""
        from ._wire_whole import fold_wire

        store = self.store
        self._paths(block_path)
        try:
            for _ in fold_wire(store.reader(), block_path, fold, heads, kind=self.kind, info=self.info):
                self._note()
                if on_progress is not None:
                    on_progress(fold.last)
                yield None
            self._note()
        except PbtxtError as e:
            raise (store.changed() or e.with_path(store.name)) from None
        err = store.changed()
        if err is not None:
            raise err
        if end_state is not None:
            end_state["bytes"] = store.bytes_read()
            end_state["lines"] = None

    def backward(self, block_path: Sequence[str], heads: FrozenSet[str], cache: Any) -> Iterator[Block]:
        """An index of node offsets built in one forward pass over the length prefixes (about
        100 KB per GB, kept in ``cache``), then regions decoded forward."""
        store = self.store
        self._paths(block_path)
        store.whole()  # a stream is spooled to its end: backward reading needs every offset
        kind = "wire-index-" + ".".join(block_path)
        try:
            index = load_index(cache.read(kind), tuple(block_path))
            if index is None:
                index = _wire.build_index(store.reader(), tuple(block_path), kind=self.kind)
                cache.write(kind, dump_index(index))
            self.info.update(index.info._asdict())
            self._note()
            for b in _wire.iter_wire_blocks_reversed(store.reader(), index, heads):
                yield b
        except PbtxtError as e:
            raise (store.changed() or e.with_path(store.name)) from None

    def read(self, block: Block) -> bytes:
        return self._node_text(block).encode("utf-8", "surrogateescape")

    def rescan(self, block: Block, heads: FrozenSet[str]) -> List[Block]:
        try:
            return [_wire.reread_block(self.store.reader(), block, heads)]
        except PbtxtError:
            return []

    def parse(self, block: Block, max_bytes: int = PARSE_MAX) -> Message:
        """Positions are those of the node's text, as ``show`` prints it."""
        from ..language._grammar import parse_text_within

        node = self._node_text(block)
        if len(node) > max_bytes:  # (the caller's bound on what it reads)
            raise self._too_big(len(node), block, max_bytes)
        msg = parse_text_within(node, 1, self.store.name, min(max_bytes, PARSE_MAX))  # (Lark's own bound: the text less its long strings)
        if msg is None:
            raise self._too_big(len(node), block, min(max_bytes, PARSE_MAX))
        return msg

    def _too_big(self, size: int, block: Block, limit: int) -> PbtxtError:
        return PbtxtError(
            "node is %.1f MB as text, over the %.1f MB limit for a full parse" % (size / (1 << 20), limit / (1 << 20)),
            path=self.store.name,
            offset=block.start,
        )

    def _node_text(self, block: Block) -> str:
        """The NodeDef as text format, as ``tf.io.write_graph`` would print it."""
        from ._wire_text import node_to_text

        store = self.store
        data = store.read_at(block.start, block.end - block.start)
        try:
            if len(data) != block.end - block.start:
                raise PbtxtError("the file ends inside this node", offset=block.start)
            return node_to_text(data, field=block.path[-1], base=block.start)
        except PbtxtError as e:
            raise e.with_path(store.name) from None

    def _note(self) -> None:
        """Say once, through ``store.on_note``, which MetaGraph of a SavedModel is read, and why."""
        info = self.info
        if self.noted or info.get("kind") != SAVEDMODEL or info.get("meta_graph") is None:
            return
        self.noted = True
        on_note = self.store.on_note
        if on_note is None:
            return
        n = info.get("meta_graphs")
        tags = ", ".join(info.get("tags") or ()) or "none"
        on_note(
            "%s: SavedModel: reading MetaGraph %d%s (tags: %s): %s"
            # (counted from 1 for people: "MetaGraph 1 of 1", not "0 of 1")
            % (self.store.name, info["meta_graph"] + 1, " of %d" % n if n else "", tags, info.get("why") or "")
        )

    def _paths(self, block_path: Sequence[str]) -> None:
        if tuple(block_path) not in (_wire.NODE_PATH, _wire.FUNCTION_PATH):
            raise PbtxtError(
                "a %s has nodes at node and library.function.node_def, not %s (--format graphdef or function)"
                % (describe(self.kind), ".".join(block_path)),
                path=self.store.name,
            )

    # --- the rules' shortcuts, on the wire (``_ahead``) ---------------------------

    def ahead(self, ops: FrozenSet[str], op_words: Sequence[str], name_words: Sequence[str]) -> Optional[Ahead]:
        """A ``grep -E`` for the ops' own bytes (tag, length, op), each hit verified at a node
        boundary (``_ahead``); a binary GraphDef only."""
        from ._ahead import wire_ahead

        return wire_ahead(self.store, ops, name_words)

    def inputs_naming(self, block: Block, raw: bytes, word: bytes, *, every: bool) -> Optional[List[str]]:
        return None if every or word in raw else []  # (strings as they are; field names are numbers)

    def may_hold(self, raw: bytes, field: bytes) -> bool:
        return True  # (field names are numbers)

    def may_name(self, raw: bytes, word: bytes) -> bool:
        return word in raw  # (strings as they are)

    def find_blocks(
        self, path: Sequence[str], centre: Optional[Block] = None, *, upto: Optional[int] = None,
        known: Optional[Callable[[int], bool]] = None, first: bool = False, cache: Any = None, since: int = 0,
    ) -> Optional[Found]:
        """A fixed-string grep for the names, each hit proved a node's ``name`` or ``input`` field
        by the length prefixes (``_hood``); a binary GraphDef's own nodes only."""
        import shutil

        from ._hood import hood_blocks

        if not self._searched(path):
            return None
        grep = shutil.which("grep")
        if grep is None:
            return None
        opts = ("-F", "--line-buffered") if first else ("-F",)
        return hood_blocks(self.store, self._hood_marks(cache), grep, opts, known=known, upto=upto)

    def find_named(self, query: NameQuery, *, cache: Any = None) -> Optional[Iterator[Named]]:
        """One ``grep -E`` for the needles, each hit walked to the field that holds it by the
        length prefixes (``_hood``); a binary GraphDef's own nodes, with needles only."""
        import shutil

        from ._hood import named_blocks

        if not self._searched(("node",)) or not query.needles:
            return None
        grep = shutil.which("grep")
        if grep is None:
            return None
        return named_blocks(self.store, self._hood_marks(cache), grep, query)

    def read_near(
        self, lo: int, hi: int, at: int, heads: FrozenSet[str], *, inside: Callable[[int, int], bool], cache: Any = None,
    ) -> Optional[Near]:
        """The nodes walked to by the length prefixes, each decoded (``_hood``: a narrower window)."""
        from ._hood import read_near

        if not self._searched(("node",)):
            return None
        return read_near(self.store, self.rescan, self._hood_marks(cache), lo=lo, hi=hi, at=at, heads=heads)

    def _searched(self, path: Sequence[str]) -> bool:
        return self.searchable and self.store.regular and self.kind == _wire.GRAPHDEF and tuple(path) == ("node",)

    def _hood_marks(self, cache: Any) -> Any:
        from ._hood import Marks

        if self._marks is None:
            self._marks = Marks(self.store, cache)
        return self._marks
