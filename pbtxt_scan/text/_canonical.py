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
   that spells the layout out level by level (``block_re``). The indentation is exact, so no
   nested line can look like that closer: a block that matches is exactly one grammar field.
   Heads (and ``name`` labels) are its lines at ``IND(d+1)``, found by one more regex; lines are
   counted with ``bytes.count``. (With the schema checked, a top-level block to yield whose
   pieces between strings are those of one matched and found valid before is taken by one split
   on the quote instead, its heads read off the pieces: ``_batch._known``.)
3. A block that does not match, is deeper than the regex spells out, or is bigger than ``_BIG``
   is entered instead (back to step 1 inside it), so memory stays bounded and the cause is
   pinned to one line.
4. At the first line that fits none of the shapes, hand over to the general scanner
   (``_scan.scan_tokens``) from the start of that line, with this walk's state: its frame stack
   (``_frames``: the open messages, their labels, the block open there with the heads read so
   far) and whether a field just ended (so a ``;`` or ``,`` is read as the separator it is).
   Positions and errors are then the general scanner's own.

Modules by role: ``_window`` (the buffer of whole lines, UTF-8, BOM), ``_layout`` (the regexes),
``_batch`` (runs of whole fields at one depth, one regex call each), this one (the walk),
``_strings`` (where a string line ends; long ones streamed), ``_handover`` (step 4), ``_frames``
(the frame stack shared with the general scanner), ``_skip`` (a long string's body at C speed) and
``_skim_pool`` (the same on several processes, for lines longer than its window).

Never guessing: a string field is accepted as complete only when the next line starts with a
field name or ``}`` (adjacent literals concatenate across lines), and strings used as heads or
labels must be shorter than the lexer's long-token size (longer ones it keeps only the head of).
Invalid UTF-8 stops the fast path before the bad byte, so the general scanner reports it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, BinaryIO, Dict, FrozenSet, Generator, Iterator, List, Optional, Sequence

from ..language._atomic import NATIVE, user_groups
from ..language._lines import line_re
from . import _layout as layout
from ._layout import IDENT_NAME, MAX_LITERAL, last_name, scalar_value
from .._model import Block, Head
from ._frames import ANCESTOR, OTHER, TARGET, BlockStart, Frame, close_block, parents, take_label
from ._handover import _HandOver, end_of, general_from
from ._batch import PLAN_ROOM, Batches
from ._strings import StringLines
from ._strict import TopFields
from ..source._source import DEFAULT_CHUNK
from .._errors import PbtxtError

if TYPE_CHECKING:  # (the schema loads with the first reader that checks it: not fp)
    from ._schema import Watch

# A block longer than this is entered (walked line by line), not matched whole. Before 3.11 the
# layout regexes are plain greedy repeats (``_layout``), and ``re`` keeps backtracking state for
# every line a repeat has taken (about 1 KB a line, measured on 3.9), so there the bound is lower:
# the memory a match may take stays a few MB whatever the block.
_BIG = 4 << 20 if NATIVE else 64 << 10
# The first lines a scan walks go line by line, neither in a batch nor as whole blocks: those
# regexes cost 20-110 ms each to compile for a depth, and walking a line costs ~5 us, so 10,000
# lines cost about one compile (rent before you buy: never much more than twice the better
# choice). fp often stops within them, and a frozen graph of any size holds fewer (its 1 GB of
# constants is a few thousand lines): there no such regex is compiled at all. Once a walk of the
# process has gone past it, they are compiled (``layout.warm``): later walks (bp's slices read
# backward, the chunks of ``--jobs``) use them from their first line.
_WARMUP_LINES = 10000
_LONG = 1 << 20  # a line longer than this is streamed (a string) or handed to the general scanner
_KEEP = 64  # validate=False: the bytes kept before a closing quote to count its backslashes (_strings)
_SKIP_CHUNK = 1 << 20  # ... and the size of the chunks it reads
# validate=False: an unended line this long is streamed already, when it is a string field (a
# ``tensor_content``): the rest of it is then read once, not also joined into the buffer.
_SKIP_FROM = 1 << 16



