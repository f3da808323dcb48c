"""One input, opened once per command: :class:`GraphFile`.

Every layer above the scanner (the fp/bp rules, the reverse block index, the GE loader, the CLI)
reads through the one ``GraphFile`` a command opened; none of them opens a path again. That is
what makes pipes, FIFOs, ``/dev/fd/N`` and stdin work like files, what keeps gzip ``bp`` linear
(the stream is decompressed once), and what keeps a file that changes between two opens from
giving answers that mix two versions of it.

The object is immutable: what it reads through (its *store*: one small class of ``source._store``
for each way the bytes are reached), its lane and its *provenance* (what was asked for and what was read,
the notes) are fixed when it is opened, and nothing sets an attribute on it afterwards
(``__setattr__`` refuses; tests/test_input_object.py holds it). The format to read it as
(``--input-kind``) is an argument of :meth:`GraphFile.open`. What it says later (which MetaGraph of
a SavedModel the lane reads) it keeps itself, and :attr:`GraphFile.notes` hands out as a tuple.

How the bytes are reached depends on the source:

- a regular, uncompressed file is read in place, at any offset (``seek`` + ``read``);
- anything else (stdin, a pipe or FIFO, a ``.gz`` file) is a *stream*. With ``spool=True`` (the
  default: commands that read twice, backward or a block again) the whole stream is copied at
  open, in 4 MiB reads, to an anonymous temporary file (``source._source.spool``), which is then
  read exactly like a regular file: positioned reads, fp's grep ahead, ``--jobs`` splits, bp's
  reverse index. Copying first costs one pass at disk (or gunzip) speed; reading the spool as it
  fills would leave every fast path that needs a file descriptor and a size unused (fp on a 1 GB
  pipe took 17 s that way, against 0.6 s by path). With ``spool=False`` (one forward pass:
  ``stats``, ``check``, ``nodes``) nothing is copied and the stream is read once.

Memory is bounded by the read size (4 MiB) whatever the source: the spool lives on disk.

The format is the *lane*'s (``source._lane``): when the file is opened its first bytes pick one,
the text lane (``text._lane``) or, for a binary graph (a ``.pb`` GraphDef, a ``.meta``
MetaGraphDef, a ``saved_model.pb``, gzipped or not, from a file or a stream), the wire lane
(``wire._lane``); ``binary`` names the kind. A TensorBoard event file is read as the graph one of its
records holds (``wire._events`` finds it), once that record's data CRC holds
(``wire._tfrecord.check_graph_record``): the file is *narrowed* to that byte range
(``source._store.RecordStore``), which the wire lane then reads like a ``.pb`` or ``.meta``. The block-level methods (``dialect``, ``blocks``,
``read``, ``rescan``, ``parse``) hand over to it, and ``_reverse`` reads backward through it, so
nothing above this object knows which lane it reads.
"""
from __future__ import annotations

import contextlib
import io
import os
from typing import Any, BinaryIO, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

from ._dialect import HEAD_BYTES, TF_HEADS, Dialect
from ._sniff import Provenance, lane_and_store, text_lane
from ._strict import checked, op_head
from ..source._store import store_of
from .._errors import PbtxtError
from .._model import Block, Message
from ..source._lane import PARSE_MAX, Lane, Strict
from ..source._source import DEFAULT_CHUNK, PathLike, gunzipped, open_binary

__all__ = ["PARSE_MAX", "GraphFile", "Provenance", "Source", "opened"]

LaneOf = Callable[["GraphFile"], Lane]  # how an input's lane is made: ``lane(store)``


class _Said:
    """What an open input learns as it is read: the lanes' notes (which MetaGraph of a SavedModel
    is read), and whether an event file's graph record was checked since it was opened."""

    __slots__ = ("notes", "checked", "strict")

    def __init__(self, lenient: bool = False) -> None:
        self.notes: List[str] = []
        self.checked = False
        self.strict = Strict(lenient)  # the blocks that are no valid node: refused, or skipped and counted



# What an input hands on from its store as it is (its methods bound: no hop through the input on the
# way): reads, views, sizes, the descriptor and its lending, what changed, ``spooled`` (a stream read
# through its spool) and ``offset_free`` (no read here moves the descriptor's offset: a child may read
# it). (source._store says what each does.)
_STORE_READS = (
    "read_at", "read_file_at", "reader", "whole", "known_size", "bytes_read", "fileno", "take_offset", "free_offset",
    "identity", "changed", "spooled", "offset_free",
)


