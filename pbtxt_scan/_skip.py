"""Skipping a long string literal's body at C speed (``tensor_content`` lines of tens of MB).

The grammar's STRING terminal matched escape by escape runs at ~100 MB/s; the same verdict can be
reached with a handful of whole-buffer C operations (``bytes.find``, ``bytes.translate``), each
~1 GB/s, because valid text-format strings are simple where they are long:

1. In the writer layout a long literal ends its line: the closing quote is the one before the
   line's newline, after an even run of backslashes (strings cannot span lines). Any other line
   shape (an adjacent literal, a comment after it) takes the slow road.
2. The body holds no NUL, and every other quote of its kind is escaped: as many quotes as
   backslash-quotes, and the rare quote after two or more backslashes has an odd run.
3. Every backslash that *starts* an escape is followed by a character that can begin one
   (``0-7 a b f n r t v ? \\ ' " x u U``). In a class map of the body (``translate``: backslash,
   "may follow a backslash", anything else), the only places where a backslash is followed by an
   "anything else" character are after an escaped backslash pair (``\\\\q``); a backslash run of
   odd length there is an invalid escape.
4. ``\\x`` needs a hex digit, ``\\u``/``\\U`` exact forms (no surrogates, at most U+10FFFF): these
   are rare in real graphs (writers escape bytes as octal), so each occurrence that starts an
   escape is checked with the grammar's own sub-pattern.

Anything that is not plainly valid returns early: the caller then takes the exact, slow road
(the terminal's regex, or the general scanner), which gives the same error message as before. So
this function may only ever say "valid up to here" where the grammar agrees: the tests prove it
against the STRING terminal on the conformance cases and on random bodies (``test_skip.py``).
"""
from __future__ import annotations

import re
from typing import Tuple

_BS = 0x5C
# The longest escape, ``\U0010FFFF``, is 10 bytes: a window cut at least this far from any
# backslash never splits one.
_LONGEST_ESCAPE = 10

_MAY_FOLLOW = b"01234567abfnrtv?\\'\"xuU"
# Class map for step 3: backslash stays, "may follow a backslash" -> "a", anything else -> "z".
_CLASS = bytes(
    _BS if b == _BS else (0x61 if b in _MAY_FOLLOW else 0x7A) for b in range(256)
)
_SPECIAL = re.compile(
    rb"\\(?:x[0-9A-Fa-f]|u(?![dD][89a-fA-F])[0-9A-Fa-f]{4}|U000(?!0[dD][89a-fA-F])[0-9A-Fa-f]{5}|U0010[0-9A-Fa-f]{4})"
)


def _odd_run_before(buf: bytes, at: int, lo: int) -> bool:
    """Whether the run of backslashes ending just before ``at`` (not before ``lo``) is odd."""
    k = at
    while k > lo and buf[k - 1] == _BS:
        k -= 1
    return (at - k) % 2 == 1


def body_end(buf: bytes, i: int, lim: int, quote: int) -> Tuple[int, bool]:
    """Skip a string body starting at ``buf[i]`` (just after the opening ``quote``), within
    ``buf[:lim]``.

    Returns ``(j, closed)``: ``buf[i:j]`` is a valid body prefix and, if ``closed``, ``buf[j]`` is
    the closing quote. If not closed, ``j`` is where to resume once more bytes are in (no escape
    straddles it); a ``j`` well before ``lim`` means "not plainly valid here": take the slow road.
    """
    q = bytes((quote,))
    nl = buf.find(b"\n", i, lim)
    # 1. the closing quote. In the writer layout a long literal ends its line, so look for the
    # quote before the line's newline; every other quote in the body must then be escaped,
    # checked below by counting rather than one Python step per quote (a tensor holds one
    # escaped quote per 256 bytes).
    closed = nl >= 0 and nl > i and buf[nl - 1] == quote and not _odd_run_before(buf, nl - 1, i)
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
    body = buf[i:end]
    # 2. no NUL, and no unescaped quote: every quote has a backslash before it, and the rare
    # ones after two or more (an escaped backslash, then maybe a bare quote) have an odd run
    if b"\x00" in body or body.count(q) != body.count(b"\\" + q):
        return i, False
    k = body.find(b"\\\\" + q)
    while k >= 0:
        if not _odd_run_before(body, k + 2, 0):
            return i, False
        k = body.find(b"\\\\" + q, k + 1)
    # 3. every escape starts with a character that may follow a backslash
    cls = body.translate(_CLASS)
    k = cls.find(b"\\z")
    while k >= 0:
        if _odd_run_before(cls, k + 1, 0):
            return i, False
        k = cls.find(b"\\z", k + 2)
    # 4. \x, \u, \U: their exact forms, where they start an escape
    for lead in (b"\\x", b"\\u", b"\\U"):
        k = body.find(lead)
        while k >= 0:
            if _odd_run_before(body, k + 1, 0) and not _SPECIAL.match(body, k):
                return i, False
            k = body.find(lead, k + 1)
    return end, closed
