"""An event file's records, listed one by one (the ``events`` command): :func:`listing`.

Each record is read as ``_events`` reads it, by its header and the length prefixes of its
Event's fields: its number, offset and length, ``wall_time`` (1) and ``step`` (2), which field of
``Event.what`` it holds (file_version 3, graph_def 4, summary 5, log_message 6, session_log 7,
tagged_run_metadata 8, meta_graph_def 9: ``tensorflow/core/util/event.proto``,
the table in ``tests/data/README.md``), and the few short fields a line shows: a summary's value
tags and plugin names, the graphs a record holds (as ``--record`` numbers them), the
file_version string, a session_log's status (``SessionLog`` status = 1: 0 unspecified, 1 START,
2 STOP, 3 CHECKPOINT), a log_message's text (``LogMessage`` level = 1, message = 2), a
tagged_run_metadata's tag (1). Strings over :data:`TEXT_MAX`
bytes are cut, tags past :data:`TAGS_MAX` counted, payloads stepped over by their length: a record
is never held whole.

Every record's data CRC is checked (a record at a time, in 1 MiB reads); without the CRC library,
pure Python checks the first :data:`PURE_BUDGET` bytes of data and the lister says how many
records it left. A bad CRC, a cut record or an Event that does not hold stops the listing there:
the records before it have been listed.
"""
from __future__ import annotations

import math
import struct
from typing import Iterator, List, NamedTuple, Optional, Tuple

from ..source._crc32c import PURE_MAX, fast
from ._events import GRAPH_PLUGINS, _bad, _fields, _function_graphs, _plugin_name, _varint
from ._tfrecord import ReadAt, Record, Window, check_data, iter_records
from ._wire_read import GRAPHDEF, METAGRAPH

TEXT_MAX = 256  # a string shown (a tag, a message) is cut to this many bytes
TAGS_MAX = 64  # a summary's values listed (the rest counted)
PURE_BUDGET = PURE_MAX  # without the CRC library, the data bytes whose CRC pure Python checks (about 2 s)

# Event.what, the oneof (source_metadata, 10, is beside it: TF 2.x's first Event holds both it and file_version)
WHAT = {3: "file_version", 4: "graph_def", 5: "summary", 6: "log_message", 7: "session_log",
        8: "tagged_run_metadata", 9: "meta_graph_def"}
_SESSION = {0: "STATUS_UNSPECIFIED", 1: "START", 2: "STOP", 3: "CHECKPOINT"}


class Graph(NamedTuple):
    """A graph in a record: ``label`` as ``--record`` takes it (``2``, ``1.4``), its bytes, its
    binary kind (``graphdef``, ``metagraph``) and its byte range in the file."""

    label: str
    bytes: int
    binary: str
    start: int
    end: int


class Value(NamedTuple):
    """A summary value: its tag and its plugin's name (``""``: none)."""

    tag: str
    plugin: str


class Listed(NamedTuple):
    """One record: its number, header offset and Event bytes, ``wall_time`` (None: absent or not
    finite), ``step``, ``what`` (the field of Event.what set: ``summary``...; ``empty`` for none),
    a summary's ``values`` (at most :data:`TAGS_MAX`; ``value_count`` counts them all), ``text``
    (a file_version, a session's status, a message, a tag) and its ``graphs``."""

    record: int
    offset: int
    bytes: int
    wall_time: Optional[float]
    step: int
    what: str
    values: Tuple[Value, ...] = ()
    value_count: int = 0
    text: Optional[str] = None
    graphs: Tuple[Graph, ...] = ()


class Lister:
    """:meth:`records` lists a file's records in order; ``unchecked`` then counts those whose data
    CRC was not checked (no CRC library, past :data:`PURE_BUDGET`)."""

    __slots__ = ("read_at", "size", "unchecked", "_budget")

    def __init__(self, read_at: ReadAt, size: int) -> None:
        self.read_at = read_at
        self.size = size
        self.unchecked = 0
        self._budget = None if fast() else PURE_BUDGET

    def records(self) -> Iterator[Listed]:
        w = Window(self.read_at)
        data = Window(self.read_at)  # (the fields' own window: the headers' stays where it is)
        for rec in iter_records(self.read_at, self.size, window=w):
            self._check(data, rec)
            yield _listed(data, rec)

    def _check(self, data: Window, rec: Record) -> None:
        """The record's data CRC, read through the fields' window (a run of small records: one read)."""
        if self._budget is not None:
            if rec.length > self._budget:
                self.unchecked += 1
                return
            self._budget -= rec.length
        check_data(data.get, rec, chunk=1 << 20)


def listing(read_at: ReadAt, size: int) -> Iterator[Listed]:
    """Every record of the event file, in order (:class:`Lister`, when its count of unchecked CRCs is wanted)."""
    return Lister(read_at, size).records()


