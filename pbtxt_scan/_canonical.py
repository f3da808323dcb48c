"""The canonical-layout fast path: C-speed regexes over whole blocks, the general scanner elsewhere.

``tf.io.write_graph`` (Python ``text_format``) and GE (C++ ``TextFormat::Print``) write one field
per line, two spaces of indentation per level, ``}`` alone on a line (textformat.md A4)::

    IND(d) IDENT ": " SCALAR "\\n"      a scalar field (one string, or "-"? number/identifier)
    IND(d) IDENT " {\\n"                 a message opens; its fields follow at IND(d+1)
    IND(d) "}\\n"                        ... and it closes at the indentation it opened at

The algorithm, over a byte buffer refilled in chunks:

1. Walk the lines of the file and of the blocks that may hold blocks at the path (``graph`` for
   ``graph.op``), one line at a time, keeping a stack of open frames (as ``_scan`` does).
2. At ``IND(d) IDENT " {"`` for a block to yield or to skip, find its end: the first
   ``"\\n" IND(d) "}\\n"`` after the opener. Then check the whole block with ONE compiled regex
   that spells the layout out level by level (``_block_re``). The indentation is exact, so no
   nested line can look like that closer: a block that matches is exactly one grammar field.
   Heads (and ``name`` labels) are its lines at ``IND(d+1)``, found by one more regex; lines are
   counted with ``bytes.count``.
3. A block that does not match, is deeper than the regex spells out, or is bigger than ``_BIG``
   is entered instead (back to step 1 inside it), so memory stays bounded and the cause is
   pinned to one line.
4. At the first line that fits none of the shapes, hand over to the general scanner
   (``_scan.scan``) from the start of that line. Its state there is recreated by a synthetic
   first line that reopens the open messages (``graph { name: "g" op {``), replays the
   ``name`` labels of the ancestors and, after a complete field, a dummy scalar (so a ``;`` or
   ``,`` is read as the separator it is). The synthetic line sits just before the real bytes
   (negative offsets), so positions and errors are the general scanner's own. The block open at
   the hand-over gets back its true start and the heads read so far.

Never guessing: a string field is accepted as complete only when the next line starts with a
field name or ``}`` (adjacent literals concatenate across lines), and strings used as heads or
labels must be shorter than the lexer's long-token size (longer ones it keeps only the head of).
Invalid UTF-8 stops the fast path before the bad byte, so the general scanner reports it.
"""
from __future__ import annotations

import functools
import re
from typing import BinaryIO, Dict, FrozenSet, Iterator, List, Optional, Tuple

from ._atomic import compile_bytes, user_groups
from ._grammar import decode, terminal_patterns, unescape
from ._lexer import _WINDOW, Lexer, _possessive, _string_body
from ._model import Block, Head
from ._scan import scan
from ._source import BOM

# The layout regexes are written with possessive repeats and atomic groups; before Python 3.11
# ``_atomic`` rewrites them into look-aheads that any ``re`` reads, so the fast path runs on every
# version. (Kept as a switch: False sends every file to the general scanner.)
FAST = True

_BIG = 4 << 20  # a block longer than this is entered (walked line by line), not matched whole
_LONG = 1 << 20  # a line longer than this is streamed (a string) or handed to the general scanner
_REL_DEPTH = 12  # nesting levels one block regex spells out below the block's own level
_MAX_TOKEN = 1 << 16  # longer identifiers/numbers are left to the general scanner (token limits)
_MAX_LITERAL = 1 << 19  # head/label strings at least this long are left to it too (it truncates
# strings over its long-token size, 1 MiB, depending on where its chunks fall)

ANCESTOR, TARGET, OTHER = 0, 1, 2
_FIELD_START = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_}")


# --- the layout, built from the grammar's own terminals ----------------------------------------