def scan_canonical(
    f: BinaryIO,
    path: Sequence[str],
    heads: FrozenSet[str],
    *,
    chunk_size: int = DEFAULT_CHUNK,
    display: Optional[str] = None,
    end_state: Optional[Dict[str, int]] = None,
    start_offset: int = 0,
    start_line: int = 1,
    start_column: int = 0,
    fast: bool = True,
    warm_up: Optional[int] = None,
    validate: bool = True,
    watch: Optional[Watch] = None,
    top: Optional[TopFields] = None,
) -> Generator[Block, None, None]:
    """The blocks ``scan(f, path, heads)`` yields, validated as strictly, mostly at C speed.

    ``display``: the file's name in errors. ``end_state``: filled with the bytes and lines read.
    ``start_offset``/``start_line``: where ``f``'s first byte sits in the file (a slice read
    backward by ``_reverse``), so positions come out as the file's own; ``start_column``: the
    characters before it on its line (then the general scanner reads: the walk reads whole lines). ``fast=False``: the
    general scanner alone (the same blocks, errors and end state). ``warm_up``: see ``_Walker``.
    ``validate=False``: a string literal on a line of its own over ``_SKIP_FROM`` (a ``tensor_content``)
    is checked for where it ends, not escape by escape (``_strings.StringLines._body_ends``).
    ``watch``: the schema checked too (``_schema``): its problems raised as it says. ``top``: the
    check of the top-level fields met that are not at the path (``_strict``; in the writer layout only)."""
    try:
        if fast and not start_column:
            w = _Walker(f, path, heads, chunk_size=chunk_size, display=display, start_offset=start_offset,
                        start_line=start_line, warm_up=warm_up, validate=validate, watch=watch, top=top)
            yield from w.run()
            got = w.end_state
        else:
            from ._lexer import Lexer
            from ._scan import scan_tokens

            lx = Lexer(f, chunk_size, start_offset=start_offset, start_line=start_line, start_column=start_column, path=display)
            yield from scan_tokens(lx, tuple(path), heads, watch=watch, top=top)
            got = end_of(lx)
    except PbtxtError as e:
        if watch is None:
            raise
        raise (watch.end(e) or e) from None
    if watch is not None:
        err = watch.end()
        if err is not None:
            raise err
    if end_state is not None:
        end_state.update(got)


