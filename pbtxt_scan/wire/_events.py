"""Where the graphs are in a TensorBoard event file, found by the length prefixes alone.

An event file is TFRecord framing (``_tfrecord``) around one ``tensorflow.Event`` a record.
:func:`scan` walks the records' headers and, in each Event, the fields down to where a graph
lies; a graph is a byte range of the file (:class:`Place`) that the wire lane then reads as it
reads a ``.pb`` or ``.meta`` (``graph._input`` narrows the open file to it). Nothing is copied,
and nothing but field tags and lengths (and the few short strings that name a summary's plugin)
is read: a record's payload, a histogram or an image, is stepped over by its length. Which of the
graphs found is read, and how it is named, is ``_events_pick``'s.

Field numbers, each checked against TensorFlow's and TensorBoard's ``.proto`` files (the table in
``tests/data/README.md``, ``events/``, read from the tensorflow-cpu 2.15.1 wheel):

- ``tensorflow/core/util/event.proto``: ``Event`` wall_time = 1 (double), step = 2, file_version
  = 3, graph_def = 4 (a serialized ``GraphDef``: ``FileWriter(logdir, graph)``, ``add_graph``, the
  Keras callback's train graph), summary = 5, log_message = 6, session_log = 7,
  tagged_run_metadata = 8, meta_graph_def = 9 (a serialized ``MetaGraphDef``, graph in its field
  2: ``add_meta_graph``, an Estimator), source_metadata = 10.
- ``tensorflow/core/framework/summary.proto``: ``Summary`` value = 1; ``Summary.Value`` tag = 1,
  tensor = 8, metadata = 9 (written after the payload); ``SummaryMetadata`` plugin_data = 1;
  ``SummaryMetadata.PluginData`` plugin_name = 1.
- ``tensorflow/core/framework/tensor.proto``: ``TensorProto`` string_val = 8.
- ``tensorflow/core/protobuf/config.proto``: ``RunMetadata`` function_graphs = 4;
  ``RunMetadata.FunctionGraphs`` pre_optimization_graph = 2 (the function's graph as traced).

``tf.summary.trace_export`` writes a summary whose plugin is ``graph_run_metadata_graph`` (or
``graph_run_metadata`` with the profiler) and whose tensor's ``string_val[0]`` is a RunMetadata:
each ``function_graphs[i].pre_optimization_graph`` is a graph. The ``graph_keras_model`` plugin
is a Keras model's JSON config (layers, not ops): counted, so the tool can say so.

Memory: the last :data:`KEEP` graphs' places (a few integers each) and the set of plugin names.
"""
from __future__ import annotations

import collections
import re
import struct
from typing import Deque, Dict, Iterator, List, Optional, Set, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from ._tfrecord import FOOTER, HEADER, CutShort, ReadAt, Record, Window, iter_records
from ..source._crc32c import masked_crc32c
from ._wire_read import GRAPHDEF, METAGRAPH

KEEP = 64  # graphs whose places are kept (the last ones: the training graph is looked for from the end)
GRAPH_PLUGINS = (b"graph_run_metadata_graph", b"graph_run_metadata")
KERAS_PLUGIN = b"graph_keras_model"
_NAME_MAX = 256  # a plugin name or tag longer than this is not read (no plugin has one)
_CONFIG_MAX = 1 << 20  # a model config longer than this is not read (which Keras wrote it is then unsaid)
_KERAS_VERSION = re.compile(rb'"keras_version": *"([0-9][0-9.]*)')


class Place(NamedTuple):
    """A graph in the event file: record ``record`` (its header at ``offset``), bytes ``[start,
    end)`` of kind ``kind`` (``graphdef`` or ``metagraph``); ``where`` says which field holds it;
    ``graph``: which of the record's graphs it is (a trace's summary holds one a traced function)."""

    record: int
    offset: int
    start: int
    end: int
    kind: str
    where: str
    step: int
    graph: int = 0


class Scan:
    """What :func:`scan` found: the record count, the last graphs' places (all of ``record``'s when
    one was asked), how many graphs in all, and what else there was."""

    __slots__ = ("records", "graphs", "places", "asked", "plugins", "keras_models", "keras", "size", "cut",
                 "end")

    def __init__(self, size: int) -> None:
        self.size = size
        self.records = 0
        self.graphs = 0
        self.places: Deque[Place] = collections.deque(maxlen=KEEP)
        self.asked: List[Place] = []  # the graphs of the record --record names
        self.plugins: Set[str] = set()
        self.keras_models = 0
        self.keras: Optional[str] = None  # which Keras wrote the first model config: "3", or its keras_version
        self.cut: Optional[PbtxtError] = None  # the last record, cut short (still being written)
        self.end = 0  # where the records read end (a part's: the first record it did not read)


