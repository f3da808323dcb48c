"""How a neighbourhood's hop finds its blocks (``_hood``): one forward reading of the blocks
(:func:`pass_finder`), or one byte search whose hits are read at their blocks only
(:func:`grep_finder`, where the input allows it)."""
from __future__ import annotations

import bisect
import contextlib
import re
from typing import TYPE_CHECKING, Callable, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from .._model import FUNCTION_NODES, TF_HEADS, Block
from ..parallel._grep import _grep, _grep_range, _SearchFailed

if TYPE_CHECKING:
    from ..graph._input import GraphFile


class Rec(NamedTuple):
    """What a hop keeps of a block: no more than the Hood prints, and its inputs."""

    name: str
    op: str
    line: Optional[int]
    offset: int
    inputs: Tuple[str, ...]


# One hop's search: (names wanted, names whose consumers are wanted) -> the blocks that match, in file order.
Finder = Callable[[FrozenSet[str], FrozenSet[str]], Iterable[Rec]]


def producer(inp: str) -> str:
    """The node an ``input:`` names: ``^x`` (a control input) and ``x:1`` (an output) name ``x``;
    a function body's ``x:output:0`` names ``x`` too."""
    return inp[1:].split(":", 1)[0] if inp.startswith("^") else inp.split(":", 1)[0]


UNCOUNTED = -1  # a text block found by a search: its line is counted at the end (the lane's lines_of)


def rec_of(b: Block) -> Rec:
    return Rec(b.name or "", b.op or "", b.line if b.line else None, b.start, tuple(b.inputs))


def _matches(r: Rec, want: FrozenSet[str], cons: FrozenSet[str]) -> bool:
    return r.name in want or any(producer(i) in cons for i in r.inputs)


def pass_finder(g: "GraphFile", path: Tuple[str, ...], function: Optional[str]) -> Finder:
    """A hop as one forward reading of the blocks at ``path`` (of ``function`` only, if given)."""

    def find(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Rec]:
        for b in g.blocks(path, TF_HEADS):
            if function is not None and (not b.parents or b.parents[-1] != function):
                continue
            r = rec_of(b)
            if _matches(r, want, cons):
                yield r

    return find


class Fallback(Exception):
    """A hit the byte search cannot place (a layout other than the writer's): read the hop instead."""


INPUT = 3  # NodeDef.input
_NAME_OK = re.compile(r"[A-Za-z0-9_./>\-]+\Z")  # (what TF allows in a node name: no quote, no escape)
_FIELD_LINE = re.compile(rb"( *)(\w+): \Z")
_BACK = 1 << 16
_MARK = 1 << 20


def grep_finder(
    g: "GraphFile", path: Tuple[str, ...], function: Optional[str], centre: "Block", *, within: Optional[Tuple[int, int]] = None,
) -> Optional[Finder]:
    """A hop as one fixed-string grep (``-F``) for the frontier's names, its hits read at their
    blocks only; ``None`` where the input allows none (a stream, no grep, a binary graph's
    functions or a MetaGraphDef, a text graph not in the writer's layout at the centre).
    ``within``: the top level's bytes ``[lo, hi)`` only (a binary graph's: ``[0, hi)``), ``lo``
    at a block's end: a search that stops early costs its stretch, not the file."""
    import shutil

    from ..wire import GRAPHDEF

    if not g.regular or not g.lane.searchable:
        return None
    grep = shutil.which("grep")
    if grep is None:
        return None
    if centre.binary:
        if g.binary != GRAPHDEF or tuple(path) != ("node",):
            return None
        return _checked(_recs(_wire_blocks(g, grep, upto=None if within is None else within[1])), g, path, function)
    fn = tuple(path) == FUNCTION_NODES
    indent = 6 if fn else 2
    opener = (b" " * (indent - 2)) + (b"node_def {\n" if fn else b"node {\n")
    if centre.column != indent - 1 or g.read_at(centre.start, len(opener) - indent + 2) != opener[indent - 2:]:
        return None
    if fn:
        lo = _back_to(g, centre.start, b"\n  function {\n")
        hi = _on_to(g, centre.end, b"\n  }\n")
        if lo is None or hi is None:
            return None
        lo += 1
        base = centre.line - _newlines(g, lo, centre.start - (indent - 2))
    elif within is not None:  # (from the newline before the next opener)
        lo, hi, base = max(0, within[0] - 1), min(within[1], g.size or 0), 1
    else:
        lo, hi, base = 0, g.size or 0, 1
    return _checked(_recs(_text_blocks(g, grep, lo, hi, base, indent, opener)), g, path, function)


