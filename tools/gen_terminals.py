#!/usr/bin/env python3
"""Regenerate ``pbtxt_scan/language/_terminals.py`` from ``grammar/pbtxt.lark`` (a maintainer tool).

    python tools/gen_terminals.py           # print what the file should hold
    python tools/gen_terminals.py --write   # write it

tests/test_terminals.py fails while the static file and the grammar differ.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from pbtxt_scan.language import _grammar, _terminals  # noqa: E402

text = _grammar.render_terminals()
if sys.argv[1:] == ["--write"]:
    with open(_terminals.__file__, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)
else:
    sys.stdout.write(text)
