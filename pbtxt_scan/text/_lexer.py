"""A streaming tokenizer over byte chunks, built from the grammar's own terminal patterns.

Memory is bounded by the chunk size: tokens never span a newline (strings cannot hold one and
comments end at one), so the buffer is cut at token boundaries, and a string literal longer than
``long_token`` bytes (a frozen ``tensor_content`` can be 50 MB on one line) is consumed piece by
piece without being held whole; only its first ``keep`` bytes are kept as its text.

Positions are absolute byte offsets; ``linecol(offset)`` turns one into a 1-based line and a
1-based column counted in characters, as Lark counts them. Lines are counted lazily with
``bytes.count`` (C speed), so tokens that nobody asks the position of cost nothing extra.
"""
from __future__ import annotations

import functools
import re
from typing import BinaryIO, Iterator, Optional, Tuple

from ..language._atomic import NATIVE, compile_bytes
from ..language._lines import possessive as _possessive  # (the string terminal's repeats, possessive)
from .._errors import IncompleteInputError, PbtxtError
from ..language._grammar import lexical_error_message, terminal_patterns
from ..source._source import BOM, DEFAULT_CHUNK, iter_chunks
from ._window import utf8_end

Token = Tuple[str, int, int, bytes]  # kind, start offset, end offset, text (a long string: its head)

PUNCT = "{}<>[]:;,/.-"

# Bytes that may continue a number or an identifier (or sit in a number's look-ahead). A NUMBER,
# IDENT or "." match is final only once a byte outside this set follows it: "3.4e" cut from "+38"
# by a chunk edge would otherwise match as "3" (the regex backtracks past the "e" that cannot end a
# number), and "1" cut from ".5" as "1".
_WORD_BYTES = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.+-"


# Before Python 3.11 (no possessive repeats: _atomic emulates them with a look-ahead, inside which
# the engine still keeps a backtracking record for every repetition of a string's escape loop), a
# long string is matched in windows.
_WINDOW = None if NATIVE else 1 << 16


@functools.lru_cache(maxsize=None)
def _master() -> "re.Pattern[bytes]":
    t = terminal_patterns()
    parts = [
        "(?P<COMMENT>%s)" % t["COMMENT"],
        # (Before 3.11 a string is matched by _long_string, in windows: see _WINDOW.)
        "(?P<STRING>%s)" % _possessive(t["STRING"]) if _WINDOW is None else "(?P<QUOTE>[\"'])",
        # NUMBER before the punctuation: ".5" is a number, not "." then 5.
        "(?P<NUMBER>%s)" % t["NUMBER"],
        "(?P<IDENT>%s)" % t["IDENT"],
        "(?P<P>[%s])" % re.escape(PUNCT),
    ]
    # The whitespace before a token is taken in the same match (one match per token, not two,
    # about a third of the lexer's time); whitespace that no token follows is a match of its own.
    ws = t["WS"].replace("]+", "]*")
    assert ws != t["WS"], "WS terminal is not a simple class+"
    return compile_bytes("%s(?:%s)|(?P<WS>%s)" % (ws, "|".join(parts), t["WS"]))


@functools.lru_cache(maxsize=None)
def _string_body(quote: int) -> "re.Pattern[bytes]":
    """Matches the longest valid run of a string's body (no quotes) for the given quote char."""
    lit = _possessive(terminal_patterns()["STRING"])
    # The STRING terminal is two alternatives, one per quote char: take the body of the right one.
    alts = _split_top_alternatives(lit)
    q = chr(quote)
    for a in alts:
        if a.startswith(q) and a.endswith(q):
            return compile_bytes(a[1:-1])
    raise AssertionError("STRING terminal has no %s alternative" % q)  # pragma: no cover


