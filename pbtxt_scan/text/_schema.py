"""The schema checked as the text is read (``check``, ``stats``, ``nodes``): a :class:`Watch`
holds one reader's :class:`~pbtxt_scan.schema.Checker` and feeds it what that reader matched.

The readers are the two of ``_canonical``'s algorithm, so there are two feeds, one state:

- the writer layout's walk tells it each line it takes (``line``: an opener, a scalar, a closer)
  and each whole field it matches (``field``). A whole field is checked by its *shape*: its bytes
  less the contents of its string literals (``split`` on the quote, every other piece). A shape
  found valid once is valid every time (the verdict reads nothing of a string but its UTF-8, and
  a field without an escape is UTF-8 already: the window checks every byte), so 140,000 node
  blocks of a generated graph cost a slice, a split and a look-up each, and a hundred walks of
  their lines. Not memoised: a field with a backslash (an escape may make a string no UTF-8) or a
  single quote (a ``"`` inside ``'...'`` would shift the pieces), and a shape in which a singular
  field comes twice (whether that is an error depends on the first value being the default).
  The batch (``_batch._known``) takes a node block of a shape valid here without asking again;
- the general scanner hands over its tokens (``tee``), each once the scanner has accepted it (so
  a syntax error is never taken for a schema one), as the grammar's lexer names them.

``limit`` 1 raises the first problem where it is found, as a syntax error is; more gathers up
to ``limit`` of them, and :meth:`Watch.end` raises them all (:class:`SchemaErrors`), after them the
syntax error that stopped the reading, if any.
"""
from __future__ import annotations

import re
from typing import Dict, Iterator, List, Optional, Tuple

from .._errors import PbtxtError, SchemaErrors
from ..language._values import decode, unescape
from ..schema import Checker
from ._layout import NEXT_CHAR, SMALL
from ._lexer import Lexer, Token

MEMO_ROOM = 8 << 20  # the bytes of shapes a reader keeps, each counted with _ENTRY more (its look-up)
_ENTRY = 256


