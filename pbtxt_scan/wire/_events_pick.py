"""Which of an event file's graphs to read, and the notes that name it: :func:`choose` (the one
``--record`` names, else the training graph, found by a gradients scope in its node names), how a
graph is named (:func:`label`, :func:`describe`) and what a file without one holds
(:func:`no_graph`). The graphs' places are :func:`pbtxt_scan.wire._events.scan`'s."""
from __future__ import annotations

import re
from typing import Optional, Tuple

from .._errors import PbtxtError
from ._events import Place, Scan
from ._tfrecord import ReadAt

# A gradients scope in a node name's path (``gradients/``, ``gradients_3/``, ``gradient_tape/``): which
# of several graphs is the training one. (Only a pick among graphs: the rules decide on the graph.)
_GRADIENTS = re.compile(rb"(?<![A-Za-z0-9_.\-])(?:gradients(?:_[0-9]+)?|gradient_tape)/")
_SEARCH_CHUNK = 1 << 20


def has_gradients(read_at: ReadAt, place: Place) -> bool:
    """Whether a node name in the graph at ``place`` has a gradients scope (a byte search that stops
    at the first: the forward pass comes first, so about half the graph is read)."""
    pos = place.start
    keep = b""
    while pos < place.end:
        data = read_at(pos, min(_SEARCH_CHUNK, place.end - pos))
        if not data:
            return False
        chunk = keep + data
        if b"gradient" in chunk and _GRADIENTS.search(chunk):  # (the regex: 37 MB/s; the find first: GB/s)
            return True
        keep = data[-32:]
        pos += len(data)
    return False


def choose(read_at: ReadAt, found: Scan, record: Optional[int] = None, graph: Optional[int] = None) -> Tuple[Place, str]:
    """The graph to read, and why: the one of ``record`` (its graph ``graph``, counted from 0, when
    given), else the last one with a gradients scope (the training graph: an Estimator writes one a
    ``train`` call, ``trace_export`` one a trace), else the last one."""
    if record is not None:
        asked = "--record %s" % _label(record, graph)
        if not found.asked:
            raise PbtxtError("%s: %s" % (asked, _no_graph_in_record(found, record)))
        if graph is not None:
            if graph >= len(found.asked):
                raise PbtxtError("%s: record %d holds %s" % (asked, record, _graphs_of(record, len(found.asked))))
            return found.asked[graph], asked
        places = found.asked
    else:
        places = list(found.places)
    several = record is not None and len(places) > 1
    for p in reversed(places):
        if has_gradients(read_at, p):
            if record is not None:
                return p, "%s%s" % (asked, ": the last of its graphs with a gradients scope (--record %d.G reads another)"
                                    % record if several else "")
            return p, _why(found, "the last graph with a gradients scope")
    last = places[-1]
    if record is not None:
        return last, "%s (%s no gradients scope: a forward graph only)" % (
            asked, "none of its graphs has" if several else "it has")
    forward = ("a forward graph only: bp needs the training graph, and Keras 2.0-2.1's TensorBoard callback "
               "wrote no more")
    if found.graphs == 1:
        return last, "the file's one graph, which has no gradients scope (%s)" % forward
    return last, _why(found, "no graph has a gradients scope (%s), the last one" % forward)


def _why(found: Scan, what: str) -> str:
    if found.graphs == 1:
        return "the file's one graph"
    return "%s of the %d graphs in the file (--record reads another)" % (what, found.graphs)


def _no_graph_in_record(found: Scan, record: int) -> str:
    if record >= found.records:
        return "the file has %d records (0 to %d)" % (found.records, found.records - 1)
    with_graphs = sorted({p.record for p in found.places})
    return "record %d holds no graph; %s" % (
        record, "records with a graph: %s" % ", ".join(map(str, with_graphs)) if with_graphs else "no record holds one")


def _label(record: int, graph: Optional[int]) -> str:
    """How a graph is named in notes and taken by ``--record``: ``R``, or ``R.G`` (both from 0)."""
    return "%d" % record if graph is None else "%d.%d" % (record, graph)


def _graphs_of(record: int, n: int) -> str:
    return "one graph, %d.0" % record if n == 1 else "graphs %d.0 to %d.%d" % (record, record, n - 1)


def in_record(place: Place, found: Scan) -> int:
    """How many graphs the record of ``place`` holds (as far as the places kept tell)."""
    if found.asked and found.asked[0].record == place.record:
        return len(found.asked)
    return max(1, sum(1 for p in found.places if p.record == place.record))


def label(place: Place, found: Scan) -> str:
    """``13``, or ``1.4`` in a record of several graphs: what ``--record`` takes to read it again."""
    return _label(place.record, place.graph if in_record(place, found) > 1 else None)


def describe(place: Place, found: Scan) -> str:
    """``record 3 (records 0 to 6; step 0): graph_def, 39,082 bytes at offset 273``, or ``record 1.4
    (records 0 to 4, graphs 1.0 to 1.4; step 0): ...`` for a graph among several in its record: the
    note said on stderr, numbered as ``--record`` takes it."""
    n = in_record(place, found)
    said = "record %s (records 0 to %d%s; step %d): %s, %s bytes at offset %d" % (
        label(place, found), found.records - 1, ", %s" % _graphs_of(place.record, n) if n > 1 else "", place.step,
        place.where, format(place.end - place.start, ","), place.start)
    if found.cut is not None:
        said += " (record %d, the last, is cut short: the training may still be writing it)" % found.records
    return said


def no_graph(found: Scan) -> str:
    """What an event file without a graph holds, and what to give instead (one line)."""
    plugins = ", ".join(sorted(found.plugins)) or "none named"
    what = "this TensorBoard event file holds no graph (%d records; summary plugins: %s)" % (found.records, plugins)
    if found.keras_models and found.keras == "3":
        return (
            "%s, only a Keras 3 model's config (graph_keras_model: layers as JSON, not ops): Keras 3 (3.7 and later) "
            "writes no op graph, even with write_graph=True. Give a graph.pbtxt written with tf.io.write_graph, or "
            "train with tf_keras (TF_USE_LEGACY_KERAS=1, as Ascend's TF 2 adapter does), whose callback writes "
            "the train graph" % what
        )
    if found.keras_models:
        return (
            "%s, only a Keras model's config (graph_keras_model: layers as JSON, not ops). tf_keras's TensorBoard "
            "callback writes the op graph only once its batch hooks run (write_graph=True, and a train step logged: "
            "update_freq or profile_batch); give the train/ event file that has it, or a graph.pbtxt written with "
            "tf.io.write_graph" % what
        )
    return (
        "%s. Keras 3 (3.7 and later) writes no op graph even with write_graph=True, and a validation/ or eval/ "
        "folder never holds one: give the train/ event file of a run that wrote its graph (tf.compat.v1 FileWriter, an "
        "Estimator, tf_keras's callback, tf.summary.trace_export), or a graph.pbtxt written with tf.io.write_graph" % what
    )
