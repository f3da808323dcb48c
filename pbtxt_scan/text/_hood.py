"""A neighbourhood's searches on text (the text lane's ``find_blocks`` and ``read_near``): blocks
found by one fixed-string grep for names, each hit placed at its block by the writer's layout
around it, and the top-level nodes of a window read near an offset. Only the blocks' places are
given: the rules read them (``fpbp._hood_find``)."""
from __future__ import annotations

import re
from typing import Any, Callable, FrozenSet, Generator, Iterator, List, Optional, Tuple, cast

from ..language._lines import FIELD_HEAD
from .._model import FUNCTION_NODES, Block
from ..parallel import _grep as _search
from .._errors import PbtxtError
from ..source._lane import Found, Near, Unplaced, strict_of
from ._strict import Met, collecting, top_fields

_FIELD_LINE = re.compile((FIELD_HEAD + "\\Z").encode("ascii"))  # (a field line up to its value's quote)
_BACK = 1 << 16
_OPENER = b"\nnode {\n"
_CLOSER = b"\n}\n"
WINDOW = 1 << 18  # (how far before ``lo`` a window's first opener is looked for)


def hood_blocks(
    g: Any, grep: str, path: Tuple[str, ...], centre: Optional[Block], *, upto: Optional[int], known: Optional[Callable[[int], bool]],
    opts: Tuple[str, ...], since: int = 0,
) -> Optional[Found]:
    """The search of :meth:`TextLane.find_blocks <pbtxt_scan.text._lane.TextLane.find_blocks>`:
    the graph's own nodes (``centre`` ``None``: a graph whose nodes are at ``node``), or the blocks
    at ``path`` beside ``centre`` (a function's body, where the centre's is); ``None`` where the
    text is not in the writer's layout at the centre."""
    if centre is None:
        if tuple(g.lane.dialect.path) != ("node",):
            return None
        lo = max(0, since - 1)  # (from the newline before the next opener)
        return _text_blocks(g, grep, lo, _within(g, upto), indent=2, opener=b"node {\n", known=known, opts=opts)
    fn = tuple(path) == FUNCTION_NODES
    indent = 6 if fn else 2
    opener = (b" " * (indent - 2)) + (b"node_def {\n" if fn else b"node {\n")
    if centre.column != indent - 1 or g.read_at(centre.start, len(opener) - indent + 2) != opener[indent - 2:]:
        return None
    if fn:
        fn_lo = _back_to(g, centre.start, b"\n  function {\n")
        fn_hi = _on_to(g, centre.end, b"\n  }\n")
        if fn_lo is None or fn_hi is None:
            return None
        lo, hi = fn_lo + 1, fn_hi
    else:
        lo, hi = 0, g.size or 0
    return _text_blocks(g, grep, lo, hi, indent=indent, opener=opener, opts=opts)


def _within(g: Any, upto: Optional[int]) -> int:
    """Where a search of the graph's own nodes ends: ``upto``, within the file. (A stream read as
    far as asked is not read to its end to know its size: a search to ``upto`` ends there anyway.)"""
    if upto is not None and g.known_size() is None:
        return upto
    size = g.size or 0
    return size if upto is None else min(upto, size)


