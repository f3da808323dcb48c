"""A graph written again in a non-canonical layout: one top-level field per line, so no line opens
a ``node {`` at column 0 (that exercises the forward index; test_points, test_cache, test_fp_ahead)."""
from __future__ import annotations

from pathlib import Path

from pbtxt_scan import parse_text
from pbtxt_scan._model import Message


def _quote(value: str) -> str:
    raw = value.encode("utf-8", "surrogateescape")
    out = []
    for c in raw:
        ch = chr(c)
        out.append("\\" + ch if ch in "\\\"'" else ch if 32 <= c < 127 else "\\%03o" % c)
    return '"%s"' % "".join(out)


def _print_one_line(msg: Message, pointy: bool) -> str:
    o, c = ("<", ">") if pointy else ("{", "}")
    parts = []
    for f in msg:
        if isinstance(f.value, Message):
            parts.append("%s %s %s %s" % (f.name, o, _print_one_line(f.value, pointy), c))
        elif isinstance(f.value, str):
            v = f.value
            ident = v.lstrip("-").isidentifier() and f.name not in ("name", "op", "input", "device", "s", "key")
            parts.append("%s: %s" % (f.name, v if ident else _quote(v)))
        else:
            parts.append("%s: %r" % (f.name, f.value))
    return " ".join(parts)


def _reprint(src: Path, dst: Path, pointy: bool) -> None:
    # One top-level field per line (no column-0 "node {" lines): exercises the forward index.
    msg = parse_text(src.read_text())
    with dst.open("w") as out:
        for f in msg:
            out.write(_print_one_line(Message([f]), pointy) + "\n")
