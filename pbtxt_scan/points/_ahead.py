r"""Reading ahead for fp: where a node that could still change fp's answer may be, found by a
byte search instead of reading every later block (the argument for why it never misses one is in
``_rules``' docstring).

The search is one POSIX extended regex (:func:`_pattern`) run by ``grep -E`` (a DFA: one C pass
however many alternatives; Python's ``re`` ran the same pattern at 5 MB/s). grep never opens the
user's file: it reads the one open :class:`GraphFile`'s descriptor itself (a range to the end: our
own reads are positioned, so its offset is free) or a pipe this process fills from it with
``os.sendfile`` at explicit offsets, so the input is still opened once. A long rest is cut into
parts, one a usable core, searched at once. Without grep, on streams (stdin, pipes, gzip) or when grep
fails, there is no search and fp reads the blocks instead: the same answers, at block speed.
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, List, Optional, Tuple

from ..parallel._cores import usable_cores
from ._catalog import DATA_SOURCES, ENQUEUES, PLACEHOLDERS, STAGES, in_gradients_scope

if TYPE_CHECKING:
    from ..graph._input import GraphFile



class _Search:
    """One byte search read lazily: its hits at or after a position, each judged by its line."""

    def __init__(self, start: Callable[[int], Iterator[Tuple[int, bytes]]], context: Callable[[int], Tuple[Optional[bytes], bytes, bytes, int]]) -> None:
        self._start = start
        self._context = context
        self._hits: Optional[Iterator[Tuple[int, bytes]]] = None
        self._line_end = -1  # the end of the last line judged (its other hits are skipped)
        self.failed = False
        self.library = False  # a line that may open the `library` met (only if searched for)

    def begin(self, pos: int) -> None:
        if self._hits is None:
            self._hits = self._start(pos)

    def close(self) -> None:
        close = getattr(self._hits, "close", None)
        if close is not None:
            close()  # stops the search process

    def lines(self, pos: int) -> Iterator[Tuple[int, Tuple[Optional[str], Optional[str]]]]:
        """``(offset, judge_line(...))`` of each hit's line from ``pos`` on; ``(-1, ("?", "?"))``
        forever if the search failed."""
        self.begin(pos)
        assert self._hits is not None
        try:
            for off, _text in self._hits:
                if off < pos or off <= self._line_end:
                    continue
                prev, line, nxt, self._line_end = self._context(off)
                if _text == b"library":  # the word, not a value: is it the library's opener?
                    m = _SINGLE.fullmatch(line) if prev is not None else None
                    if m is None or m.group(1) == b"library":
                        self.library = True
                yield off, (("?", "?") if prev is None else judge_line(prev, line, nxt))
        except _SearchFailed:
            self.failed = True
        while self.failed:
            yield -1, ("?", "?")  # anywhere: the caller reads on


class _Ahead:
    """What the rest of the top level holds, learned from two byte searches instead of blocks.

    ``ops``: every place a node's op may be one that matters (:data:`_FP_OPS`, by :data:`_OP_WORDS`); ``names``: every
    place a top-level node's name may be in a gradients scope. Their hits come from
    :func:`needle_hits` (C speed), each judged by its line (:func:`judge_line`): a line that surely
    sets no such op (or name) is passed over; any other counts.
    """

    def __init__(
        self,
        ops: _Search,
        names: _Search,
        ops_in: Optional[Callable[[int, int], Iterator[Tuple[int, bytes]]]] = None,
        g: Optional["GraphFile"] = None,
    ) -> None:
        self._g = g
        self._ops = ops
        self._names = names
        self._ops_in = ops_in  # the ops search over a range only (fp's look for a copy of the model)
        self._op_lines: Optional[Iterator[Tuple[int, Tuple[Optional[str], Optional[str]]]]] = None
        self._pending: Optional[Tuple[int, str]] = None
        self.read_all = False  # the ops search has gone to the end of the file

    def next_op(self, pos: int, wanted: Callable[[str], bool]) -> Optional[int]:
        """Where the first node after ``pos`` whose op passes ``wanted`` may be, or ``None`` if
        there is surely none (a line whose op cannot be told counts as a possible one)."""
        if self._op_lines is None:
            self._op_lines = self._ops.lines(pos)
        if self._pending is not None:
            off, op = self._pending
            if off >= pos and (op == "?" or wanted(op)):
                return off
            self._pending = None
        for off, (op, _name) in self._op_lines:
            if off < 0:  # the search failed: every line counts
                return pos
            if op is None or off < pos:
                continue
            if op == "?" or wanted(op):
                self._pending = (off, op)
                return off
        self.read_all = True
        return None

    def input_within(self, start: int, end: int, wanted: Callable[[str], bool]) -> Optional[int]:
        """Where the first node in ``[start, end)`` whose op may pass ``wanted`` (a line that
        cannot be judged counts) is, or ``None`` if there is surely none there. One bounded search."""
        if self._ops_in is None or self._g is None or start >= end:
            return None
        hits = self._ops_in(start, end)
        last = -1
        try:
            for off, text in hits:
                if off <= last or text == b"library":  # (the library's opener: no node here)
                    continue
                prev, line, nxt, last = line_context(self._g, off)
                op = "?" if prev is None else judge_line(prev, line, nxt)[0]
                if op == "?" or (op is not None and wanted(op)):
                    return off
        except _SearchFailed:
            return start  # cannot tell: read on
        finally:
            close = getattr(hits, "close", None)
            if close is not None:
                close()
        return None

    def no_library(self) -> bool:
        """True when the ops search read to the end of the file and met no ``library`` field."""
        return self.read_all and not self._ops.library and not self._ops.failed

    def close(self) -> None:
        self._ops.close()
        self._names.close()

    def top_gradients(self, pos: int) -> Optional[bool]:
        """Whether a top-level node after ``pos`` sits in a gradients scope: True, False, or None
        when the search cannot tell (a line it cannot judge)."""
        for _off, (_op, name) in self._names.lines(pos):
            if name == "?":
                return None
            if name is not None and in_gradients_scope(name):
                return True
        return False


_SINGLE = re.compile(
    rb"""[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z0-9_.+-]+)[ \t]*\r?"""
)
_OPENER = re.compile(rb"[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*[{<][ \t]*\r?")
_OP_FIELDS = (b"op", b"type", b"op_type")


def judge_line(prev: bytes, line: bytes, nxt: bytes) -> Tuple[Optional[str], Optional[str]]:
    """What one line may hold: (the op value it sets, or ``None`` if it surely sets no op, or
    ``"?"``; the top-level node name it sets, or ``None`` if surely none, or ``"?"``).

    A line is judged only when it is one whole scalar field (``field: value``) and the next line
    does not continue its string (adjacent literals concatenate); anything else is ``"?"``. A
    ``name`` is a top-level node's when the line before opens a ``node`` block (GraphDef has no
    other ``node`` field) and surely not when it opens any other message.
    """
    from ..language._grammar import string_value

    m = _SINGLE.fullmatch(line)
    if m is None:
        return "?", "?"
    field, raw = m.group(1), m.group(2)
    if nxt.lstrip(b" \t")[:1] in (b'"', b"'", b"#"):
        return "?", "?"
    if raw[:1] in (b'"', b"'"):
        value = string_value(raw.decode("utf-8", "surrogateescape"))
    else:
        value = raw.decode("ascii")
    op = name = None
    if field in _OP_FIELDS:
        op = value[3:] if value.startswith("ge:") else value
    if field == b"name":
        o = _OPENER.fullmatch(prev)
        if o is None:
            name = "?"
        elif o.group(1) == b"node":
            name = value
    return op, name


def _pattern(words: Iterable[str], extra: Iterable[str] = ()) -> str:
    r"""A POSIX extended regex matching, in any text that spells a value holding one of ``words``
    (a string literal, escaped or split, or a bare identifier), at least one place:

    - the word itself, when it is written plainly;
    - where a literal is split inside the word (``"QueueDe" "queue"``), the first piece's end: a
      proper prefix of the word and its closing quote;
    - where a letter is escaped, the escape's start: ``\1``/``\5`` (octal: 0o1xx, and 0o5xx that
      the grammar wraps to a byte, hold the letters), ``\x``, ``\u``, ``\U``.

    ``extra``: more words (field names such as ``library``, which are never escaped or split).
    One regex, not a list of fixed strings: grep runs it as one DFA, as fast as a single word
    (a list of 400 fixed strings ran 3x slower than ``grep -c``).
    """
    words = list(words)
    prefixes = sorted({w[:i] for w in words for i in range(1, len(w))})
    alts = [re.escape(w) for w in words + list(extra)]
    alts.append(r"\\[15xuU]")
    alts.append("(%s)[\"']" % "|".join(prefixes))
    return "|".join(alts)


# The ops that can still change fp once it has a candidate, and a word each of them holds (the
# search looks for the words: fewer, and no short prefix as common as `Mul"`).
_FP_OPS = DATA_SOURCES | ENQUEUES | STAGES | PLACEHOLDERS
_OP_WORDS = ("GetNext", "QueueDequeue", "QueueEnqueue", "Placeholder", "Data", "Arg", "Unstage", "Stage")
assert all(any(w in op for w in _OP_WORDS) for op in _FP_OPS)
_GRAD_WORDS = ("gradient",)  # gradients, gradients_N, gradient_tape


def ahead_of(g: "GraphFile") -> Optional[_Ahead]:
    """The byte searches fp reads ahead with, or ``None`` where there can be none."""
    import shutil

    pattern = _pattern(_OP_WORDS, ["library"])
    ops = needle_hits(g, pattern)
    names = needle_hits(g, _pattern(_GRAD_WORDS))
    if ops is None or names is None:
        return None
    grep = shutil.which("grep") or "grep"  # (found: needle_hits needs it)
    return _Ahead(
        _Search(ops, lambda off: line_context(g, off)),
        _Search(names, lambda off: line_context(g, off)),
        lambda start, end: _grep_range(grep, g, start, min(end, g.size or end), pattern),
        g,
    )



def needle_hits(g: "GraphFile", pattern: str) -> Optional[Callable[[int], Iterator[Tuple[int, bytes]]]]:
    """A byte search for ``pattern`` (POSIX extended regex, bytes as bytes) in the file: called
    with an offset, it yields ``(offset, text)`` of every match from there on, in order.
    ``None`` when there can be none (no grep; a stream): the caller reads blocks instead."""
    import shutil

    if not g.regular:
        return None
    grep = shutil.which("grep")
    if grep is None:
        return None
    return lambda offset: _grep(grep, g, offset, pattern)


class _SearchFailed(Exception):
    pass


_SPLIT = 64 << 20  # a rest longer than this is cut into parts searched at once, one a core
_MAX_PARTS = 16


def _grep(grep: str, g: "GraphFile", offset: int, pattern: str) -> Iterator[Tuple[int, bytes]]:
    """grep's matches from ``offset`` on, in order. A long rest is cut at line starts into parts
    (at least ``_SPLIT`` bytes each, at most one a usable core) searched by processes started
    together; each part's matches come after the previous part's. A match never spans lines, so
    none is lost at a cut. All start before any is read: waiting for one part's first hit before
    starting the next ran them one after the other whenever a part had none."""
    size = g.size or 0
    parts = max(1, min(usable_cores(), _MAX_PARTS, (size - offset) // _SPLIT))
    cuts = [offset]
    for k in range(1, parts):
        mid = offset + (size - offset) * k // parts
        nl = g.read_at(mid, 1 << 16).find(b"\n")
        if nl >= 0 and cuts[-1] < mid + nl + 1 < size:
            cuts.append(mid + nl + 1)
    cuts.append(size)
    runs: List[_GrepRun] = []
    try:
        # The last part first: it runs to the end, so it may read the descriptor itself.
        for lo, hi in reversed(list(zip(cuts, cuts[1:]))):
            runs.insert(0, _GrepRun(grep, g, lo, hi, pattern))
        for run in runs:
            yield from run
            run.close()
    finally:
        for run in runs:
            run.close()


class _GrepRun:
    """One grep over bytes ``[start, end)`` of the file, started at once; iterating yields its
    matches as ``(offset, text)``. grep never opens the file: it reads the open descriptor itself
    (a range to the end) or a pipe this process fills from it."""

    def __init__(self, grep: str, g: "GraphFile", start: int, end: int, pattern: str) -> None:
        import subprocess
        import threading

        self._g = g
        self._start = start
        self._feeder: Optional["threading.Thread"] = None
        args = [grep, "-a", "-b", "-o", "-E", "-e", pattern]
        env = dict(os.environ, LC_ALL="C")
        self._direct = end >= (g.size or 0) and g.offset_free and not getattr(g, "_fd_busy", False)
        if self._direct:  # (one child at a time may own the descriptor's offset: others take a pipe)
            g._fd_busy = True  # type: ignore[attr-defined]
            # To the end of the file: grep reads the open descriptor itself from `start` (our own
            # reads are positioned, so its moving offset is no one else's); no copy through a
            # pipe, which cost a third of the search (0.36 s a GB).
            fd = g.fileno()
            os.lseek(fd, start, os.SEEK_SET)
            try:
                self._p = subprocess.Popen(args, stdin=fd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
            except OSError:
                g._fd_busy = False  # type: ignore[attr-defined]
                raise _SearchFailed("grep did not start") from None
            return
        r, w = os.pipe()
        try:
            self._p = subprocess.Popen(args, stdin=r, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        except OSError:
            os.close(w)
            raise _SearchFailed("grep did not start") from None
        finally:
            os.close(r)
        self._feeder = threading.Thread(target=_feed, args=(g, start, end, w), daemon=True)
        self._feeder.start()

    def __iter__(self) -> Iterator[Tuple[int, bytes]]:
        p = self._p
        assert p.stdout is not None
        for raw in p.stdout:
            off, _, text = raw.partition(b":")
            if not off.isdigit():
                raise _SearchFailed("grep said %r" % raw[:80])
            yield self._start + int(off), text.rstrip(b"\n")
        if p.wait() not in (0, 1):
            raise _SearchFailed("grep failed")

    def close(self) -> None:
        """Stop grep (if it still runs) and its feeder; give the descriptor back. Idempotent."""
        p = self._p
        if p.poll() is None:
            p.kill()
        p.wait()
        if p.stdout is not None:
            p.stdout.close()
        if self._feeder is not None:
            self._feeder.join()
            self._feeder = None
        if self._direct:
            self._g._fd_busy = False  # type: ignore[attr-defined]
            self._direct = False


def _grep_range(grep: str, g: "GraphFile", start: int, end: int, pattern: str) -> Iterator[Tuple[int, bytes]]:
    """grep's matches in bytes ``[start, end)`` of the file, as offsets."""
    run = _GrepRun(grep, g, start, end, pattern)
    try:
        yield from run
    finally:
        run.close()


