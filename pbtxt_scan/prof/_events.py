"""Reading profiler files in bounded memory: a JSON array of trace events one event at a time, and
CSV rows with their columns matched by normalised name (CANN versions spell headers differently:
``Start Time(us)`` / ``Task Start Time(us)``, ``Stream ID`` / ``Stream Id``; values end in TABs)."""
from __future__ import annotations

import csv
import json
import re
from typing import Any, Dict, Iterator, List, Optional, Sequence

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
    dec = json.JSONDecoder()
    try:
        f = open(path, "r", encoding="utf-8", errors="replace")
    except OSError as e:
        raise PbtxtError(e.strerror or str(e), path=path) from None
    with f:
        buf = f.read(_CHUNK)
        lines = 0  # lines wholly consumed before buf
        col0 = 0  # characters of buf's first line consumed before it
        eof = not buf
        i = 0
        started = False

        def drop(n: int) -> None:
            nonlocal buf, lines, col0, i
            head = buf[:n]
            k = head.count("\n")
            lines += k
            col0 = (len(head) - head.rfind("\n") - 1) if k else col0 + len(head)
            buf = buf[n:]
            i = 0

        while True:
            while i < len(buf) and buf[i] in _WS:
                i += 1
            if i == len(buf):
                if eof:
                    if not started:
                        raise PbtxtError("empty file: no trace events", path=path)
                    raise PbtxtError("the event list is cut short (no closing ])", line=lines + buf.count("\n") + 1,
                                     column=1, path=path)
                drop(i)
                more = f.read(_CHUNK)
                eof = not more
                buf += more
                continue
            c = buf[i]
            if not started:
                if c == "[":
                    started = True
                    i += 1
                    continue
                if c == "{":  # {"traceEvents": [ ... ]}: step into the list
                    j = buf.find("[", i)
                    if j < 0 and not eof and len(buf) < EVENT_MAX:
                        more = f.read(_CHUNK)
                        eof = not more
                        buf += more
                        continue
                    if j >= 0 and '"traceEvents"' in buf[i:j]:
                        started = True
                        i = j + 1
                        continue
                raise _where(path, buf, lines, col0, i)
            if c == "]":
                return
            if c != "{":
                raise _where(path, buf, lines, col0, i)
            try:
                obj, end = dec.raw_decode(buf, i)
            except ValueError:
                if eof or len(buf) - i > EVENT_MAX:
                    raise _where(path, buf, lines, col0, i) from None
                drop(i)
                more = f.read(_CHUNK)
                eof = not more
                buf += more
                continue
            if end == len(buf) and not eof:  # a number at the very end might go on: no, an object ends in }
                pass
            yield obj
            i = end
            if i > _CHUNK:
                drop(i)


def norm(name: str) -> str:
    """A header's normalised name: no unit in brackets, lower case, letters and digits only
    (``Task Start Time(us)`` -> ``taskstarttime``)."""
    return re.sub(r"[^a-z0-9]", "", re.sub(r"\([^)]*\)", "", name).lower())


class Columns:
    """Which column holds each wanted field, found by normalised header name (first that exists)."""

    def __init__(self, path: str, header: Sequence[str], wanted: Dict[str, Sequence[str]], need: Sequence[str]):
        names = {}
        for k, h in enumerate(header):
            names.setdefault(norm(h), k)
        self.at: Dict[str, Optional[int]] = {}
        for field, spellings in wanted.items():
            self.at[field] = next((names[s] for s in spellings if s in names), None)
        missing = [f for f in need if self.at[f] is None]
        if missing:
            raise PbtxtError("no %s column (header: %s)" % (", ".join(missing), ", ".join(h.strip() for h in header)),
                             line=1, column=1, path=path)

    def get(self, row: List[str], field: str) -> Optional[str]:
        k = self.at.get(field)
        if k is None or k >= len(row):
            return None
        v = row[k].strip()
        return None if v in ("", "N/A", "NA", "-") else v


def csv_rows(path: str, wanted: Dict[str, Sequence[str]], need: Sequence[str]) -> Iterator[Dict[str, Optional[str]]]:
    """Each data row of a CSV file as ``{field: stripped value or None}``, one row at a time."""
    try:
        f = open(path, "r", encoding="utf-8-sig", errors="replace", newline="")
    except OSError as e:
        raise PbtxtError(e.strerror or str(e), path=path) from None
    with f:
        r = csv.reader(f)
        try:
            header = next(r)
        except StopIteration:
            raise PbtxtError("empty file: no header", path=path) from None
        except csv.Error as e:
            raise PbtxtError(str(e), line=1, column=1, path=path) from None
        cols = Columns(path, header, wanted, need)
        while True:
            try:
                row = next(r)
            except StopIteration:
                return
            except csv.Error as e:
                raise PbtxtError(str(e), line=r.line_num, column=1, path=path) from None
            if row:
                d = {k: cols.get(row, k) for k in wanted}
                d["_line"] = str(r.line_num)
                yield d


def number(path: str, line: Any, field: str, v: Optional[str]) -> Optional[float]:
    """A CSV value as a number (None when absent); a non-number is an error at its line."""
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        raise PbtxtError("%s is %r, not a number" % (field, v), line=int(line), column=1, path=path) from None
