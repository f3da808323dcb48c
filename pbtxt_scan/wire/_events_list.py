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
over :data:`HELD_MAX` (64 KiB, the window) is never held whole. A smaller one (most: a summary of a
few values) is read once, for its CRC and its fields, and walked in memory (``_Held``: the same
fields and errors as the walk by the length prefixes, ``_Walked``; tests/test_events_listed.py
holds them equal on every fixture and on mutated records).

Every record's data CRC is checked (a record at a time, in 1 MiB reads); without the CRC library,
pure Python checks the first :data:`PURE_BUDGET` bytes of data and the lister says how many
records it left. A bad CRC, a cut record or an Event that does not hold stops the listing there:
the records before it have been listed.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Iterator, List, Optional, Tuple

from .._kit import NamedTuple
from ..source._crc32c import PURE_MAX, fast
from ._events import _NAME_MAX, GRAPH_PLUGINS, _bad, _fields, _varint
from ._tfrecord import FOOTER, ReadAt, Record, Window, check_data, iter_records
from ._wire_read import GRAPHDEF, METAGRAPH

TEXT_MAX = 256  # a string shown (a tag, a message) is cut to this many bytes
TAGS_MAX = 64  # a summary's values listed (the rest counted)
PURE_BUDGET = PURE_MAX  # without the CRC library, the data bytes whose CRC pure Python checks (about 2 s)
HELD_MAX = 1 << 16  # a record up to this size is read once, for its CRC and its fields (the window's size)

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
            if rec.length <= HELD_MAX:  # (most records: a summary of a few values, read once, walked in memory)
                r: Any = _Held(data.get(rec.data_start, rec.length + FOOTER), rec)
            else:
                r = _Walked(data, rec)
            self._check(r.get, rec)
            yield _listed(r, rec)

    def _check(self, read: ReadAt, rec: Record) -> None:
        """The record's data CRC, read through the fields' window (a run of small records: one read)."""
        if self._budget is not None:
            if rec.length > self._budget:
                self.unchecked += 1
                return
            self._budget -= rec.length
        check_data(read, rec, chunk=1 << 20)


def listing(read_at: ReadAt, size: int) -> Iterator[Listed]:
    """Every record of the event file, in order (:class:`Lister`, when its count of unchecked CRCs is wanted)."""
    return Lister(read_at, size).records()


class _Walked:
    """A big record's fields, read through a window by their length prefixes (``_events._fields``)."""

    __slots__ = ("w", "rec")

    def __init__(self, w: Window, rec: Record) -> None:
        self.w = w
        self.rec = rec

    def get(self, pos: int, n: int) -> bytes:
        return self.w.get(pos, n)

    def fields(self, start: int, end: int) -> Iterator[Tuple[int, int, int, int]]:
        return _fields(self.w, start, end, self.rec)

    def event_fields(self) -> Iterator[Tuple[int, int, int, int]]:
        """The Event's top-level fields, fixed64 ones too (``(number, 1, a, a + 8)``: wall_time)."""
        w, rec = self.w, self.rec
        pos, end = rec.data_start, rec.data_start + rec.length
        while pos < end:
            key, pos = _varint(w, pos, end, rec)
            field, wt = key >> 3, key & 7
            if wt == 0:  # (a varint, field 0 too: as ``_events._fields`` takes it)
                v, pos = _varint(w, pos, end, rec)
                yield field, 0, v, 0
                continue
            if wt == 2:
                n, pos = _varint(w, pos, end, rec)
                if pos + n > end:  # (said where its data starts, as ``_events._fields`` says it)
                    raise _bad(rec, pos, "a field runs past the end of its message")
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


class _Held:
    """A small record's data (and its CRC), held: its fields walked in memory, as :class:`_Walked`
    walks them (the same fields, the same errors), at a tenth of the cost."""

    __slots__ = ("buf", "base", "rec")

    def __init__(self, buf: bytes, rec: Record) -> None:
        self.buf = buf
        self.base = rec.data_start
        self.rec = rec

    def get(self, pos: int, n: int) -> bytes:
        i = pos - self.base
        return self.buf[i : i + n]

    def event_fields(self) -> Iterator[Tuple[int, int, int, int]]:
        return self.fields(self.rec.data_start, self.rec.data_start + self.rec.length)

    def fields(self, start: int, end: int) -> Iterator[Tuple[int, int, int, int]]:
        base = self.base
        i, stop = start - base, min(end - base, self.rec.length)
        while i < stop:
            key, i = self._varint(i, stop)
            field, wt = key >> 3, key & 7
            if wt == 0:
                v, i = self._varint(i, stop)
                yield field, 0, v, 0  # (field 0 too, as ``_events._fields`` takes it)
                continue
            if wt == 2:
                n, i = self._varint(i, stop)
                a = i
                i += n
            elif wt == 1 or wt == 5:
                a = i
                i += 8 if wt == 1 else 4
            else:
                raise _bad(self.rec, base + i, "wire type %d is not one an Event uses" % wt)
            if field == 0 or i > stop:
                raise _bad(self.rec, base + (a if wt == 2 and i > stop else i), "a field runs past the end of its message")
            yield field, wt, base + a, base + i

    def _varint(self, i: int, stop: int) -> Tuple[int, int]:
        buf = self.buf
        b = buf[i] if i < stop else 0x80
        if b < 0x80:  # (the usual one-byte varint)
            return b, i + 1
        v = shift = 0
        for j in range(i, min(stop, i + 10)):
            b = buf[j]
            v |= (b & 0x7F) << shift
            if b < 0x80:
                return v, j + 1
            shift += 7
        raise _bad(self.rec, self.base + i, "a varint runs past the end of its message")