class _Walker(Batches, StringLines):
    """The walk over ``f`` (``scan_canonical``'s keywords), from inside the open messages ``outer``
    (right after a complete field) if given. ``warm_up``: the lines walked one by one before
    whole blocks and batches are tried; None: ``_WARMUP_LINES``, or none once the process has
    compiled their regexes."""

    def __init__(
        self, f: BinaryIO, path: Sequence[str], heads: FrozenSet[str], *, chunk_size: int = DEFAULT_CHUNK,
        display: Optional[str] = None, start_offset: int = 0, start_line: int = 1,
        outer: Optional[List[Frame]] = None, warm_up: Optional[int] = None, validate: bool = True,
        watch: Optional[Watch] = None,
        top: Optional[TopFields] = None,
    ) -> None:
        super().__init__(f, chunk_size, start_offset)
        self.first_line = start_line
        self.path = tuple(path)
        self.heads = heads
        self.display = display
        self.outer = outer
        self.warm_up = warm_up
        self.validate = validate
        self.watch = watch
        self.top = top
        self.end_state: Dict[str, int] = {}
        names = tuple(sorted(h for h in heads if IDENT_NAME.match(h)))
        self._head_names = names
        self._name_of = {n.encode("ascii"): n for n in names}
        self._rxs = {}  # (the batches' regexes, by depth: _batch._Rx)
        self._plans = {}  # (the node shapes' heads: _batch._known)
        self._plan_room = PLAN_ROOM

    # --- the walk ------------------------------------------------------------------------------

    def run(self) -> Iterator[Block]:
        self.start()
        self.stack: List[Frame] = [] if self.outer is None else list(self.outer)
        self.line = self.first_line
        self.after = self.outer is not None  # the previous token ended a field (the general scanner's AFTER_FIELD)
        self.last_name = b"_"  # the last field name read (see last_name)
        self.no_batch = 0  # below this offset, go line by line (a batch failed to match there)
        self.big = _BIG  # (read here, so that tests can lower it)
        self.long = _LONG if self.validate else _SKIP_FROM  # a line this long is streamed (_long_line)
        self.longest, self.keep, self.skip_chunk = _LONG, _KEEP, _SKIP_CHUNK  # (the same)
        self._skim = None
        self._skim_made = False
        try:
            try:
                yield from self._walk()
            finally:
                if self._skim is not None:
                    self._skim.close()
                self._skim, self._skim_made = None, True
        except _HandOver as h:
            yield from self._hand_over(h)
            return
        self.end_state = {"bytes": self.base + len(self.buf), "lines": self.line - 1}

    def _walk(self) -> Iterator[Block]:
        path, k, stack, heads, tf = self.path, len(self.path), self.stack, self.heads, self.top
        tdepth = -1 if tf is None else tf.depth  # (the depth of the graph's own fields: ``top``'s)
        lre = line_re()  # (a line at any depth: its indentation is checked against the depth below)
        groups = user_groups(lre)
        warm = self.warm_up  # lines still to walk before batches and whole blocks are tried
        if warm is None:
            warm = 0 if layout.warm() else _WARMUP_LINES
        while True:
            buf, pos = self.buf, self.pos
            nl = buf.find(b"\n", pos, self.lim)
            if nl < 0:
                if self._unended():
                    return  # a complete file
                continue
            d = len(stack)
            if nl - pos > self.long and not self.validate and layout.long_line_re(d).match(buf, pos, nl) is not None:
                self._long_line()  # (a long literal held whole in the buffer: skimmed as one that is not)
                continue
            if warm > 0:
                warm -= 1
            elif pos and self.base + pos >= self.no_batch:
                yield from self._batch(d)
                if self.pos != pos:
                    continue
            m = lre.match(buf, pos, nl + 1)
            if m is None or m.end() != nl + 1:
                raise _HandOver(self.base + pos, self.line)
            spaces, ident, opener, scalar, closer = m.group(*groups)
            if len(spaces) != 2 * (d - 1 if closer is not None else d):
                raise _HandOver(self.base + pos, self.line)
            if d == tdepth and closer is None and tf is not None and ident not in tf.bnames and (not d or stack[-1].kind == ANCESTOR):
                tf.met(ident.decode("ascii"), self.line, 2 * d + 1, self.base + pos + 2 * d)  # (a field the graph has not: refused, or skipped)
            # Branches in order of frequency: block openers, scalars, closers.
            if opener is not None:
                fname = ident.decode("ascii")
                if d < k and (d == 0 or stack[-1].kind == ANCESTOR) and fname == path[d]:
                    kind = TARGET if d == k - 1 else ANCESTOR
                else:
                    kind = OTHER
                if kind != ANCESTOR and warm <= 0:
                    b = self._whole_block(d, fname, kind)
                    if b is not False:
                        if b is not True:
                            yield b
                        continue
                    buf, pos = self.buf, self.pos  # (refills may have moved the buffer)
                    nl = buf.find(b"\n", pos)
                # Enter the block (an ancestor, or a block too big, too deep or not canonical).
                self.last_name = ident
                block = BlockStart(self.base + pos + 2 * d, self.line, 2 * d + 1, []) if kind == TARGET else None
                stack.append(Frame(fname, kind, block))
            elif scalar is not None:
                if scalar[0] in b"\"'":
                    nl = self._string_ends(nl)
                    if nl < 0:
                        raise _HandOver(self.base + self.pos, self.line)
                if d:
                    top = stack[-1]
                    fname = ident.decode("ascii")
                    if fname == "name" or (top.kind == TARGET and fname in heads):
                        if len(scalar) >= MAX_LITERAL:
                            raise _HandOver(self.base + self.pos, self.line)
                        value = scalar_value(scalar)
                        if top.block is not None and fname in heads:  # (a TARGET's frame has its block)
                            top.block.heads.append(Head(fname, value, self.line))
                        if fname == "name":
                            take_label(stack, value)
                self.last_name = ident
            else:  # closer
                if not d:
                    raise _HandOver(self.base + pos, self.line)
                fr = stack.pop()
                if fr.block is not None:  # (a TARGET)
                    yield close_block(path, fr.block, self.base + pos + 2 * d - 1, stack)
            if self.watch is not None:  # (the line taken: now fed to the schema, once)
                self.watch.line(d, ident, opener is not None, scalar, self.line, (self.buf, nl))
            self.pos = nl + 1
            self.line += 1
            self.after = opener is None  # (a field ended, unless a message opened)

    def _unended(self) -> bool:
        """The line at ``pos`` does not end in the buffer: stream it (a long line) or read more
        (False: the walk goes on); True at the end of a complete file; else hand over."""
        if self.lim - self.pos > self.long:
            self._long_line()
            return False
        if self._more():
            return False
        if self.pos == len(self.buf) and not self.stack and self.bad is None:
            return True
        raise _HandOver(self.base + self.pos, self.line)

    def _whole_block(self, d: int, fname: str, kind: int) -> "Block | bool":
        """Match the block opening at ``pos`` whole and advance past it: the Block (a target) or
        True (a block to skip); False, not moving, when it must be entered instead."""
        closer = b"\n" + b"  " * d + b"}\n"
        start_abs = self.base + self.pos
        frm = self.buf.find(b"\n", self.pos) + self.base  # the opener's own newline (an empty block)
        while True:
            buf = self.buf
            ahead = buf.rfind(b"\n", self.pos, self.lim) + 1  # (the opener's newline is there)
            i = buf.find(closer, frm - self.base, ahead)  # (no closer in the last, unended line)
            if i >= 0:
                break
            if self.lim - ahead >= min(self.long, self.big):
                # A line longer than _LONG (or than a block may be, before 3.11) is coming: enter
                # the block (_long_line streams that line) rather than read and search up to _BIG
                # of it here, and in every batch that looks for a closer in the buffer it would
                # leave behind. The lines up to it are walked one by one: a batch would compile a
                # regex for their depth (~40 ms) to match a handful of lines.
                self.no_batch = max(self.no_batch, self.base + ahead)
                return False
            if self.base + self.lim - start_abs > self.big:
                return False
            frm = max(frm, self.base + ahead - len(closer) + 1)
            if not self._more():
                return False
        start = self.pos
        end = i + len(closer)
        if end - start > self.big or layout.block_re(d).fullmatch(buf, start, end) is None:
            return False
        stack = self.stack
        line = self.line
        if self.watch is not None:
            self.watch.field(buf, start, end, line, d, buf.find(b"\\", start, end) < 0)
        out: "Block | bool" = True
        if fname == "signature" and d and stack[-1].label is None:
            m = layout.fields_re(d + 1, ("name",)).search(buf, start, end)
            if m is not None:
                raw = m.group(2)
                if len(raw) >= MAX_LITERAL:
                    raise _HandOver(start_abs, line)
                stack[-1].label = scalar_value(raw)
        if kind == TARGET:
            hs: List[Head] = []
            if self._head_names:
                n = line
                last = start
                for m in layout.fields_re(d + 1, self._head_names).finditer(buf, start, end):
                    raw = m.group(2)
                    if len(raw) >= MAX_LITERAL:
                        raise _HandOver(start_abs, line)
                    n += buf.count(b"\n", last, m.start()) + 1
                    last = m.start() + 1
                    hs.append(Head(self._name_of[m.group(1)], scalar_value(raw), n))  # (one str per name)
            out = Block(self.path, start_abs + 2 * d, self.base + end - 1, line, 2 * d + 1, tuple(hs), parents(stack))
        self.line = line + buf.count(b"\n", start, end)
        self.pos = end
        self.after = True
        self.last_name = last_name(buf, end)
        return out


    # --- hand-over to the general scanner ------------------------------------------------------

    def _hand_over(self, h: _HandOver) -> Iterator[Block]:
        yield from general_from(self, h)  # (a hook: GE's walk stops at a chunk's end instead)