class Watch:
    """One reader's schema check (see the module). ``root``: the file's message type; ``checker``:
    one that takes a Checker's events in its place (a GE ge_proto dump's ``schema.SeenNames``)."""

    __slots__ = ("checker", "every", "display", "memo", "top", "decoded", "room", "_push")

    def __init__(self, root: str, *, limit: int = 1, display: Optional[str] = None, checker: Optional[Checker] = None) -> None:
        self.checker = checker if checker is not None else Checker(root, limit=max(1, limit))
        self.every = limit > 1
        self.display = display
        self.memo: Dict[Optional[str], Dict[bytes, bool]] = {}  # a message type -> shape -> the field is repeated
        self.top = self.memo[root] = {}  # (the root's: the batch looks its node blocks up here itself)
        self._push: Optional[_Push] = None
        self.decoded = False  # a string field's escapes were decoded (its verdict reads its content)
        self.room = MEMO_ROOM  # (what is left of it: a shape may be as long as a block the walk takes whole)

    # --- problems -----------------------------------------------------------------------------

    def raise_first(self) -> None:
        """Under ``limit`` 1, the problem found, raised."""
        c = self.checker
        if c.problems and not self.every:
            p = c.problems[0]
            raise PbtxtError(p.message, p.line, p.column, self.display)

    def errors(self) -> List[PbtxtError]:
        return [PbtxtError(p.message, p.line, p.column, self.display) for p in self.checker.problems]

    def end(self, err: Optional[PbtxtError] = None) -> Optional[PbtxtError]:
        """What the reading ends with: every problem gathered (then ``err``, the syntax error that
        stopped it), ``err`` alone, or None."""
        if self._push is not None:
            self._push.flush(None)
        self.raise_first()
        errors = self.errors()
        if not errors:
            return err
        if err is not None:
            errors.append(err)
        return SchemaErrors(errors, self.checker.dropped)

    # --- the writer layout's walk ---------------------------------------------------------------

    def line(self, d: int, ident: Optional[bytes], opener: bool, scalar: Optional[bytes], line: int, at: Tuple[bytes, int]) -> None:
        """One line at depth ``d`` taken by the walk: ``ident {`` (``opener``), ``ident: scalar``,
        or (``ident`` None) a closer; ``at``: the buffer and the line's newline in it (a string
        that is no UTF-8 is named at the next token, protobuf's place for it)."""
        c = self.checker
        if ident is None:
            c.close()
            return
        c.name(ident.decode("ascii"), line, 2 * d + 1)
        if opener:
            c.open(line, 2 * d + len(ident) + 2, False)
        elif scalar is not None:
            nxt = NEXT_CHAR.match(at[0], at[1] + 1) if b"\\" in scalar else None
            self.decoded |= _value(c, scalar, line, 2 * d + len(ident) + 3, 1 if nxt is None else len(nxt.group(0)))
        self.raise_first()

    def lines(self, buf: bytes, start: int, end: int, line: int, d: int) -> bool:
        """The whole fields at depth ``d`` in ``buf[start:end]`` (the writer layout, verified),
        from ``line``: True if no singular field came twice in a message of them."""
        c = self.checker
        names: List[set] = [set()]
        once = True
        rows = buf[start:end].split(b"\n")
        # A run of a repeated field's lines, known alike once one is fed (a group NoOp's 60,000
        # inputs, a SaveV2's dtypes): a string field's ``IND name: "`` (any plain string is
        # valid), another's whole line (the same value again).
        run = same = b"\n"
        for k, raw in enumerate(rows[:-1]):
            if raw == same or (raw.startswith(run) and raw.endswith(b'"') and b"\\" not in raw):
                line += 1
                continue
            run = same = b"\n"
            body = raw.lstrip(b" ")
            if body == b"}":
                c.close()
                names.pop()
            elif body[:1] in b"\"'":
                pass  # (an adjacent literal, on a line of its own: the string goes on)
            else:
                col = len(raw) - len(body)
                if body.endswith(b" {"):
                    ident, scalar = body[:-2], None
                else:
                    ident, _, scalar = body.partition(b": ")
                name = ident.decode("ascii")
                c.name(name, line, col + 1)
                f = c.field
                if name in names[-1] and f is not None and not f.repeated:
                    once = False
                names[-1].add(name)
                if scalar is None:
                    c.open(line, col + len(ident) + 2, False)
                    names.append(set())
                else:
                    was = len(c.problems) + c.dropped
                    self.decoded |= _value(c, scalar, line, col + len(ident) + 3, _next_column(rows, k, buf, end))
                    if f is not None and f.repeated and len(c.problems) + c.dropped == was:  # (a refused value: each one is told)
                        if f.kind in ("string", "bytes") and scalar[:1] == b'"':
                            run = raw[: col + len(ident) + 3]
                        else:
                            same = raw
            line += 1
        self.raise_first()
        return once

    def field(self, buf: bytes, start: int, end: int, line: int, d: int, plain: bool) -> None:
        """A whole message field at depth ``d`` matched by the walk, from its line's start
        (``plain``: no backslash in it): by its shape when that was found valid before, else
        line by line."""
        c = self.checker
        here = c.here
        if here is None:
            return  # (inside a refused field: nothing is checked)
        memo = self.memo.get(here)
        if memo is None:
            memo = self.memo[here] = {}
        # (A block of SMALL bytes or more has no shape kept: a NoOp of 100,000 inputs would make 200,000 pieces.)
        key = _shape(buf[start:end], plain) if end - start < SMALL else None
        repeated = memo.get(key) if key is not None else None
        if repeated is None:
            before = len(c.problems) + c.dropped
            self.decoded = False
            once = self.lines(buf, start, end, line, d)
            if (once and key is not None and not self.decoded and len(c.problems) + c.dropped == before and len(key) + _ENTRY <= self.room
                    and buf.find(b"'", start, end) < 0):
                self.room -= len(key) + _ENTRY
                i = buf.index(b" {", start)
                f = c.schema.fields(here).get(buf[start + 2 * d : i].decode("ascii"))
                memo[key] = f is None or f.repeated
        elif not repeated:  # (a singular field: the message holding it must know it is set)
            i = buf.index(b" {", start)
            c.name(buf[start + 2 * d : i].decode("ascii"), line, 2 * d + 1)
            c.open(line, i - start + 2, False)
            c.close()
            self.raise_first()

    def scalar(self, d: int, ident: bytes, head: bytes, line: int) -> None:
        """A string field's line too long for the window: its name and the first bytes of its value."""
        c = self.checker
        c.name(ident.decode("ascii"), line, 2 * d + 1)
        c.value("STRING", head.decode("utf-8", "replace") + "...", line, 2 * d + len(ident) + 3)
        self.raise_first()

    # --- the general scanner -------------------------------------------------------------------

    def tee(self, lx: Lexer, tokens: Iterator[Token]) -> Iterator[Token]:
        """``tokens``, each fed to the checker once the next is asked for (the scanner took it);
        its position taken as it comes (the scanner asks for the newest token's only)."""
        push = self._push = _Push(self.checker)
        linecol = lx.linecol
        prev: Optional[Token] = None
        at = (0, 0)
        for tok in tokens:
            here = linecol(tok[1])
            if prev is not None:
                push.push(prev, at)
                self.raise_first()
            prev, at = tok, here
            yield tok
        if prev is not None:
            push.push(prev, at)
            push.flush(None)
            self.raise_first()


