"""Reading profiler files in bounded memory: a JSON array of trace events one event at a time, and
CSV rows with their columns matched by normalised name (CANN versions spell headers differently:
``Start Time(us)`` / ``Task Start Time(us)``, ``Stream ID`` / ``Stream Id``; values end in TABs)."""
from __future__ import annotations

import csv
import json
import math
import re
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

from .._errors import PbtxtError

_CHUNK = 1 << 16
#: One event bigger than this is not a trace event: refuse rather than grow without bound.
EVENT_MAX = 64 << 20
_WS = " \t\r\n,"


def _where(path: str, text: str, consumed_lines: int, last_nl: int, pos: int) -> PbtxtError:
    nl = text.count("\n", 0, pos)
    col = pos - (text.rfind("\n", 0, pos) + 1) + (0 if nl else last_nl)
    return PbtxtError("not a trace event", line=consumed_lines + nl + 1, column=col + 1, path=path)


def json_events(path: str) -> Iterator[Dict[str, Any]]:
    """The objects of a JSON array (a Chrome trace) one by one, holding one event and one read
    chunk at a time; ``{"traceEvents": [...]}`` is read the same way from its list. A bad file is a
    :class:`PbtxtError` with its line and column."""
    for _, e in json_events_at(path):
        yield e


class _Chunks:
    """A text file read a chunk at a time: ``buf`` holds what is not yet dropped, with the lines and
    columns before it, so that a position in ``buf`` has its line and column in the file."""

    __slots__ = ("f", "buf", "eof", "lines", "col0", "at", "at_line")

    def __init__(self, f: Any) -> None:
        self.f = f
        self.buf = f.read(_CHUNK)
        self.eof = not self.buf
        self.lines = 0  # lines wholly consumed before buf
        self.col0 = 0  # characters of buf's first line consumed before it
        self.at, self.at_line = 0, 1  # buf[:at] is counted: at_line is the line at buf[at]

    def more(self) -> None:
        """The next chunk onto ``buf`` (``eof`` when there was none)."""
        more = self.f.read(_CHUNK)
        self.eof = not more
        self.buf += more

    def drop(self, n: int) -> None:
        """``buf[:n]`` read: drop it, counting its lines."""
        head = self.buf[:n]
        k = head.count("\n")
        self.lines += k
        self.col0 = (len(head) - head.rfind("\n") - 1) if k else self.col0 + len(head)
        if self.at < n:
            self.at_line += self.buf.count("\n", self.at, n)
            self.at = n
        self.at -= n
        self.buf = self.buf[n:]

    def error(self, path: str, i: int) -> PbtxtError:
        """"not a trace event" at ``buf[i]``'s line and column."""
        return _where(path, self.buf, self.lines, self.col0, i)


def json_events_at(path: str) -> Iterator[Tuple[int, Dict[str, Any]]]:
    """:func:`json_events` with each event's line (where its ``{`` is), for messages."""
    dec = json.JSONDecoder()
    try:
        f = open(path, "r", encoding="utf-8", errors="replace")
    except OSError as e:
        raise PbtxtError(e.strerror or str(e), path=path) from None
    with f:
        t = _Chunks(f)
        i = 0
        started = False
        while True:
            buf = t.buf
            while i < len(buf) and buf[i] in _WS:
                i += 1
            if i == len(buf):
                if t.eof:
                    if not started:
                        raise PbtxtError("empty file: no trace events", path=path)
                    raise PbtxtError("the event list is cut short (no closing ])", line=t.lines + buf.count("\n") + 1,
                                     column=1, path=path)
                t.drop(i)
                i = 0
                t.more()
                continue
            c = buf[i]
            if not started:
                if c == "[":
                    started = True
                    i += 1
                    continue
                if c == "{":  # {"traceEvents": [ ... ]}: step into the list
                    j = buf.find("[", i)
                    if j < 0 and not t.eof and len(buf) < EVENT_MAX:
                        t.more()
                        continue
                    if j >= 0 and '"traceEvents"' in buf[i:j]:
                        started = True
                        i = j + 1
                        continue
                raise t.error(path, i)
            if c == "]":
                return
            if c != "{":
                raise t.error(path, i)
            try:
                obj, end = dec.raw_decode(buf, i)
            except ValueError:
                if t.eof or len(buf) - i > EVENT_MAX:
                    raise t.error(path, i) from None
                t.drop(i)
                i = 0
                t.more()
                continue
            t.at_line += buf.count("\n", t.at, i)
            t.at = i
            yield t.at_line, obj
            i = end
            if i > _CHUNK:
                t.drop(i)
                i = 0


