"""Runs of whole canonical fields at one depth, each matched and verified by one regex call.

The fast path's inner loop (step 2 of ``_canonical``'s algorithm, for the fields that the buffer
holds whole): the blocks at the path are yielded with their heads read off the verified text;
anything that needs the line-by-line walk stops the run at a line start.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .._kit import NamedTuple
from . import _layout as layout
from ..language._atomic import user_groups
from ._frames import ANCESTOR, Frame, parents
from ._layout import MAX_LITERAL, SMALL, last_name, scalar_value, text_value
from .._model import Block, Head
from ._window import Window

if TYPE_CHECKING:
    from ._schema import Watch

PLAN_ROOM = 4 << 20  # the bytes of node shapes a walk keeps with their heads' places (_learn)
_Fed = Tuple[int, int, int, int]  # the batch's schema state (see Batches._watch_field)
_Match = Callable[[bytes, int, int], Optional["re.Match[bytes]"]]  # a bytes pattern's match or search


class _Rx(NamedTuple):
    """What a batch at one depth (on the way to the path's blocks or not) matches with."""

    target: Optional[bytes]  # the path's field at this depth, if its blocks are yielded here
    ancestor: Optional[bytes]  # ... or if they are inside it
    closer: bytes  # the line that closes the open message
    field: _Match  # one whole field (``layout.field_re``), with its groups:
    groups: Tuple[int, ...]  # (name, scalar value, run of head lines, a later head line)
    scalars: _Match  # a run of scalar lines that are no heads
    run_heads: Optional[Callable[[str], List[Any]]]  # the head lines of a run (when heads are read)
    more: Optional[_Match]  # a head line after the run


class Batches(Window):
    """The batch matcher over the walk's window (the attributes below are the walk's).

    ``_batch(d)`` takes the lines at depth ``d`` that the buffer holds: each field matched with
    one regex call that also verifies it, blocks and heads read off the verified text. It stops
    (leaving ``pos`` at a line start, for the line-by-line walk) at a field that does not match
    (not canonical, too deep, or cut by the buffer's end), an ancestor to enter, a ``name`` or
    ``signature`` that may label an open message, a head too long to take here."""

    big = 0  # the longest field matched whole (the walk's, from _canonical._BIG)
    stack: List[Frame]
    path: Tuple[str, ...]
    line: int
    after: bool
    last_name: bytes
    no_batch: int
    _head_names: Tuple[str, ...]
    top: Any = None  # the walk's ``_strict.TopFields``, or None
    _name_of: Dict[bytes, str]
    _rxs: Dict[Tuple[int, bool], _Rx]  # (depth, on the path): the walk's own, made at first use
    watch: Optional[Watch]  # the schema checked too
    _plans: Dict[bytes, Optional[Tuple[int, Tuple[Tuple[str, int, int], ...]]]]  # a node block's shape: its lines, its heads
    _plan_room: int  # (what is left of PLAN_ROOM)

    def _batch(self, d: int) -> Iterator[Block]:
        """Step 2 for the lines at depth ``d`` that the buffer holds (see the class)."""
        buf, pos, stack, path = self.buf, self.pos, self.stack, self.path
        top = stack[-1] if d else None
        on_path = d < len(path) and (top is None or top.kind == ANCESTOR)
        target, ancestor, closer, field, groups, scalars, run_heads, more = self._rxs.get((d, on_path)) or self._rx(d, on_path)
        fe = buf.find(closer, pos - 1, self.lim) if d else -1  # the open message's end
        end = fe + 1 if fe >= 0 else buf.rfind(b"\n", pos, self.lim) + 1
        block_heads = top.block.heads if top is not None and top.block is not None else None  # (in a block to yield)
        in_sig = block_heads is not None and top is not None and top.name == "signature"
        name_of, count, new, col = self._name_of, buf.count, tuple.__new__, 2 * d + 1
        base, line, after, big, watch, top_fields = self.base, self.line, self.after, self.big, self.watch, self._top_at(d, on_path)
        learn = watch is not None and not d and target is not None  # (node blocks: _known)
        above = parents(stack) if d else ()
        p = pos
        prev_str = None  # (pos, line, after, head taken) of a string scalar line just read
        capped = end - pos > big  # (a field longer than big is entered, as in _whole_block)
        fed = (pos, line, pos, 0)  # the schema's: see _watch_field
        while p < end:
            known = self._known(p, end, fed, line) if learn and fed[0] == p else None
            if known is not None:  # (a node block whose shape was read and checked before)
                heads, fed, e, n = known
                yield new(Block, (path, base + p, base + e - 1, line, col, heads, above))
                p, line, after, prev_str = e, line + n, True, None
                continue
            m = field(buf, p, (p + big if p + big < end else end) if capped else end)
            if m is None:
                break
            fname, sc, run, later = m.group(*groups)
            e = m.end()
            # Branches in order of frequency: the blocks to yield, other blocks, scalars.
            if sc is None and fname == target and fname != b"signature":
                hs: Sequence[Head] = ()
                if run_heads is not None:
                    if len(run) >= MAX_LITERAL:
                        break
                    hs = [new(Head, (nm, simple[1:-1] if simple else text_value(other), i))
                          for i, (nm, simple, other) in enumerate(run_heads(run.decode("utf-8", "surrogateescape")), line + 1)]
                    if later is not None and not self._more_heads(more, m.start(groups[3]) - 1, e - 1, line + 1 + len(hs), m.end(groups[2]), hs):
                        break
                fed = fed if watch is None else self._watch_field(watch, p, e, fed, line, d, hs=hs if learn else None)
                yield new(Block, (path, base + p + 2 * d, base + e - 1, line, col, tuple(hs), above))
            elif sc is None:
                if fname == ancestor or fname == target or top_fields is not None:  # (a target named signature, or
                    break  # a top-level field the graph may not have: the line walk, which checks it)
                if fname == b"signature" and top is not None and top.label is None:
                    break
                fed = fed if watch is None else self._watch_field(watch, p, e, fed, line, d)
            else:  # a scalar
                taken = False
                if block_heads is not None:
                    if fname == b"name" and in_sig:
                        break
                    if fname in name_of:
                        if len(sc) >= MAX_LITERAL:
                            break
                        block_heads.append(new(Head, (name_of[fname], scalar_value(sc), line)))
                        taken = True
                elif (fname == b"name" and top is not None) or top_fields is not None:  # (a top-level one: as above)
                    break
                prev_str = (p, line, after, taken) if sc[:1] in b"\"'" else None
                p, line, after = e, line + 1, True
                # The plain scalar lines after it (no name, no head), one regex call for the run:
                # a block entered for its size may hold thousands (a SaveV2's inputs).
                r = scalars(buf, p, (p + big if p + big < end else end) if capped else end)
                if r is not None:
                    e = r.end()
                    n = count(b"\n", p, e)  # (only a string ends with a quote: then the run's last line is kept)
                    prev_str = (buf.rfind(b"\n", p, e - 1) + 1 or p, line + n - 1, True, False) if buf[e - 2] in b"\"'" else None
                    p, line = e, line + n
                continue
            p, line, after, prev_str = e, line + count(b"\n", p, e), True, None
        if prev_str is not None:  # the line after a string may go on with an adjacent literal
            p, line, after, taken = prev_str
            if taken and block_heads is not None:
                block_heads.pop()
        self._stop(pos, p, line, after, end, fed=fed)

    def _top_at(self, d: int, on_path: bool) -> Any:
        """The walk's ``top`` (``_strict.TopFields``) where a batch at depth ``d`` meets the graph's
        own fields (its depth, inside the messages of the path), else None."""
        top = self.top
        return top if top is not None and d == top.depth and on_path else None

    def _watch_field(self, watch: Watch, p: int, e: int, fed: _Fed, line: int, d: int, *, hs: Optional[Sequence[Head]] = None) -> _Fed:
        """The schema (``_schema``) of a whole field ``buf[p:e]`` at ``line``, as the batch takes it,
        after the scalar lines before it not fed yet (fed late: the batch may give back its last).
        ``fed``: where they start, the line of an offset before them, that offset, and the next
        backslash at or after some offset before ``p`` (``len(buf)``: none). Returns the same after
        the field. The usual case first: a node block whose shape was valid before. ``hs``: a
        node block's heads, read by the regex (its shape then learnt: ``_learn``)."""
        buf = self.buf
        at, at_line, at_p, esc = fed
        # (A repeated field of the root, its shape valid before: nothing to tell.)
        if not (at == p and esc >= e and not d and e - p < SMALL and watch.top.get(b"".join(buf[p:e].split(b'"')[::2]))):
            if at < p:
                watch.lines(buf, at, p, at_line + buf.count(b"\n", at_p, at), d)
            if esc < p:
                esc = buf.find(b"\\", p)
                esc = len(buf) if esc < 0 else esc
            watch.field(buf, p, e, line, d, esc >= e)
        if hs is not None:
            self._learn(p, e, line, hs)
        return e, line, p, esc

    def _known(self, p: int, end: int, fed: _Fed, line: int) -> Optional[Tuple[Tuple[Head, ...], _Fed, int, int]]:
        """The block to yield at depth 0 from ``p`` (at ``line``, no scalar line before it left to
        feed the schema) if its shape is one ``_learn`` kept: its heads, ``fed`` after it, its end
        and line count; else None (the batch's regex then matches it).

        One split on the quote both proves it and reads it: its pieces between strings are those
        of a block the batch's regex verified and the schema found valid (so these are too: the
        verdict reads nothing of a string but its UTF-8, which the window checked), its strings
        hold no backslash, newline or NUL (so each is a string literal the regex takes, as
        there), and its heads are the strings at the places the plan says."""
        buf = self.buf
        i = buf.find(b"\n}\n", p, end)
        e = i + 3
        if i < 0 or e - p > self.big or e - p >= SMALL:
            return None  # (not whole in the buffer, or long: the regex's, which enters it if too long)
        esc = fed[3]
        if esc < p:
            esc = buf.find(b"\\", p)
            esc = len(buf) if esc < 0 else esc
        if esc < e:
            return None
        block = buf[p:e]
        parts = block.split(b'"')
        plan = self._plans.get(b'"'.join(parts[::2]))
        if plan is None or buf.count(b"\n", p, e) != plan[0] or b"\0" in block or not len(parts) & 1:
            return None
        new = tuple.__new__
        return tuple([new(Head, (nm, parts[k].decode("utf-8", "surrogateescape"), line + n)) for nm, k, n in plan[1]]), (e, line, p, esc), e, plan[0]

    def _learn(self, p: int, e: int, line: int, hs: Sequence[Head]) -> None:
        """After the regex matched a block to yield at depth 0 and the schema checked it: if its
        shape is valid (the watch's memo of the root's fields) and its strings plain, where its
        heads are, kept for the blocks of that shape (``_known``)."""
        if e - p >= SMALL or self._plan_room < e - p + 256:
            return
        plans, watch, block = self._plans, self.watch, self.buf[p:e]
        if watch is None or b"\\" in block or b"'" in block or b"\0" in block:
            return
        parts = block.split(b'"')
        key = b'"'.join(parts[::2])
        if key in plans or not watch.top.get(b"".join(parts[::2])):
            return
        plan = head_plan(block, parts, self._name_of, self._head_names)
        if plan is not None and [Head(nm, parts[k].decode("utf-8", "surrogateescape"), line + n) for nm, k, n in plan] != list(hs):
            plan = None
        plans[key] = None if plan is None else (block.count(b"\n"), plan)  # (None: a shape its heads are not read from)
        self._plan_room -= len(key) + 256  # (and its entry)

    def _stop(self, pos: int, p: int, line: int, after: bool, end: int, *, fed: Optional[_Fed] = None) -> None:
        """A batch from ``pos`` (to ``end``) stops at ``p``, at ``line``: the walk goes on there
        (the scalar lines from ``fed`` to it fed to the schema's watch, if any)."""
        if self.watch is not None and fed is not None and fed[0] < p:
            self.watch.lines(self.buf, fed[0], p, fed[1] + self.buf.count(b"\n", fed[2], fed[0]), len(self.stack))
        if p != pos:
            self.line = line
            self.pos = p
            self.after = after
            self.last_name = last_name(self.buf, p)
        if p < end or p == pos:
            self.no_batch = self.base + p + 1  # the line walk takes the next line

    def _rx(self, d: int, on_path: bool) -> _Rx:
        """The regexes of a batch at depth ``d`` (heads are read only in the path's blocks), made
        once a walk."""
        path = self.path
        target = path[d].encode("ascii") if on_path and d == len(path) - 1 else None
        ancestor = path[d].encode("ascii") if on_path and d < len(path) - 1 else None
        names = self._head_names
        run_heads = layout.run_heads_re(d + 1, names).findall if names else None
        more = layout.fields_re(d + 1, names).search if names else None
        field_re = layout.field_re(d, names if target is not None else ())
        scalars = layout.scalars_re(d, names).match
        rx = _Rx(target, ancestor, layout.closer_of(d - 1), field_re.match, user_groups(field_re), scalars, run_heads, more)
        self._rxs[d, on_path] = rx
        return rx

    def _more_heads(self, more: Optional[_Match], start: int, e: int, n: int, last: int, hs: List[Head]) -> bool:
        """Heads after a block's opening run (GE: id, stream_id ... after the attrs), from
        ``start`` to ``e``, appended to ``hs``; ``n`` is the line at ``last``. False if one is too
        long to take here."""
        assert more is not None  # (read with the run's heads, ``run_heads``)
        buf = self.buf
        m = more(buf, start, e)
        while m is not None:
            raw = m.group(2)
            if len(raw) >= MAX_LITERAL:
                return False
            n += buf.count(b"\n", last, m.start())
            last = m.start()
            hs.append(Head(m.group(1).decode("ascii"), scalar_value(raw), n + 1))
            m = more(buf, m.end(), e)
        return True


def head_plan(block: bytes, parts: List[bytes], name_of: Dict[bytes, str], names: Tuple[str, ...]) -> Optional[Tuple[Tuple[str, int, int], ...]]:
    """Where a depth-0 block's heads (its depth-1 lines of ``names``) are: (name, the index in
    ``parts``, the block ``block`` split on the quote, of the string that is its value, the line
    in the block), or None if a head's value is not one plain string literal alone on its line."""
    if not names:
        return ()
    out = []
    for m in layout.fields_re(1, names).finditer(block):
        c = block.count(b'"', 0, m.start(2))
        if c % 2 or m.group(2) != b'"' + parts[c + 1] + b'"' or b"\\" in parts[c + 1]:
            return None
        out.append((name_of[m.group(1)], c + 1, block.count(b"\n", 0, m.start()) + 1))
    return tuple(out)