def _split_top_alternatives(pattern: str) -> "list[str]":
    if pattern.startswith("(?:") and pattern.endswith(")"):
        pattern = pattern[3:-1]
    out, depth, cur, i = [], 0, [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            cur.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":  # a class: copy up to its closing bracket
            j = i + 1
            if j < len(pattern) and pattern[j] == "^":
                j += 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            cur.append(pattern[i : j + 1])
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    out.append("".join(cur))
    return out


class Lexer:
    """Tokens of a byte stream. ``tokens()`` may be called once."""

    def __init__(
        self,
        f: BinaryIO,
        chunk_size: int = DEFAULT_CHUNK,
        *,
        start_offset: int = 0,
        start_line: int = 1,
        start_column: int = 0,
        long_token: int = 1 << 20,
        keep: int = 1 << 16,
        path: Optional[str] = None,
    ) -> None:
        self._chunks = iter_chunks(f, chunk_size)
        self._path = path
        self.buf = b""
        self.base = start_offset  # absolute offset of buf[0]
        self._eof = False
        self._keep = keep
        self._string_start: Tuple[int, Tuple[int, int]] = (-1, (0, 0))
        self._long = max(long_token, keep + 16)
        self._first = start_offset == 0
        # line bookkeeping: everything before _nl_abs is counted
        self._nl_abs = start_offset
        self._line = start_line
        # (``start_column``: the characters before ``start_offset`` on its line, a line begun before it)
        self._ls_abs = start_offset - 1 if start_column else start_offset  # start of the line holding _nl_abs
        self._ls_chars = start_column  # characters between _ls_abs and base when the line began before base
        self._col_abs = start_offset  # an offset on the current line whose column is known ...
        self._col = start_column  # ... in characters from the line start
        self._utf8_upto = start_offset  # validated up to here
        self._safe = start_offset  # just past the last non-word byte read: tokens before it are whole
        self._bad_utf8: Optional[int] = None

    # --- positions ---------------------------------------------------------------------------

    def linecol(self, off: int) -> Tuple[int, int]:
        """1-based line and column of absolute offset ``off`` (monotonic: never before the last ask,
        except the start of the last string read by ``_long_string``, whose bytes may be gone)."""
        if off < self.base and off == self._string_start[0]:
            return self._string_start[1]
        b = self.base
        if off > self._nl_abs:
            seg_start = self._nl_abs - b
            n = self.buf.count(b"\n", seg_start, off - b)
            if n:
                self._line += n
                self._ls_abs = b + self.buf.rfind(b"\n", seg_start, off - b) + 1
                self._col_abs, self._col = self._ls_abs, 0
            self._nl_abs = off
        # The column: counted on from the last one asked on this line (asks are monotonic), so a
        # long line is decoded once, not from its start at every token on it.
        if self._col_abs >= b and off >= self._col_abs:
            col = self._col + len(self.buf[self._col_abs - b : off - b].decode("utf-8", "replace"))
            self._col_abs, self._col = off, col
        elif self._ls_abs >= b:
            col = len(self.buf[self._ls_abs - b : off - b].decode("utf-8", "replace"))
        else:
            col = self._ls_chars + len(self.buf[: off - b].decode("utf-8", "replace"))
        return self._line, col + 1

    def error(
        self, msg: str, off: int, incomplete: bool = False, at: Optional[Tuple[int, int]] = None
    ) -> PbtxtError:
        """An error at ``off``; ``at`` is its line and column when taken earlier (``off`` dropped)."""
        line, col = at or self.linecol(off)
        cls = IncompleteInputError if incomplete else PbtxtError
        return cls(msg, line, col, self._path, off)

    # --- buffer ------------------------------------------------------------------------------

    def _drop(self, pos: int) -> None:
        """Forget ``buf[:pos]`` (all its tokens are done), keeping line/column bookkeeping right."""
        if pos <= 0:
            return
        self.linecol(self.base + pos) if self.base + pos > self._nl_abs else None
        new_base = self.base + pos
        if self._ls_abs < new_base:
            start = max(self._ls_abs - self.base, 0)
            carried = self._ls_chars if self._ls_abs < self.base else 0
            self._ls_chars = carried + len(self.buf[start:pos].decode("utf-8", "replace"))
            self._col_abs, self._col = new_base, self._ls_chars  # (the new buffer start)
        self.buf = self.buf[pos:]
        self.base = new_base

    def _refill(self) -> bool:
        """Append the next chunk; False at end of input."""
        if self._eof:
            return False
        data = next(self._chunks, b"")
        if not data:
            self._eof = True
            self._check_utf8(final=True)
            return True  # state changed: the caller may now conclude
        if self._first:
            self._first = False
            while len(data) < 3 and BOM.startswith(data):  # a first chunk shorter than the BOM
                more = next(self._chunks, b"")
                if not more:
                    break
                data += more
            if data.startswith(BOM):  # a UTF-8 BOM is not text: skip it, keep offsets true
                data = data[3:]
                self.base += 3
                self._nl_abs = self._ls_abs = self._utf8_upto = self._col_abs = self.base
        self.buf += data
        k = len(data.rstrip(_WORD_BYTES))
        if k:
            self._safe = self.base + len(self.buf) - len(data) + k
        self._check_utf8(final=False)
        return True

    def _check_utf8(self, final: bool) -> None:
        if self._bad_utf8 is not None:
            return
        end, bad = utf8_end(self.buf, self._utf8_upto - self.base, final)
        if bad is not None:
            self._bad_utf8 = self.base + bad
            return
        self._utf8_upto = self.base + end

    @property
    def _limit(self) -> int:
        return len(self.buf) if self._bad_utf8 is None else self._bad_utf8 - self.base

    @property
    def _checked(self) -> int:
        """The end of the bytes whose UTF-8 is judged (a character cut by the chunk edge is not yet).
        Bytes may be dropped only up to here: ``_check_utf8`` resumes from ``_utf8_upto``."""
        if self._eof or self._bad_utf8 is not None:
            return self._limit
        return self._utf8_upto - self.base

    # --- tokens ------------------------------------------------------------------------------

    def tokens(self) -> Iterator[Token]:
        master = _master()
        pos = 0
        self._refill()
        while True:
            buf = self.buf
            base = self.base
            limit = self._limit
            # Everything we hold is final at end of input, or up to a bad UTF-8 byte. Otherwise a
            # match that reaches the end of what we hold may continue in the next chunk, and so may
            # one that starts in the run of word bytes at the end (see _WORD_BYTES).
            done = self._eof or limit < len(buf)
            safe = self._safe - base
            # 1. The fast loop: whole tokens of the buffer, in order.
            again = False
            while True:
                m = master.match(buf, pos, limit)
                if m is None:
                    break
                end = m.end()
                # (every alternative of the master pattern is a named group: never None. A cast
                # would cost a call a token.)
                kind: str = m.lastgroup  # type: ignore[assignment]
                start = m.start(kind)
                if not done and (end >= limit or start >= safe):
                    if start > pos:  # keep the whitespace: the token may go on in the next chunk
                        pos = start
                    break
                if kind == "QUOTE":  # Python < 3.11: the string is read in windows (it may refill)
                    tok = self._long_string(start)
                    yield tok
                    pos = tok[2] - self.base
                    again = True
                    break
                if kind == "P":
                    yield (chr(buf[start]), base + start, base + end, b"")
                elif kind != "WS" and kind != "COMMENT":
                    yield (kind, base + start, base + end, buf[start:end])
                pos = end
            if again:
                continue
            # 2. The end of the buffer, of the input, or an error.
            if pos >= limit and done:
                if self._bad_utf8 is not None and pos < len(buf):
                    raise self._utf8_error(pos)
                return
            at = buf[pos] if pos < len(buf) else None
            if m is None and (done or buf.find(b"\n", pos, limit) >= 0):
                # No token can start here, and more data would not change that.
                nl = buf.find(b"\n", pos)
                msg = lexical_error_message(buf[pos : nl if nl >= 0 else len(buf)].decode("utf-8", "replace"), 0)
                if msg.startswith("unterminated") and limit < len(buf) and (nl < 0 or nl > limit):
                    raise self._utf8_error(limit)  # the string ran into a byte that is not UTF-8
                if nl < 0 and msg.startswith("unterminated"):
                    raise self.error("unterminated string at end of input", base + pos, incomplete=True)
                raise self.error(msg, base + pos)
            if m is not None and m.lastgroup == "WS":
                pos = m.end()  # whitespace cut by the chunk edge: drop what we have of it
            elif m is not None and m.lastgroup == "COMMENT":
                pos = self._skip_comment(pos)  # cut by the chunk edge: skip to its end, however long
                continue
            elif len(buf) - pos >= self._long:
                if at in (0x22, 0x27) and buf.find(b"\n", pos, limit) < 0:
                    tok = self._long_string(pos)
                    yield tok
                    pos = tok[2] - self.base
                    continue
                raise self.error(self._too_long(at), base + pos)
            # 3. Need more input: drop what is done, then read.
            self._drop(pos)
            pos = 0
            self._refill()

    def _utf8_error(self, pos: int) -> PbtxtError:
        return self.error("invalid UTF-8 byte 0x%02x (is this a text file?)" % self.buf[pos], self.base + pos)

    def _too_long(self, first: Optional[int]) -> str:
        what = "number" if first is not None and (0x30 <= first <= 0x39 or first == 0x2E) else "identifier"
        return "%s longer than %d bytes (only a string may be this long)" % (what, self._long)

    def _skip_comment(self, pos: int) -> int:
        """The position of the newline that ends the comment at ``pos`` (reading on as needed)."""
        while True:
            limit = self._limit
            nl = self.buf.find(b"\n", pos, limit)
            if nl >= 0:
                return nl
            if self._eof or limit < len(self.buf):
                return limit
            pos = self._checked
            self._drop(pos)
            pos = 0
            self._refill()

    def _long_string(self, pos: int) -> Token:
        """Consume a string literal too long to hold, in pieces; its text is its first ``keep`` bytes."""
        quote = self.buf[pos]
        body = _string_body(quote)
        start = self.base + pos
        start_lc = self.linecol(start)  # the start's bytes are dropped as the string streams by
        self._string_start = (start, start_lc)  # (so linecol can still answer for this token)
        head = bytearray()  # the literal's first keep + 1 bytes, gathered as the buffer moves on
        seg = pos  # where the literal's bytes not yet in `head` start in the buffer
        i = pos + 1
        while True:
            limit = self._checked  # not past a character cut by the chunk edge: it is not judged yet
            win = limit if _WINDOW is None else min(limit, i + _WINDOW)
            mb = body.match(self.buf, i, win)  # (a body may be empty: it always matches)
            j = i if mb is None else mb.end()
            if win < limit and j >= win - 12:
                i = j  # the window's end, maybe inside an escape: go on from where the match stopped
                continue
            if j < limit and self.buf[j] == quote:
                head += self.buf[seg : j + 1][: max(0, self._keep + 1 - len(head))]
                whole = self.base + j + 1 - start == len(head)
                text = bytes(head) if whole else bytes(head[: self._keep]) + bytes([quote])
                return ("STRING", start, self.base + j + 1, text)
            # An escape may be cut by the chunk edge: re-match from j once more data is in.
            if j >= limit - 12 and not self._eof and self._bad_utf8 is None:
                head += self.buf[seg:j][: max(0, self._keep + 1 - len(head))]
                self._drop(j)
                i = seg = 0
                self._refill()
                continue
            if j >= len(self.buf) and self._eof:
                raise self.error("unterminated string at end of input", start, incomplete=True, at=start_lc)
            if self._bad_utf8 is not None and j >= limit:
                raise self._utf8_error(j)
            c = self.buf[j]
            if c == 0x0A:
                raise self.error("unterminated string (a string cannot span lines)", start, at=start_lc)
            # Like Lark, point at the string's start; in a string too long to hold (the only kind
            # read here on Python >= 3.11), at the bad byte.
            short = self.base + j - start < self._long
            where, at = (start, start_lc) if short else (self.base + j, None)
            if c == 0:
                raise self.error("NUL character inside a string", where, at=at)
            raise self.error(
                lexical_error_message(self.buf[j : j + 12].decode("utf-8", "replace").join("\"\""), 0),
                where,
                at=at,
            )