class GraphFile:
    """A graph file or dump, opened once. Use :meth:`open` (or :func:`opened`) and close it.

    ``name`` is what errors and answers call it (``<stdin>`` for ``-``); ``dialect`` is detected
    from the first fields unless :meth:`open` is told it; ``size`` is known for regular files only
    (``None`` for streams). Immutable: see the module's docstring.
    """

    __slots__ = (
        "name", "lane", "provenance", "regular", "can_seek", "size", "base", "_store", "_dialect", "_said", "_owned",
        *_STORE_READS,
    )
    # Set once, in _made (annotated here for readers and mypy; __slots__ holds them).
    name: str
    lane: Lane
    provenance: Provenance
    regular: bool
    can_seek: bool
    size: Optional[int]
    base: int
    _store: Any
    _dialect: Optional[Dialect]
    _said: "_Said"
    _owned: bool
    # (the store's, set at open: see _STORE_READS)
    read_at: Callable[[int, int], bytes]  # up to n bytes at offset p (fewer at the end of the input)
    read_file_at: Callable[[int, int], bytes]  # the same, offsets in the whole file where it is narrowed to a record
    reader: Callable[..., BinaryIO]  # reader(start=0, end=None): a view of [start, end) with a position of its own
    whole: Callable[[], Tuple[BinaryIO, int]]  # (seekable view, size) for reading backward; a stream read once: an error
    known_size: Callable[[], Optional[int]]  # the size if known without reading further
    bytes_read: Callable[[], int]  # the (decompressed) bytes read so far: the size once read to the end
    fileno: Callable[[], int]  # the descriptor of a regular file or spool (a helper's positioned reads)
    take_offset: Callable[[], bool]  # lend the descriptor's offset to one child process (False: not free)
    free_offset: Callable[[], None]
    identity: Callable[[], Optional[Tuple[str, int, int, int, int]]]  # (real path, size, mtime, inode, ctime): cache keys
    changed: Callable[[], Optional[PbtxtError]]  # an error if the file changed since it was opened
    spooled: bool  # a stream read through its spool (then ``regular`` is true too)
    offset_free: bool  # no read here moves the descriptor's offset: a child process may read it

    def __init__(self, raw: BinaryIO, name: str, spool: bool) -> None:
        """The text-format input read from ``raw`` (left open): a regular file in place, else a
        stream, spooled or read once. (:meth:`open` tells a path's kind by its content.)"""
        self._made(store_of(raw, name, spool=spool, head_bytes=HEAD_BYTES), None, Provenance(name), None, owned=False)

    def _made(
        self, store: Any, lane: Optional[LaneOf], provenance: Provenance, dialect: Optional[Dialect], *, owned: bool,
        lenient: bool = False,
    ) -> None:
        put = object.__setattr__
        put(self, "name", store.name)
        put(self, "_store", store)
        put(self, "provenance", provenance)
        put(self, "_dialect", dialect)
        put(self, "_said", _Said(lenient))
        put(self, "_owned", owned)
        put(self, "regular", store.regular)  # readable in place at any offset
        put(self, "can_seek", store.regular)  # any offset can be read again (a regular file, or a spooled stream)
        put(self, "size", store.size)
        put(self, "base", store.base)  # a graph inside an event file: its first byte's offset in the file
        # The store's own reads, as they are: no hop through this object on the way.
        for name in _STORE_READS:
            put(self, name, getattr(store, name))
        put(self, "lane", (lane or text_lane)(self))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("an open GraphFile does not change: %s is set when it is opened" % name)

    def __delattr__(self, name: str) -> None:
        raise AttributeError("an open GraphFile does not change: %s stays" % name)

    @classmethod
    def open(
        cls, path: PathLike, spool: bool = True, record: Optional[int] = None, *, graph: Optional[int] = None,
        lane: Optional[LaneOf] = None, dialect: Optional[Dialect] = None, run: Optional[str] = None, lenient: bool = False,
    ) -> "GraphFile":
        """Open ``path`` (``-`` for stdin; gzip is unpacked): protobuf text format, a binary
        GraphDef, MetaGraphDef or SavedModel, or a TensorBoard event file (told by content); other
        binary files are refused. ``record``: which record of an event file holds the graph to
        read (default: the last training graph), and ``graph`` which of that record's graphs (a
        trace's summary holds several; default: its last training graph); both count from 0. A
        folder with ``record``: the event file the folder gives. ``lane``: the caller's lane,
        ``lane(store)``, reads the bytes instead of the one their content picks (a format of its own).
        ``dialect``: read it as that (the CLI's --input-kind) rather than as its content is taken.
        ``run``: ``path`` is a TensorBoard logdir, and the graph is read from that run's event files
        (a run is named by its folder under the logdir, as TensorBoard names it).
        ``lenient``: a block read that is no valid node (a top-level field the graph has not, a node
        without a name or an op) is skipped and counted (:attr:`notes` says so) rather than refused."""
        picked = None
        asked = str(path)
        if run is not None:
            from ._folders import graph_in_run

            path, picked = graph_in_run(asked, run)
        elif asked != "-" and os.path.isdir(path):  # a SavedModel, model_dir or logs folder: its graph file
            from ._folders import graph_in_folder  # (a folder's rules: not loaded for a file)

            path, picked = graph_in_folder(asked, events_only=record is not None)
        raw, name = open_binary(path)
        return cls._opened(raw, name, Provenance(asked, record, graph, picked), spool=spool, owned=str(path) != "-",
                           lane=lane, dialect=dialect, lenient=lenient)  # (stdin stays open)

    @classmethod
    def of_stream(cls, f: BinaryIO, name: str) -> "GraphFile":
        """A graph read from an open binary file object (the caller's: left open), as :meth:`open`
        reads a path: a regular file in place, anything else through a spool; gzip is unpacked."""
        if not hasattr(f, "peek"):
            # (gzip is told by a peek. Any binary file object: BufferedReader reads it by readinto, which
            # typing's BinaryIO does not list.)
            f = io.BufferedReader(f)  # type: ignore[type-var]
        return cls._opened(gunzipped(f, name), name, Provenance(name), spool=True, owned=False)

    @classmethod
    def _opened(
        cls, raw: BinaryIO, name: str, asked: Provenance, *, spool: bool, owned: bool,
        lane: Optional[LaneOf] = None, dialect: Optional[Dialect] = None, lenient: bool = False,
    ) -> "GraphFile":
        """The GraphFile reading ``raw``, its store and lane told by content (``owned``: closed with it)."""
        try:
            store = store_of(raw, name, spool=spool, head_bytes=HEAD_BYTES)
        except BaseException:
            if owned:
                raw.close()
            raise
        try:
            store, lane, asked = lane_and_store(store, asked, lane)
            g = cls.__new__(cls)
            g._made(store, lane, asked, dialect, owned=owned, lenient=lenient)
        except BaseException:
            store.close(owned)  # (the spool, if one was made)
            raise
        return g

    # --- what was asked for, what was read, what was said ------------------------------------------

    @property
    def picked(self) -> Optional[str]:
        return self.provenance.picked

    @property
    def chosen(self) -> Optional[str]:
        return self.provenance.chosen

    @property
    def record_read(self) -> Optional[str]:
        return self.provenance.record_read

    @property
    def events(self) -> Optional[Tuple[Any, Any]]:
        return self.provenance.events

    @property
    def unchecked(self) -> Optional[str]:
        """The note that an event file's graph record's data CRC was not checked, until it is."""
        return None if self._said.checked else self.provenance.unchecked

    @property
    def notes(self) -> Tuple[str, ...]:
        """What a command says once it has its result (on stderr): which file of a folder is
        read, which record of an event file, which MetaGraph of a SavedModel."""
        p = self.provenance
        skipped = self._said.strict.note()
        return tuple(n for n in (p.picked, p.chosen) if n) + tuple(self._said.notes) + ((skipped,) if skipped else ())

    @property
    def strict(self) -> Strict:
        """What the lanes do with a block that is no valid node (refuse it, or skip and count it)."""
        return self._said.strict

    def on_note(self, text: str) -> None:
        """A lane says what it chose as it reads (kept in :attr:`notes`)."""
        self._said.notes.append(text)

    def check_records(self, *, every: bool, jobs: int = 1) -> None:
        """An event file's CRCs: every record's (``check``), or the graph record's data CRC where
        opening it did not check it (a big record and no CRC library: validating, ``check`` and
        ``stats`` check it whatever it costs). Nothing for any other input."""
        if self.events is None:
            return
        from ..wire import HEADER, Record, check_data, check_every

        found, place = self.events
        unchecked = self.unchecked
        try:
            if every:
                check_every(self.read_file_at, found.size, jobs=jobs, checked=None if unchecked else place.record)
            elif unchecked:
                length = int.from_bytes(self.read_file_at(place.offset, 8), "little")
                check_data(self.read_file_at, Record(place.record, place.offset, place.offset + HEADER, length))
        except PbtxtError as e:
            raise e.with_path(self.name) from None
        self._said.checked = True

    def close(self) -> None:
        self._store.close(self._owned)

    def __enter__(self) -> "GraphFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "GraphFile(%r)" % self.name

    # --- bytes: the store's --------------------------------------------------------------------

    def head(self, n: int = HEAD_BYTES) -> bytes:
        return self.read_at(0, n)

    # --- blocks: the lane's ------------------------------------------------------------------

    @property
    def binary(self) -> Optional[str]:
        """The binary kind (``"graphdef"``, ``"metagraph"``, ``"savedmodel"``), ``None`` for text."""
        return self.lane.kind

    @property
    def dialect(self) -> Dialect:
        d = self._dialect
        return self.lane.dialect if d is None else d

    def blocks(
        self,
        block_path: Sequence[str],
        heads: FrozenSet[str] = TF_HEADS,
        chunk_size: int = DEFAULT_CHUNK,
        on_progress: Optional[Callable[[int], None]] = None,
        end_state: Optional[Dict[str, int]] = None,
        validate: bool = False,
        *,
        schema: int = 0,
        strict: bool = True,
    ) -> Iterator[Block]:
        """Every message at ``block_path`` in file order, validated as it is read. (A binary
        graph's containers and node fields are always checked; ``validate`` also checks every
        node's attr values, which listings skip: ``check`` and ``stats`` ask for it. ``schema``:
        the whole file against its schema, see :meth:`~pbtxt_scan.source._lane.Lane.forward`.)
        Without ``validate``, a block that is no valid node (no name, no op) is refused or, lenient,
        skipped (``_strict``): validating, the schema's check words it instead; ``strict=False``:
        every block as it is (a listing, the same on one process as on several)."""
        if validate or not strict:
            return self.lane.blocks(
                block_path, heads, chunk_size=chunk_size, on_progress=on_progress, end_state=end_state, validate=validate,
                schema=schema,
            )
        op = op_head(self.dialect.heads)
        blocks = self.lane.blocks(
            block_path, heads | {"name", op}, chunk_size=chunk_size, on_progress=on_progress, end_state=end_state,
            schema=schema,
        )
        return checked(self, blocks, op)

    def nodes(self, heads: Optional[FrozenSet[str]] = None, **kw: Any) -> Iterator[Block]:
        """The operator blocks of this file's dialect (heads: the dialect's, unless given)."""
        d = self.dialect
        return self.blocks(d.path, d.heads if heads is None else heads, **kw)

    def read(self, block: Block) -> bytes:
        """The block's own bytes (of a binary graph: the node as text format, UTF-8)."""
        return self.lane.read(block)

    def rescan(self, block: Block, heads: FrozenSet[str]) -> List[Block]:
        """Scan one block found before again (for heads it was read without); ``[]`` on failure."""
        return self.lane.rescan(block, heads)

    def parse(self, block: Block, max_bytes: Optional[int] = None) -> Message:
        """Parse one block with the Lark grammar: a one-field :class:`Message` (the block's field,
        e.g. ``node``) whose positions are those of the file (of a binary graph: those of the
        node's text, as ``show`` prints it)."""
        return self.lane.parse(block, PARSE_MAX if max_bytes is None else max_bytes)


Source = Union[PathLike, GraphFile]


@contextlib.contextmanager
def opened(src: Source, spool: bool = True, *, lenient: bool = False) -> Iterator[GraphFile]:
    """``src`` itself if it is already open (the caller closes it), else a new one (``lenient``:
    see :meth:`GraphFile.open`), closed after."""
    if isinstance(src, GraphFile):
        yield src
        return
    with GraphFile.open(src, spool=spool, lenient=lenient) as g:
        yield g

