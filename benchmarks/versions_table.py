"""The table of ``benchmarks/versions.sh``'s runs: per input and command, the medians of wall time,
CPU (user + sys, children included) and peak RSS of each version, and now/base ratios. The first
round (a cold page cache for whichever ran first) is left out when there are more. A command
``CMD:N`` (``--jobs N``) is shown as ``CMD --jobs N``."""
from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from typing import Dict, List, Tuple


def table(lines: List[str]) -> str:
    runs: Dict[Tuple[str, str], Dict[str, List[Tuple[float, float, float]]]] = defaultdict(lambda: defaultdict(list))
    rounds = {line.split("\t")[0] for line in lines if line.strip()}
    for line in lines:
        if not line.strip():
            continue
        r, f, cmd, v, t = line.rstrip("\n").split("\t")[:5]
        if r == "1" and len(rounds) > 1:
            continue
        wall, user, sys_, rss = t.split()
        runs[(f, cmd)][v].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
    out = ["| command, input | wall base | wall now | now/base | CPU base | CPU now | now/base | peak RSS base / now |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (f, cmd), by in runs.items():
        b = [statistics.median(x[i] for x in by["base"]) for i in range(3)]
        n = [statistics.median(x[i] for x in by["now"]) for i in range(3)]
        out.append("| `%s` %s | %.2f s | %.2f s | %.2f | %.2f s | %.2f s | %.2f | %.0f / %.0f MB |" % (
            cmd.replace(":", " --jobs "), f, b[0], n[0], n[0] / b[0], b[1], n[1], n[1] / b[1], b[2], n[2]))
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as fh:
        print(table(fh.readlines()))
