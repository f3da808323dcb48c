"""The GE skim: the few fields GE logic needs from a block too big to parse (weights), read in
chunks and never held."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Collection, Dict, Iterator, List, Optional, Tuple

from .._errors import PbtxtError
from ..language._grammar import _number, string_value
from ..text import Lexer
from .._model import Block, Field, Message

if TYPE_CHECKING:
    from ..graph._input import GraphFile
from ..source._source import DEFAULT_CHUNK
from ._attrs import _ORIGIN_NAME, _WANTED

# The skim keeps only these message paths (relative to the op block) and, in them, these scalars.
_KEEP = {
    "ge_proto": {
        (): set(),
        ("attr",): {"key"},
        ("attr", "value"): {"s", "b", "i"},
        ("attr", "value", "list"): {"s"},
        ("output_desc",): set(),
        ("output_desc", "attr"): {"key"},
        ("output_desc", "attr", "value"): {"s"},
    },
    "ge_onnx": {
        (): set(),
        ("attribute",): {"name", "s", "i", "b", "strings"},
    },
}


def _skim(tokens: Iterator[Any], dialect: str) -> Message:
    """Read an op block's tokens into a :class:`Message` holding only the :data:`_KEEP` fields.

    Everything else (weights, shapes, ``node_def`` blobs) is read past, token by token, never
    held: the lexer hands a long string over as its first 64 KiB only.
    """
    keep = _KEEP[dialect]
    toks = _Peek(tokens)
    toks.next()  # the block's field name ("op"/"node")
    kind = toks.next()[0]
    if kind == ":":
        kind = toks.next()[0]
    if kind not in ("{", "<"):  # pragma: no cover - iter_nodes hands out message blocks only
        raise PbtxtError("not a message block")
    return _skim_msg(toks, (), keep, "}" if kind == "{" else ">", dialect) or Message()


class _Peek:
    __slots__ = ("buf", "it")

    def __init__(self, it: Iterator[Any]) -> None:
        self.it = it
        self.buf: List[Any] = []

    def next(self) -> Any:
        if self.buf:
            return self.buf.pop()
        return next(self.it, ("$END", 0, 0, b""))

    def peek(self) -> Any:
        if not self.buf:
            self.buf.append(next(self.it, ("$END", 0, 0, b"")))
        return self.buf[-1]


def _scalar(toks: _Peek, tok: Any) -> Any:
    kind, text = tok[0], tok[3]
    if kind == "-":
        tok = toks.next()
        v = _scalar(toks, tok)
        return -v if isinstance(v, (int, float)) else "-" + str(v)
    if kind == "STRING":
        parts = [string_value(text.decode("utf-8", "surrogateescape"))]
        while toks.peek()[0] == "STRING":  # adjacent literals concatenate
            parts.append(string_value(toks.next()[3].decode("utf-8", "surrogateescape")))
        return "".join(parts)
    if kind == "NUMBER":
        return _number(text.decode("ascii"))
    return text.decode("utf-8", "surrogateescape")


def _skim_msg(toks: _Peek, path: Tuple[str, ...], keep: Dict[Tuple[str, ...], Any], closer: str, dialect: str) -> Optional[Message]:
    """Read fields up to ``closer``; return the kept ones (``None`` when ``path`` is not kept)."""
    wanted = keep.get(path)
    msg: Optional[Message] = Message() if wanted is not None else None
    scalars: Collection[str] = wanted if wanted is not None else ()  # (the scalars kept, when the message is)
    while True:
        tok = toks.next()
        kind = tok[0]
        if kind == closer:
            return msg
        if kind in (";", ","):
            continue
        if kind == "$END":
            raise PbtxtError("unexpected end of block")
        if kind == "[":  # [extension.name] / [type.url/Name]
            name = ""
            while kind != "]":
                tok = toks.next()
                kind = tok[0]
                if kind == "$END":
                    raise PbtxtError("unexpected end of block")
            name = "[ext]"
        else:
            name = tok[3].decode("utf-8", "surrogateescape")
        tok = toks.next()
        if tok[0] == ":":
            tok = toks.next()
        items = _skim_value(toks, tok, path + (name,), keep, dialect)
        if msg is not None:
            for v in items:
                if isinstance(v, Message) or (name in scalars and not isinstance(v, _Skipped)):
                    msg.append(Field(name, v, 0, 0))
            if dialect == "ge_proto" and path in (("attr",), ("output_desc", "attr")) and name == "key":
                # Seen the map key: drop the value subtree of attrs nobody needs.
                k = msg.get("key")
                if not (k in _WANTED if path == ("attr",) else k == _ORIGIN_NAME):
                    keep = dict(keep)
                    keep.pop(path + ("value",), None)


class _Skipped:
    pass


_SKIPPED = _Skipped()


def _skim_value(toks: _Peek, tok: Any, path: Tuple[str, ...], keep: Dict[Tuple[str, ...], Any], dialect: str) -> List[Any]:
    kind = tok[0]
    if kind == "{" or kind == "<":
        m = _skim_msg(toks, path, keep, "}" if kind == "{" else ">", dialect)
        return [m] if m is not None else []
    if kind == "[":
        out: List[Any] = []
        while True:
            tok = toks.next()
            if tok[0] == "]":
                return out
            if tok[0] == ",":
                continue
            if tok[0] == "$END":
                raise PbtxtError("unexpected end of block")
            out.extend(_skim_value(toks, tok, path, keep, dialect))
    if path[:-1] in keep:
        return [_scalar(toks, tok)]
    # Not kept: consume without decoding (a weight string is never unescaped).
    if kind == "-":
        toks.next()
    elif kind == "STRING":
        while toks.peek()[0] == "STRING":
            toks.next()
    return [_SKIPPED]



def skim_block(g: "GraphFile", block: Block, dialect: str) -> Message:
    """The :data:`_KEEP` fields of one op block, read from the dump in chunks."""
    src = _Squash(g.reader(block.start, block.end))
    lex = Lexer(src, DEFAULT_CHUNK, start_offset=block.start, start_line=block.line, path=g.name)
    return _skim(lex.tokens(), dialect)


_STRING_KEEP = 1 << 16  # a string body longer than this reaches the lexer cut to this length
_OUT_STOP = re.compile(rb"[\"'#]")


class _Squash:
    """A reader that cuts every string literal's body to :data:`_STRING_KEEP` bytes.

    The lexer tokenizes a 20 MB weight string at regex speed, escape by escape (about 50 MB/s);
    this finds the closing quote with ``bytes.find`` and a backslash-parity check instead (C
    speed), so a weight costs almost nothing. The block was already validated by the scanner, so
    nothing but the string's end needs finding. A cut never leaves an odd run of backslashes
    (that would escape the closing quote). Positions past a cut string are shifted: the skim does
    not use them.
    """

    def __init__(self, src: Any) -> None:
        self.src = src
        self.state = 0  # 0 outside strings, 1 inside a string, 2 inside a comment
        self.quote = 0
        self.kept = 0  # body bytes kept of the current string
        self.bs = 0  # length of the backslash run ending the previous chunk (inside a string)
        self.tail_bs = 0  # length of the backslash run ending the kept part of the string

    def read(self, n: int = -1) -> bytes:
        while True:
            data = self.src.read(n)
            if not data:
                return b""
            out = self._feed(data)
            if out:
                return out

    def _feed(self, buf: bytes) -> bytes:
        out = bytearray()
        pos, end = 0, len(buf)
        while pos < end:
            if self.state == 0:
                m = _OUT_STOP.search(buf, pos)
                if m is None:
                    out += buf[pos:]
                    break
                i = m.start()
                out += buf[pos : i + 1]
                pos = i + 1
                if buf[i] == 0x23:  # '#'
                    self.state = 2
                else:
                    self.state, self.quote, self.kept, self.bs, self.tail_bs = 1, buf[i], 0, 0, 0
            elif self.state == 2:
                nl = buf.find(b"\n", pos)
                if nl < 0:
                    out += buf[pos:]
                    break
                out += buf[pos : nl + 1]
                pos = nl + 1
                self.state = 0
            else:
                j = pos
                while True:
                    q = buf.find(self.quote, j)
                    if q < 0:
                        break
                    k = q
                    while k > pos and buf[k - 1] == 0x5C:
                        k -= 1
                    run = q - k + (self.bs if k == pos else 0)
                    if run % 2 == 0:
                        break
                    j = q + 1
                stop = end if q < 0 else q
                room = _STRING_KEEP - self.kept
                if room > 0:
                    piece = buf[pos : min(stop, pos + room)]
                    out += piece
                    self.kept += len(piece)
                    tail = len(piece) - len(piece.rstrip(b"\\"))
                    self.tail_bs = tail + (self.tail_bs if tail == len(piece) else 0)
                    if stop - pos > room or (q < 0 and self.kept >= _STRING_KEEP):  # cut: leave no odd backslash run before the closing quote
                        self.kept = _STRING_KEEP
                        if self.tail_bs % 2:
                            del out[-1]
                if q < 0:
                    k = end
                    while k > pos and buf[k - 1] == 0x5C:
                        k -= 1
                    self.bs = (end - k) + (self.bs if k == pos else 0)
                    break
                out.append(self.quote)
                pos = q + 1
                self.state = 0
        return bytes(out)

