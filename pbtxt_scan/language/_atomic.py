"""Compile regexes written with possessive repeats and atomic groups on every Python.

The scanner's regexes are written as Python 3.11 reads them: ``X*+`` (possessive) and ``(?>X)``
(atomic) never give back what they matched, so a failing match costs one pass, not a search over
every way to split a line. Before 3.11 ``re`` rejects both, and plain greedy repeats in their place
backtracked catastrophically (an earlier attempt measured 935 s instead of 26 s for the agreement
tests). So there each one is rewritten into an equivalent that any ``re`` accepts:

    (?>X) -> (?=(?P<_atomicN>X))(?P=_atomicN)      (X)*+ -> (?=(?P<_atomicN>(X)*))(?P=_atomicN)
    x*+   -> x*(?!x)      for one character x (a class, an escape, a literal); likewise x++, x?+,
                          x{m,n}+ (see _guarded)

A look-ahead is matched once and never re-entered on backtracking; the back-reference then
consumes exactly the text it matched. That is the definition of an atomic group. For one
character a guard is cheaper: any shorter run leaves another x next, which the guard rejects.
The added groups are named (``_atomic0``, ``_atomic1`` ...) in one pass over the final pattern, so
patterns built from pieces stay unique. They still take group numbers, so callers read their own groups through
:func:`user_groups` (``m.group(*user_groups(pattern))``), never by a fixed number.
"""
from __future__ import annotations

import functools
import re
import sys
from typing import List, Tuple

from .._kit import regex

# re reads possessive repeats and atomic groups from Python 3.11 on.
NATIVE = sys.version_info >= (3, 11)

_QUANT = regex(r"\*|\+|\?|\{\d*(?:,\d*)?\}")
_GROUP_PREFIXES = ("(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>")


def compile_bytes(text: str, native: bool = NATIVE) -> "re.Pattern[bytes]":
    """``re.compile`` of ``text`` (ASCII) as bytes, possessive/atomic parts emulated before 3.11."""
    return re.compile((text if native else emulate(text)).encode("ascii"))


@functools.lru_cache(maxsize=None)
def user_groups(pattern: "re.Pattern[bytes]") -> Tuple[int, ...]:
    """The numbers of ``pattern``'s own groups, in order (the groups the rewrite added left out)."""
    added = {i for name, i in pattern.groupindex.items() if name.startswith("_atomic")}
    return tuple(i for i in range(1, pattern.groups + 1) if i not in added)


def emulate(pattern: str) -> str:
    """``pattern`` with every ``(?>X)`` and possessive repeat written with a look-ahead instead."""
    names: List[int] = [0]
    out, i = _seq(pattern, 0, names)
    if i != len(pattern):  # pragma: no cover - an unbalanced ")" in our own pattern text
        raise ValueError("unbalanced ')' at %d in %r" % (i, pattern))
    return out


def _atomic(body: str, names: List[int]) -> str:
    n = names[0]
    names[0] = n + 1
    return "(?=(?P<_atomic%d>%s))(?P=_atomic%d)" % (n, body, n)


def _guarded(x: str, q: str) -> str:
    """``x`` repeated ``q`` possessively, for one character ``x`` (a class, an escape, a literal).

    Cheaper than a look-ahead and a back-reference: a greedy repeat that may not end before
    another ``x``. Giving characters back leaves an ``x`` next, which the guard rejects, so the
    only match is the longest one, as with the possessive repeat."""
    if q == "?":
        return "(?:%s|(?!%s))" % (x, x)
    if q == "*" or q == "+":
        return "%s%s(?!%s)" % (x, q, x)
    lo, _, hi = q[1:-1].partition(",")
    if not _:  # {n}: a fixed count gives nothing back
        return x + q
    if not hi:  # {m,}
        return "%s%s(?!%s)" % (x, q, x)
    if int(hi) <= int(lo or 0):
        return x + q
    # {m,n}: fewer than n with no x after them, or all n. At most one of the two can match, so
    # their order is free: the usual case (a short run) first.
    return "(?:%s{%s,%d}(?!%s)|%s{%s})" % (x, lo or "0", int(hi) - 1, x, x, hi)


def _seq(p: str, i: int, names: List[int]) -> Tuple[str, int]:
    """The alternatives from ``i`` up to the ``)`` that closes the group (or the end), rewritten."""
    out: List[str] = []  # atoms, and "|" between alternatives (a quantifier never follows one)
    n = len(p)
    while i < n:
        c = p[i]
        if c == ")":
            break
        if c == "|":
            out.append("|")
            i += 1
            continue
        m = _QUANT.match(p, i) if out and out[-1] != "|" else None
        if m is not None:
            q = m.group()
            i = m.end()
            if i < n and p[i] == "+":  # possessive
                atom = out[-1]
                single = atom[0] != "(" and not (atom[0] == "\\" and atom[1:2].isdigit())  # (not \\1)
                out[-1] = _guarded(atom, q) if single else _atomic(atom + q, names)
                i += 1
            elif i < n and p[i] == "?":  # lazy
                out[-1] += q + "?"
                i += 1
            else:
                out[-1] += q
            continue
        if c == "\\":
            j = _escape_end(p, i)
            out.append(p[i:j])
            i = j
        elif c == "[":
            j = _class_end(p, i)
            out.append(p[i:j])
            i = j
        elif c == "(":
            i, atom = _group(p, i, names)
            out.append(atom)
        else:
            out.append(c)
            i += 1
    return "".join(out), i


def _group(p: str, i: int, names: List[int]) -> Tuple[int, str]:
    if p.startswith("(?P=", i) or p.startswith("(?#", i):  # a back-reference or a comment: no body
        j = p.index(")", i) + 1
        return j, p[i:j]
    if p.startswith("(?P<", i):
        prefix = p[i : p.index(">", i) + 1]
    elif p.startswith("(?", i):
        prefix = next((g for g in _GROUP_PREFIXES if p.startswith(g, i)), "")
        if not prefix:  # pragma: no cover - flags and the like: not used by the scanner
            raise ValueError("unsupported group at %d in %r" % (i, p))
    else:
        prefix = "("
    body, j = _seq(p, i + len(prefix), names)
    if j >= len(p):  # pragma: no cover
        raise ValueError("unclosed group at %d in %r" % (i, p))
    if prefix == "(?>":
        return j + 1, _atomic(body, names)
    return j + 1, prefix + body + ")"


def _escape_end(p: str, i: int) -> int:
    c = p[i + 1 : i + 2]
    if c == "x":
        return i + 4
    if c.isdigit():  # an octal escape or a group reference: up to three digits
        j = i + 1
        while j < len(p) and j < i + 4 and p[j].isdigit():
            j += 1
        return j
    return i + 2


def _class_end(p: str, i: int) -> int:
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":  # a "]" first in a class is a member
        j += 1
    while p[j] != "]":
        j += 2 if p[j] == "\\" else 1
    return j + 1
