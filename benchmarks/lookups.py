"""Issue 38's lookups on a big graph, each beside one `grep -F` of its name: medians of N, interleaved.

    python -m benchmarks.lookups FILE [--rounds 5] [--exe BIN ...]

For each case (a missing name, two misspellings, the graph's last node, a missing name with
`--context 2`), each round runs `grep -F NAME FILE`, then `BIN show FILE NAME...` for every BIN given
(default: `pbtxt-scan` on PATH), from the page cache. Prints, per case, the medians of wall and CPU
(user + sys of the command and its children, from getrusage) and the issue's budget, 3 x grep's wall
+ 1.5 s, then a Markdown table. The names suit `python -m benchmarks.generate dense` graphs
(`layer_43817/MatMul` exists there at 1 GB); `--late NAME` names the last node for others.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import time
from typing import Dict, List, Optional, Tuple


def _timed(cmd: List[str]) -> Tuple[float, float, int, str]:
    """(wall, CPU, exit code, stderr's last line) of one run."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    err = p.stderr.decode("utf-8", "replace").strip().splitlines()
    return wall, cpu, p.returncode, err[-1] if err else ""


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.lookups", description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--exe", action="append", help="a pbtxt-scan to time (repeat for several; default: pbtxt-scan)")
    ap.add_argument("--late", default="save/restore_all", help="the graph's last node (default: the generator's)")
    a = ap.parse_args(argv)
    exes = a.exe or ["pbtxt-scan"]
    cases = [
        ("missing", ["no/such/node"]),
        ("misspelt (case)", ["layer_43817/matmul"]),
        ("misspelt (a key)", ["layer_43817/MatMl"]),
        ("late", [a.late]),
        ("missing --context 2", ["no/such/node", "--context", "2"]),
    ]
    rows = []
    for label, args in cases:
        runs: Dict[str, List[Tuple[float, float, int, str]]] = {}
        for _ in range(a.rounds):
            runs.setdefault("grep -F", []).append(_timed(["grep", "-F", args[0], a.file]))
            for exe in exes:
                runs.setdefault(exe, []).append(_timed([exe, "show", a.file] + args))
        med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v)) for k, v in runs.items()}
        budget = 3 * med["grep -F"][0] + 1.5
        said = {k: (v[-1][2], v[-1][3][:100]) for k, v in runs.items() if k != "grep -F"}
        print(label, {k: "%.2f / %.2f s" % w for k, w in med.items()}, "budget %.2f s" % budget, said, flush=True)
        rows.append((label, " ".join(args), med, budget, said))
    print()
    print("| `show FILE ...` | `grep -F`: wall / CPU | " + " | ".join("%s: wall / CPU" % e for e in exes) + " | budget | stderr |")
    print("|---|---:|" + "---:|" * len(exes) + "---:|---|")
    for label, args, med, budget, said in rows:
        cells = " | ".join("%.2f / %.2f s" % med[e] for e in exes)
        print("| %s (`%s`) | %.2f / %.2f s | %s | %.2f s | %s |" % (label, args, med["grep -F"][0], med["grep -F"][1], cells, budget,
                                                                  "`%s`" % said[exes[-1]][1] if said[exes[-1]][1] else "-"))


if __name__ == "__main__":
    main()