@functools.lru_cache(maxsize=None)
def _terms() -> Tuple[str, str]:
    """(field name, scalar value) regexes as text."""
    t = terminal_patterns()
    assert t["IDENT"] == "[A-Za-z_][A-Za-z0-9_]*", t["IDENT"]  # bounded below; keep in step
    ident = "[A-Za-z_][A-Za-z0-9_]{0,%d}+" % (_MAX_TOKEN - 1)
    string = "(?:%s)" % _possessive(t["STRING"])
    # Atomic: the lexer takes the first alternative of NUMBER that matches, never a later one.
    number = "(?![^\\n]{%d})(?>%s)" % (_MAX_TOKEN, t["NUMBER"])
    return ident, "(?:%s|-?%s|-?%s)" % (string, number, ident)


def _ind(d: int) -> str:
    return "  " * d


def _line_text(d: int, stop: int) -> str:
    ident, scalar = _terms()
    if d >= stop:
        return "%s%s: %s\\n" % (_ind(d), ident, scalar)
    return "%s%s(?:: %s\\n| \\{\\n(?:%s)*+%s\\}\\n)" % (_ind(d), ident, scalar, _line_text(d + 1, stop), _ind(d))


@functools.lru_cache(maxsize=None)
def _block_re(d: int) -> "re.Pattern[bytes]":
    """One whole canonical block opened at depth ``d``, nested at most ``_REL_DEPTH`` levels."""
    ident, _ = _terms()
    text = "%s%s \\{\\n(?:%s)*+%s\\}\\n" % (_ind(d), ident, _line_text(d + 1, d + _REL_DEPTH), _ind(d))
    return compile_bytes(text)


@functools.lru_cache(maxsize=None)
def _line_re(d: int) -> "re.Pattern[bytes]":
    """One line inside ``d`` open messages: groups (field name, opener, scalar, closer)."""
    ident, scalar = _terms()
    closer = "%s(\\}\\n)" % _ind(d - 1) if d else "(?!)()"
    text = "(?:%s(%s)(?:( \\{\\n)|: (%s)\\n)|%s)" % (_ind(d), ident, scalar, closer)
    return compile_bytes(text)


@functools.lru_cache(maxsize=None)
def _long_line_re(d: int) -> "re.Pattern[bytes]":
    """The start of a long string line at depth ``d``: (field name) then the opening quote."""
    return compile_bytes("%s(%s): [\"']" % (_ind(d), _terms()[0]))


@functools.lru_cache(maxsize=None)
def _fields_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """Scalar lines at depth ``d`` (inside a verified block) whose field is one of ``names``."""
    alt = "|".join(re.escape(n) for n in names)
    return re.compile(("\\n%s(%s): ([^\\n]*)" % (_ind(d), alt)).encode("ascii"))


@functools.lru_cache(maxsize=None)
def _closer(d: int) -> bytes:
    return b"\n" + b"  " * d + b"}\n"


@functools.lru_cache(maxsize=None)
def _field_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """One whole field at depth ``d``: (name, scalar value, the run of ``names`` scalar lines that
    opens a block, an empty group where a later ``names`` line is). Each line is checked as
    anywhere else; the groups only say where the heads are."""
    ident, scalar = _terms()
    alt = "|".join(re.escape(n) for n in names) or "(?!)"
    head = "%s(?:%s): " % (_ind(d + 1), alt)
    inner = "(?:%s)" % _line_text(d + 1, d + _REL_DEPTH)
    text = "%s(%s)(?:: (%s)\\n| \\{\\n((?:%s%s\\n)*+)(?:(?!%s)%s)*+(?:(?=%s)()%s*+)?%s\\}\\n)" % (
        _ind(d), ident, scalar, head, scalar, head, inner, head, inner, _ind(d),
    )
    return compile_bytes(text)


@functools.lru_cache(maxsize=None)
def _run_heads_re(d: int, names: Tuple[str, ...]) -> "re.Pattern[bytes]":
    """The head lines of a run: (name, a string without escapes, or any other scalar)."""
    alt = "|".join(re.escape(n) for n in names)
    return re.compile('%s(%s): (?:("[^"\\\\\\n]*")|([^\\n]*))\\n' % (_ind(d), alt))


_IDENT_AT = re.compile(rb" *([A-Za-z_][A-Za-z0-9_]*)")


