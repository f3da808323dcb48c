"""Peer ``naive``: read the whole file into memory, regex the ``(name, op/type)`` pair of every node
or GE op, print fp and bp (one a line). ``python -m benchmarks.peers.naive FILE``"""

from __future__ import annotations

import re
import sys
from typing import Optional, Sequence

from benchmarks.peers._heuristic import fp_bp

_PAIR = re.compile(r'^ *(?:node|op) \{\n *name: "([^"]*)"\n *(?:op|type): "([^"]*)"', re.M)


def main(argv: Optional[Sequence[str]] = None) -> int:
    path = (sys.argv[1:] if argv is None else argv)[0]
    with open(path, encoding="utf-8", errors="replace") as f:
        data = f.read()
    fp, bp = fp_bp(_PAIR.findall(data))
    print(fp)
    print(bp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
