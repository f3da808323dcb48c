"""Skipping a long string literal's body at C speed (``tensor_content`` lines of tens of MB).

The grammar's STRING terminal matched escape by escape runs at ~100 MB/s; the same verdict can be
reached with three whole-buffer C passes (``bytes.translate``, ``codecs.escape_decode``, a
``memchr``), because valid text-format strings are simple where they are long:

1. In the writer layout a long literal ends its line: the closing quote is the byte before the
   line's newline (strings cannot span lines). Any other line shape (an adjacent literal, a
   comment after it) takes the slow road.
2. The body holds no NUL (one ``find``).
3. Every escape is valid and every quote of the literal's kind is escaped. Backslash runs pair
   off left to right, and what follows an escaping backslash decides the escape: exactly the
   rules of Python's own bytes-escape decoder. So the body is mapped byte by byte onto four
   classes that decoder reads as the grammar would (``_classes``):

   ============================  =====  ==================================================
   body byte                     class  what ``escape_decode`` does with it
   ============================  =====  ==================================================
   ``\\``                         ``\\``  starts an escape (or is the second of a pair)
   the literal's own quote        ``n``  ``\\n`` decodes to a newline; a bare ``n`` stays ``n``
   a simple escape's letter       ``v``  ``\\v`` decodes (``abfnrtv?``, octal digits, the
                                         other quote: what follows ``\\`` in one escape)
   anything else (``x u U`` too)  ``x``  ``\\x`` not followed by hex digits is an error
   ============================  =====  ==================================================

   None of the classes is a hex digit, so the decoder raises at the first escape that does not
   start with a simple letter, and a bare ``n`` left in its output is an unescaped quote.
4. ``\\x``, ``\\u``, ``\\U`` are rare in real graphs (writers escape bytes as octal): where the
   decoder stops at one, the grammar's own sub-pattern checks it and the decoding goes on after
   (up to one a KiB: denser, the caller's regex is faster).

5. Before all that, one pass of the decoder over the body itself (``_tf_escapes``), with two
   byte-for-byte replacements and no class map: what TensorFlow writes (octal, ``\\n \\r \\t
   \\" \\' \\\\``) passes it. Each ``n`` becomes ``v`` (the same verdict: both are simple
   letters, both plain) so that no escape the writers use decodes to a newline; the literal's
   quote becomes a newline, which decodes to nothing after a backslash (a line continuation) and
   stays a newline where it was bare. The body holds no newline of its own (the caller looked),
   so: the decoder takes every escape it knows as the grammar does (octal greedy up to 3 digits,
   ``\\x`` with 2 hex digits), warns at any other (made an error here), raises at a trailing
   backslash; a newline in its output is a bare quote (or a ``\\012`` or ``\\x0a``: the slow
   check then decides). It costs about a third less than the class map and its decoding, and a
   ``False`` from it only sends the body on to step 3.

Anything that is not plainly valid returns early: the caller then takes the exact, slow road
(the terminal's regex, or the general scanner), which gives the same error message as before. So
this function may only ever say "valid up to here" where the grammar agrees: the tests prove it
against the STRING terminal on the conformance cases and on random bodies (``test_skip.py``).
"""
from __future__ import annotations

import codecs
import warnings
from typing import Dict, Tuple

from .._kit import regex

_BS = 0x5C
# The longest escape, ``\U0010FFFF``, is 10 bytes: a window cut at least this far from any
# backslash never splits one.
_LONGEST_ESCAPE = 10

_SIMPLE = b"01234567abfnrtv?'\""  # what may follow a backslash in a one-letter (or octal) escape
_SPECIAL = regex(
    rb"\\(?:x[0-9A-Fa-f]|u(?![dD][89a-fA-F])[0-9A-Fa-f]{4}|U000(?!0[dD][89a-fA-F])[0-9A-Fa-f]{5}|U0010[0-9A-Fa-f]{4})"
)
# The decoder's one error with a place: "invalid \x escape at position N" (the same words on
# every Python 3 this project runs on; anything else is handled as "not plainly valid").
_AT = regex(r"invalid \\x escape at position (\d+)")
# (``escape_decode`` is the codec behind pickle's bytes and has been in ``codecs`` since 2.x.)
_decode = codecs.escape_decode


def _table(quote: int) -> bytes:
    """The class map of step 3 for a literal quoted with ``quote``."""
    out = bytearray(b"x" * 256)
    for b in _SIMPLE:
        out[b] = ord("v")
    out[quote] = ord("n")
    out[_BS] = _BS
    return bytes(out)


_classes: Dict[int, bytes] = {q: _table(q) for q in (0x22, 0x27)}


