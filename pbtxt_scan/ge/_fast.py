"""GE's op attributes at scanner speed: read off the canonical layout with one regex.

The scanner's fast path (``_canonical``) walks the writer layout (one field per line, two spaces
per level, ``}`` alone on a line) and hands over to the general scanner at the first line that is
not in it. Every block it yields *before* that hand-over is therefore in the layout, and already
validated: in such a block a line's depth is its indentation, and the message holding a line is
the last opener one level up. So the few fields GE logic needs (:data:`_skim._KEEP`) are found by
one compiled regex over the block's bytes (C speed: a weight string holds no newline, so the
search runs past it without a Python step; the regex is the writer layout's line of
``language._lines``, a value the rest of its verified line), and assembled into the :class:`Message` the skim
builds (the same fields in the same order), read by the one extractor, ``_attrs_of``. A message
nothing is kept from, and an attr whose first key GE does not read (``_attrs_of`` skips it), are
passed over with one ``find`` of their closer line (their first ``IND }`` line, by the layout).

1. :class:`Walker` is the scanner's walk, noting when the general scanner takes over
   (``general``); its blocks from then on take the exact road (Lark parse, or the skim for big
   ones). It can also start inside a ``graph`` block (as the scanner's walk can) and stop at a
   chunk's end, for ``_split``.
2. :func:`canonical_attrs` reads one canonical block in pieces of ``_PIECE`` bytes (memory stays
   bounded whatever a weight's size): lines that are not of interest are never decoded, and a
   long line (a weight) is passed over without being held. It returns ``None`` (take the exact
   road) for a kept line longer than a piece, the only shape it does not read itself.

``tests/test_ge_fast.py`` proves the fields agree with the Lark parse and the skim on generated
ops, in the layout and out of it.
"""
from __future__ import annotations

import re
from typing import Any, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from ..text import HandOver as _HandOver, Walker as _Walker
from ..source._source import DEFAULT_CHUNK
from ..language._grammar import _number
from ..text import scalar_value
from .._model import Block, Field, Message
from ..language._lines import SEP, verified_line_text
from ..language._terminals import TERMINALS
from ._attrs import _ORIGIN_NAME, _WANTED
from ._skim import _KEEP

_PIECE = 4 << 20  # bytes of a block read at a time (a weight's attr mostly fits: its closer is then found at once)

_NUMBER = re.compile(TERMINALS["NUMBER"])


def _patterns(dialect: str) -> Tuple["re.Pattern[bytes]", "re.Pattern[bytes]"]:
    names = sorted({n for kept in _KEEP[dialect].values() for n in kept})
    alt = "|".join(re.escape(n) for n in names)
    # (indent, opener name) or (indent, kept scalar name, its value), on lines the walk has
    # verified: the classifier's line, its value the rest of the line (``_lines.VERIFIED_VALUE``).
    line = re.compile(verified_line_text(alt).encode("ascii"))
    kept_start = re.compile(("\\n *(?:%s)%s" % (alt, SEP)).encode("ascii"))
    return line, kept_start


_RES = {d: _patterns(d) for d in _KEEP}

# The attrs whose other fields can count (``_attrs_of`` reads an attr only for these first keys).
_SKIP_UNLESS = {("attr",): _WANTED, ("output_desc", "attr"): frozenset({_ORIGIN_NAME})}


def _value(raw: bytes) -> Any:
    """A canonical scalar's value, as the skim (and the Lark parse) reads its tokens."""
    q = raw[:1]
    if q == b'"' or q == b"'":
        return scalar_value(raw)  # (one literal: the layout never continues a string on a line)
    if q == b"-":
        v = _value(raw[1:])
        return -v if isinstance(v, (int, float)) else "-" + str(v)
    text = raw.decode("ascii")  # (a number or an identifier: ASCII by the layout's regexes)
    if _NUMBER.fullmatch(text):
        return _number(text)
    return text