def _checked(find: Finder, g: "GraphFile", path: Tuple[str, ...], function: Optional[str]) -> Finder:
    """``find``, lazily (the walk stops it once a hop is full), and where a hit cannot be placed,
    a reading of the hop from past the last block ``find`` gave on: both give blocks in file order."""

    def hop(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Rec]:
        last = -1
        if all(_NAME_OK.match(n) for n in want | cons):
            try:
                with stopping(find(want, cons)) as found:
                    for r in found:
                        last = r.offset
                        yield r
                return
            except (Fallback, _SearchFailed):
                pass
        for r in pass_finder(g, path, function)(want, cons):
            if r.offset > last:
                yield r

    return hop


@contextlib.contextmanager
def stopping(found: Iterable[Rec]) -> Iterator[Iterator[Rec]]:
    """A finder's blocks, its search stopped (its grep ended) when the reader leaves early."""
    it = iter(found)
    try:
        yield it
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


Blocks = Callable[[FrozenSet[str], FrozenSet[str]], Iterator[Block]]


def _recs(blocks: Blocks) -> Finder:
    return lambda want, cons: (rec_of(b) for b in blocks(want, cons))


def searched_centre(g: "GraphFile", name: str) -> Optional[Block]:
    """The graph's own node ``name`` (not a function's), found by one byte search, with its
    inputs; ``None`` if the search finds none or cannot be made (then read for it)."""
    import shutil

    from ..wire import GRAPHDEF

    grep = shutil.which("grep")
    if grep is None or not g.regular or not g.lane.searchable or not _NAME_OK.match(name):
        return None
    first = ("-F", "--line-buffered")  # (each hit as it is found: the search stops at the node, not at the file's end)
    if g.binary is None and tuple(g.dialect.path) == ("node",):
        blocks = _text_blocks(g, grep, 0, g.size or 0, 1, 2, b"node {\n", opts=first)
    elif g.binary == GRAPHDEF:
        blocks = _wire_blocks(g, grep, first)
    else:
        return None
    try:
        for b in blocks(frozenset([name]), frozenset()):
            if b.name == name:
                return b
    except (Fallback, _SearchFailed):
        pass
    return None