def _feed(g: "GraphFile", start: int, end: int, w: int) -> None:
    """Write bytes ``[start, end)`` of the file into the pipe ``w`` and close it: ``sendfile`` at
    explicit offsets where the system has it (the file's own position is left alone), else
    positioned reads; stop quietly when the reader has gone."""
    fd = g.fileno()
    off = start
    try:
        while off < end:
            n = min(1 << 20, end - off)
            try:
                n = os.sendfile(w, fd, off, n)
            except BrokenPipeError:
                return
            except (AttributeError, OSError):
                chunk = os.pread(fd, n, off) if hasattr(os, "pread") else g.read_at(off, n)
                n = os.write(w, chunk) if chunk else 0
            if n <= 0:
                return
            off += n
    except OSError:
        return
    finally:
        os.close(w)


_WINDOW = 1 << 16


def line_context(g: "GraphFile", offset: int, window: int = 4096) -> Tuple[Optional[bytes], bytes, bytes, int]:
    """``(previous line, line, next line, end of line)`` around ``offset`` in the file (lines
    without their newline). A line longer than 64 KiB comes back as ``(None, b"", b"", its end)``."""
    lo = max(0, offset - window)
    buf = g.read_at(lo, offset - lo + window)
    i = offset - lo
    s = buf.rfind(b"\n", 0, i) + 1
    e = buf.find(b"\n", i)
    ps = buf.rfind(b"\n", 0, max(0, s - 1)) + 1 if s > 0 else 0
    ne = buf.find(b"\n", e + 1) if e >= 0 else -1
    eof = len(buf) < offset - lo + window
    whole = (ps > 0 or lo == 0) and e >= 0 and (ne >= 0 or eof)
    if whole or (eof and e < 0 and (ps > 0 or lo == 0)):
        if e < 0:
            e = len(buf)
        if ne < 0:
            ne = len(buf)
        prev = buf[ps : s - 1] if s > 0 else b""
        return prev, buf[s:e], buf[e + 1 : ne], lo + e
    if window < _WINDOW:
        return line_context(g, offset, _WINDOW)
    at = offset  # a long line (a tensor's bytes): find its end only
    while True:
        chunk = g.read_at(at, 1 << 20)
        if not chunk:
            return None, b"", b"", at
        j = chunk.find(b"\n")
        if j >= 0:
            return None, b"", b"", at + j
        at += len(chunk)


def graph_producer(g: "GraphFile") -> Optional[int]:
    """``versions.producer`` of a GraphDef, read from the file's end (``versions`` is printed after
    ``node`` and ``library``); ``None`` when it is not there, or the input is a stream (then an
    empty shape is a scalar)."""
    if not g.regular or not g.size:
        return None
    tail = g.read_at(max(0, g.size - _WINDOW), _WINDOW)
    m = None
    for m in re.finditer(rb"(?<![A-Za-z0-9_])versions\s*[{<][^{}<>\"']*?(?<![A-Za-z0-9_])producer\s*:\s*(\d+)", tail):
        pass
    return int(m.group(1)) if m is not None else None