def _listed(r: Any, rec: Record) -> Listed:
    """One record's line, read through ``r`` (:class:`_Held` or :class:`_Walked`)."""
    wall: Optional[float] = None
    step, field, a, b = 0, 0, 0, 0
    for f, wt, fa, fb in r.event_fields():
        if f == 1 and wt == 1:
            t = struct.unpack("<d", r.get(fa, 8))[0]
            wall = t if math.isfinite(t) else None
        elif f == 2 and wt == 0:
            step = fa - (1 << 64) if fa >= 1 << 63 else fa
        elif f in WHAT and wt == 2:
            field, a, b = f, fa, fb  # (the oneof: the last one set is the one)
    what = WHAT.get(field, "empty")
    head = Listed(rec.index, rec.offset, rec.length, wall, step, what)
    if field == 5:
        return _summary(r, rec, head, a, b)
    if field in (4, 9):
        kind = GRAPHDEF if field == 4 else METAGRAPH
        return head._replace(graphs=(Graph("%d" % rec.index, b - a, kind, a, b),))
    if field in (3, 8):  # file_version; tagged_run_metadata.tag
        return head._replace(text=_text(r, a, b) if field == 3 else _string_field(r, a, b, 1))
    if field == 6:  # log_message.message
        return head._replace(text=_string_field(r, a, b, 2))
    if field == 7:  # session_log.status
        status = next((v for sf, swt, v, _ in r.fields(a, b) if sf == 1 and swt == 0), 0)
        return head._replace(text=_SESSION.get(status, "status %d" % status))
    return head


def _summary(r: Any, rec: Record, head: Listed, start: int, end: int) -> Listed:
    """A summary's values (tag and plugin, the first :data:`TAGS_MAX`) and the graphs of its
    trace_export values (each RunMetadata's function graphs, numbered as ``--record R.G``)."""
    values: List[Value] = []
    count = 0
    places: List[Tuple[int, int]] = []
    for field, wt, a, b in r.fields(start, end):
        if field != 1 or wt != 2:
            continue
        count += 1
        tag, tensor, plugin = "", None, b""
        for vf, vwt, va, vb in r.fields(a, b):
            if vwt != 2:
                continue
            if vf == 1:
                tag = _text(r, va, vb)
            elif vf == 8:
                tensor = (va, vb)
            elif vf == 9:
                plugin = _plugin_name(r, va, vb)
        if len(values) < TAGS_MAX:
            values.append(Value(tag, plugin.decode("utf-8", "replace")))
        if plugin in GRAPH_PLUGINS and tensor is not None:
            for sf, swt, sa, sb in r.fields(tensor[0], tensor[1]):
                if sf == 8 and swt == 2:  # string_val[0]: the RunMetadata
                    places.extend(_function_graphs(r, sa, sb))
                    break
    n = len(places)
    graphs = tuple(Graph("%d.%d" % (rec.index, k) if n > 1 else "%d" % rec.index, b - a, GRAPHDEF, a, b)
                   for k, (a, b) in enumerate(places))
    return head._replace(values=tuple(values), value_count=count, graphs=graphs)


def _plugin_name(r: Any, start: int, end: int) -> bytes:
    """A SummaryMetadata's plugin_data (1).plugin_name (1), as ``_events`` reads it."""
    for f, wt, a, b in r.fields(start, end):
        if f == 1 and wt == 2:
            for pf, pwt, pa, pb in r.fields(a, b):
                if pf == 1 and pwt == 2 and pb - pa <= _NAME_MAX:
                    return bytes(r.get(pa, pb - pa))
    return b""


def _function_graphs(r: Any, start: int, end: int) -> Iterator[Tuple[int, int]]:
    """A RunMetadata's function_graphs (4), each one's pre_optimization_graph (2), as ``_events`` finds them."""
    for f, wt, a, b in r.fields(start, end):
        if f == 4 and wt == 2:
            for gf, gwt, ga, gb in r.fields(a, b):
                if gf == 2 and gwt == 2:
                    yield ga, gb


def _string_field(r: Any, start: int, end: int, number: int) -> Optional[str]:
    """The message's string field ``number`` (its first :data:`TEXT_MAX` bytes), or None."""
    for f, wt, a, b in r.fields(start, end):
        if f == number and wt == 2:
            return _text(r, a, b)
    return None


def _text(r: Any, a: int, b: int) -> str:
    """A string's first :data:`TEXT_MAX` bytes, decoded (a cut one ends in an ellipsis)."""
    text = r.get(a, min(b - a, TEXT_MAX)).decode("utf-8", "replace")
    return text + "\u2026" if b - a > TEXT_MAX else text