def _listed(w: Window, rec: Record) -> Listed:
    wall: Optional[float] = None
    step, field, a, b = 0, 0, 0, 0
    for f, wt, fa, fb in _event_fields(w, rec):
        if f == 1 and wt == 1:
            t = struct.unpack("<d", w.get(fa, 8))[0]
            wall = t if math.isfinite(t) else None
        elif f == 2 and wt == 0:
            step = fa - (1 << 64) if fa >= 1 << 63 else fa
        elif f in WHAT and wt == 2:
            field, a, b = f, fa, fb  # (the oneof: the last one set is the one)
    what = WHAT.get(field, "empty")
    head = Listed(rec.index, rec.offset, rec.length, wall, step, what)
    if field == 5:
        return _summary(w, rec, head, a, b)
    if field in (4, 9):
        kind = GRAPHDEF if field == 4 else METAGRAPH
        return head._replace(graphs=(Graph("%d" % rec.index, b - a, kind, a, b),))
    if field in (3, 8):  # file_version; tagged_run_metadata.tag
        return head._replace(text=_text(w, a, b) if field == 3 else _string_field(w, a, b, rec, 1))
    if field == 6:  # log_message.message
        return head._replace(text=_string_field(w, a, b, rec, 2))
    if field == 7:  # session_log.status
        status = next((v for sf, swt, v, _ in _fields(w, a, b, rec) if sf == 1 and swt == 0), 0)
        return head._replace(text=_SESSION.get(status, "status %d" % status))
    return head


def _event_fields(w: Window, rec: Record) -> Iterator[Tuple[int, int, int, int]]:
    """An Event's top-level fields, as ``_events._fields`` gives a message's, fixed64 ones too
    (``(number, 1, a, a + 8)``: wall_time)."""
    pos, end = rec.data_start, rec.data_start + rec.length
    while pos < end:
        key, pos = _varint(w, pos, end, rec)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = _varint(w, pos, end, rec)
            a, b = v, 0
        elif wt == 2:
            n, pos = _varint(w, pos, end, rec)
            a, b = pos, pos + n
            pos = b
        elif wt in (1, 5):
            a, b = pos, pos + (8 if wt == 1 else 4)
            pos = b
        else:
            raise _bad(rec, pos, "wire type %d is not one an Event uses" % wt)
        if field == 0 or pos > end:
            raise _bad(rec, pos, "a field runs past the end of its message")
        yield field, wt, a, b


def _summary(w: Window, rec: Record, head: Listed, start: int, end: int) -> Listed:
    """A summary's values (tag and plugin, the first :data:`TAGS_MAX`) and the graphs of its
    trace_export values (each RunMetadata's function graphs, numbered as ``--record R.G``)."""
    values: List[Value] = []
    count = 0
    places: List[Tuple[int, int]] = []
    for field, wt, a, b in _fields(w, start, end, rec):
        if field != 1 or wt != 2:
            continue
        count += 1
        tag, tensor, plugin = "", None, b""
        for vf, vwt, va, vb in _fields(w, a, b, rec):
            if vwt != 2:
                continue
            if vf == 1:
                tag = _text(w, va, vb)
            elif vf == 8:
                tensor = (va, vb)
            elif vf == 9:
                plugin = _plugin_name(w, va, vb, rec)
        if len(values) < TAGS_MAX:
            values.append(Value(tag, plugin.decode("utf-8", "replace")))
        if plugin in GRAPH_PLUGINS and tensor is not None:
            for sf, swt, sa, sb in _fields(w, tensor[0], tensor[1], rec):
                if sf == 8 and swt == 2:  # string_val[0]: the RunMetadata
                    places.extend(_function_graphs(w, sa, sb, rec))
                    break
    n = len(places)
    graphs = tuple(Graph("%d.%d" % (rec.index, k) if n > 1 else "%d" % rec.index, b - a, GRAPHDEF, a, b)
                   for k, (a, b) in enumerate(places))
    return head._replace(values=tuple(values), value_count=count, graphs=graphs)


def _string_field(w: Window, start: int, end: int, rec: Record, number: int) -> Optional[str]:
    """The message's string field ``number`` (its first :data:`TEXT_MAX` bytes), or None."""
    for f, wt, a, b in _fields(w, start, end, rec):
        if f == number and wt == 2:
            return _text(w, a, b)
    return None


def _text(w: Window, a: int, b: int) -> str:
    """A string's first :data:`TEXT_MAX` bytes, decoded (a cut one ends in an ellipsis)."""
    text = w.get(a, min(b - a, TEXT_MAX)).decode("utf-8", "replace")
    return text + "\u2026" if b - a > TEXT_MAX else text