def _last_name(buf: bytes, end: int) -> bytes:
    """The last field name written in the canonical lines before ``end``: the general scanner
    names it in "the last field ... is incomplete" (closers do not change it)."""
    j = end - 1
    while True:
        k = buf.rfind(b"\n", 0, j)
        m = _IDENT_AT.match(buf, k + 1, j)
        if m is not None:
            return m.group(1)
        j = k


_NEXT_CHAR = re.compile(rb" *([^ ])")
_IDENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _text_value(raw: str) -> str:
    """``_value`` of a scalar already decoded (with surrogateescape) as text."""
    q = raw[:1]
    if q == '"' or q == "'":
        if "\\" not in raw:
            return raw[1:-1]
        return decode(unescape(raw[1:-1]))
    return raw


def _value(raw: bytes) -> str:
    """A scalar's value as ``_scan`` computes it (strings unescaped, others as written)."""
    q = raw[:1]
    if q == b'"' or q == b"'":
        if b"\\" not in raw:
            return decode(raw[1:-1])
        return decode(unescape(raw[1:-1].decode("utf-8", "surrogateescape")))
    return raw.decode("ascii")


class _Frame:
    __slots__ = ("name", "kind", "label", "raw", "block")

    def __init__(self, name: str, kind: int, block: Optional[list]) -> None:
        self.name = name
        self.kind = kind
        self.label: Optional[str] = None  # its first `name` scalar (or its signature's)
        self.raw: Optional[bytes] = None  # ... as written, to replay at a hand-over
        self.block = block  # [start, line, column, heads] for a block at the path


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


class _HandOver(Exception):
    """Leave the fast path at absolute offset ``at`` (a line start, line number ``line``)."""

    def __init__(self, at: int, line: int, seek: bool = False) -> None:
        self.at = at
        self.line = line
        self.seek = seek


def scan_canonical(
    f: BinaryIO,
    path: Tuple[str, ...],
    heads: FrozenSet[str],
    chunk_size: int,
    name: str,
    end_state: Optional[Dict[str, int]] = None,
    start_offset: int = 0,
    start_line: int = 1,
) -> Iterator[Block]:
    """The blocks ``scan(f, path, heads)`` yields, validated as strictly, mostly at C speed.

    ``start_offset``/``start_line``: where ``f``'s first byte sits in the file (a slice read
    backward by ``_reverse``), so positions come out as the file's own."""
    if not FAST:
        yield from _general(f, tuple(path), heads, chunk_size, name, end_state, start_offset, start_line)
        return
    w = _Walker(f, tuple(path), heads, chunk_size, name, start_offset, start_line)
    yield from w.run()
    if end_state is not None:
        end_state.update(w.end_state)


def _general(
    f: BinaryIO,
    path: Tuple[str, ...],
    heads: FrozenSet[str],
    chunk_size: int,
    name: str,
    end_state: Optional[Dict[str, int]],
    start_offset: int,
    start_line: int,
) -> Iterator[Block]:
    """The general scanner alone, with the same end state (Python < 3.11)."""
    lx = Lexer(f, chunk_size, start_offset, start_line, path=name)
    yield from scan(f, path, heads, lexer=lx)
    if end_state is not None:
        end = lx.base + len(lx.buf)
        line, col = lx.linecol(end)
        end_state.update({"bytes": end, "lines": line - 1 if col == 1 else line})


