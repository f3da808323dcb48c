"""The general scanner: a validating pushdown reader over the streaming lexer.

It follows ``grammar/pbtxt.lark`` token by token (a hand-written LL(1) reading of the same
rules, so it needs no tree and holds only the stack of open messages) and yields every message at
the requested path as a :class:`Block`, with its head fields. It accepts exactly what the Lark
grammar accepts; ``tests/test_scanner.py`` proves it on the conformance corpus, on every fixture
and on random inputs. It works on any layout; ``_canonical.py`` is the faster path for files laid
out the way ``tf.io.write_graph`` and GE write them, and falls back to this one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, BinaryIO, FrozenSet, Iterator, List, Optional, Sequence, Tuple

from ..language._grammar import describe_token
from ..language._values import decode, unescape
from ._frames import OTHER, TARGET, BlockStart, Frame, close_block, take_label
from ._lexer import Lexer, Token
from .._model import Bare, Block, Head
from ..source._source import DEFAULT_CHUNK

if TYPE_CHECKING:
    from ._schema import Watch

# Parser states (what may come next inside a message body).
FIELD, AFTER_FIELD, NAME, COLON, NEG, STRINGS = range(6)
EXT = 6  # inside a name in "[...]" (read by _Scanner.ext_name: the loop sees it only at the end of input)
LIST_FIRST, LIST_SCALAR, LIST_SCALAR_NEXT, LIST_MSG, LIST_MSG_NEXT, LIST_STRINGS, LIST_NEG = range(8, 15)

_OPEN = {"{": "}", "<": ">"}
_EXPECT_VALUE = "expected a value"


def scan(
    f: BinaryIO,
    path: Sequence[str] = ("node",),
    heads: FrozenSet[str] = frozenset(),
    chunk_size: int = DEFAULT_CHUNK,
    *,
    display: Optional[str] = None,
    start_offset: int = 0,
    start_line: int = 1,
) -> Iterator[Block]:
    """Yield the blocks at ``path`` in file order, validating the whole stream as it goes."""
    return scan_tokens(Lexer(f, chunk_size, start_offset=start_offset, start_line=start_line, path=display), path, heads)


def scan_tokens(
    lx: Lexer, path: Sequence[str], heads: FrozenSet[str] = frozenset(), stack: Optional[List[Frame]] = None,
    after: bool = False, last_field: str = "", *, watch: Optional["Watch"] = None, top: Any = None,
) -> Iterator[Block]:
    """``scan`` over the tokens of ``lx``, from inside the open messages ``stack`` (the fast
    path's, at a hand-over), ``after`` a complete field named ``last_field`` or not.

    The loop reads what every file is made of (field names, ``:``, scalars and strings, ``{`` and
    closers) inline; the rest is :class:`_Scanner`'s (its docstring says what the locals hold).
    ``watch``: the schema checked too, on the tokens the scanner takes (``_schema.Watch.tee``); ``top``: ``_Scanner``'s."""
    sc = _Scanner(lx, path, heads, [] if stack is None else stack, watch, top=top)
    stack, names, target, lc_depths, tokens = sc.stack, sc.names, sc.target, sc.lc_depths, sc.tokens
    finish_scalar, open_msg, wanted = sc.finish_scalar, sc.open_msg, sc.wanted
    state = AFTER_FIELD if after else FIELD
    field = last_field  # current field name
    field_start = field_line = 0
    field_lc = (0, 0)
    any_name = False
    svalue: Optional[List[bytes]] = None
    for tok in tokens:
        kind = tok[0]
        if state == STRINGS:
            if kind == "STRING":  # adjacent literals concatenate
                if svalue is not None:
                    svalue.append(unescape(tok[3][1:-1].decode("utf-8", "surrogateescape")))
                continue
            if svalue is not None:
                finish_scalar(decode(b"".join(svalue)), field, field_line)
                svalue = None
            # The string is complete: this token is read as what follows any scalar.
            state = AFTER_FIELD
        # Branches ordered by how often they are taken in real files.
        if state == FIELD or state == AFTER_FIELD:
            if kind == "IDENT":
                field = tok[3].decode("ascii")
                field_start = tok[1]
                if len(stack) in lc_depths:
                    field_lc = lx.linecol(tok[1])
                    field_line = field_lc[0]
                any_name = False
                state = NAME
            elif stack and kind == stack[-1].closer:
                fr = stack.pop()
                names.pop()
                if fr.block is not None:
                    yield close_block(target, fr.block, tok[2], stack)
                state = AFTER_FIELD
                if fr.in_list:
                    field, state = fr.name, LIST_MSG_NEXT  # the list's field name, for its next item
            elif kind == "[":
                field_start, field_lc, ext = sc.ext_name(tok, field_lc)
                if ext is None:
                    state = EXT  # (the input ends inside the name)
                else:
                    field, field_line, any_name, state = ext, field_lc[0], "/" in ext, NAME
            else:
                state = sc.field_then(state, tok)
        elif state == NAME:
            if kind == ":":
                state = COLON
            elif kind == "{" or kind == "<":
                open_msg(tok, False, field, field_start, field_lc)
                state = FIELD
            else:
                state = sc.name_then(tok, field)
        elif state == COLON:
            if kind == "STRING" and not any_name:
                svalue = [unescape(tok[3][1:-1].decode("utf-8", "surrogateescape"))] if wanted(field) else None
                state = STRINGS
            elif (kind == "NUMBER" or kind == "IDENT") and not any_name:
                finish_scalar(tok[3].decode("ascii"), field, field_line, True)
                state = AFTER_FIELD
            elif kind == "{" or kind == "<":
                open_msg(tok, False, field, field_start, field_lc)
                state = FIELD
            else:
                state = sc.colon_then(tok, any_name)
        else:  # a negative number, a list
            state = sc.step(state, tok, field, field_line)
    sc.end(state, svalue, field, field_line)


class _Scanner:
    """``scan_tokens``'s state but the locals of its loop, and the steps it takes seldom: names in
    ``[...]`` (extensions, Any), lists, negative numbers, errors and the end of input.

    The loop's locals: ``state``; ``field``, the current field name, ``field_start`` its offset
    and ``field_lc`` its line and column (or of its ``[``), taken when the name is read: by the
    time its ``{`` or its ``]`` arrives, a chunk edge may have dropped the name's bytes, and the
    lexer only locates offsets it still holds; ``any_name``: the name is an Any's (``[a/b]``), so
    its value is a message; ``svalue``: the pieces of the current string value, or None when
    nothing uses it (only heads of the blocks read and ``name`` labels are kept: a run of adjacent
    literals elsewhere costs no memory)."""

    __slots__ = ("lx", "tokens", "target", "above", "depth_target", "heads", "stack", "names", "lc_depths", "scalars_ok", "top")

    def __init__(
        self, lx: Lexer, path: Sequence[str], heads: FrozenSet[str], stack: List[Frame], watch: Optional["Watch"], *,
        top: Any = None,
    ) -> None:
        self.lx = lx
        self.tokens = lx.tokens() if watch is None else watch.tee(lx, lx.tokens())
        self.target = tuple(path)
        self.above = list(self.target[:-1])  # the names of the messages a block at the path is in
        self.depth_target = len(self.target)
        self.heads = heads
        self.stack = stack
        self.names: List[str] = [fr.name for fr in stack]
        # Depths at which a field name's position may be needed: a block's own name, or a head.
        self.lc_depths = (self.depth_target - 1, self.depth_target) if heads else (self.depth_target - 1,)
        self.scalars_ok = False  # the list being read may hold scalars (its field had ':', no Any name)
        self.top = top  # the check of the top-level messages not at the path (``_strict.TopFields``), or None

    def open_msg(self, tok: Token, in_list: bool, field: str, field_start: int, field_lc: Tuple[int, int]) -> None:
        stack = self.stack
        block = None
        if len(stack) + 1 == self.depth_target and self.names == self.above and field == self.target[-1]:
            if in_list:
                start = tok[1]
                line, col = self.lx.linecol(start)
            else:
                start = field_start
                line, col = field_lc
            block = BlockStart(start, line, col, [])
        elif self.top is not None and len(stack) == self.top.depth and field not in self.top.names and self.names == self.above[: len(stack)]:
            self.top.met(field, field_lc[0], field_lc[1], field_start)  # (a message the graph has not, at its top level)
        stack.append(Frame(field, TARGET if block is not None else OTHER, block, _OPEN[tok[0]], in_list))
        self.names.append(field)

    def wanted(self, field: str) -> bool:
        """Whether the scalar field being read is one finish_scalar keeps."""
        stack = self.stack
        d = len(stack)
        return d > 0 and (field == "name" or (d == self.depth_target and stack[-1].block is not None and field in self.heads))

    def finish_scalar(self, value: str, field: str, line: int, bare: bool = False) -> None:
        """A scalar field is complete: record it if it is a head of the block being read (``bare``:
        written as no string literal, a number or an identifier: a :class:`Bare` value, as the
        writer layout's walk gives it, which the readers of heads refuse for a name or an op)."""
        stack = self.stack
        d = len(stack)
        if bare and d and (field == "name" or field in self.heads):
            value = Bare(value)
        if d == self.depth_target and d:
            block = stack[-1].block
            if block is not None and field in self.heads:
                block.heads.append(Head(field, value, line))
        if field == "name" and d:
            take_label(stack, value)

    # -- the steps taken seldom ----------------------------------------------------------------

    def field_then(self, state: int, tok: Token) -> int:
        """Where a field may start, a token that starts none: a separator after a field, or an error."""
        if state == AFTER_FIELD and (tok[0] == ";" or tok[0] == ","):
            return FIELD
        raise self.not_a_field(tok)

    def ext_name(self, tok: Token, field_lc: Tuple[int, int]) -> Tuple[int, Tuple[int, int], Optional[str]]:
        """The name in ``[...]`` opened at ``tok``, read through its ``]``: its offset, its line and
        column (if needed: else ``field_lc``) and its text, None if the input ends first."""
        if len(self.stack) in self.lc_depths:
            field_lc = self.lx.linecol(tok[1])
        parts: List[str] = []
        any_name = False
        ident = True  # an identifier must come next
        for t in self.tokens:
            kind = t[0]
            if ident:
                if kind != "IDENT":
                    raise self.unexpected(t, "expected a name inside '[...]'")
                parts.append(t[3].decode("ascii"))
                ident = False
            elif kind == "." or (kind == "/" and not any_name):
                parts.append(kind)
                any_name = any_name or kind == "/"
                ident = True
            elif kind == "]":
                return tok[1], field_lc, "[" + "".join(parts) + "]"
            else:
                raise self.unexpected(t, "expected '.', '/' or ']'")
        return tok[1], field_lc, None

    def name_then(self, tok: Token, field: str) -> int:
        """After a field name, neither ':' nor '{': a list without ':' (of messages), or an error."""
        if tok[0] == "[":
            self.scalars_ok = False
            return LIST_FIRST
        raise self.unexpected(tok, "expected ':' or '{' after field name %r" % field)

    def colon_then(self, tok: Token, any_name: bool) -> int:
        """After ':', no string, number, identifier nor '{': a list, a '-', or an error."""
        kind = tok[0]
        if kind == "[":
            self.scalars_ok = not any_name
            return LIST_FIRST
        if kind == "-" and not any_name:
            return NEG
        raise self.unexpected(tok, "expected a message" if any_name else _EXPECT_VALUE)

    def step(self, state: int, tok: Token, field: str, field_line: int) -> int:
        """The states read seldom: after '-', and in a list."""
        kind = tok[0]
        if state == NEG:
            if kind == "NUMBER" or kind == "IDENT":
                self.finish_scalar("-" + tok[3].decode("ascii"), field, field_line, True)
                return AFTER_FIELD
            raise self.unexpected(tok, "expected a number after '-'")
        if state == LIST_MSG_NEXT:
            if kind == "," or kind == "]":
                return LIST_MSG if kind == "," else AFTER_FIELD
            raise self.unexpected(tok, "expected ',' or ']'")
        if kind == "{" or kind == "<":  # (LIST_FIRST or LIST_MSG)
            self.open_msg(tok, True, field, 0, (0, 0))
            return FIELD
        if state == LIST_MSG:
            raise self.unexpected(tok, "expected a message")
        assert state == LIST_FIRST, state
        if kind == "]":
            return AFTER_FIELD
        if not self.scalars_ok:
            raise self.unexpected(tok, "expected a message or ']' (a list of scalars needs ':')")
        return self.scalars(tok, field, field_line)

    def scalars(self, tok: Token, field: str, line: int) -> int:
        """A list of scalars, from its first item ``tok`` through its ']': AFTER_FIELD, or the
        state the input ended in."""
        state = LIST_SCALAR
        svalue: Optional[List[bytes]] = None
        t: Optional[Token] = tok
        while t is not None:
            kind = t[0]
            if state == LIST_STRINGS:
                if kind == "STRING":  # adjacent literals concatenate
                    if svalue is not None:
                        svalue.append(unescape(t[3][1:-1].decode("utf-8", "surrogateescape")))
                    t = next(self.tokens, None)
                    continue
                if svalue is not None:
                    self.finish_scalar(decode(b"".join(svalue)), field, line)
                    svalue = None
                state = LIST_SCALAR_NEXT  # (the string is complete: this token follows it)
            if state == LIST_SCALAR or state == LIST_NEG:
                if kind == "NUMBER" or kind == "IDENT":
                    self.finish_scalar(("-" if state == LIST_NEG else "") + t[3].decode("ascii"), field, line, True)
                    state = LIST_SCALAR_NEXT
                elif state == LIST_NEG:
                    raise self.unexpected(t, "expected a number after '-'")
                elif kind == "STRING":
                    svalue = [unescape(t[3][1:-1].decode("utf-8", "surrogateescape"))] if self.wanted(field) else None
                    state = LIST_STRINGS
                elif kind == "-":
                    state = LIST_NEG
                else:
                    raise self.unexpected(t, _EXPECT_VALUE)
            elif kind == ",":  # (LIST_SCALAR_NEXT)
                state = LIST_SCALAR
            elif kind == "]":
                return AFTER_FIELD
            else:
                raise self.unexpected(t, "expected ',' or ']'")
            t = next(self.tokens, None)
        return state

    def end(self, state: int, svalue: Optional[List[bytes]], field: str, field_line: int) -> None:
        """The end of input: only a complete top level is valid."""
        lx = self.lx
        end = lx.base + len(lx.buf)
        if state == STRINGS:
            if svalue is not None:
                self.finish_scalar(decode(b"".join(svalue)), field, field_line)
            state = AFTER_FIELD
        if self.stack or state not in (FIELD, AFTER_FIELD):
            if self.stack:
                opener = self.stack[-1]
                what = "message %r is not closed (expected '%s')" % (opener.name, opener.closer)
            else:
                what = "the last field %r is incomplete" % field
            raise lx.error("unexpected end of input: " + what, end, incomplete=True)

    def unexpected(self, tok: Token, expected: str) -> Exception:
        text = tok[3].decode("utf-8", "replace") if tok[3] else tok[0]
        return self.lx.error("unexpected %s, %s" % (describe_token(tok[0], text), expected), tok[1])

    def not_a_field(self, tok: Token) -> Exception:
        """Where a field (or the end of the open message) must come. A closer gets its own words:
        the usual cause is a truncated, hand-edited or concatenated file."""
        kind = tok[0]
        stack = self.stack
        if kind == "}" or kind == ">":
            if not stack:
                return self.lx.error("unexpected '%s': no message is open here (one '%s' too many?)" % (kind, kind), tok[1])
            top = stack[-1]
            return self.lx.error(
                "unexpected '%s': message %r was opened with '%s', so it closes with '%s'"
                % (kind, top.name, "{" if top.closer == "}" else "<", top.closer),
                tok[1],
            )
        return self.unexpected(tok, "expected a field name" + (" or '%s'" % stack[-1].closer if stack else ""))
