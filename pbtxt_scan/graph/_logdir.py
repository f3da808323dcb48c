"""A TensorBoard logdir: its runs, named as TensorBoard names them, and what its event files hold.

- :func:`runs`: every folder under the logdir that holds event files directly is a run, named by
  its path relative to the logdir (``train``, ``validation``, ``2024-01-01/train``; the logdir's
  own files are the run ``.``), its files oldest first (by the time in their names, then name).
- :func:`run_folder`: the folder of the run ``--run`` names; else an error naming the runs there.
- :func:`iter_events`: every record of an event file, or of each event file under a logdir with its
  run (``wire._events_list``: a record's header and the few fields its line shows), each file
  opened once, with the graph that fp and bp read from it by default.

The walk is bounded: :data:`DEPTH` folders deep, :data:`FOLDERS` folders in all, links not followed.
"""
from __future__ import annotations

import os
import re
from typing import Callable, Iterator, List, Optional, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError

DEPTH = 8
FOLDERS = 10000
EVENTS = "events.out.tfevents."
_TIME = re.compile(r"^events\.out\.tfevents\.([0-9]+)")


def is_event_name(name: str) -> bool:
    return name.startswith(EVENTS)


def runs(logdir: str) -> List[Tuple[str, List[str]]]:
    """``[(run, [event file paths, oldest first])]``, runs by name."""
    found: List[Tuple[str, List[str]]] = []
    todo = [(logdir, 0)]
    seen = 0
    while todo and seen < FOLDERS:
        folder, depth = todo.pop()
        seen += 1
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        files = [e.name for e in entries if is_event_name(e.name) and _is_file(e)]
        if files:
            rel = os.path.relpath(folder, logdir)
            found.append((rel.replace(os.sep, "/"), [os.path.join(folder, n) for n in sorted(files, key=_order)]))
        if depth < DEPTH:
            todo.extend((e.path, depth + 1) for e in reversed(entries) if _is_dir(e))
    return sorted(found)


def _order(name: str) -> Tuple[int, str]:
    m = _TIME.match(name)
    return (int(m.group(1)) if m else 0, name)


def _is_file(e: "os.DirEntry[str]") -> bool:
    try:
        return e.is_file()
    except OSError:
        return False


def _is_dir(e: "os.DirEntry[str]") -> bool:
    try:
        return e.is_dir(follow_symlinks=False)
    except OSError:
        return False


def run_name(run: str) -> str:
    """``--run``'s value as TensorBoard spells a run: ``/`` between folders, no ``./`` or trailing ``/``."""
    parts = [p for p in run.replace(os.sep, "/").split("/") if p and p != "."]
    return "/".join(parts) or "."


def run_folder(logdir: str, run: str) -> Tuple[str, List[str]]:
    """The folder of the run named ``run`` under ``logdir`` and its event files (oldest first);
    :class:`PbtxtError` naming the runs there when it has none of that name."""
    if not os.path.isdir(logdir):
        raise PbtxtError("--run picks a run under a TensorBoard logdir (a logs/ folder), and this is not a folder",
                         path=logdir)
    want = run_name(run)
    found = runs(logdir)
    for name, files in found:
        if name == want:
            return os.path.normpath(os.path.join(logdir, name)), files
    names = [name for name, _ in found]
    shown = ", ".join(_quoted(n) for n in names[:12]) + (", and %d more" % (len(names) - 12) if len(names) > 12 else "")
    raise PbtxtError("no run %s under this folder (%s)" % (
        _quoted(want), "its runs: %s" % shown if names else "it holds no event file: no run at all"), path=logdir)


def _quoted(name: str) -> str:
    return repr(name) if any(c < " " or c == "\x7f" for c in name) else name


class Event(NamedTuple):
    """One record of an event file (``listed``: ``wire._events_list.Listed``), with the file, its run
    (None for a file given itself) and ``read``: the graph fp and bp read from that file by default,
    as ``--record`` names it (None: none, or the file could not be scanned)."""

    file: str
    run: Optional[str]
    read: Optional[str]
    listed: object


def iter_events(path: str, *, run: Optional[str] = None, on_note: Optional[Callable[[str], None]] = None) -> Iterator[Event]:
    """Every record of the event file ``path`` (``-``: stdin), or of every event file under the
    logdir ``path`` (only the run ``run``'s, when given), file by file. A file that is no event
    file, or a record that does not hold, raises :class:`PbtxtError` after the records before it.
    ``on_note``: what is said on stderr (records whose CRC was not checked)."""
    todo: List[Tuple[str, Optional[str]]]
    if path != "-" and os.path.isdir(path):
        if run is not None:
            _, files = run_folder(path, run)
            todo = [(f, run_name(run)) for f in files]
        else:
            todo = [(f, name) for name, files in runs(path) for f in files]
        if not todo:
            raise PbtxtError("no TensorBoard event file (events.out.tfevents.*) under this folder", path=path)
    elif run is not None:
        raise PbtxtError("--run picks a run under a TensorBoard logdir (a logs/ folder), and this is %s" % (
            "stdin" if path == "-" else "a file"), path=path)
    else:
        todo = [(path, None)]
    for f, r in todo:
        yield from _file_events(f, r, on_note)


def _file_events(path: str, run: Optional[str], on_note: Optional[Callable[[str], None]]) -> Iterator[Event]:
    from ..source._kinds import is_event_file, not_a_graph
    from ..source._source import open_binary
    from ..source._store import store_of
    from ..wire import binary as _binary, events_list

    raw, name = open_binary(path)
    store = store_of(raw, name, spool=True, head_bytes=64)
    try:
        head = store.read_at(0, 4096)
        size = store.size or 0
        if not is_event_file(head) and not is_event_name(os.path.basename(path)):
            kind = _binary.sniff(head)
            why = "%s: fp, bp, nodes and show read it" % ("a " + _binary.describe(kind) if kind else "a graph")
            if kind is None:
                why = not_a_graph(head, complete=len(head) < 4096, name=name) or why
            raise PbtxtError("not a TensorBoard event file (%s)" % why, path=name)
        read = _default_graph(store.read_at, size)
        lister = events_list.Lister(store.read_at, size)
        try:
            for listed in lister.records():
                yield Event(name, run, read, listed)
        except PbtxtError as e:
            raise e.with_path(name) from None
        if lister.unchecked and on_note is not None:
            on_note("%s: %d %s data CRC not checked: this Python has no CRC-32C library (pure Python checks the first "
                    "%s bytes of data); pip install google-crc32c" % (
                        name, lister.unchecked, "records'" if lister.unchecked > 1 else "record's",
                        format(events_list.PURE_BUDGET, ",")))
    finally:
        store.close(path != "-")


def _default_graph(read_at: Callable[[int, int], bytes], size: int) -> Optional[str]:
    """The graph fp and bp read from the file by default, as ``--record`` names it (None: none, or
    the file does not scan: its listing then says where it stops)."""
    from ..parallel._cores import usable_cores
    from ..wire import events_pick, events_split

    try:
        found = events_split.scan(read_at, size, jobs=usable_cores())
        if not found.graphs:
            return None
        place, _ = events_pick.choose(read_at, found)
    except PbtxtError:
        return None
    return str(events_pick.label(place, found))