def scan(
    read_at: ReadAt, size: int, *, record: Optional[int] = None, window: int = 1 << 20, walk_first: int = 256,
    start: int = 0, stop: Optional[int] = None,
) -> Scan:
    """Every record's header and where each Event's graphs are, in one pass (on several
    processes: ``_events_split.scan``). ``record``: keep that record's graphs whatever comes
    after it. ``window``: what one read takes (a summary across its end is read again whole, up to
    this size; a longer one is walked by its fields). ``walk_first``: how many summaries are
    walked field by field whatever they hold (for the plugin names said when there is no graph);
    later ones only when they may hold a graph. ``start``, ``stop``: only the records whose
    headers are in that range (a header must be at ``start``), counted from the first read."""
    out = Scan(size)
    w = Window(read_at, window)
    try:
        for rec in _candidates(w, size, out, walk_first, start, size if stop is None else stop):
            for place in _graphs(w, rec, out):
                out.graphs += 1
                out.places.append(place)
                if rec.index == record:
                    out.asked.append(place)
    except CutShort as e:  # (a training still writing: the records before it are whole)
        if not out.records and not start:
            raise
        out.cut = e
    return out


def _candidates(w: Window, size: int, out: Scan, walk_first: int, start: int, until: int) -> Iterator[Record]:
    """The records that may hold a graph (``out.records`` counts them all), by their first bytes.

    This is the one loop over a file's (a million, in a 1 GB file of summaries) records, so it
    reads TensorFlow's layout off the window directly: an Event starts with ``wall_time`` (tag
    0x09 and 8 bytes), then ``step`` (0x10, a varint) unless it is 0, then the one field of its
    ``what``. Records whose field cannot hold a graph (``file_version``, ``session_log``...) are
    stepped over; so is a summary whose bytes, all in the window, hold no graph plugin's name (a
    byte search; one that runs across the window's end is read again whole first); every other
    record is walked field by field (:func:`_graphs`). The first ``walk_first`` summaries are
    walked anyway, for the plugin names a file without a graph is said to hold. Same records, same errors as :func:`_tfrecord.iter_records` (its loop, inlined).
    """
    length_crcs: Dict[int, int] = {}  # (summaries of one kind have a few lengths: their CRCs once)
    offset, index, walked = start, 0, 0
    unpack = _HEAD.unpack_from
    no_graph = _NO_GRAPH
    buf, base = w.buf, w.at
    blen = len(buf)
    try:
        while offset < until:
            i = offset - base
            if i < 0 or i + _PEEK > blen:
                w.get(offset, _PEEK)
                buf, base, i = w.buf, w.at, 0
                blen = len(buf)
                if blen < HEADER:
                    _fail(w, size, offset, index)
            length, length_crc = unpack(buf, i)
            crc = length_crcs.get(length)
            if crc is None:
                crc = masked_crc32c(buf[i : i + 8])
                if len(length_crcs) < _CRCS_KEPT:
                    length_crcs[length] = crc
            at = offset
            if crc != length_crc or offset + length + _FRAME > size:
                _fail(w, size, at, index)
            offset += length + _FRAME
            index += 1
            d = i + HEADER
            stop = d + length
            if length < 10 or buf[d] != 0x09:  # (not TensorFlow's layout: walked)
                what = -1
            else:
                p = d + 9
                if buf[p] == 0x10:
                    p += 1
                    while buf[p] & 0x80 and p < d + 20:
                        p += 1
                    p += 1
                what = buf[p] if p < stop else -1
            if what in no_graph:
                continue
            if what == 0x2A and walked >= walk_first:
                if stop > blen and length < w.span:  # (across the window's end: read it whole)
                    w.get(at, HEADER + length + FOOTER)
                    buf, base = w.buf, w.at
                    blen = len(buf)
                    p -= d - HEADER
                    d, stop = HEADER, HEADER + length
                if stop <= blen and buf.find(b"graph_", p, stop) < 0:
                    continue
            if what == 0x2A:
                walked += 1
            out.records = index
            yield Record(index - 1, at, at + HEADER, length)
            buf, base = w.buf, w.at  # (the walk may have moved the window)
            blen = len(buf)
    finally:
        out.records = index
        out.end = offset


def _fail(w: Window, size: int, offset: int, index: int) -> None:
    """Raise the error :func:`_tfrecord.iter_records` gives for the record at ``offset``."""
    for _ in iter_records(w.read_at, size, window=w, start=offset, index=index, stop=offset + 1):
        pass
    raise PbtxtError("record %d: its header does not hold" % index, offset=offset)  # (not reached)


_HEAD = struct.Struct("<QI")
_FRAME = HEADER + FOOTER
_PEEK = HEADER + 64  # a record's header and its Event's first fields
_CRCS_KEPT = 1 << 16
# The tags of the Event fields whose graphs are not read: file_version (3), log_message (6),
# session_log (7), tagged_run_metadata (8: TF1 add_run_metadata's partition graphs, as placed
# and partitioned, not the graph written), source_metadata (10). (graph_def 4, summary 5 and
# meta_graph_def 9 are walked.)
_NO_GRAPH = frozenset({0x1A, 0x32, 0x3A, 0x42, 0x52})


