"""The general scanner: a validating pushdown reader over the streaming lexer.

It follows ``grammar/pbtxt.lark`` token by token (a hand-written LL(1) reading of the same
rules, so it needs no tree and holds only the stack of open messages) and yields every message at
the requested path as a :class:`Block`, with its head fields. It accepts exactly what the Lark
grammar accepts; ``tests/test_scanner.py`` proves it on the conformance corpus, on every fixture
and on random inputs. It works on any layout; ``_canonical.py`` is the faster path for files laid
out the way ``tf.io.write_graph`` and GE write them, and falls back to this one.
"""
from __future__ import annotations

from typing import BinaryIO, FrozenSet, Iterator, List, Optional, Sequence

from ..language._grammar import describe_token
from ..language._values import decode, unescape
from ._frames import OTHER, TARGET, BlockStart, Frame, close_block, take_label
from ._lexer import Lexer, Token
from .._model import Block, Head
from ..source._source import DEFAULT_CHUNK

# Parser states (what may come next inside a message body).
FIELD, AFTER_FIELD, NAME, COLON, NEG, STRINGS = range(6)
EXT_IDENT, EXT_MORE = 6, 7
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
    lx: Lexer,
    path: Sequence[str],
    heads: FrozenSet[str] = frozenset(),
    stack: Optional[List[Frame]] = None,
    after: bool = False,
    last_field: str = "",
) -> Iterator[Block]:
    """``scan`` over the tokens of ``lx``, from inside the open messages ``stack`` (the fast
    path's, at a hand-over), ``after`` a complete field named ``last_field`` or not."""
    target = tuple(path)
    depth_target = len(target)
    stack = [] if stack is None else stack
    names: List[str] = [fr.name for fr in stack]
    state = AFTER_FIELD if after else FIELD
    field = last_field  # current field name
    field_start = 0
    field_line = 0
    # Line and column of the field name (or of its "["), taken when the name is read: by the time
    # its "{" or its "]" arrives, a chunk edge may have dropped the name's bytes, and the lexer
    # only locates offsets it still holds.
    field_lc = (0, 0)
    # Depths at which a field name's position may be needed: a block's own name, or a head.
    lc_depths = (depth_target - 1, depth_target) if heads else (depth_target - 1,)
    any_name = False
    colon = False
    ext_parts: List[str] = []
    # Pieces of the current string value, or None when nothing uses it (only heads of the blocks
    # read and `name` labels are kept: a run of adjacent literals elsewhere costs no memory).
    svalue: Optional[List[bytes]] = None

    def unexpected(tok: Token, expected: str) -> Exception:
        text = tok[3].decode("utf-8", "replace") if tok[3] else tok[0]
        return lx.error("unexpected %s, %s" % (describe_token(tok[0], text), expected), tok[1])

    def not_a_field(tok: Token) -> Exception:
        # Where a field (or the end of the open message) must come. A closer gets its own words: the
        # usual cause is a truncated, hand-edited or concatenated file.
        kind = tok[0]
        if kind == "}" or kind == ">":
            if not stack:
                return lx.error("unexpected '%s': no message is open here (one '%s' too many?)" % (kind, kind), tok[1])
            top = stack[-1]
            return lx.error(
                "unexpected '%s': message %r was opened with '%s', so it closes with '%s'"
                % (kind, top.name, "{" if top.closer == "}" else "<", top.closer),
                tok[1],
            )
        return unexpected(tok, "expected a field name" + (" or '%s'" % stack[-1].closer if stack else ""))

    def open_msg(tok: Token, in_list: bool) -> None:
        closer = _OPEN[tok[0]]
        block = None
        if len(stack) + 1 == depth_target and names == list(target[:-1]) and field == target[-1]:
            if in_list:
                start = tok[1]
                line, col = lx.linecol(start)
            else:
                start = field_start
                line, col = field_lc
            block = BlockStart(start, line, col, [])
        stack.append(Frame(field, TARGET if block is not None else OTHER, block, closer, in_list))
        names.append(field)

    def wanted() -> bool:
        # Whether the scalar field being read is one finish_scalar keeps.
        d = len(stack)
        return d > 0 and (field == "name" or (d == depth_target and stack[-1].block is not None and field in heads))

    def finish_scalar(value: str) -> None:
        # A scalar field is complete: record it if it is a head of the block being read.
        d = len(stack)
        if d == depth_target and d and stack[-1].block is not None and field in heads:
            stack[-1].block.heads.append(Head(field, value, field_line))  # type: ignore[union-attr]
        if field == "name" and d:
            take_label(stack, value)

    for tok in lx.tokens():
        kind = tok[0]
        if state == STRINGS or state == LIST_STRINGS:
            if kind == "STRING":  # adjacent literals concatenate
                if svalue is not None:
                    svalue.append(unescape(tok[3][1:-1].decode("utf-8", "surrogateescape")))
                continue
            if svalue is not None:
                finish_scalar(decode(b"".join(svalue)))
                svalue = None
            # The string is complete: this token is read as what follows any scalar.
            state = AFTER_FIELD if state == STRINGS else LIST_SCALAR_NEXT
        elif state == LIST_FIRST and kind != "]" and kind != "{" and kind != "<":
            if not colon or any_name:
                raise unexpected(tok, "expected a message or ']' (a list of scalars needs ':')")
            state = LIST_SCALAR  # the first item of a list of scalars
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
                    yield close_block(target, fr, tok[2], stack)
                if fr.in_list:
                    field = fr.name  # the list's field name, for its next item
                    state = LIST_MSG_NEXT
                else:
                    state = AFTER_FIELD
            elif kind == "[":
                field_start = tok[1]
                if len(stack) in lc_depths:
                    field_lc = lx.linecol(tok[1])
                ext_parts = []
                any_name = False
                state = EXT_IDENT
            elif state == AFTER_FIELD and (kind == ";" or kind == ","):
                state = FIELD
            else:
                raise not_a_field(tok)
        elif state == NAME:
            if kind == ":":
                state = COLON
                colon = True
            elif kind == "{" or kind == "<":
                open_msg(tok, False)
                state = FIELD
            elif kind == "[":
                colon = False
                state = LIST_FIRST
            else:
                raise unexpected(tok, "expected ':' or '{' after field name %r" % field)
        elif state == COLON:
            if kind == "STRING" and not any_name:
                svalue = [unescape(tok[3][1:-1].decode("utf-8", "surrogateescape"))] if wanted() else None
                state = STRINGS
            elif (kind == "NUMBER" or kind == "IDENT") and not any_name:
                finish_scalar(tok[3].decode("ascii"))
                state = AFTER_FIELD
            elif kind == "{" or kind == "<":
                open_msg(tok, False)
                state = FIELD
            elif kind == "[":
                state = LIST_FIRST
            elif kind == "-" and not any_name:
                state = NEG
            else:
                raise unexpected(tok, "expected a message" if any_name else _EXPECT_VALUE)
        elif state == NEG:
            if kind == "NUMBER" or kind == "IDENT":
                finish_scalar("-" + tok[3].decode("ascii"))
                state = AFTER_FIELD
            else:
                raise unexpected(tok, "expected a number after '-'")
        elif state == EXT_IDENT:
            if kind != "IDENT":
                raise unexpected(tok, "expected a name inside '[...]'")
            ext_parts.append(tok[3].decode("ascii"))
            state = EXT_MORE
        elif state == EXT_MORE:
            if kind == ".":
                ext_parts.append(".")
                state = EXT_IDENT
            elif kind == "/" and not any_name:
                ext_parts.append("/")
                any_name = True
                state = EXT_IDENT
            elif kind == "]":
                field = "[" + "".join(ext_parts) + "]"
                field_line = field_lc[0]
                state = NAME
            else:
                raise unexpected(tok, "expected '.', '/' or ']'")
        elif state == LIST_FIRST:
            if kind == "]":
                state = AFTER_FIELD
            else:  # kind is "{" or "<" (a scalar item switched to LIST_SCALAR above)
                open_msg(tok, True)
                state = FIELD
        elif state == LIST_SCALAR:
            if kind == "NUMBER" or kind == "IDENT":
                finish_scalar(tok[3].decode("ascii"))
                state = LIST_SCALAR_NEXT
            elif kind == "STRING":
                svalue = [unescape(tok[3][1:-1].decode("utf-8", "surrogateescape"))] if wanted() else None
                state = LIST_STRINGS
            elif kind == "-":
                state = LIST_NEG
            else:
                raise unexpected(tok, _EXPECT_VALUE)
        elif state == LIST_NEG:
            if kind == "NUMBER" or kind == "IDENT":
                finish_scalar("-" + tok[3].decode("ascii"))
                state = LIST_SCALAR_NEXT
            else:
                raise unexpected(tok, "expected a number after '-'")
        elif state == LIST_SCALAR_NEXT:
            if kind == ",":
                state = LIST_SCALAR
            elif kind == "]":
                state = AFTER_FIELD
            else:
                raise unexpected(tok, "expected ',' or ']'")
        elif state == LIST_MSG_NEXT:
            if kind == ",":
                state = LIST_MSG
            elif kind == "]":
                state = AFTER_FIELD
            else:
                raise unexpected(tok, "expected ',' or ']'")
        elif state == LIST_MSG:
            if kind == "{" or kind == "<":
                open_msg(tok, True)
                state = FIELD
            else:
                raise unexpected(tok, "expected a message")
        else:  # pragma: no cover
            raise AssertionError(state)

    # End of input: only a complete top level is valid.
    end = lx.base + len(lx.buf)
    if state == STRINGS:
        if svalue is not None:
            finish_scalar(decode(b"".join(svalue)))
        state = AFTER_FIELD
    if stack or state not in (FIELD, AFTER_FIELD):
        if stack:
            opener = stack[-1]
            what = "message %r is not closed (expected '%s')" % (opener.name, opener.closer)
        else:
            what = "the last field %r is incomplete" % field
        raise lx.error("unexpected end of input: " + what, end, incomplete=True)

