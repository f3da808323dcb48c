"""The scanner's view of the input bytes: a buffer refilled in chunks, UTF-8 judged once.

Both readers judge UTF-8 with :func:`utf8_end` (a character cut by the chunk edge waits for the
next chunk; the first invalid byte stops the text before it, so the general scanner reports it
where it is). :class:`Window` is the fast path's buffer of whole lines; the lexer (``_lexer``)
keeps its own token-sized buffer over the same function.
"""
from __future__ import annotations

from typing import BinaryIO, Optional, Tuple

from .._errors import PbtxtError
from ..source._source import BOM


def utf8_end(buf: bytes, start: int, final: bool) -> Tuple[int, Optional[int]]:
    """How far from ``start`` ``buf`` is judged valid UTF-8, and the index of its first invalid
    byte (or None). Unless ``final``, a multi-byte character cut by the end of ``buf`` is left
    for the next chunk to complete."""
    end = len(buf)
    if not final:
        k = end - 1
        while k >= start and k > end - 4 and 0x80 <= buf[k] < 0xC0:
            k -= 1
        if k >= start and buf[k] >= 0xC0:
            end = k
    try:
        buf[start:end].decode("utf-8")
    except UnicodeDecodeError as e:
        return start + e.start, start + e.start
    return end, None


class Window:
    """Whole lines of ``f`` in ``buf``: ``buf[pos]`` starts the current line, ``buf[:lim]`` is
    valid UTF-8, ``base`` is the file offset of ``buf[0]``."""

    def __init__(self, f: BinaryIO, chunk_size: int, start_offset: int = 0) -> None:
        self.f = f
        self.origin = start_offset  # the file offset of f's first byte
        self.chunk = max(1, chunk_size)
        self.buf = b""
        self.base = start_offset  # absolute offset of buf[0]
        self.pos = 0  # start of the current line in buf (nothing before it is needed again)
        self.lim = 0  # bytes of buf known to be valid UTF-8 text (or all of it but a cut character)
        self.eof = False
        self.bad: Optional[int] = None  # absolute offset of the first invalid UTF-8 byte
        self._checked = start_offset  # absolute offset up to which UTF-8 is validated

    def start(self) -> None:
        """Read the first bytes; skip a BOM at the file's start (offsets stay file offsets)."""
        while len(self.buf) < 3 and self._more() and not self.eof:
            pass
        if self.origin == 0 and self.buf.startswith(BOM):
            self.buf = self.buf[3:]
            self.base = 3
            self._checked = 3
            self._check_utf8()

    def _more(self) -> bool:
        """Drop what is before ``pos``, read more; False when nothing more will come."""
        if self.eof or self.bad is not None:
            return False
        pos = self.pos
        rest = len(self.buf) - pos
        try:
            data = self.f.read(max(self.chunk, rest))  # grows geometrically for long blocks/lines
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e)) from None
        if not data:
            self.eof = True
        cut = pos - 1  # keep the newline before the line: the field regexes start at one
        if cut > 0:
            self.buf = self.buf[cut:] + data
            self.base += cut
            self.pos = 1
        else:
            self.buf += data
        if self._checked == self.base + len(self.buf) - len(data) and data.isascii():
            self._checked += len(data)  # (the common case, without copying the chunk)
            self.lim = len(self.buf)
        else:
            self._check_utf8()
        return True

    def _check_utf8(self) -> None:
        end, bad = utf8_end(self.buf, self._checked - self.base, self.eof)
        if bad is not None:
            self.bad = self.base + bad
            self.lim = bad
            return
        self._checked = self.base + end
        self.lim = len(self.buf)

    def _seekable(self) -> bool:
        try:
            return bool(self.f.seekable())
        except (AttributeError, OSError, ValueError):
            return False
