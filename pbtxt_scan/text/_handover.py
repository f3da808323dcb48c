"""Leaving the fast path: the general scanner goes on from a line start with the walk's state.

The layout walk (``_canonical``) raises :class:`_HandOver` at the first line it does not take
(out of the layout, a head too long to take, an invalid byte ...). :func:`general_from` then
runs the general scanner (``_scan.scan_tokens``) from that line, inside the walk's open frames
(labels and the heads read so far included), after a complete field or not, so that positions
and errors are the general scanner's own.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, BinaryIO, Dict, Iterator, cast

from .._model import Block

if TYPE_CHECKING:
    from ._lexer import Lexer


class _HandOver(Exception):
    """Leave the fast path at absolute offset ``at`` (a line start, line number ``line``)."""

    def __init__(self, at: int, line: int, seek: bool = False) -> None:
        self.at = at
        self.line = line
        self.seek = seek


class _Chain:
    """A readable stream: some bytes first, then the rest of another stream."""

    def __init__(self, first: bytes, rest: BinaryIO) -> None:
        self._first = first
        self._rest = rest

    def read(self, n: int = -1) -> bytes:
        if self._first:
            if n < 0 or n >= len(self._first):
                out, self._first = self._first, b""
                return out
            out, self._first = self._first[:n], self._first[n:]
            return out
        return self._rest.read(n)


def end_of(lx: Lexer) -> Dict[str, int]:
    """The bytes and lines read, once the lexer has read to the end."""
    end = lx.base + len(lx.buf)
    line, col = lx.linecol(end)
    return {"bytes": end, "lines": line - 1 if col == 1 else line}


def general_from(w: Any, h: _HandOver) -> Iterator[Block]:
    """The general scanner from the line at ``h.at``, with the state of walk ``w`` (a
    ``_canonical._Walker``); then sets ``w.end_state``. (Its modules load here: a walk that never
    hands over, as on any file in the writer layout, loads neither the lexer nor the grammar.)"""
    from ._lexer import Lexer
    from ._scan import scan_tokens

    if h.seek:
        w.f.seek(h.at - w.origin)
        stream: BinaryIO = w.f
    else:
        stream = cast(BinaryIO, _Chain(w.buf[h.at - w.base :], w.f))  # (a file-like: read is all the lexer uses)
    lx = Lexer(stream, w.chunk, start_offset=h.at, start_line=h.line, path=w.display)
    # The field name an error would name: the last one read (a complete field's, or the
    # innermost opener's).
    last = w.last_name.decode("ascii") if w.after else (w.stack[-1].name if w.stack else "")
    yield from scan_tokens(
        lx, w.path, w.heads, w.stack, w.after, last, watch=getattr(w, "watch", None), top=getattr(w, "top", None)
    )
    w.end_state = end_of(lx)
