"""A *lane*: how a graph's blocks are read out of an input's bytes. One protocol, two lanes.

An open input (``graph._input.GraphFile``) is a *byte store*: it reaches the bytes (a regular file
in place, a stream through its spool, gzip unpacked) and knows nothing of their format. At open it
picks its lane by content, once, and hands every block-level call to it:

- the **text lane** (``text._lane.TextLane``): protobuf text format, ``graph.pbtxt`` and GE dumps;
- the **wire lane** (``wire._lane.WireLane``): a binary GraphDef, MetaGraphDef or SavedModel.

Everything above (the fp/bp rules, GE, the CLI) sees the same :class:`~pbtxt_scan._model.Block`
objects from either lane. A lane is given its store at construction and reads only through it
(duck-typed, so ``text/`` and ``wire/`` never import ``graph/``):

=======================  ====================================================================
``store.name``           what errors call the input
``store.read_at(p, n)``  up to ``n`` bytes at offset ``p``
``store.reader(s, e)``   a file-like view of ``[s, e)`` with a position of its own
``store.whole()``        ``(seekable file, size)``: a stream is spooled to its end first
``store.changed()``      an error if a regular file changed since it was opened, else ``None``
``store.bytes_read()``   the bytes read so far (the size, once read to the end)
=======================  ====================================================================

A subclass implements :meth:`Lane.forward` and the block-level methods; :meth:`Lane.blocks` (what
the store's ``blocks`` calls) is derived: progress, and the one rule that a file cut short or
edited while read says so rather than looking truncated.

The rules ask a lane, never the format, for what is read faster than block by block; each has a
default that offers nothing (the rules then read the blocks: the same answers), so a new lane
needs only the methods above:

==========================  ===============================================================
``unit``, ``lines_of``      how a position is shown: a line counted in the file, or an offset
``ahead``                   fp's byte search ahead (:class:`Search` for ops and for names)
``inputs_naming``, ...      the inputs of a block that may name a word (bp's gradient inputs)
``find_blocks``             the blocks named like, or whose inputs name, a set of names (a
                            neighbourhood's hop; fp's copies told apart): a byte search
``read_near``               the blocks of a window near an offset (a neighbourhood read near
                            its centre, then proved complete by ``find_blocks``)
``find_named``              the graph's own nodes by their names (``show``: names, globs,
                            regexes) and the names close to them: one byte search
==========================  ===============================================================
"""
from __future__ import annotations

from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from .._model import Block, Message
from ._source import DEFAULT_CHUNK

# A full Lark parse holds about 50 bytes per byte of text (measured: an 11 MB block took 556 MB):
# blocks above this are refused by parse() with a clear error instead of growing the process.
PARSE_MAX = 2 << 20


class Judged(NamedTuple):
    """What a search's hit may set: ``op``, the op value (``None``: surely none; ``"?"``: cannot
    tell); ``name``, a top-level node's name (the same three kinds)."""

    op: Optional[str]
    name: Optional[str]


UNKNOWN = Judged("?", "?")

Hits = Callable[[int], Iterator[Tuple[int, bytes]]]  # a byte search from an offset on: (offset, text)
OpsIn = Callable[[int, int], Iterator[Tuple[int, Optional[str]]]]  # the ops judged in a range


class Hit(NamedTuple):
    """A hit's place (``-1``: the search failed, anywhere), and what it may set."""

    off: int
    judged: Judged


class Search:
    """One byte search read lazily (:meth:`Lane.ahead`): its hits at or after a position, judged
    by the lane (:meth:`lines`). ``library``: a hit that may open a ``library`` was met."""

    __slots__ = ("_start", "_hits", "failed", "library")

    def __init__(self, start: Hits) -> None:
        self._start = start
        self._hits: Optional[Iterator[Tuple[int, bytes]]] = None
        self.failed = False
        self.library = False

    def begin(self, pos: int) -> None:
        if self._hits is None:
            self._hits = self._start(pos)

    def close(self) -> None:
        close = getattr(self._hits, "close", None)
        if close is not None:
            close()  # stops the search process

    def lines(self, pos: int) -> Iterator[Hit]:
        """Each hit from ``pos`` on, judged; ``Hit(-1, UNKNOWN)`` forever if the search failed."""
        raise NotImplementedError


