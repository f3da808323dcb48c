"""Peer ``lark``: ``pbtxt_scan.parse_text`` of the whole file (a full Lark parse into a tree), the
grammar's own reading with no streaming. ``python -m benchmarks.peers.lark_parse FILE``

(Not named ``lark.py``: run by path, it would shadow the lark package it uses.)"""

from __future__ import annotations

import sys
from typing import Optional, Sequence

import pbtxt_scan


def main(argv: Optional[Sequence[str]] = None) -> int:
    path = (sys.argv[1:] if argv is None else argv)[0]
    with open(path, encoding="utf-8") as f:
        pbtxt_scan.parse_text(f.read())
    print("parsed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
