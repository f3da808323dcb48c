"""Runs of whole canonical fields at one depth, each matched and verified by one regex call.

The fast path's inner loop (step 2 of ``_canonical``'s algorithm, for the fields that the buffer
holds whole): the blocks at the path are yielded with their heads read off the verified text;
anything that needs the line-by-line walk stops the run at a line start.
"""
from __future__ import annotations

from typing import Iterator, List, Optional

from . import _layout as layout
from ..language._atomic import user_groups
from ._frames import ANCESTOR, TARGET, parents
from ._layout import MAX_LITERAL, last_name, scalar_value, text_value
from .._model import Block, Head
from ._window import Window


class Batches(Window):
    """The batch matcher over the walk's window (``stack``, ``line`` ... are the walk's)."""

    big = 0  # the longest field matched whole (the walk's, from _canonical._BIG)

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
        fe = buf.find(layout.closer_of(d - 1), pos - 1, self.lim) if d else -1  # the open message's end
        end = fe + 1 if fe >= 0 else buf.rfind(b"\n", pos, self.lim) + 1
        names = self._head_names
        name_of = self._name_of
        run_heads = layout.run_heads_re(d + 1, names).findall if names else None
        more = layout.fields_re(d + 1, names).search if names else None
        field_re = layout.field_re(d, names if target is not None else ())  # (heads only in targets)
        field = field_re.match
        scalars = layout.scalars_re(d, names).match
        groups = user_groups(field_re)
        g_run, g_later = groups[2], groups[3]
        count = buf.count
        new = tuple.__new__
        col = 2 * d + 1
        base = self.base
        line = self.line
        after = self.after
        above = parents(stack) if d else ()
        p = pos
        prev_str = None  # (pos, line, after, head taken) of a string scalar line just read
        big = self.big
        capped = end - pos > big  # (a field longer than big is entered, as in _whole_block)
        while p < end:
            m = field(buf, p, (p + big if p + big < end else end) if capped else end)
            if m is None:
                break
            fname, sc, run, later = m.group(*groups)
            e = m.end()
            # Branches in order of frequency: the blocks to yield, other blocks, scalars.
            if sc is None and fname == target and fname != b"signature":
                if run_heads is not None:
                    if len(run) >= MAX_LITERAL:
                        break
                    hs = [
                        new(Head, (nm, simple[1:-1] if simple else text_value(other), i))
                        for i, (nm, simple, other) in enumerate(run_heads(run.decode("utf-8", "surrogateescape")), line + 1)
                    ]
                    if later is not None:
                        hs = self._more_heads(more, more(buf, m.start(g_later) - 1, e - 1), e - 1, line + 1 + len(hs), m.end(g_run), hs)  # type: ignore[misc,assignment]
                        if hs is None:
                            break
                    yield new(Block, (path, base + p + 2 * d, base + e - 1, line, col, tuple(hs), above))
                else:
                    yield new(Block, (path, base + p + 2 * d, base + e - 1, line, col, (), above))
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
                        if len(sc) >= MAX_LITERAL:
                            break
                        top.block.heads.append(new(Head, (name_of[fname], scalar_value(sc), line)))  # type: ignore[union-attr]
                        taken = True
                elif fname == b"name" and top is not None:
                    break
                prev_str = (p, line, after, taken) if sc[:1] in b"\"'" else None
                p = e
                line += 1
                after = True
                # The plain scalar lines after it (no name, no head), one regex call for the run:
                # a block entered for its size may hold thousands (a SaveV2's inputs).
                r = scalars(buf, p, (p + big if p + big < end else end) if capped else end)
                if r is not None:
                    e = r.end()
                    n = count(b"\n", p, e)
                    if buf[e - 2] in b"\"'":  # (only a string ends with a quote)
                        q = buf.rfind(b"\n", p, e - 1) + 1 or p  # (the run's last line)
                        prev_str = (q, line + n - 1, True, False)
                    else:
                        prev_str = None
                    p = e
                    line += n
                continue
            line += count(b"\n", p, e)
            p = e
            after = True
        if prev_str is not None:  # the line after a string may go on with an adjacent literal
            p, line, after, taken = prev_str
            if taken:
                top.block.heads.pop()  # type: ignore[union-attr]
        if p != pos:
            self.line = line
            self.pos = p
            self.after = after
            self.last_name = last_name(buf, p)
        if p < end or p == pos:
            self.no_batch = base + p + 1  # the line walk takes the next line

    def _more_heads(self, more, m, e: int, n: int, last: int, hs: List[Head]) -> Optional[List[Head]]:  # type: ignore[no-untyped-def]
        """Heads after a block's opening run (GE: id, stream_id ... after the attrs), from match
        ``m`` on; ``n`` is the line at ``last``. None if one is too long to take here."""
        buf = self.buf
        while m is not None:
            raw = m.group(2)
            if len(raw) >= MAX_LITERAL:
                return None
            n += buf.count(b"\n", last, m.start())
            last = m.start()
            hs.append(Head(m.group(1).decode("ascii"), scalar_value(raw), n + 1))
            m = more(buf, m.end(), e)
        return hs