def _text_blocks(
    g: Any, grep: str, lo: int, hi: int, *, indent: int, opener: bytes, known: Optional[Callable[[int], bool]] = None,
    opts: Tuple[str, ...] = ("-F",),
) -> Found:
    """A hop's search in bytes ``[lo, hi)`` of a text graph, for the blocks that ``opener`` opens at
    ``indent``; ``known(offset)``: whether a hit lies in a block read already (left alone)."""
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
            whole = lo == 0 and g.known_size() is not None and hi >= (g.size or 0)
            hits = cast(  # (both are generators: closed below, which stops grep)
                "Generator[Tuple[int, bytes], None, None]",
                _search._grep(grep, g, start_at, pattern, opts=opts) if whole else _search._grep_range(grep, g, start_at, hi, pattern, opts),
            )
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
                            raise Unplaced("a hit in a long line")
                        m = _FIELD_LINE.match(back[nl + 1:])
                    prefix = back[nl + 1:]
                    if m is None:
                        if prefix.endswith(b"\\"):  # (an escaped quote inside a string)
                            continue
                        raise Unplaced("a hit off a field line")
                    if m.group(2) != b"name" and (m.group(2) != b"input" or n not in cons):
                        continue  # (a value of another field, or a consumer of a node not asked for its consumers)
                    if len(m.group(1)) != indent:
                        if m.group(2) == b"input" or _opener_above(back[: nl + 1], len(m.group(1))):
                            raise Unplaced("a node in another layout")
                        continue  # (the name of a nested message: an attr's func, a signature)
                    line_start = off - len(prefix)
                    start = _back_to(g, line_start, head, lo)
                    if start is None:
                        raise Unplaced("no opener above a hit")
                    start += 1
                    if g.read_at(start, line_start - start).find(closer) >= 0:
                        raise Unplaced("a closer between a hit and its opener")
                    end = _on_to(g, line_start, closer + b"\n")
                    if end is None:
                        raise Unplaced("no closer below a hit")
                    last_end = end + len(closer)
                    # (in file order: the hits come in order, a block once)
                    yield Block(FUNCTION_NODES if indent == 6 else ("node",), start, end + len(closer), 1, indent - 1, ())
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
    g: Any, off: int, text: bytes, want: FrozenSet[str], cons: FrozenSet[str], floor: int,
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


def read_near(g: Any, lo: int, hi: int, at: int, heads: FrozenSet[str], inside: Callable[[int, int], bool]) -> Optional[Near]:
    """The top-level nodes from the last column-0 ``node {`` at or before ``lo`` (within ``lo -
    WINDOW``; else the node at ``at``) to the last column-0 closer before ``hi`` (at least to the
    end of the node at ``at``), lines counted from the first; none read where ``inside(start,
    end)`` (read already); ``None`` if the node at ``at`` is not in the writer's layout or the
    bytes do not scan there."""
    from ._canonical import scan_canonical
    from ._layout import warm

    if g.read_at(at, 7) != b"node {\n" or (at and g.read_at(at - 1, 1) != b"\n"):
        return None  # (not the writer's layout there)
    size = g.size or 0
    start = _opener_near(g, max(0, min(lo, at)), max(0, min(lo, at) - WINDOW))
    if start is None or start > at:
        start = at
    e = _back_to(g, min(max(hi, at), size), _CLOSER, start)
    end = e + 2 if e is not None and e > at else None
    if end is None:
        e = _on_to(g, at, _CLOSER)
        end = size if e is None else e + 2
    if inside(start, end):
        return Near((start, end), [])
    # A window's few thousand lines are walked one by one (0.07 s) unless this process has built
    # the batch patterns already: building them (0.3 s) would cost more than they save here.
    warm_up = None if warm() else end - start
    blocks: List[Block] = []
    top = top_fields(("node",), g, None)
    met = Met()
    try:
        for b in scan_canonical(g.reader(start, end), ("node",), heads, start_offset=start, start_line=1, validate=False, warm_up=warm_up,
                                top=None if top is None else collecting(top, met)):
            if b.column != 1:
                return None
            blocks.append(b)
    except Exception:  # (a PbtxtError, or a hand-over's end of input: bytes that are no whole nodes there)
        return None
    for off, err in met.found:  # (a top-level field the graph has not, read in the window: its line is the file's)
        strict_of(g).refuse(PbtxtError(err.msg, g.lane.lines_of([off]).get(off, err.line), err.column, err.path), off)
    return Near((start, end), blocks)


def _opener_near(g: Any, pos: int, floor: int) -> Optional[int]:
    """Where the last column-0 ``node {`` line at or before ``pos`` (and at or after ``floor``) starts."""
    k = _back_to(g, pos + 1, _OPENER, floor)
    if k is None:
        return None
    if k < floor:  # (at ``floor`` itself: a line start only after a newline)
        return floor if floor == 0 or g.read_at(floor - 1, 1) == b"\n" else None
    return k + 1


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


def _back_to(g: Any, pos: int, needle: bytes, floor: int = 0) -> Optional[int]:
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


def _on_to(g: Any, pos: int, needle: bytes) -> Optional[int]:
    """Where the first ``needle`` at or after ``pos`` begins."""
    size = g.size or 0
    while pos < size:
        buf = g.read_at(pos, _BACK + len(needle))
        k = buf.find(needle)
        if k >= 0:
            return pos + k
        pos += _BACK
    return None