def _text_blocks(
    g: "GraphFile", grep: str, lo: int, hi: int, base: int, indent: int, opener: bytes, known: Optional[Callable[[int], bool]] = None,
    opts: Tuple[str, ...] = ("-F",),
) -> Blocks:
    """A hop's search in a text graph; ``known(offset)``: whether a hit lies in a block read already (left alone)."""
    closer = b"\n" + opener[: indent - 2] + b"}"
    head = b"\n" + opener

    def find(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Block]:
        last_end = lo  # the end of the last block found (hits come in file order: a later hit lies in it or after it)
        start_at = lo
        for quoted in (False, True):
            # Bare names first; where they are met inside too many other names (a scope's name:
            # "GradientDescent/update" in every "GradientDescent/update_layer_k/...") the rest
            # of the file is searched again quoted, from the last block found on.
            pattern = "\n".join(search_patterns(want, cons, quoted))
            whole = lo == 0 and hi >= (g.size or 0)
            hits = _grep(grep, g, start_at, pattern, opts=opts) if whole else _grep_range(grep, g, start_at, hi, pattern, opts)
            missed = 0
            try:
                for off, text in hits:  # (no line numbers: grep -n costs a third more, and cannot be split; see lines_of)
                    read = off < last_end or (known is not None and known(off))  # (in a block read already)
                    near = None if read else _quoted_value(g, off, text, want, cons, lo)
                    if near is None:  # (no value asked for, or one read already: a NoOp's 150,000 inputs met bare)
                        missed += 1
                        if not quoted and missed > _MISSED_MAX:
                            # (a value not met yet has its quote, or its quote and caret, at or after here:
                            # a name holds neither, so none overlaps a bare match before it)
                            start_at = max(last_end, off - 2)
                            break
                        continue
                    off, back, n = near
                    nl = back.rfind(b"\n")
                    m = _FIELD_LINE.match(back[nl + 1:])
                    if (nl < 0 or (m is not None and len(m.group(1)) != indent)) and len(back) < off - lo:
                        back = g.read_at(max(lo, off - _BACK), min(_BACK, off - lo))  # (the line, or the lines above it, start further back)
                        nl = back.rfind(b"\n")
                        if nl < 0 and off - lo >= _BACK:
                            raise Fallback("a hit in a long line")
                        m = _FIELD_LINE.match(back[nl + 1:])
                    prefix = back[nl + 1:]
                    if m is None:
                        if prefix.endswith(b"\\"):  # (an escaped quote inside a string)
                            continue
                        raise Fallback("a hit off a field line")
                    if m.group(2) != b"name" and (m.group(2) != b"input" or n not in cons):
                        continue  # (a value of another field, or a consumer of a node not asked for its consumers)
                    if len(m.group(1)) != indent:
                        if m.group(2) == b"input" or _opener_above(back[: nl + 1], len(m.group(1))):
                            raise Fallback("a node in another layout")
                        continue  # (the name of a nested message: an attr's func, a signature)
                    line_start = off - len(prefix)
                    start = _back_to(g, line_start, head, lo)
                    if start is None:
                        raise Fallback("no opener above a hit")
                    start += 1
                    if g.read_at(start, line_start - start).find(closer) >= 0:
                        raise Fallback("a closer between a hit and its opener")
                    end = _on_to(g, line_start, closer + b"\n")
                    if end is None:
                        raise Fallback("no closer below a hit")
                    last_end = end + len(closer)
                    b = Block(FUNCTION_NODES if indent == 6 else ("node",), start, end + len(closer), 1, indent - 1, ())
                    got = g.rescan(b, TF_HEADS)
                    if len(got) != 1:
                        raise Fallback("a block that does not scan")
                    yield got[0]._replace(line=UNCOUNTED)  # (in file order: the hits come in order, a block once)
                else:
                    return
            finally:
                hits.close()

    return find


_BARE_MIN = 8  # (a shorter name is searched for quoted: bare, it would be met inside many other names)
_MISSED_MAX = 20000  # bare hits that are no value asked for (0.1 s of reading them) before the search is quoted


def search_patterns(want: FrozenSet[str], cons: FrozenSet[str], quoted: bool = False) -> List[str]:
    """The fixed strings that find every ``name: "n"`` of ``want`` and ``cons`` and every
    ``input: "n"``, ``"n:k"`` or ``"^n"`` of ``cons``: the bare names, which grep finds a third
    faster than quoted ones (a quote in a pattern, a byte on every line of the text, shortens
    grep's skips); :func:`_quoted_value` keeps the hits that are whole values. A short name is
    quoted instead (and every name, if ``quoted``): bare, it would be met inside many other
    names, each hit read here."""
    pats = set()
    for n in want | cons:
        if len(n) >= _BARE_MIN and not quoted:
            pats.add(n)
        else:
            pats.add('"%s"' % n)
            if n in cons:
                pats.update(('"%s:' % n, '"^%s"' % n))
    return sorted(pats)


_NEAR = 256  # bytes read before a hit: most lines start within them