class _Walker:
    def __init__(
        self, f: BinaryIO, path: Tuple[str, ...], heads: FrozenSet[str], chunk_size: int, name: str,
        start_offset: int = 0, start_line: int = 1,
    ) -> None:
        self.f = f
        self.origin = start_offset  # the file offset of f's first byte
        self.first_line = start_line
        self.path = path
        self.heads = heads
        self.chunk = max(1, chunk_size)
        self.name = name
        self.buf = b""
        self.base = start_offset  # absolute offset of buf[0]
        self.pos = 0  # start of the current line in buf (nothing before it is needed again)
        self.lim = 0  # bytes of buf known to be valid UTF-8 text (or all of it but a cut character)
        self.eof = False
        self.bad: Optional[int] = None  # absolute offset of the first invalid UTF-8 byte
        self._checked = start_offset  # absolute offset up to which UTF-8 is validated
        self.end_state: Dict[str, int] = {}
        names = tuple(sorted(h for h in heads if _IDENT_NAME.match(h)))
        self._head_names = names
        self._name_of = {n.encode("ascii"): n for n in names}

    # --- input ---------------------------------------------------------------------------------

    def _more(self) -> bool:
        """Drop what is before ``pos``, read more; False when nothing more will come."""
        if self.eof or self.bad is not None:
            return False
        pos = self.pos
        rest = len(self.buf) - pos
        try:
            data = self.f.read(max(self.chunk, rest))  # grows geometrically for long blocks/lines
        except OSError as e:
            from ._errors import PbtxtError

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
        buf = self.buf
        start = self._checked - self.base
        end = len(buf)
        if not self.eof:  # a character cut by the chunk edge is judged with the next chunk
            k = end - 1
            while k >= start and k > end - 4 and 0x80 <= buf[k] < 0xC0:
                k -= 1
            if k >= start and buf[k] >= 0xC0:
                end = k
        try:
            buf[start:end].decode("utf-8")
        except UnicodeDecodeError as e:
            self.bad = self.base + start + e.start
            self.lim = start + e.start
            return
        self._checked = self.base + end
        self.lim = len(buf)

    # --- the walk ------------------------------------------------------------------------------

    def run(self) -> Iterator[Block]:
        # Start: skip a BOM (offsets stay file offsets).
        while len(self.buf) < 3 and self._more() and not self.eof:
            pass
        if self.origin == 0 and self.buf.startswith(BOM):
            self.buf = self.buf[3:]
            self.base = 3
            self._checked = 3
            self._check_utf8()
        self.stack: List[_Frame] = []
        self.line = self.first_line
        self.after = False  # the previous token ended a field (the general scanner's AFTER_FIELD)
        self.last_name = b"_"  # the last field name read (see _last_name)
        self.no_batch = 0  # below this offset, go line by line (a batch failed to match there)
        try:
            yield from self._walk()
        except _HandOver as h:
            yield from self._hand_over(h)
            return
        self.end_state = {"bytes": self.base + len(self.buf), "lines": self.line - 1}

    def _walk(self) -> Iterator[Block]:
        path = self.path
        k = len(path)
        stack = self.stack
        heads = self.heads
        line_res: List[Tuple["re.Pattern[bytes]", Tuple[int, ...]]] = []
        while True:
            buf = self.buf
            pos = self.pos
            nl = buf.find(b"\n", pos, self.lim)
            if nl < 0:
                if self.lim - pos > _LONG:
                    self._long_line()
                    continue
                if self._more():
                    continue
                if pos == len(buf) and not stack and self.bad is None:
                    return  # a complete file
                raise _HandOver(self.base + pos, self.line)
            d = len(stack)
            if pos and self.base + pos >= self.no_batch:
                yield from self._batch(d)
                if self.pos != pos:
                    continue
            while len(line_res) <= d:
                lre = _line_re(len(line_res))
                line_res.append((lre, user_groups(lre)))
            lre, groups = line_res[d]
            m = lre.match(buf, pos, nl + 1)
            if m is None or m.end() != nl + 1:
                raise _HandOver(self.base + pos, self.line)
            ident, opener, scalar, closer = m.group(*groups)
            # Branches in order of frequency: block openers, scalars, closers.
            if opener is not None:
                fname = ident.decode("ascii")
                if d < k and (d == 0 or stack[-1].kind == ANCESTOR) and fname == path[d]:
                    kind = TARGET if d == k - 1 else ANCESTOR
                else:
                    kind = OTHER
                if kind != ANCESTOR:
                    b = self._whole_block(d, fname, kind)
                    if b is not False:
                        if b is not True:
                            yield b  # type: ignore[misc]
                        continue
                    # (refills may have moved the buffer)
                    buf = self.buf
                    pos = self.pos
                    nl = buf.find(b"\n", pos)
                # Enter the block (an ancestor, or a block too big, too deep or not canonical).
                self.last_name = ident
                block = [self.base + pos + 2 * d, self.line, 2 * d + 1, []] if kind == TARGET else None
                stack.append(_Frame(fname, kind, block))
                self.pos = nl + 1
                self.line += 1
                self.after = False
            elif scalar is not None:
                if scalar[0] in b"\"'":
                    nl = self._string_ends(nl)
                    if nl < 0:
                        raise _HandOver(self.base + self.pos, self.line)
                if d:
                    top = stack[-1]
                    fname = ident.decode("ascii")
                    if fname == "name" or (top.kind == TARGET and fname in heads):
                        if len(scalar) >= _MAX_LITERAL:
                            raise _HandOver(self.base + self.pos, self.line)
                        value = _value(scalar)
                        if top.kind == TARGET and fname in heads:
                            top.block[3].append(Head(fname, value, self.line))  # type: ignore[index]
                        if fname == "name":
                            self._label(top, d, value, scalar)
                self.last_name = ident
                self.pos = nl + 1
                self.line += 1
                self.after = True
            else:  # closer
                if not d:
                    raise _HandOver(self.base + pos, self.line)
                fr = stack.pop()
                if fr.kind == TARGET:
                    b = fr.block
                    yield Block(
                        path, b[0], self.base + pos + 2 * d - 1, b[1], b[2], tuple(b[3]),  # type: ignore[index]
                        tuple(s.label for s in stack),
                    )
                self.pos = nl + 1
                self.line += 1
                self.after = True

    def _batch(self, d: int) -> Iterator[Block]:
        """Step 2 for the lines at depth ``d`` that the buffer holds: each field matched with one
        regex call that also verifies it, blocks and heads read off the verified text. Stops
        (leaving ``pos`` at a line start, for the line-by-line walk) at a field that does not
        match (not canonical, too deep, or cut by the buffer's end), an ancestor to enter, a
        ``name`` or ``signature`` that may label an open message, a head too long to take here."""
        buf = self.buf
        pos = self.pos
        stack = self.stack
        top = stack[-1] if d else None
        path = self.path
        k = len(path)
        on_path = d < k and (top is None or top.kind == ANCESTOR)
        target = path[d].encode("ascii") if on_path and d == k - 1 else None
        ancestor = path[d].encode("ascii") if on_path and d < k - 1 else None
        in_target = top is not None and top.kind == TARGET
        fe = buf.find(_closer(d - 1), pos - 1, self.lim) if d else -1  # the open message's end
        end = fe + 1 if fe >= 0 else buf.rfind(b"\n", pos, self.lim) + 1
        names = self._head_names
        name_of = self._name_of
        run_heads = _run_heads_re(d + 1, names).findall if names else None
        more = _fields_re(d + 1, names).search if names else None
        field_re = _field_re(d, names)
        field = field_re.match
        groups = user_groups(field_re)
        g_run, g_later = groups[2], groups[3]
        count = buf.count
        new = tuple.__new__
        col = 2 * d + 1
        base = self.base
        line = self.line
        after = self.after
        parents = tuple([f.label for f in stack]) if d else ()
        p = pos
        prev_str = None  # (pos, line, after, head taken) of a string scalar line just read
        while p < end:
            m = field(buf, p, end)
            if m is None:
                break
            fname, sc, run, later = m.group(*groups)
            e = m.end()
            # Branches in order of frequency: the blocks to yield, other blocks, scalars.
            if sc is None and fname == target and fname != b"signature":
                if run_heads is not None:
                    if len(run) >= _MAX_LITERAL:
                        break
                    hs = [
                        new(Head, (nm, simple[1:-1] if simple else _text_value(other), i))
                        for i, (nm, simple, other) in enumerate(run_heads(run.decode("utf-8", "surrogateescape")), line + 1)
                    ]
                    if later is not None:
                        hs = self._more_heads(more, more(buf, m.start(g_later) - 1, e - 1), e - 1, line + 1 + len(hs), m.end(g_run), hs)  # type: ignore[misc,assignment]
                        if hs is None:
                            break
                    yield new(Block, (path, base + p + 2 * d, base + e - 1, line, col, tuple(hs), parents))
                else:
                    yield new(Block, (path, base + p + 2 * d, base + e - 1, line, col, (), parents))
                prev_str = None
            elif sc is None:
                if fname == ancestor or fname == target:  # (a target named signature: line walk)
                    break
                if fname == b"signature" and top is not None and top.label is None:
                    break
                prev_str = None
            else:  # a scalar
                taken = False
                if in_target:
                    if fname == b"name" and top.name == "signature":  # type: ignore[union-attr]
                        break
                    if fname in name_of:
                        if len(sc) >= _MAX_LITERAL:
                            break
                        top.block[3].append(new(Head, (name_of[fname], _value(sc), line)))  # type: ignore[union-attr]
                        taken = True
                elif fname == b"name" and top is not None:
                    break
                prev_str = (p, line, after, taken) if sc[:1] in b"\"'" else None
                p = e
                line += 1
                after = True
                continue
            line += count(b"\n", p, e)
            p = e
            after = True
        if prev_str is not None:  # the line after a string may go on with an adjacent literal
            p, line, after, taken = prev_str
            if taken:
                top.block[3].pop()  # type: ignore[union-attr]
        if p != pos:
            self.line = line
            self.pos = p
            self.after = after
            self.last_name = _last_name(buf, p)
        if p < end or p == pos:
            self.no_batch = base + p + 1  # the line walk takes the next line

    def _more_heads(self, more, m, e: int, n: int, last: int, hs: List[Head]) -> Optional[List[Head]]:  # type: ignore[no-untyped-def]
        """Heads after a block's opening run (GE: id, stream_id ... after the attrs), from match
        ``m`` on; ``n`` is the line at ``last``. None if one is too long to take here."""
        buf = self.buf
        while m is not None:
            raw = m.group(2)
            if len(raw) >= _MAX_LITERAL:
                return None
            n += buf.count(b"\n", last, m.start())
            last = m.start()
            hs.append(Head(m.group(1).decode("ascii"), _value(raw), n + 1))
            m = more(buf, m.end(), e)
        return hs

    def _label(self, top: _Frame, d: int, value: str, raw: bytes) -> None:
        # As _scan.finish_scalar: a message's first `name`; a signature's names also label its parent.
        if top.label is None:
            top.label = value
            top.raw = raw
        if top.name == "signature" and d >= 2:
            parent = self.stack[d - 2]
            if parent.label is None:
                parent.label = value
                parent.raw = raw

    def _string_ends(self, nl: int) -> int:
        """Whether the string ending the line at ``nl`` is followed by no adjacent string literal:
        the line's newline again (the buffer may have moved), or -1."""
        while True:
            m = _NEXT_CHAR.match(self.buf, nl + 1, self.lim)
            if m is not None:
                return nl if self.buf[m.start(1)] in _FIELD_START else -1
            if self.bad is not None or self.lim - nl > _LONG:
                return -1
            at = nl - self.pos
            if not self._more():
                return nl  # the input ends (perhaps after spaces): nothing follows the string
            nl = self.pos + at

    def _whole_block(self, d: int, fname: str, kind: int) -> "Block | bool":
        """Match the block opening at ``pos`` whole and advance past it: the Block (a target) or
        True (a block to skip); False, not moving, when it must be entered instead."""
        closer = b"\n" + b"  " * d + b"}\n"
        start_abs = self.base + self.pos
        frm = self.buf.find(b"\n", self.pos) + self.base  # the opener's own newline (an empty block)
        while True:
            buf = self.buf
            i = buf.find(closer, frm - self.base, self.lim)
            if i >= 0:
                break
            if self.base + self.lim - start_abs > _BIG:
                return False
            frm = max(frm, self.base + self.lim - len(closer) + 1)
            if not self._more():
                return False
        start = self.pos
        end = i + len(closer)
        if _block_re(d).fullmatch(buf, start, end) is None:
            return False
        stack = self.stack
        line = self.line
        out: "Block | bool" = True
        if fname == "signature" and d and stack[-1].label is None:
            m = _fields_re(d + 1, ("name",)).search(buf, start, end)
            if m is not None:
                raw = m.group(2)
                if len(raw) >= _MAX_LITERAL:
                    raise _HandOver(start_abs, line)
                stack[-1].label = _value(raw)
                stack[-1].raw = raw
        if kind == TARGET:
            hs: List[Head] = []
            if self._head_names:
                n = line
                last = start
                for m in _fields_re(d + 1, self._head_names).finditer(buf, start, end):
                    raw = m.group(2)
                    if len(raw) >= _MAX_LITERAL:
                        raise _HandOver(start_abs, line)
                    n += buf.count(b"\n", last, m.start()) + 1
                    last = m.start() + 1
                    hs.append(Head(self._name_of[m.group(1)], _value(raw), n))  # (one str per name)
            out = Block(self.path, start_abs + 2 * d, self.base + end - 1, line, 2 * d + 1, tuple(hs), tuple(s.label for s in stack))
        self.line = line + buf.count(b"\n", start, end)
        self.pos = end
        self.after = True
        self.last_name = _last_name(buf, end)
        return out

    def _long_line(self) -> None:
        """A line longer than ``_LONG``: a string field streamed through its body regex (files that
        can seek back only, so the general scanner can take over at the line if anything is off)."""
        pos = self.pos
        start_abs = self.base + pos
        line = self.line
        d = len(self.stack)
        m = _long_line_re(d).match(self.buf, pos, self.lim)
        if m is None or not self._seekable():
            raise _HandOver(start_abs, line)
        fname = m.group(1).decode("ascii")  # (group 1 opens first: any group _atomic adds is inside it)
        if d and (fname == "name" or (self.stack[-1].kind == TARGET and fname in self.heads)):
            raise _HandOver(start_abs, line)  # its value is needed: let the general scanner read it
        quote = self.buf[m.end() - 1]
        body = _string_body(quote)
        i = m.end()
        while True:
            buf = self.buf
            lim = self.lim
            win = lim if _WINDOW is None else min(lim, i + _WINDOW)  # (see _lexer._WINDOW)
            j = body.match(buf, i, win).end()  # type: ignore[union-attr]
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
                return
            if j >= lim - 12 and lim == len(buf) and not self.eof:
                self.pos = j
                self._more()
                i = self.pos
                continue
            raise _HandOver(start_abs, line, seek=True)

    def _seekable(self) -> bool:
        try:
            return bool(self.f.seekable())
        except (AttributeError, OSError, ValueError):
            return False

    # --- hand-over to the general scanner ------------------------------------------------------

    def _hand_over(self, h: _HandOver) -> Iterator[Block]:
        parts: List[bytes] = []
        open_block: Optional[list] = None
        for fr in self.stack:
            parts.append(fr.name.encode("ascii") + b" {")
            if fr.kind == TARGET:
                open_block = fr.block
            elif open_block is None and fr.raw is not None:
                parts.append(b"name: " + fr.raw)
        if self.after:  # an empty list: the general scanner's AFTER_FIELD, and its last field name
            parts.append(self.last_name + b": []")
        synth = b" ".join(parts) + b"\n" if parts else b""
        if h.seek:
            self.f.seek(h.at - self.origin)
            stream = _Chain(synth, self.f)
        else:
            stream = _Chain(synth + self.buf[h.at - self.base :], self.f)
        start_line = h.line - 1 if synth else h.line
        lx = Lexer(stream, self.chunk, start_offset=h.at - len(synth), start_line=start_line, path=self.name)  # type: ignore[arg-type]
        for b in scan(stream, self.path, self.heads, lexer=lx):  # type: ignore[arg-type]
            if open_block is not None:  # the block open at the hand-over: its true start and heads
                b = b._replace(start=open_block[0], line=open_block[1], column=open_block[2], heads=tuple(open_block[3]) + b.heads)
                open_block = None
            yield b
        end = lx.base + len(lx.buf)
        line, col = lx.linecol(end)
        self.end_state = {"bytes": end, "lines": line - 1 if col == 1 else line}
