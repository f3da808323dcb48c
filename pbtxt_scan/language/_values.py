"""A scalar's value as the grammar reads it: a string literal's bytes (its escapes; a long body at
C speed) and text, and a number's value. The Lark transformer (``_grammar``), the scanners and the
readers of the writer layout all take values from here.
"""
from __future__ import annotations

import codecs
import re
import warnings
from typing import Any

from ._skip import _TF_FIRST as _decoder_warns

_ESC = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|(.))", re.S)
_NAMED = {"a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11, "?": 63, "\\": 92, "'": 39, '"': 34}


def unescape(body: str) -> bytes:
    """The bytes a string literal's body (between its quotes) stands for."""
    if "\\" not in body:
        return body.encode("utf-8", "surrogateescape")
    if len(body) > 256 and "\n" not in body and _decoder_warns:
        got = _escape_decode(body.encode("utf-8", "surrogateescape"))
        if got is not None:
            return got
    return _unescape(body)


def unescape_in(raw: bytes, start: int, end: int) -> bytes:
    """:func:`unescape` of the body ``raw[start:end]`` as it is in the file: a long one (a
    tensor_content) is decoded without a copy of it, as bytes or as text."""
    if end - start > 256 and raw.find(b"\n", start, end) < 0 and _decoder_warns:
        got = _escape_decode(memoryview(raw)[start:end])
        if got is not None:
            return got
    return unescape(raw[start:end].decode("utf-8", "surrogateescape"))


def _escape_decode(body: Any) -> "bytes | None":
    """A tensor's body (fp reads the small Consts' values): the bytes-escape decoder, in C, reads
    every escape TF writes as below (octal greedy to 3 digits, \\x with 2 hex digits, the named
    ones), and warns (an error here) or raises at any other: those take the loop (None)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return codecs.escape_decode(body)[0]
    except (ValueError, Warning):
        return None


def _unescape(body: str) -> bytes:
    out = bytearray()
    pos = 0
    for m in _ESC.finditer(body):
        out += body[pos : m.start()].encode("utf-8", "surrogateescape")
        octal, hx, u4, u8, named = m.groups()
        if octal is not None:
            out.append(int(octal, 8) & 0xFF)  # "\400" is beyond a byte; C++ also keeps the low 8 bits
        elif hx is not None:
            out.append(int(hx, 16))
        elif u4 is not None or u8 is not None:
            out += chr(int(u4 or u8, 16)).encode("utf-8", "surrogatepass")
        else:
            out.append(_NAMED.get(named, ord(named[0]) if named else 0))
        pos = m.end()
    out += body[pos:].encode("utf-8", "surrogateescape")
    return bytes(out)


def decode(raw: bytes) -> str:
    """Text for a string's bytes: UTF-8, with undecodable bytes kept (as surrogate escapes)."""
    return raw.decode("utf-8", "surrogateescape")


def string_value(literal: str) -> str:
    """The value of one quoted literal, quotes included."""
    return decode(unescape(literal[1:-1]))


def _number(text: str) -> Any:
    t = text.lower()
    if t.startswith("0x"):
        return int(t, 16)
    if "." in t or "e" in t or t.endswith("f"):
        return float(t.rstrip("f"))
    if len(t) > 1 and t.startswith("0"):
        return int(t, 8)
    try:
        return int(t)
    except ValueError:
        # Over Python's limit for decimal conversion (4,300 digits by default): no protobuf
        # integer is that long, so keep it as written rather than change the interpreter's limit.
        return text
