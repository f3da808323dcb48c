"""One input, opened once per command: :class:`GraphFile`.

Every layer above the scanner (the fp/bp rules, the reverse block index, the GE loader, the CLI)
reads through the one ``GraphFile`` a command opened; none of them opens a path again. That is
what makes pipes, FIFOs, ``/dev/fd/N`` and stdin work like files, what keeps gzip ``bp`` linear
(the stream is decompressed once), and what keeps a file that changes between two opens from
giving answers that mix two versions of it.

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
(:meth:`GraphFile._narrow`), which the wire lane then reads like a ``.pb`` or ``.meta``. The block-level methods (``dialect``, ``blocks``,
``read``, ``rescan``, ``parse``) hand over to it, and ``_reverse`` reads backward through it, so
nothing above this object knows which lane it reads.
"""
from __future__ import annotations

import contextlib
import io
import os
import stat
from typing import Any, BinaryIO, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Union

from ..text import NestedTextLane, TextLane
from ..wire import WireLane, binary as _binary
from ._folders import graph_in_folder
from ._dialect import DIALECTS, HEAD_BYTES, TF_HEADS, Dialect, container_of_head, dialect_of_head
from .._errors import PbtxtError
from .._model import Block, Message
from ..source._lane import PARSE_MAX, Lane
from ..parallel._cores import usable_cores
from ..source._kinds import is_event_file, not_a_graph
from ..source._source import DEFAULT_CHUNK, PathLike, gunzipped, is_text, open_binary, spool as spool_stream
from ..source._views import View

__all__ = ["PARSE_MAX", "GraphFile", "Source", "opened"]

# Regular files are read with pread where the system has it: reads never depend on (or move) the
# descriptor's shared offset, which fp's grep may then use as its own stdin (see _ahead).
_PREAD = hasattr(os, "pread")

_CHANGED = "the file changed while it was being read (%s bytes when opened, %s now): run again when it is complete"