def _graphs(w: Window, rec: Record, out: Scan) -> Iterator[Place]:
    start, end = rec.data_start, rec.data_start + rec.length
    step = 0
    for field, wt, a, b in _fields(w, start, end, rec):
        if field == 2 and wt == 0:
            step = a
        elif wt != 2:
            continue
        elif field == 4:
            yield Place(rec.index, rec.offset, a, b, GRAPHDEF, "graph_def", step)
        elif field == 9:
            yield Place(rec.index, rec.offset, a, b, METAGRAPH, "meta_graph_def", step)
        elif field == 5:
            for k, (fa, fb, tag) in enumerate(_run_metadata_graphs(w, a, b, rec, out)):
                yield Place(rec.index, rec.offset, fa, fb, GRAPHDEF, "function graph %d of summary %r" % (k, tag), step, k)


def _run_metadata_graphs(w: Window, start: int, end: int, rec: Record, out: Scan) -> Iterator[Tuple[int, int, str]]:
    """A Summary's graphs: of each value whose plugin is a graph plugin, the tensor's RunMetadata's
    function graphs (``pre_optimization_graph``), with the value's tag."""
    for field, wt, a, b in _fields(w, start, end, rec):
        if field != 1 or wt != 2:
            continue
        tag, tensor, plugin = "", None, b""
        for vf, vwt, va, vb in _fields(w, a, b, rec):
            if vwt != 2:
                continue
            if vf == 1 and vb - va <= _NAME_MAX:
                tag = w.get(va, vb - va).decode("utf-8", "replace")
            elif vf == 8:
                tensor = (va, vb)
            elif vf == 9:
                plugin = _plugin_name(w, va, vb, rec)
        if plugin:
            out.plugins.add(plugin.decode("utf-8", "replace"))
        if plugin == KERAS_PLUGIN:
            out.keras_models += 1
            if out.keras is None and tensor is not None and tensor[1] - tensor[0] <= _CONFIG_MAX:
                out.keras = _keras_of(w.get(tensor[0], tensor[1] - tensor[0]))
        if plugin in GRAPH_PLUGINS and tensor is not None:
            for sf, swt, sa, sb in _fields(w, tensor[0], tensor[1], rec):
                if sf == 8 and swt == 2:  # string_val[0]: the RunMetadata
                    for fa, fb in _function_graphs(w, sa, sb, rec):
                        yield fa, fb, tag
                    break


def _keras_of(config: bytes) -> Optional[str]:
    """Which Keras wrote a model config: ``"3"`` (Keras 3 serializes ``{"module": "keras", ...}``),
    else the ``keras_version`` it names (tf.keras and tf_keras: ``"2.15.0"``)."""
    m = _KERAS_VERSION.search(config)
    if m is not None:
        return m.group(1).decode("ascii")
    return "3" if b'{"module": "keras' in config else None


def _plugin_name(w: Window, start: int, end: int, rec: Record) -> bytes:
    for f, wt, a, b in _fields(w, start, end, rec):
        if f == 1 and wt == 2:  # plugin_data
            for pf, pwt, pa, pb in _fields(w, a, b, rec):
                if pf == 1 and pwt == 2 and pb - pa <= _NAME_MAX:  # plugin_name
                    return w.get(pa, pb - pa)
    return b""


def _function_graphs(w: Window, start: int, end: int, rec: Record) -> Iterator[Tuple[int, int]]:
    for f, wt, a, b in _fields(w, start, end, rec):
        if f == 4 and wt == 2:  # function_graphs
            for gf, gwt, ga, gb in _fields(w, a, b, rec):
                if gf == 2 and gwt == 2:  # pre_optimization_graph
                    yield ga, gb


def _fields(w: Window, start: int, end: int, rec: Record) -> Iterator[Tuple[int, int, int, int]]:
    """The fields of the message at ``[start, end)``: ``(number, wire type, a, b)``, where ``(a, b)``
    is the value's byte range for a length-delimited field, and ``(value, 0)`` for a varint."""
    pos = start
    while pos < end:
        key, pos = _varint(w, pos, end, rec)
        field, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = _varint(w, pos, end, rec)
            yield field, wt, v, 0
            continue
        if wt == 2:
            n, pos = _varint(w, pos, end, rec)
            if pos + n > end:
                raise _bad(rec, pos, "a field runs past the end of its message")
            yield field, wt, pos, pos + n
            pos += n
        elif wt == 1:
            pos += 8
        elif wt == 5:
            pos += 4
        else:
            raise _bad(rec, pos, "wire type %d is not one an Event uses" % wt)
        if field == 0 or pos > end:
            raise _bad(rec, pos, "a field runs past the end of its message")


def _varint(w: Window, pos: int, end: int, rec: Record) -> Tuple[int, int]:
    data = w.get(pos, min(10, end - pos))
    v = shift = 0
    for i, b in enumerate(data):
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, pos + i + 1
        shift += 7
    raise _bad(rec, pos, "a varint runs past the end of its message")


def _bad(rec: Record, pos: int, why: str) -> PbtxtError:
    return PbtxtError("record %d is not a valid Event: %s" % (rec.index, why), offset=pos)
