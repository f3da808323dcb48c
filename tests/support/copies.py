"""A real graph's node blocks repeated under renamed scopes, as ``tf.import_graph_def(graph_def,
name="copy_K")`` names an imported graph: every node name, input (``X``, ``X:1``, ``^X``) and
colocation (``loc:@X``) gets the prefix ``copy_K/``; the ``library`` and ``versions`` follow once.
Built from a fixture's lines (the TensorFlow printer's layout), here rather than through
``benchmarks.generate.queues``, so the tests check the generator's renaming as well as fp.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple, Optional, Sequence

_NAME = re.compile(r'^(  name: "|  input: "\^?|\s+s: "loc:@)')


class Copies(NamedTuple):
    text: str
    lines_per_copy: int  # the lines of one copy of the node blocks (the first copy starts at line 1)


def renamed_copies(graph: Path, prefixes: Sequence[Optional[str]]) -> Copies:
    """The node blocks of ``graph`` once per prefix (``None``: unrenamed), then its tail."""
    lines = graph.read_text(encoding="ascii").splitlines(keepends=True)
    cut = lines.index("library {\n")
    nodes, tail = lines[:cut], lines[cut:]
    out = []
    for p in prefixes:
        if p is None:
            out.extend(nodes)
        else:
            out.extend(_NAME.sub(lambda m: m.group(1) + p, ln) for ln in nodes)
    return Copies("".join(out + tail), len(nodes))