class Ahead(NamedTuple):
    """fp's byte searches, as a lane makes them: ``ops`` finds every node whose op may be one of
    those asked for, ``names`` every top-level node whose name may hold one of the words, and
    ``ops_in`` the ops search over a range only."""

    ops: Search
    names: Search
    ops_in: Optional[OpsIn]


class Strict:
    """What a reader does with a block it reads that is not a valid node (a top-level field the
    graph's message has not, a node without a name or an op, a name that is no string): refuse
    it (the error ``check`` gives), or, ``lenient``, skip it and count it (``skipped``, and
    ``first``, the first one's error). One per open input; a block read twice is counted once."""

    __slots__ = ("lenient", "skipped", "first", "_seen")

    _SEEN_MAX = 1 << 16  # (the places remembered to count a block once: bounded)

    def __init__(self, lenient: bool = False) -> None:
        self.lenient = lenient
        self.skipped = 0
        self.first: Optional[PbtxtError] = None
        self._seen: "set[int]" = set()

    def refuse(self, err: PbtxtError, at: int) -> None:
        """``err`` for the block at byte ``at``: raised, or (``lenient``) counted and skipped."""
        if not self.lenient:
            raise err
        if at in self._seen:
            return
        if len(self._seen) < self._SEEN_MAX:
            self._seen.add(at)
        self.skipped += 1
        if self.first is None or (err.offset or 0, err.line or 0) < (self.first.offset or 0, self.first.line or 0):
            self.first = err

    def note(self) -> Optional[str]:
        """The one warning line of a lenient reading that skipped blocks, else None."""
        first = self.first
        if not self.skipped or first is None:
            return None
        where = "line %d" % first.line if first.line is not None else "offset %d" % (first.offset or 0)
        return "%s: --lenient: skipped %d block%s that %s no valid node; the first at %s: %s" % (
            first.path or "<input>", self.skipped, "" if self.skipped == 1 else "s", "is" if self.skipped == 1 else "are",
            where, first.msg)


def strict_of(store: Any) -> Strict:
    """The input's :class:`Strict` (a store of a lane made apart, as tests make them: a refusing one)."""
    got = getattr(store, "strict", None)
    return got if isinstance(got, Strict) else Strict()


class Unplaced(Exception):
    """A hit a lane's :meth:`Lane.find_blocks` cannot place at a block (a layout it does not read):
    the rules read the blocks instead."""


# A block search (:meth:`Lane.find_blocks`): (names wanted, names whose consumers are wanted) -> in
# file order, the place of each block at the path named one of the first or whose inputs name one
# of the second (more may come: the rules read each and keep what matches); may raise Unplaced.
Found = Callable[[FrozenSet[str], FrozenSet[str]], Iterator[Block]]


class NameQuery(NamedTuple):
    """What :meth:`Lane.find_named` looks for: the names ``keep`` keeps, each holding one of
    ``needles`` (fixed strings; none: every name is read); ``exact``: ``needles`` are the names
    themselves (each wanted once: the search ends when all are met); ``near``: pieces of a name
    looked for, in any case (the names that hold one are the close ones)."""

    needles: Tuple[str, ...]
    keep: Callable[[str], bool]
    exact: bool = False
    near: Tuple[str, ...] = ()


class Named(NamedTuple):
    """A name :meth:`Lane.find_named` met, in file order: ``kind`` ``"node"`` (a graph's own node
    the query keeps, at ``block``: its place, heads not read), ``"near"`` (a graph's own node's
    name, for close names only) or ``"elsewhere"`` (an exact name met in a library function: the
    rules read for it)."""

    kind: str
    name: str
    block: Optional[Block] = None