class GraphFile:
    """A graph file or dump, opened once. Use :meth:`open` (or :func:`opened`) and close it.

    ``name`` is what errors and answers call it (``<stdin>`` for ``-``); ``dialect`` is detected
    from the first fields; ``size`` is known for regular files only (``None`` for streams).
    """

    def __init__(self, raw: BinaryIO, name: str, spool: bool) -> None:
        self.name = name
        self._raw = raw  # what is read: the input itself, or a stream's spool
        self._stream: Optional[BinaryIO] = None  # a spooled stream (then ``_raw`` is its spool)
        self._stat = _regular_stat(raw)
        self.regular = self._stat is not None  # readable in place at any offset
        self.size: Optional[int] = self._stat[0] if self._stat else None
        self._stored = 0  # unspooled streams: the bytes read so far
        self._eof = False
        self._head = b""  # unspooled streams: the first bytes, kept to be read again from 0
        # A graph inside a bigger file (a TensorBoard event file's record): offsets count from
        # ``base``, and the store ends at ``size`` (see :meth:`_narrow`).
        self.base = 0
        self._narrowed = False
        self.events: Optional[Tuple[Any, Any]] = None  # an event file: (what _events.scan found, the place read)
        # How blocks are read: text unless open() finds a binary graph (then the wire lane).
        self.lane: Lane = TextLane(self, dialect_of_head)
        self.on_note: Optional[Callable[[str], None]] = None  # told which MetaGraph a SavedModel gives
        if not self.regular:
            if spool:
                self._spool_rest(b"")
            else:
                self._head = self._read_raw(HEAD_BYTES)
                self._stored = len(self._head)

    @classmethod
    def open(
        cls, path: PathLike, spool: bool = True, record: Optional[int] = None, *, graph: Optional[int] = None,
        lane: Optional[Callable[["GraphFile"], Lane]] = None,
    ) -> "GraphFile":
        """Open ``path`` (``-`` for stdin; gzip is unpacked): protobuf text format, a binary
        GraphDef, MetaGraphDef or SavedModel, or a TensorBoard event file (told by content); other
        binary files are refused. ``record``: which record of an event file holds the graph to
        read (default: the last training graph), and ``graph`` which of that record's graphs (a
        trace's summary holds several; default: its last training graph); both count from 0. A
        folder with ``record``: the event file the folder gives. ``lane``: the caller's lane,
        ``lane(store)``, reads the bytes instead of the one their content picks (a format of its own)."""
        picked = None
        if str(path) != "-" and os.path.isdir(path):  # a SavedModel, model_dir or logs folder: its graph file
            path, picked = graph_in_folder(str(path), events_only=record is not None)
        raw, name = open_binary(path)
        return cls._opened(raw, name, spool=spool, owned=str(path) != "-", picked=picked, record=record,
                           graph=graph, lane=lane)  # (stdin stays open)

    @classmethod
    def of_stream(cls, f: BinaryIO, name: str) -> "GraphFile":
        """A graph read from an open binary file object (the caller's: left open), as :meth:`open`
        reads a path: a regular file in place, anything else through a spool; gzip is unpacked."""
        if not hasattr(f, "peek"):
            f = io.BufferedReader(f)  # type: ignore[arg-type]  # (gzip is told by a peek)
        return cls._opened(gunzipped(f, name), name, spool=True, owned=False, picked=None, record=None, graph=None)

    @classmethod
    def _opened(
        cls, raw: BinaryIO, name: str, *, spool: bool, owned: bool, picked: Optional[str], record: Optional[int],
        graph: Optional[int], lane: Optional[Callable[["GraphFile"], Lane]] = None,
    ) -> "GraphFile":
        """The GraphFile reading ``raw``, its kind told by content (``owned``: closed with it)."""
        g: Optional[GraphFile] = None
        try:
            g = cls(raw, name, spool)
            g.picked = picked
            head = g.head(_binary.SNIFF_BYTES)
            kind = _binary.sniff(head)
            if lane is not None:
                g.lane = lane(g)
            elif is_event_file(head):
                g._read_events(record, graph)
            elif record is not None:
                raise PbtxtError("--record applies to TensorBoard event files, and this is %s" % (
                    "a " + _binary.describe(kind) if kind else "not one"), path=name)
            elif kind is None:
                complete = len(head) < _binary.SNIFF_BYTES
                why = not_a_graph(head, complete=complete, name=name)
                if not is_text(head[:4096]) and not (why or "").startswith("this is "):  # (no clean text, and no
                    # file of a kind named by its magic or name: a binary graph damaged in its first bytes?)
                    broken = _binary.broken(head, complete=complete)
                    if broken is not None:
                        raise PbtxtError("not a valid %s: %s" % (_binary.describe(broken[0]), broken[2]), path=name, offset=broken[1])
                if why:
                    raise PbtxtError(why, path=name)
                nested = container_of_head(head)
                if nested is not None:  # a text SavedModel or MetaGraphDef: its graph_def's blocks
                    g.lane = NestedTextLane(g, dialect_of_head, nested)
            else:
                g.lane = WireLane(g, kind, DIALECTS["graphdef"])
                if kind == _binary.SAVEDMODEL and not g.can_seek:
                    g._spool_from_here()  # its train MetaGraph may come after the first: keep a way back
        except BaseException:
            if g is not None:
                g._owned = owned
                g.close()  # (the spool, if one was made)
            elif owned:
                raw.close()
            raise
        g._owned = owned
        return g

    _owned = False
    picked: Optional[str] = None  # a folder was given: which file in it is read, and why (one line)
    chosen: Optional[str] = None  # an event file: which record's graph is read, and why (one line)
    record_read: Optional[str] = None  # an event file: the graph read as --record names it ("13", "1.4")
    unchecked: Optional[str] = None  # an event file whose graph record's data CRC was not checked: the note that says so

    def _read_events(self, record: Optional[int], graph: Optional[int] = None) -> None:
        """Read the graph of a TensorBoard event file: find it by the records' length prefixes
        (``wire._events``) and narrow this file to it, read by the wire lane like a ``.pb``."""
        from ..wire import check_graph_record, events as _events, events_split as _events_split

        if not self.regular:
            self._spool_from_here()  # (a stream: its graph may be anywhere; the spool is read in place)
        try:
            found = _events_split.scan(self.read_at, self.size or 0, record=record, jobs=usable_cores())
            if not found.graphs:
                raise PbtxtError(_events.no_graph(found))
            place, why = _events.choose(self.read_at, found, record, graph)
            # Every byte an answer rests on is checked: the graph's record, whole, before any of it is read.
            self.unchecked = check_graph_record(self.read_at, place.record, place.offset)
        except PbtxtError as e:
            raise e.with_path(self.name) from None
        if self.unchecked:
            self.unchecked = "%s: %s" % (self.name, self.unchecked)
        self._narrow(place.start, place.end)
        self.events = (found, place)
        self.chosen = "%s: reading %s: %s" % (self.name, _events.describe(place, found), why)
        self.record_read = _events.label(place, found)
        self.lane = WireLane(self, place.kind, DIALECTS["graphdef"])

    def _narrow(self, start: int, end: int) -> None:
        """Read bytes ``[start, end)`` of the file as if they were all of it: offset 0 is ``start``.
        (A graph in an event file: the lanes, the byte searches and the caches see that graph alone.)"""
        self.base = start
        self.size = end - start
        self._narrowed = True

    def close(self) -> None:
        if self._stream is not None:
            self._raw.close()  # the spool: ours whatever the input (and gone once closed)
            if self._owned:
                self._stream.close()
        elif self._owned:
            self._raw.close()

    def __enter__(self) -> "GraphFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "GraphFile(%r)" % self.name

    # --- bytes ---------------------------------------------------------------------------------

    @property
    def can_seek(self) -> bool:
        """Whether any offset can be read again (a regular file, or a spooled stream)."""
        return self.regular

    @property
    def spooled(self) -> bool:
        """Whether this is a stream read through its spool (then ``regular`` is true too)."""
        return self._stream is not None

    def head(self, n: int = HEAD_BYTES) -> bytes:
        return self.read_at(0, n)

    def read_at(self, pos: int, n: int) -> bytes:
        """Up to ``n`` bytes at offset ``pos`` (fewer at the end of the input)."""
        if self._narrowed:  # (offset 0 is the graph's first byte, and the store ends with it)
            return self.read_file_at(self.base + pos, max(0, min(n, (self.size or 0) - pos)))
        return self.read_file_at(pos, n)

    def read_file_at(self, pos: int, n: int) -> bytes:
        """Like :meth:`read_at`, with offsets in the whole file even where it is narrowed to a graph
        in it (an event file's records)."""
        try:
            if self.regular:
                if _PREAD:  # positioned: the descriptor's offset stays free for a grep reading it
                    return os.pread(self._raw.fileno(), n, pos)
                self._raw.seek(pos)
                return self._raw.read(n)
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e), path=self.name) from None
        # An unspooled stream: its first bytes, or the next ones; never a second look further back.
        if pos < len(self._head):
            out = self._head[pos : pos + n]
            if len(out) == n or self._stored > len(self._head):
                return out
            return out + self.read_file_at(len(self._head), n - len(out))
        if pos != self._stored:
            raise PbtxtError("cannot read %s a second time: pass a file" % self.name, path=self.name)
        data = self._read_raw(n)
        self._stored += len(data)
        return data

    def _read_raw(self, n: int) -> bytes:
        if self._eof:
            return b""
        try:
            data = self._raw.read(n)
        except PbtxtError as e:
            raise e.with_path(self.name) from None
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e), path=self.name) from None
        if not data:
            self._eof = True
        return data

    def _spool_from_here(self) -> None:
        """Turn an unspooled stream into a spooled one (only its first bytes were read yet)."""
        assert not self.regular and self._stored == len(self._head)
        self._spool_rest(self._head)

    def _spool_rest(self, head: bytes) -> None:
        """Copy ``head`` and the rest of the stream to a spool, and read that from now on, as a
        regular file (the spool is ours alone: it cannot change while read)."""
        f = spool_stream(self._raw, self.name, head)
        self._stream, self._raw = self._raw, f
        self.size = os.fstat(f.fileno()).st_size
        self._stat = (self.size, 0)
        self.regular = True
        self._head, self._stored, self._eof = b"", 0, True

    def known_size(self) -> Optional[int]:
        """The input's size if known without reading further (a regular file, a stream read to its end)."""
        if self.regular:
            return self.size
        return self._stored if self._eof else None

    def bytes_read(self) -> int:
        """The input's bytes (decompressed) read so far: its size once read to the end."""
        return (self.size or 0) if self.regular else self._stored

    def reader(self, start: int = 0, end: Optional[int] = None) -> BinaryIO:
        """A file-like view of bytes ``[start, end)`` (``end=None``: to the end of the input). It
        keeps its own position, so views, block reads and scans can interleave."""
        return View(self, start, end)  # type: ignore[return-value]

    @property
    def offset_free(self) -> bool:
        """Whether nothing in this process reads through the descriptor's shared offset while a
        search runs (reads are positioned): a child process may then read the descriptor itself."""
        return self.regular and _PREAD and not self._narrowed

    def fileno(self) -> int:
        """The descriptor of a regular file (for positioned reads by helpers such as grep's feeder)."""
        if not self.regular:
            raise io.UnsupportedOperation("fileno: %s is a stream" % self.name)
        return self._raw.fileno()

    def whole(self) -> Tuple[BinaryIO, int]:
        """The input as a seekable file and its size, for reading backward (a stream is spooled
        to its end first)."""
        if not self.regular:
            raise PbtxtError("cannot read %s backward: pass a file" % self.name, path=self.name)
        return self.reader(), self.size or 0  # (a view: positioned reads, never the descriptor's offset)

    def identity(self) -> Optional[Tuple[str, int, int, int, int]]:
        """(real path, size, mtime, inode, ctime) of a regular file that has a path, for cache keys."""
        path = getattr(self._raw, "name", None)
        if not self.regular or self.spooled or not isinstance(path, str):
            return None
        try:
            st = os.fstat(self._raw.fileno())
        except OSError:
            return None
        real = os.path.realpath(path) + ("@%d+%d" % (self.base, self.size or 0) if self._narrowed else "")
        return real, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns

    def changed(self) -> Optional[PbtxtError]:
        """An error if the file's size or mtime differ from when it was opened (regular files)."""
        if self.spooled:
            return None  # (our own spool: nothing else writes it)
        now = _regular_stat(self._raw)
        if self._narrowed:  # (an event file the training still writes grows: the graph read stays as it was)
            if now is None or now[0] < self.base + (self.size or 0):
                return PbtxtError(_CHANGED % (self._stat[0] if self._stat else "?", now[0] if now else "?"), path=self.name)
            return None
        if self._stat is not None and now != self._stat:
            return PbtxtError(_CHANGED % (self._stat[0], now[0] if now else "?"), path=self.name)
        return None

    # --- blocks: the lane's ------------------------------------------------------------------

    @property
    def binary(self) -> Optional[str]:
        """The binary kind (``"graphdef"``, ``"metagraph"``, ``"savedmodel"``), ``None`` for text."""
        return self.lane.kind

    @property
    def dialect(self) -> Dialect:
        return self.lane.dialect  # type: ignore[no-any-return]

    @dialect.setter
    def dialect(self, d: Dialect) -> None:
        """Read the file as ``d`` rather than as its content was taken (the CLI's --input-kind)."""
        self.lane._dialect = d

    def blocks(
        self,
        block_path: Sequence[str],
        heads: FrozenSet[str] = TF_HEADS,
        chunk_size: int = DEFAULT_CHUNK,
        on_progress: Optional[Callable[[int], None]] = None,
        end_state: Optional[Dict[str, int]] = None,
        validate: bool = False,
    ) -> Iterator[Block]:
        """Every message at ``block_path`` in file order, validated as it is read. (A binary
        graph's containers and node fields are always checked; ``validate`` also checks every
        node's attr values, which listings skip: ``check`` and ``stats`` ask for it.)"""
        return self.lane.blocks(
            block_path, heads, chunk_size=chunk_size, on_progress=on_progress, end_state=end_state, validate=validate
        )

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
def opened(src: Source, spool: bool = True) -> Iterator[GraphFile]:
    """``src`` itself if it is already open (the caller closes it), else a new one, closed after."""
    if isinstance(src, GraphFile):
        yield src
        return
    with GraphFile.open(src, spool=spool) as g:
        yield g


def _regular_stat(f: Any) -> Optional[Tuple[int, int]]:
    """(size, mtime) of a regular file opened as ``f``; ``None`` for streams and gzip."""
    if not isinstance(f, io.BufferedReader) and not isinstance(f, io.FileIO):
        return None  # (a gzip reader, stdin's wrapper)
    try:
        st = os.fstat(f.fileno())
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return st.st_size, st.st_mtime_ns