def norm(name: str) -> str:
    """A header's normalised name: no unit in brackets, lower case, letters and digits only
    (``Task Start Time(us)`` -> ``taskstarttime``)."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"\([^)]*\)", "", name).lower())


class Columns:
    """Which column holds each wanted field, found by normalised header name (first that exists)."""

    def __init__(self, path: str, header: Sequence[str], wanted: Mapping[str, Sequence[str]], need: Sequence[str]):
        names: Dict[str, int] = {}
        for k, h in enumerate(header):
            names.setdefault(norm(h), k)
        self.header = [h.strip() for h in header]
        self.at: Dict[str, Optional[int]] = {}
        for field, spellings in wanted.items():
            self.at[field] = next((names[s] for s in spellings if s in names), None)
        missing = [f for f in need if self.at[f] is None]
        if missing:
            raise PbtxtError("no %s column (header: %s)" % (", ".join(missing), ", ".join(self.header)),
                             line=1, column=1, path=path)
        #: The columns read: a row must reach the last of them.
        self.read = sorted(k for k in self.at.values() if k is not None)

    def get(self, row: List[str], field: str) -> Optional[str]:
        k = self.at.get(field)
        if k is None or k >= len(row):
            return None
        v = row[k].strip()
        return None if v in ("", "N/A", "NA", "-") else v


class Row:
    """One data row: its fields by name, as text or checked numbers (a bad one is an error at
    ``FILE:LINE``, naming the column as the header spells it)."""

    __slots__ = ("path", "line", "cols", "cells")

    def __init__(self, path: str, line: int, cols: Columns, cells: List[str]) -> None:
        self.path, self.line, self.cols, self.cells = path, line, cols, cells

    def text(self, field: str) -> Optional[str]:
        return self.cols.get(self.cells, field)

    def has(self, field: str) -> bool:
        return self.cols.at.get(field) is not None

    def bad(self, field: str, why: str) -> PbtxtError:
        k = self.cols.at[field]
        assert k is not None
        return PbtxtError("column %s is '%s', %s" % (self.cols.header[k], self.cells[k].strip(), why), line=self.line,
                          path=self.path)

    def number(self, field: str, need: bool = False) -> Optional[float]:
        """The field as a finite number; None when absent (empty, N/A), unless ``need``."""
        v = self.text(field)
        if v is None:
            if need and self.has(field):
                raise self.bad(field, "not a number")
            return None
        try:
            x = float(v)
        except ValueError:
            raise self.bad(field, "not a number") from None
        if not math.isfinite(x):
            raise self.bad(field, "not a number")
        return x

    def whole(self, field: str, need: bool = False) -> Optional[int]:
        """The field as a whole number (an id)."""
        x = self.number(field, need)
        if x is None:
            return None
        if x != int(x):
            raise self.bad(field, "not a whole number")
        return int(x)


def csv_rows(path: str, wanted: Mapping[str, Sequence[str]], need: Sequence[str]) -> Iterator[Row]:
    """Each data row of a CSV file, one row at a time. A row that stops before a column read is
    cut short (a run still writing, a copy cut off): an error, as is a last row with no newline
    that ends in a column read (its value may be cut)."""
    try:
        f = open(path, "r", encoding="utf-8-sig", errors="replace", newline="")
    except OSError as e:
        raise PbtxtError(e.strerror or str(e), path=path) from None
    last = [""]

    def lines() -> Iterator[str]:
        for ln in f:
            last[0] = ln
            yield ln

    with f:
        r = csv.reader(lines())
        try:
            header = next(r)
        except StopIteration:
            raise PbtxtError("empty file: no header", path=path) from None
        except csv.Error as e:
            raise PbtxtError(str(e), line=1, column=1, path=path) from None
        cols = Columns(path, header, wanted, need)
        end = cols.read[-1] if cols.read else -1
        row: List[str] = []
        while True:
            try:
                row = next(r)
            except StopIteration:
                break
            except csv.Error as e:
                raise PbtxtError(str(e), line=r.line_num, column=1, path=path) from None
            if row:
                if len(row) <= end:
                    k = next(k for k in cols.read if k >= len(row))
                    raise PbtxtError("column %s is missing: the row is cut short (%d of %d fields)" % (
                        cols.header[k], len(row), len(header)), line=r.line_num, path=path)
                yield Row(path, r.line_num, cols, row)
        if row and len(row) - 1 in cols.read and not last[0].endswith(("\n", "\r")):
            raise PbtxtError("column %s is '%s' where the file ends with no newline: the row may be cut short" % (
                cols.header[len(row) - 1], row[-1].strip()), line=r.line_num, path=path)


def json_number(path: str, line: int, what: str, v: Any, need: bool = True) -> Optional[float]:
    """A JSON event's value as a finite number (a numeric string too); None when absent and not
    ``need``; else an error at the event's line."""
    if v is None and not need:
        return None
    if not isinstance(v, bool):
        try:
            x = float(v)
        except (TypeError, ValueError):
            pass
        else:
            if math.isfinite(x):
                return x
    shown = "'%s'" % v if isinstance(v, str) else json.dumps(v)
    raise PbtxtError("%s is %s, not a number" % (what, shown), line=line, path=path)
