"""A fixed-string search done in this process, for a range too small to be worth a grep (start-up,
issue 38): ``fp`` on a 93 KB graph started two greps for the names around its answer, ~1.5 ms each,
for searches that take a tenth of that here.

The same hits as ``grep -a -b -o -F`` with ``LC_ALL=C`` (``_grep._spawn``): the pattern's lines are
the strings, none holds a newline, so no match spans lines; grep takes the longest string at the
leftmost place one starts, then searches on after it, and so does Python's ``re`` given the strings
longest first. An ``-E`` pattern stays grep's: built here, its regex alone took as long as grep's
start (``fp``'s needles: 2 ms to compile and 3 ms to search 93 KB). ``tests/test_grep_here.py``
compares the two on generated texts. A range up to ``_grep.HERE`` bytes is read whole for it.
"""
from __future__ import annotations

import os
import re
from typing import Iterator, Optional, Sequence, Tuple

_MAX_STRINGS = 64  # more strings are left to grep (one DFA), as an -E pattern is


def compiled(pattern: str, opts: Sequence[str]) -> "Optional[re.Pattern[bytes]]":
    """``pattern`` under grep's ``opts`` as a Python regex with the same matches, or ``None``."""
    if "-F" not in opts or any(o not in ("-F", "--line-buffered") for o in opts):
        return None
    strings = os.fsencode(pattern).split(b"\n")  # (the bytes grep is given: one string a line)
    if not all(strings) or len(strings) > _MAX_STRINGS:
        return None  # (an empty string matches every line: grep prints nothing for it)
    return re.compile(b"|".join(re.escape(s) for s in sorted(set(strings), key=lambda s: (-len(s), s))))


def search(buf: bytes, start: int, rx: "re.Pattern[bytes]") -> Iterator[Tuple[int, bytes]]:
    """Every match in ``buf`` (the range's bytes, from offset ``start``), as grep prints them."""
    for m in rx.finditer(buf):
        yield start + m.start(), m.group()