def _quoted_value(
    g: "GraphFile", off: int, text: bytes, want: FrozenSet[str], cons: FrozenSet[str], floor: int,
) -> Optional[Tuple[int, bytes, str]]:
    """Where the quoted string a hit ``text`` at ``off`` lies in opens, the bytes before that
    quote (``_NEAR`` of them at most, none before ``floor``) and the name, if it is a value a
    search asked for: ``"n"`` for a name of ``want`` or ``cons``, ``"n:k"`` or ``"^n"`` for one
    of ``cons``; else ``None``. A name holds
    no quote, caret or colon, so no false hit overlaps a true one, and grep's longest match at a
    true value's first byte is the value's name (a name that only begins it is followed by
    another of the name's bytes)."""
    if text[:1] == b'"':  # (a quoted pattern: its name)
        off, text = off + 1, text[1:]
        if text[:1] == b"^":
            off, text = off + 1, text[1:]
        text = text[:-1]
    n = text.decode("ascii", "replace")
    lo = max(floor, off - _NEAR)
    buf = g.read_at(lo, off - lo + len(text) + 1)
    k = off - lo  # (the name's first byte in buf)
    after = buf[k + len(text):k + len(text) + 1]
    if buf[k - 1:k] == b'"':
        q = k - 1
        if not (after == b'"' and (n in want or n in cons)) and not (after == b":" and n in cons):
            return None
    elif buf[k - 2:k] == b'"^' and after == b'"' and n in cons:
        q = k - 2
    else:
        return None
    return lo + q, buf[:q], n


def wire_marks(g: "GraphFile") -> List[int]:
    """The node boundaries known in a binary graph, in order (kept on the file for the next walk)."""
    marks: List[int] = getattr(g, "_hood_marks", None) or _index_marks(g)
    g._hood_marks = marks  # type: ignore[attr-defined]
    return marks


def reach(g: "GraphFile", off: int) -> None:
    """Bring the boundaries known in a binary graph (:func:`wire_marks`) near ``off``: a hit far
    past the last is walked to by parallel parts (``wire._wire_marks``), not one field after
    another from there."""
    from ..parallel._cores import usable_cores
    from ..wire import SPLIT_MIN, far_marks

    marks = wire_marks(g)
    if off - marks[-1] > SPLIT_MIN:
        marks.extend(far_marks(g.read_at, g.size or 0, marks[-1], off, _MARK, usable_cores()))


def _wire_blocks(
    g: "GraphFile", grep: str, opts: Tuple[str, ...] = ("-F",), known: Optional[Callable[[int], bool]] = None,
    upto: Optional[int] = None,
) -> Blocks:
    """A hop's search in a binary GraphDef (``upto``: in its first bytes only); ``known`` as for :func:`_text_blocks`."""
    from ..wire import NAME, NODE, Malformed, TopWalk, node_field

    # Boundaries of top-level fields met by a walk, about one a MB, kept on the file for the
    # next hop (and the centre's search before them): each walk starts at the last one before its
    # hit, so the hops walk the length prefixes about once between them, not once each.
    marks = wire_marks(g)
    size = g.size or 0

    def find(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Block]:
        walk: Optional[TopWalk] = None
        last = None
        tops = []
        try:
            pattern = "\n".join(sorted(want | cons))
            hits = _grep(grep, g, 0, pattern, opts=opts) if upto is None or upto >= size else _grep_range(grep, g, 0, upto, pattern, opts)
            for off, _ in hits:
                if (known is not None and known(off)) or not _may_name(g, off, want, cons):
                    continue  # (no name or input field there: not walked to)
                if last is not None and last.tag <= off < last.end:
                    top = last
                else:
                    reach(g, off)
                    m = marks[bisect.bisect_right(marks, off) - 1]
                    if walk is None or walk.pos > off or m > walk.pos:
                        walk = TopWalk(g.read_at, size, m)
                    while walk.pos + _MARK < off and walk.holding(walk.pos + _MARK) is not None:
                        if walk.pos > marks[-1]:
                            marks.append(walk.pos)
                    top = walk.holding(off)
                last = top
                if top is None or top.number != NODE or (tops and tops[-1] == top):
                    continue
                f = node_field(g.read_at, top, off)
                if f is None or f.number not in (NAME, INPUT):
                    continue
                v = g.read_at(f.start, f.end - f.start).decode("utf-8", "surrogateescape")
                if (f.number == NAME and v in want) or (f.number == INPUT and producer(v) in cons):
                    tops.append(top)
                    got = g.rescan(Block(("node",), top.start, top.end, 0, 0, ()), TF_HEADS)
                    if len(got) != 1:
                        raise Fallback("a node that does not read")
                    yield got[0]  # (lazily: the centre's search stops at its first)
        except Malformed:
            raise Fallback("a binary graph whose fields do not chain") from None

    return find


