"""Lines of the fixture graphs, and edits of them, for the regex agreement tests (test_atomic,
test_layout_forms)."""
from __future__ import annotations

from typing import List

from support.data import DATA


def _lines() -> List[bytes]:
    out: List[bytes] = []
    for f in sorted((DATA / "graphs").glob("*.pbtxt"))[:4]:
        out += f.read_bytes().splitlines(keepends=True)[:3000]
    return out


LINES = _lines()
PIECES = [b" ", b"\n", b"{", b"}", b":", b'"', b"\\", b"\\x4", b"\\u00e9", b"1.5e", b"-", b"a", b"\xc3\xa9", b"'", b"  ", b"\\0", b"\\12", b"\\x", b"\\ud800", b'\\"', b"\\\\"]


def edited(start: int, n: int, edits: list) -> bytes:
    """``n`` fixture lines from ``start``, with each ``(where, what)`` inserted at that fraction."""
    text = b"".join(LINES[start : start + n])
    for where, what in edits:
        k = int(where * len(text))
        text = text[:k] + what + text[k:]
    return text
