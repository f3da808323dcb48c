"""An input's kind, told by its first bytes when it is opened: the store to read and the lane to
read it with (``_input``): the text lane, the nested text lane (a text SavedModel or MetaGraphDef),
the wire lane, or, for a TensorBoard event file, the wire lane on its graph's record (a
``source._store.RecordStore``, once the record's data CRC holds). A file of another kind is refused here.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from .._kit import NamedTuple
from ..text import TextLane
from ..wire import binary as _binary
from ._dialect import DIALECTS, container_of_head, dialect_of_head
from ..source._store import RecordStore, StreamStore
from .._errors import PbtxtError
from ..source._lane import Lane
from ..parallel._cores import usable_cores
from ..source._kinds import is_event_file, not_a_graph
from ..source._source import is_text

__all__ = ["Provenance", "lane_and_store", "text_lane"]


class Provenance(NamedTuple):
    """What was asked for and what was read, fixed when the input is opened."""

    asked: str  # the path as given (``-`` for stdin), or the name of an open stream
    record: Optional[int] = None  # --record: the event file's record asked for
    graph: Optional[int] = None  # and the graph in it
    picked: Optional[str] = None  # a folder was given: which file in it is read, and why (one line)
    chosen: Optional[str] = None  # an event file: which record's graph is read, and why (one line)
    record_read: Optional[str] = None  # an event file: the graph read as --record names it ("13", "1.4")
    unchecked: Optional[str] = None  # an event file whose graph record's data CRC was not checked: the note that says so
    events: Optional[Tuple[Any, Any]] = None  # an event file: (what _events.scan found, the place read)


def text_lane(g: Any) -> Lane:
    return TextLane(g, dialect_of_head)


def _wire_lane(g: Any, kind: Any) -> Lane:
    from ..wire import WireLane  # (loaded for a binary graph only: text never pays for the wire reader)

    return WireLane(g, kind, DIALECTS["graphdef"])


def lane_and_store(store: Any, asked: Provenance, lane: Optional[Any]) -> Tuple[Any, Any, Provenance]:
    """The store to read (an event file: its graph's record), the lane to read it with and what
    was read, told by the first bytes (``lane``: the caller's, whatever they are)."""
    name = store.name
    head = store.read_at(0, _binary.SNIFF_BYTES)
    kind = _binary.sniff(head)
    if lane is not None:
        return store, lane, asked
    if is_event_file(head):
        return _events_of(store, asked)
    if asked.record is not None:
        raise PbtxtError("--record applies to TensorBoard event files, and this is %s" % (
            "a " + _binary.describe(kind) if kind else "not one"), path=name)
    if kind is None:
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
            from ..text import NestedTextLane

            return store, lambda g: NestedTextLane(g, dialect_of_head, nested), asked
        return store, text_lane, asked
    if kind == _binary.SAVEDMODEL and isinstance(store, StreamStore):
        store = store.spooled_from_here()  # its train MetaGraph may come after the first: keep a way back
    return store, lambda g: _wire_lane(g, kind), asked


def _events_of(store: Any, asked: Provenance) -> Tuple[Any, Any, Provenance]:
    """A TensorBoard event file's graph: found by the records' length prefixes (``wire._events``),
    its record's data CRC checked, and the store narrowed to it, read by the wire lane like a ``.pb``."""
    from ..wire import check_graph_record, events_pick as _pick, events_split as _events_split

    name = store.name
    if isinstance(store, StreamStore):  # (a stream: its graph may be anywhere; the spool is read in place)
        spooled = store.spooled_from_here()
        try:
            return _events_of(spooled, asked)
        except BaseException:
            spooled.close(False)  # (the spool: the stream is the caller's to close)
            raise
    try:
        found = _events_split.scan(store.read_at, store.size or 0, record=asked.record, jobs=usable_cores())
        if not found.graphs:
            raise PbtxtError(_pick.no_graph(found))
        place, why = _pick.choose(store.read_at, found, asked.record, asked.graph)
        # Every byte an answer rests on is checked: the graph's record, whole, before any of it is read.
        unchecked = check_graph_record(store.read_at, place.record, place.offset)
    except PbtxtError as e:
        raise e.with_path(name) from None
    said = asked._replace(
        chosen="%s: reading %s: %s" % (name, _pick.describe(place, found), why),
        record_read=_pick.label(place, found),
        unchecked="%s: %s" % (name, unchecked) if unchecked else None,
        events=(found, place),
    )
    return RecordStore(store, place.start, place.end), lambda g: _wire_lane(g, place.kind), said