def _shape(block: bytes, plain: bool) -> Optional[bytes]:
    """A whole field's shape: its bytes less its strings' contents (every other piece between
    quotes); with escapes (not ``plain``), also which of its strings hold one (a string field's
    escapes may make it no UTF-8: such a shape is memoised only where they sit in bytes fields).
    None where quotes may be escaped (the pieces would not be its strings)."""
    parts = block.split(b'"')
    if plain:
        return b"".join(parts[::2])
    if b'\\"' in block:
        return None
    marks = b",".join(b"%d" % i for i, s in enumerate(parts[1::2]) if b"\\" in s)
    return b"".join(parts[::2]) + b"\0" + marks


def _value(c: Checker, scalar: bytes, line: int, col: int, after: int) -> bool:
    """A scalar line's value (a string's: where protobuf names one that is no UTF-8, the next
    token, is the next line at column ``after``). True if a string field's escapes were decoded."""
    first = scalar[:1]
    if first in b"\"'":
        kind = "STRING"
        # (decoded only for a string field, where an escape may make it no UTF-8: the rest was
        # checked as UTF-8, and a bytes field, a tensor_content, takes any)
        decoded = _decoded(scalar) if b"\\" in scalar and _is_string(c) else None
        c.value(kind, scalar.decode("utf-8", "surrogateescape"), line, col, decoded=decoded, after=(line + 1, after))
        return decoded is not None
    digit = scalar[1:2] if first == b"-" else first
    kind = "NUMBER" if digit.isdigit() or digit == b"." else "IDENT"
    c.value(kind, scalar.decode("ascii", "replace"), line, col)
    return False


def _next_column(rows: List[bytes], k: int, buf: bytes, end: int) -> int:
    """The column of the token after row ``k`` of ``rows`` (``buf``'s lines up to ``end``)."""
    if k + 2 < len(rows):
        nxt = rows[k + 1]
        return len(nxt) - len(nxt.lstrip(b" ")) + 1
    m = NEXT_CHAR.match(buf, end)  # (the region's last line: the next token is the walk's)
    return 1 if m is None else len(m.group(0))