def _tf_escapes(buf: bytes, quote: int, i: int = 0, end: "int | None" = None) -> bool:
    """Step 5: True if ``buf[i:end]`` (no newline, no NUL: the caller's) is plainly a valid body,
    by one decoder pass; False is only "not plainly" (step 3 decides)."""
    if end is None:
        end = len(buf)
    if end - i >= len(buf) - 8192:  # (most of the buffer: map it whole rather than copy the slice first)
        x = memoryview(buf.translate(_tf_maps[quote]))[i:end]
    else:
        x = memoryview(buf[i:end].translate(_tf_maps[quote]))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = _decode(x)[0]
    except (ValueError, Warning):
        return False
    return b"\n" not in out


def _tf_map(quote: int) -> bytes:
    """Step 5's byte map: ``n`` -> ``v``, the literal's quote -> newline, the rest as it is."""
    out = bytearray(range(256))
    out[ord("n")] = ord("v")
    out[quote] = 0x0A
    return bytes(out)


_tf_maps: Dict[int, bytes] = {q: _tf_map(q) for q in (0x22, 0x27)}


def _decoder_warns() -> bool:
    """Whether this Python's decoder stops at an escape it does not know (step 5 relies on it)."""
    for bad in (b"\\q", b"\\?", b"\\8", b"\\u0041"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                _decode(bad)
            except Warning:
                continue
        return False
    return True


_TF_FIRST = _decoder_warns()


def _escapes_ok(buf: bytes, i: int, end: int, quote: int) -> bool:
    """Whether ``buf[i:end]`` is a valid body: every escape valid, every ``quote`` escaped, and
    no escape running past ``end`` (step 3 to 5). NUL and newlines are the caller's."""
    if _TF_FIRST and _tf_escapes(buf, quote, i, end):
        return True
    return _old(buf, i, end, quote)


def _old(buf: bytes, i: int, end: int, quote: int) -> bool:
    if end - i >= len(buf) - 8192:  # (most of the buffer: map it whole rather than copy the slice first)
        view = memoryview(buf.translate(_classes[quote]))[i:end]
    else:
        view = memoryview(buf[i:end].translate(_classes[quote]))
    at = 0
    # Each \x, \u, \U costs a few microseconds of Python here, the terminal's regex as much as
    # ~150 bytes: where they are denser than one a KiB (a writer that escapes bytes in hex), the
    # regex is the faster road.
    budget = 64 + ((end - i) >> 10)
    while True:
        try:
            out = _decode(view[at:])[0]
        except ValueError as e:
            m = _AT.fullmatch(str(e))
            if m is None:
                return False  # a backslash ends the body: the quote after it is escaped
            k = i + at + int(m.group(1))  # the backslash of a \x, \u, \U or of an invalid escape
            esc = _SPECIAL.match(buf, k, end)
            # the part decoded before it must hold no bare quote either
            budget -= 1
            if esc is None or not budget or b"n" in _decode(view[at : k - i])[0]:
                return False
            at = esc.end() - i
            continue
        return b"n" not in out


def body_end(buf: bytes, i: int, lim: int, quote: int) -> Tuple[int, bool]:
    """Skip a string body starting at ``buf[i]`` (just after the opening ``quote``), within
    ``buf[:lim]``.

    Returns ``(j, closed)``: ``buf[i:j]`` is a valid body prefix and, if ``closed``, ``buf[j]`` is
    the closing quote. If not closed, ``j`` is where to resume once more bytes are in (no escape
    straddles it); a ``j`` well before ``lim`` means "not plainly valid here": take the slow road.
    """
    nl = buf.find(b"\n", i, lim)
    # 1. the closing quote: in the writer layout a long literal ends its line. (Whether that quote
    # is escaped is the decoder's to say: a body that ends in an escaping backslash fails it.)
    closed = nl > i and buf[nl - 1] == quote
    if closed:
        end = nl - 1
    else:
        if nl >= 0:
            return i, False  # a newline inside the literal, or a line that goes on after it
        # Resume before any escape that may be cut by the window's end.
        end = lim
        b = buf.find(b"\\", max(i, lim - _LONGEST_ESCAPE), lim)
        if b >= 0:
            end = b
            while end > i and buf[end - 1] == _BS:
                end -= 1
    # 2. no NUL; 3-4. escapes and quotes
    if buf.find(b"\x00", i, end) >= 0 or not _escapes_ok(buf, i, end, quote):
        return i, False
    return end, closed


def valid_piece(buf: bytes, i: int, end: int, quote: int, no_newline: bool = False) -> bool:
    """Whether ``buf[i:end]`` alone is plainly a valid piece of a body: no newline (the caller may
    have looked already: ``no_newline``), no NUL, every escape whole and valid, every ``quote``
    escaped (a window of ``_skim_pool``). False is only "not plainly valid": the exact road decides."""
    return (no_newline or buf.find(b"\n", i, end) < 0) and buf.find(b"\x00", i, end) < 0 and _escapes_ok(buf, i, end, quote)