def canonical_attrs(reader: Any, column: int, dialect: str) -> Optional[Message]:
    """The kept fields of one op block in the canonical layout (``reader``: its bytes from its
    field name on; ``column``: the block's column), or ``None`` to read it the exact way."""
    keep = _KEEP[dialect]
    line_re, kept_start = _RES[dialect]
    base = (column - 1) // 2 + 1  # the op's own fields are at this depth
    root = Message()
    msgs: List[Optional[Message]] = [root]  # the kept message open at each depth below the op
    paths: List[Tuple[str, ...]] = [()]  # the path of the message open at each depth below the op
    carry = b""
    skipping = False  # inside a long line that holds nothing of interest
    search = line_re.search
    while True:
        data = reader.read(_PIECE)
        if not data:
            return root
        if skipping:
            nl = data.find(b"\n")
            if nl < 0:
                continue
            data = data[nl:]
            skipping = False
        buf = carry + data if carry else data
        last = buf.rfind(b"\n")
        if last < 0:  # (only a first piece with no newline: the opener line is cut)
            carry = buf
            continue
        stop = last + 1
        m = search(buf, 0, stop)
        while m is not None:
            ind, opener, name, raw = m.groups()
            r = len(ind) // 2 - base
            at = m.end()
            if opener is not None:
                fname = opener.decode("ascii")
                sub_path = paths[r] + (fname,)
                del paths[r + 1 :]
                paths.append(sub_path)
                del msgs[r + 1 :]
                parent = msgs[r]
                if parent is not None and sub_path in keep:
                    sub = Message()
                    parent.append(Field(fname, sub, 0, 0))
                    msgs.append(sub)
                else:
                    msgs.append(None)
                    at = _past(buf, at, stop, ind)  # (nothing in it is kept)
            else:
                msg = msgs[r] if r < len(msgs) else None
                if msg is not None:
                    fname = name.decode("ascii")
                    where = paths[r]
                    if fname in keep[where]:
                        value = _value(raw)
                        f = Field(fname, value, 0, 0)
                        msg.append(f)
                        if fname == "key" and value not in _SKIP_UNLESS.get(where, (value,)) and msg.field("key") is f:
                            # An attr GE does not read (its first key decides): pass over the rest.
                            at = _past(buf, at, stop, ind[:-2])
            m = search(buf, at, stop)
        carry = buf[last:]
        if len(carry) > _PIECE:  # a long line: a weight, or a kept field (read it the exact way)
            if kept_start.match(carry):
                return None
            carry = b""
            skipping = True


def _past(buf: bytes, at: int, stop: int, ind: bytes) -> int:
    """Where the message opened at indentation ``ind`` before ``at`` ends (the newline of its
    closer line, where the next line's match starts), if its closer is in ``buf[:stop]``; else
    ``at`` (its lines are then read one by one)."""
    closer = b"\n" + ind + b"}\n"
    j = buf.find(closer, at, stop)
    return at if j < 0 else j + len(closer) - 1


class Walker(_Walker):
    """The scanner's fast walk (``_canonical._Walker``: optionally started inside open messages,
    ``outer``), noting where the general scanner takes over, and stopped at ``stop`` (a chunk's
    end, a line start) if given, where it keeps its open frames (``open_frames``) instead of
    failing. Only the hand-over differs: the walk itself, and the state it sets, are the scanner's."""

    general = False  # the general scanner has taken over: the blocks from here on are not canonical

    def __init__(self, f: Any, path: Sequence[str], heads: FrozenSet[str], *, stop: Optional[int] = None, **kw: Any) -> None:
        super().__init__(f, path, heads, **kw)
        self.stop = stop
        self.open_frames: Optional[List[Any]] = None

    def _hand_over(self, h: _HandOver) -> Iterator[Block]:
        if self.stop is not None and h.at == self.stop and self.eof and self.bad is None and self.pos == len(self.buf):
            # The chunk's end with messages open: keep them for the next chunk.
            self.open_frames = list(self.stack)
            self.end_state = {"bytes": h.at, "lines": self.line - 1}
            return
        self.general = True
        yield from super()._hand_over(h)


def walk(
    f: Any, path: Sequence[str], heads: FrozenSet[str], *, chunk_size: int = DEFAULT_CHUNK, display: Optional[str] = None,
    start_offset: int = 0, start_line: int = 1, outer: Optional[List[Any]] = None, stop: Optional[int] = None, top: Any = None,
) -> Tuple[Walker, Iterator[Block]]:
    """The walker over ``f`` (the keywords: ``scan_canonical``'s, ``outer`` and ``stop``; ``top``: the
    check of the graph's own fields, ``text.top_fields``) and its blocks."""
    w = Walker(f, path, heads, chunk_size=chunk_size, display=display, start_offset=start_offset, start_line=start_line,
               outer=outer, stop=stop, top=top)
    return w, w.run()
