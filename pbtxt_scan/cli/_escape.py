"""Names as text and TSV output shows them: one line, one field, nothing a terminal acts on.

A node name may hold any character (protobuf strings do): a newline or a tab would break a
listing's rows and fields, an ESC would reach the terminal as a command. :func:`shown` writes
control characters (C0, DEL, C1) as ``\\n``, ``\\t``, ``\\r`` or ``\\xNN``, and a backslash as
``\\\\``, so the escaping reads back unambiguously. JSON output keeps names exact (its own escapes).
"""
from __future__ import annotations

import re
from typing import Any, Optional

from .._kit import regex

_UNSAFE = regex("[\\x00-\\x1f\\x7f-\\x9f\\\\]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\"}


def shown(name: Optional[str]) -> str:
    """``name`` as text and TSV output print it (unchanged when it needs no escape: the usual case;
    a node without the field, ``None``, as ``nodes`` always printed it)."""
    if name is None:
        return "None"
    if _UNSAFE.search(name) is None:
        return name
    return _UNSAFE.sub(_escape, name)


_CONTROL = regex("[\\x00-\\x1f\\x7f-\\x9f]")


def terminal_safe(line: str) -> str:
    """A line of prose on stderr (``--explain``'s trail, with names in it): its control characters
    escaped as :func:`shown` does, its backslashes left alone (a message, not a name to read back)."""
    if _CONTROL.search(line) is None:
        return line
    return _CONTROL.sub(_escape, line)


def _escape(m: Any) -> str:
    c = m.group()
    return _NAMED.get(c) or "\\x%02x" % ord(c)


_ESCAPED = regex(r"\\(?:x([0-9a-f]{2})|(.))", re.S)
_UNNAMED = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def unshown(text: str) -> str:
    """The names in ``text`` as they are: :func:`shown`'s escapes undone (``-z`` output, whose
    NUL-ended rows need none)."""
    if "\\" not in text:
        return text
    return _ESCAPED.sub(_unescape, text)


def _unescape(m: Any) -> str:
    code, c = m.groups()
    return chr(int(code, 16)) if code is not None else _UNNAMED.get(c, c)


def row_text(b: Any) -> str:
    """``nodes``' text row: the block's line (binary: its byte offset), name and op, tab-separated,
    name and op :func:`shown`."""
    return "%d\t%s\t%s" % (b.line or b.start, shown(b.name), shown(b.op))


_ODD_ROWS = regex("[\x00-\x08\x0b-\x1f\x7f-\x9f\\\\]")


def plain_rows(text: str) -> bool:
    """Whether ``text``, rows ``line<TAB>name<TAB>op`` joined by newlines, holds no name to escape:
    no control character, no backslash, and two tabs a row (a name's own tab or newline would
    add one, or a row)."""
    return _ODD_ROWS.search(text) is None and text.count("\t") == 2 * (text.count("\n") + 1)