def _is_string(c: Checker) -> bool:
    f = c.field
    return f is not None and f.type == "string"


_LITERAL = re.compile(rb""" *(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')""")


def _decoded(scalar: bytes) -> Optional[str]:
    """A line's string literals (adjacent ones joined) as text, None if it is not only literals."""
    parts: List[bytes] = []
    i, n = 0, len(scalar)
    while i < n:
        m = _LITERAL.match(scalar, i)
        if m is None:
            return None
        body = m.group(1) if m.group(1) is not None else m.group(2)
        parts.append(unescape(body.decode("utf-8", "surrogateescape")))
        i = m.end()
    return decode(b"".join(parts))


class _Push:
    """The grammar's tokens pushed one by one into a checker (``schema._feed`` pulls them; this is
    the same reading for a caller that holds the loop): names, values, lists and messages."""

    __slots__ = ("c", "expect_name", "listing", "colon", "in_list", "ext", "neg", "string")

    def __init__(self, checker: Checker) -> None:
        self.c = checker
        self.expect_name = True  # (handed over at a line start: a field, or a closer, comes next)
        self.listing = False
        self.colon = False
        self.in_list: List[bool] = []
        self.ext: Optional[Tuple[List[str], int, int]] = None  # a name in [...]: its parts, line, column
        self.neg: Optional[Tuple[int, int]] = None  # a '-' read: its line and column
        self.string: Optional[Tuple[List[bytes], int, int, bool]] = None  # literals, line, column, whole

    def flush(self, after: Optional[Tuple[int, int]]) -> None:
        """A string value is complete (the next token is not a literal)."""
        s = self.string
        if s is None:
            return
        self.string = None
        literals, line, col, whole = s
        text = literals[0].decode("utf-8", "surrogateescape")
        decoded = None
        if whole and any(b"\\" in t for t in literals) and _is_string(self.c):
            decoded = decode(b"".join(unescape(t[1:-1].decode("utf-8", "surrogateescape")) for t in literals))
        self.c.value("STRING", text, line, col, decoded=decoded, after=after)
        self.expect_name = not self.listing

    def push(self, tok: Token, at: Tuple[int, int]) -> None:
        kind, start, end, text = tok
        line, col = at
        c = self.c
        if self.string is not None:
            if kind == "STRING":
                self.string[0].append(text)
                if end - start != len(text):
                    self.string = self.string[:3] + (False,)
                return
            self.flush(at)
        if self.ext is not None:
            if kind == "]":
                parts, eline, ecol = self.ext
                self.ext = None
                c.name("[%s]" % "".join(parts), eline, ecol)
                self.expect_name, self.colon = False, False
            else:
                self.ext[0].append(text.decode("ascii") if text else kind)
            return
        if self.expect_name:
            if kind == "}" or kind == ">":
                c.close()
                self.listing = self.in_list.pop() if self.in_list else False
                self.expect_name = not self.listing
            elif kind == "[":
                self.ext = ([], line, col)
            elif kind == "IDENT":
                c.name(text.decode("ascii"), line, col)
                self.expect_name, self.colon = False, False
            return  # (";" and "," between fields)
        if self.listing:
            if kind == "]":
                c.end_list()
                self.listing, self.expect_name = False, True
                return
            if kind == ",":
                return
        if kind == ":":
            self.colon = True
        elif kind == "{" or kind == "<":
            c.open(line, col, self.colon)
            self.in_list.append(self.listing)
            self.listing, self.expect_name = False, True
        elif kind == "[":
            c.begin_list(line, col, self.colon)
            self.listing = True
        elif kind == "-":
            self.neg = at
        else:
            word = text.decode("utf-8", "surrogateescape")
            if self.neg is not None:
                line, col = self.neg
                self.neg = None
                word = "-" + word
            if kind == "STRING":
                self.string = ([text], line, col, end - start == len(text))
                return
            c.value(kind, word, line, col)
            self.expect_name = not self.listing
