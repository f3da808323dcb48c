"""String lines of the writer layout: where a string field's line ends, and lines too long for the
window, streamed.

A string field is complete only when the next line starts with a field name or ``}`` (adjacent
literals concatenate across lines): :meth:`StringLines._string_ends`. A line longer than the walk's
``long`` (``_canonical._LONG``, or ``_SKIP_FROM`` with ``validate=False``) is a string field
streamed through its body regex (:meth:`StringLines._long_line`): at C speed first (``_skip``),
on several processes when longer than their window (``_skim_pool``), or, with ``validate=False``,
checked only for where it ends (:meth:`StringLines._body_ends`). Anything off hands the line over
to the general scanner. The sizes are the walk's (``_canonical``'s, read when a walk starts).
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO, Callable, List, Tuple, Union

from .._kit import regex
from .._errors import PbtxtError
from ..language._skip import body_end
from ..source._views import View
from . import _layout as layout
from ._frames import TARGET, Frame
from ._handover import _HandOver
from ._layout import NEXT_CHAR
from ._window import Window

if TYPE_CHECKING:
    from ._schema import Watch
    from ._skim_pool import Skimmer

_CLOSERS = regex(rb"(?: *\}\n)*")
_FIELD_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_}")


def _chunks(f: BinaryIO, size: int) -> "Callable[[int], Union[bytes, bytearray]]":
    """``read(offset)``: the next ``size`` bytes of ``f`` from ``offset`` (``f``'s own). On a
    regular file, positioned reads into one reused buffer: a fresh chunk each time costs a page
    fault per 4 KiB, about as much as the copy from the page cache itself."""
    if not isinstance(f, View) or not getattr(f._g, "offset_free", False) or not hasattr(os, "preadv"):
        return lambda _at: f.read(size)  # (a View of a GraphFile's store reads positioned; others read)
    g = f._g
    fd = g.fileno()
    start = f._start
    end = f._end
    buf = bytearray(size)

    def read(at: int) -> bytearray:
        n = size if end is None else min(size, end - start - at)
        try:
            got = os.preadv(fd, [buf], start + at) if n > 0 else 0
        except OSError as e:
            raise PbtxtError("read error: %s" % (e.strerror or e), path=g.name) from None
        got = min(got, max(n, 0))
        return buf if got == size else buf[:got]  # (a copy only at the input's end)

    return read


class StringLines(Window):
    """The walk's string lines (a mixin of ``_canonical._Walker``; the attributes below are the
    walk's state, set when it starts)."""

    stack: List[Frame]
    heads: "frozenset[str]"
    line: int
    after: bool
    last_name: bytes
    no_batch: int
    big: int
    long: int  # a line this long is streamed
    longest: int  # ... and one longer than this is never joined into the buffer (_canonical._LONG)
    keep: int  # validate=False: the bytes kept before a closing quote (_canonical._KEEP)
    skip_chunk: int  # ... and the size of the chunks it reads (_canonical._SKIP_CHUNK)
    validate: bool
    _skim: "Skimmer | None"  # made at the first long line (_skimmer), closed at the walk's end
    _skim_made: bool
    watch: "Watch | None"  # the schema checked too (``_schema``)

    def _string_ends(self, nl: int) -> int:
        """Whether the string ending the line at ``nl`` is followed by no adjacent string literal:
        the line's newline again (the buffer may have moved), or -1."""
        while True:
            m = NEXT_CHAR.match(self.buf, nl + 1, self.lim)
            if m is not None:
                return nl if self.buf[m.start(1)] in _FIELD_START else -1
            if self.bad is not None or self.lim - nl > self.longest:
                return -1
            at = nl - self.pos
            if not self._more():
                return nl  # the input ends (perhaps after spaces): nothing follows the string
            nl = self.pos + at

    def _long_line(self) -> None:
        """A line longer than ``long``: a string field streamed through its body regex (files that
        can seek back only, so the general scanner can take over at the line if anything is off)."""
        pos = self.pos
        start_abs = self.base + pos
        line = self.line
        d = len(self.stack)
        m = layout.long_line_re(d).match(self.buf, pos, self.lim)
        if m is None or not self._seekable():
            raise _HandOver(start_abs, line)
        fname = m.group(1).decode("ascii")  # (group 1 opens first: any group _atomic adds is inside it)
        if d and (fname == "name" or (self.stack[-1].kind == TARGET and fname in self.heads)):
            raise _HandOver(start_abs, line)  # its value is needed: let the general scanner read it
        quote = self.buf[m.end() - 1]
        head = bytes(self.buf[m.end() - 1 : m.end() + 15])  # (what a schema problem shows of it)
        from ._lexer import _WINDOW, _string_body  # (a long line's: the lexer's regexes load with the first)

        body = _string_body(quote)
        i = m.end()
        # Several processes first, on a line longer than their window (``_skim_pool``): they say
        # where the literal closes, or how far its body is plainly valid.
        done = False
        if not self.validate:
            i, done = self._body_ends(i, quote)
        sk = None if done else self._skimmer()
        if sk is not None and self.bad is None:
            at, done = sk.body(self.base + i, quote)
            if at != self.base + i:
                self._jump(at)
                i = self.pos
        while True:
            buf = self.buf
            lim = self.lim
            # C-speed first (``_skip``: a class map read by the bytes-escape decoder); where the
            # body is not plainly valid, the terminal's own regex decides, escape by escape.
            if done:
                j, closed, done = i, True, False  # (the closing quote, found by the skimmer)
            else:
                j, closed = body_end(buf, i, lim, quote)
            if not closed and j < lim - 12:
                win = lim if _WINDOW is None else min(lim, i + _WINDOW)  # (see _lexer._WINDOW)
                mb = body.match(buf, i, win)  # (a body may be empty: it always matches)
                j = i if mb is None else mb.end()
                if win < lim and j >= win - 12:
                    i = j  # the window's end, maybe inside an escape: go on from where the match stopped
                    continue
            if j + 1 < lim and buf[j] == quote and buf[j + 1] == 0x0A:
                self.pos = j  # (only a drop point now: the line start is gone from the buffer)
                nl = self._string_ends(j + 1)
                if nl < 0:
                    raise _HandOver(start_abs, line, seek=True)
                self.pos = nl + 1
                self.line = line + 1
                self.after = True
                self.last_name = m.group(1)
                if self.watch is not None:  # (the line taken whole: now it is fed, once)
                    self.watch.scalar(d, m.group(1), head, line)
                # (and so are the closers after it)
                mc = _CLOSERS.match(self.buf, self.pos, self.lim)  # (none at all is a match)
                self.no_batch = max(self.no_batch, self.base + (self.pos if mc is None else mc.end()))
                return
            if j >= lim - 12 and lim == len(buf) and not self.eof:
                self.pos = j
                self._more()
                i = self.pos
                continue
            raise _HandOver(start_abs, line, seek=True)

    def _body_ends(self, i: int, quote: int) -> Tuple[int, bool]:
        """``validate=False`` (fp, bp, listings): where the long literal whose body starts at
        ``buf[i]`` closes, at memchr speed, without reading its escapes.

        What is checked is what decides where the field ends, so blocks and lines come out as
        the exact road gives them: the closing quote is the line's last byte and unescaped (an
        even run of backslashes before it), and the body holds no NUL. The escapes inside (and
        the body's UTF-8) are left to ``check`` and ``stats`` (``validate=True``), as a binary
        graph's skipped fields are: TensorFlow's C-escapes make three quarters of a
        ``tensor_content``'s bytes, and the fastest exact check, the bytes-escape decoder, reads
        them at ~2 ns a byte, where this goes at the pace of the reads themselves. The body is
        read in chunks that are searched and dropped, never joined into the buffer (a join
        copies each byte once more). Returns ``(j, True)``, ``buf[j]`` the closing quote (the
        buffer refilled from there), or ``(i, False)``: the exact road decides (a NUL, no quote,
        an escaped one, a run of ``keep`` backslashes or more, a stream).
        """
        buf = self.buf
        lim = self.lim
        nl = buf.find(b"\n", i, lim)
        if nl >= 0:  # (the line ends in the buffer)
            k = nl - 1
            while k > i and buf[k - 1] == 0x5C:
                k -= 1
            if buf.find(b"\x00", i, nl) >= 0 or buf[nl - 1] != quote or (nl - 1 - k) % 2:
                return i, False
            return nl - 1, True
        if not self._seekable() or self.bad is not None or buf.find(b"\x00", i, lim) >= 0:
            return i, False
        at = self.base + lim  # the walk offset of the next byte to read
        # The last bytes read: ``keep`` and one more, so that a closing quote that ends a chunk (the
        # next one opening with the newline) still has ``keep`` bytes before it to count backslashes.
        keep = self.keep + 1
        tail = buf[max(i, lim - keep) : lim]
        whole = lim - i <= keep  # tail holds the body from its first byte
        f = self.f
        back = at - self.origin  # (where the exact road reads on if this gives up)
        read = _chunks(f, self.skip_chunk)
        while True:
            f.seek(at - self.origin)
            data = read(at - self.origin)
            nl = data.find(b"\n")
            if not data or data.find(b"\x00", 0, len(data) if nl < 0 else nl) >= 0:
                f.seek(back)
                return i, False  # (a NUL, or the input ends inside the literal)
            if nl >= 0:
                break
            whole = whole and len(tail) + len(data) <= keep
            tail = (tail + data[-keep:])[-keep:]
            at += len(data)
        piece = tail + data[:nl]  # the body's end and its closing quote
        q = len(piece) - 1
        run = q - len(piece[:q].rstrip(b"\\"))
        if q < 0 or piece[q] != quote or run % 2 or (run == q and not whole):
            f.seek(back)
            return i, False
        self._jump(at + nl - 1)
        return self.pos, True

    def _skimmer(self) -> "Skimmer | None":
        if not self._skim_made:
            from ._skim_pool import for_reader  # (at the first long line: no cost for other files)

            self._skim_made = True
            self._skim = for_reader(self.f, self.origin)
        return self._skim

    def _jump(self, at: int) -> None:
        """Refill the buffer from walk offset ``at`` (inside the current line, past what the
        skimmer checked): the bytes before it are not needed again."""
        self.f.seek(at - self.origin)
        self.buf = b""
        self.base = self._checked = at
        self.pos = self.lim = 0
        self.eof = False
        self._more()