class Near(NamedTuple):
    """What :meth:`Lane.read_near` read: the bytes ``span`` read whole (``(start, end)``, or
    ``None``: none), and the blocks in it with their heads (a lane with lines counts them from the
    span's first byte as line 1)."""

    span: Optional[Tuple[int, int]]
    blocks: List[Block]


class Lane:
    """The protocol every lane implements (see the module docstring). ``store``: the byte store."""

    #: ``None`` for text; else the binary kind (``"graphdef"``, ``"metagraph"``, ``"savedmodel"``).
    kind: Optional[str] = None
    #: Whether blocks are text at their own offsets in the file (``read_at`` gives a block's text,
    #: so the file can be split at line starts, grepped, or walked by a text fast path).
    text = False
    #: Whether a byte search of the whole file (fp's grep ahead) finds the graph's own blocks (not
    #: so where the graph sits inside a container: a text SavedModel holds several).
    searchable = False
    #: Set when a byte search of the file failed (grep met a line longer than it may hold: see
    #: ``parallel._grep.MEMORY``): no grep starts on the file again, its callers read blocks.
    grep_failed = False
    #: How a block's position is shown: ``"line"`` (its line, counted in the file) or
    #: ``"offset"`` (its byte offset: a block's ``line`` is then ``0``).
    unit = "line"

    def __init__(self, store: Any) -> None:
        self.store = store

    @property
    def dialect(self) -> Any:
        """The input's :class:`~pbtxt_scan.graph._dialect.Dialect` (what its block paths are)."""
        raise NotImplementedError

    def blocks(
        self,
        block_path: Sequence[str],
        heads: FrozenSet[str],
        *,
        chunk_size: int = DEFAULT_CHUNK,
        on_progress: Optional[Callable[[int], None]] = None,
        end_state: Optional[Dict[str, Any]] = None,
        validate: bool = False,
        schema: int = 0,
    ) -> Iterator[Block]:
        """Every message at ``block_path`` in file order with ``heads``, validated as read;
        ``on_progress(end offset)`` after each; ``end_state`` gets ``bytes`` and ``lines`` at the end.
        ``schema``: see :meth:`forward`."""
        store = self.store
        more = {"schema": schema} if schema else {}  # (a lane that checks no schema need not take it)
        try:
            for b in self.forward(block_path, heads, chunk_size=chunk_size, end_state=end_state, validate=validate, **more):
                yield b
                if on_progress is not None:
                    on_progress(b.end)
        except PbtxtError as e:
            # A file cut short while we read it looks like a truncated file: say what really happened.
            raise (store.changed() or e.with_path(store.name)) from None
        err = store.changed()
        if err is not None:
            raise err

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
        """The blocks :meth:`blocks` hands out (it adds progress and the changed-file check).
        ``validate``: check everything down to the last value even where a listing would skip it.
        ``schema``: also check the whole file against the schema of what it is (``pbtxt_scan.schema``):
        0 not; 1 raise the first schema error as a syntax error is raised, where it is met; N > 1
        gather up to N (the rest counted), then raise them all as one :class:`SchemaErrors` at the
        end, or at a syntax error, which ends the list (``check --all``)."""
        raise NotImplementedError

    def watch(self, limit: int) -> Any:
        """A whole-file reader's schema check (``forward``'s ``schema``) where the lane has one
        (the text lane's ``_schema.Watch``), else None."""
        return None

    def read(self, block: Block) -> bytes:
        """The block as protobuf text, UTF-8 (text: its own bytes; wire: the NodeDef printed)."""
        raise NotImplementedError

    def rescan(self, block: Block, heads: FrozenSet[str]) -> List[Block]:
        """``[block]`` read again with ``heads`` (ones it was first read without); ``[]`` on failure."""
        raise NotImplementedError

    def parse(self, block: Block, max_bytes: int = PARSE_MAX) -> Message:
        """The grammar's parse of the block: a one-field :class:`Message` (the block's field), or an
        error past ``max_bytes`` (the parse holds about 50 bytes per byte of text)."""
        raise NotImplementedError

    def backward(self, block_path: Sequence[str], heads: FrozenSet[str], cache: Any) -> Iterator[Block]:
        """The blocks at ``block_path`` last-first, the same ones :meth:`blocks` gives (``bp``).
        ``cache``: ``read(kind) -> bytes | None`` and ``write(kind, bytes)``, hints kept between
        runs (an index of offsets, a line count) that must never make an answer wrong."""
        raise NotImplementedError

    # --- what the rules may ask for, faster than block by block (the defaults offer nothing) ---

    def lines_of(self, offsets: Iterable[int]) -> Dict[int, int]:
        """The line of each byte offset (``{}`` where the lane has no lines)."""
        return {}

    def ahead(self, ops: FrozenSet[str], op_words: Sequence[str], name_words: Sequence[str]) -> Optional[Ahead]:
        """fp's byte searches over the rest of the file, for nodes whose op is one of ``ops``
        (each holds one of ``op_words``) and top-level nodes whose name holds one of
        ``name_words``; ``None`` where there can be none (the rules read the blocks instead)."""
        return None

    def inputs_naming(self, block: Block, raw: bytes, word: bytes, *, every: bool) -> Optional[List[str]]:
        """The inputs of ``block`` that may name ``word`` (``every``: all of them), read off its
        bytes ``raw``: ``[]`` if surely none, ``None`` where the block must be read again."""
        return None

    def may_hold(self, raw: bytes, field: bytes) -> bool:
        """Whether bytes of a block may hold the field ``field`` (False: surely not)."""
        return True

    def may_name(self, raw: bytes, word: bytes) -> bool:
        """Whether bytes of a block may spell ``word`` in a value (False: surely not)."""
        return True

    def find_blocks(
        self, path: Sequence[str], centre: Optional[Block] = None, *, upto: Optional[int] = None,
        known: Optional[Callable[[int], bool]] = None, first: bool = False, cache: Any = None, since: int = 0,
    ) -> Optional[Found]:
        """A byte search for blocks at ``path`` by their names and their inputs (:data:`Found`):
        beside ``centre`` (in its function's body, if it is in one), or with ``centre`` ``None``
        the graph's own nodes; ``upto``: in the first bytes only, and ``since`` (a block's end,
        with ``centre`` ``None``) from there on, or from earlier; ``known(offset)``: a hit there
        lies in a block read already (left alone); ``first``: each hit as soon as found (the
        search is stopped at its first block). ``cache`` as for :meth:`backward` (hints only).
        ``None`` where the lane offers none (the rules read the blocks instead)."""
        return None

    def find_named(self, query: NameQuery, *, cache: Any = None) -> Optional[Iterator[Named]]:
        """One byte search for the graph's own nodes whose names ``query`` keeps, and the names
        close to it (:class:`Named`, in file order; a generator: closing it ends the search). It
        finds every such node, or raises :class:`Unplaced` where it cannot tell (a name spelt
        otherwise than the search reads: another layout, an escape). ``None`` where the lane
        offers none (the rules read the blocks instead)."""
        return None

    def read_near(
        self, lo: int, hi: int, at: int, heads: FrozenSet[str], *, inside: Callable[[int, int], bool], cache: Any = None,
    ) -> Optional[Near]:
        """The graph's own nodes in a window: from the one at or before ``lo`` to the one before
        ``hi``, at least the one at ``at`` (a lane may read less far), with ``heads``; none where
        ``inside(start, end)`` says that span was read already. ``None`` where the lane offers
        none, or cannot read there (the rules then search hop by hop)."""
        return None