_NAME_TAG, _INPUT_TAG = 0x0A, 0x1A  # NodeDef.name and NodeDef.input, length-delimited


def _may_name(g: "GraphFile", off: int, want: FrozenSet[str], cons: FrozenSet[str]) -> bool:
    """Whether a raw hit at ``off`` may lie in a ``name`` field naming one of ``want`` or an
    ``input`` field naming one of ``cons``, by the bytes around it alone: such a field's value
    starts at the hit, one byte before it (``^x``: no name holds a ``^``) or one byte after it
    (grep's match began at the length's last byte, which may be a name's character; no tag is,
    so no match spans one). A hit that fails is no such field's first match, and a field's
    other matches follow its first: only hits that pass need the walk that proves them."""
    lo = max(0, off - 12)
    head = g.read_at(lo, off + 2 - lo)
    for s in (off, off + 1, off - 1):
        k = s - lo  # (the value's first byte in head)
        if k < 2 or k > len(head) or (s == off - 1 and head[k:k + 1] != b"^"):
            continue
        n, shift, j = 0, 0, k - 1  # the length: a varint that ends at k - 1, read backward
        if head[j] >= 0x80:
            continue
        while j > 0 and head[j - 1] >= 0x80 and k - j < 5:
            j -= 1
        for b in head[j:k]:
            n |= (b & 0x7F) << shift
            shift += 7
        if j < 1 or head[j - 1] not in (_NAME_TAG, _INPUT_TAG):
            continue
        v = g.read_at(s, n).decode("utf-8", "surrogateescape")
        if len(v) != n:
            continue
        if (head[j - 1] == _NAME_TAG and v in want) or (head[j - 1] == _INPUT_TAG and producer(v) in cons):
            return True
    return False


def _index_marks(g: "GraphFile") -> List[int]:
    """Node boundaries to start walks from: 0, and the checkpoints (one a 256 KiB) of the backward
    index bp built for this file, when the cache holds it (the report's hits near bp are then
    walked to from close by, not from the start)."""
    from ..graph import _cache
    from ..wire import load_index

    try:
        index = load_index(_cache.read(_cache.key_of(g), "wire-index-node"), ("node",))
    except OSError:
        index = None
    if index is None:
        return [0]
    return [0] + sorted(o for o, f in zip(index.offs, index.fids) if f == -1 and o > 0)


def _opener_above(back: bytes, k: int) -> bool:
    """Whether the nearest line above (in ``back``, which ends with a newline) that is indented
    less than ``k`` opens a node, or there is none in ``back``: a field at ``k`` is a node's."""
    end = len(back) - 1
    while end > 0:
        start = back.rfind(b"\n", 0, end) + 1
        line = back[start:end]
        stripped = line.lstrip(b" ")
        if stripped and len(line) - len(stripped) < k:
            return stripped in (b"node {", b"node_def {", b"node{", b"node_def{") or stripped.endswith(b"<")
        if start == 0:
            break
        end = start - 1
    return True


def _newlines(g: "GraphFile", start: int, end: int) -> int:
    n = 0
    while start < end:
        k = min(1 << 20, end - start)
        n += g.read_at(start, k).count(b"\n")
        start += k
    return n


def _back_to(g: "GraphFile", pos: int, needle: bytes, floor: int = 0) -> Optional[int]:
    """Where the last ``needle`` ends at or before ``pos`` begins (``floor - 1`` counts as a newline)."""
    hi = pos
    while hi > floor:
        lo = max(floor, hi - _BACK)
        buf = (b"\n" if lo == floor else b"") + g.read_at(lo, hi - lo + len(needle) - 1)
        k = buf.rfind(needle)
        if k >= 0:
            return lo + k - (1 if lo == floor else 0)
        hi = lo
    return None


def _on_to(g: "GraphFile", pos: int, needle: bytes) -> Optional[int]:
    """Where the first ``needle`` at or after ``pos`` begins."""
    size = g.size or 0
    while pos < size:
        buf = g.read_at(pos, _BACK + len(needle))
        k = buf.find(needle)
        if k >= 0:
            return pos + k
        pos += _BACK
    return None
