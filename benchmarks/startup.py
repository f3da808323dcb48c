"""Start-up: ``pbtxt-scan fp`` on a small graph against ``python -c "import typer"`` (issue 38).

    python -m benchmarks.startup [--runs 20] [--tool CMD] [--pyz pbtxt-scan.pyz] [GRAPH]

A small answer is mostly start-up, and a shell loop over a model zoo pays it once a graph. Each run
is its own process, the commands interleaved (typer, fp, then the pyz if given) so that a change of
load hits them alike; the table gives each one's median, its spread (the middle half) and the
median less typer's, in wall time and in CPU time (user + system, with its children: steadier on a
busy machine): issue 38's target is fp within 30 ms of it. The console script beside this
Python (``bin/pbtxt-scan``, as a user runs it) is timed, else ``python -m pbtxt_scan``; GRAPH is
``tests/data/graphs/mlp_sgd.pbtxt`` (93 KB) by default. Run ``python -m compileall pbtxt_scan``
first where ``PYTHONDONTWRITEBYTECODE`` is set: every run would compile the package otherwise.

``--instructions``: each command once under valgrind's callgrind, its instruction count (the
process's own, not grep's), with ``PYTHONHASHSEED=0``: the same on a loaded machine as on an idle
one, to tell a change's effect where the times swing (an idle machine ran ~4.4 M a ms here).
"""
from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def commands(graph: str, pyz: str, tool_line: str) -> Dict[str, List[str]]:
    script = os.path.join(os.path.dirname(sys.executable), "pbtxt-scan")
    tool = shlex.split(tool_line) if tool_line else [script] if os.access(script, os.X_OK) else [sys.executable, "-m", "pbtxt_scan"]
    runs = {"python -c 'import typer'": [sys.executable, "-c", "import typer"], "pbtxt-scan fp": tool + ["fp", graph]}
    if pyz:
        runs["python pbtxt-scan.pyz fp"] = [sys.executable, pyz, "fp", graph]
    return runs


def timed(argv: List[str]) -> Tuple[float, float]:
    """Wall time and CPU time (user + system, the process and its children: grep) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions(argv: List[str]) -> int:
    """The instructions ``argv`` runs (callgrind's ``Collected``), children left out."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + argv,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, PYTHONHASHSEED="0"))
    counts = [line.split(":")[-1] for line in done.stderr.splitlines() if "Collected :" in line]
    if not counts:
        sys.exit("valgrind did not run %s: %s" % (argv[0], done.stderr.strip()[-200:]))
    return int(counts[0].strip())


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", nargs="?", default=os.path.join(ROOT, "tests", "data", "graphs", "mlp_sgd.pbtxt"))
    ap.add_argument("--runs", type=int, default=20, help="runs of each command (default 20)")
    ap.add_argument("--tool", default="", help="the command to time instead, e.g. 'python -m pbtxt_scan' (another version's)")
    ap.add_argument("--pyz", default="", help="also time this pbtxt-scan.pyz (python3 -m tools.build_pyz)")
    ap.add_argument("--instructions", action="store_true", help="instruction counts under valgrind instead of times")
    a = ap.parse_args()
    runs = commands(a.graph, a.pyz, a.tool)
    if a.instructions:
        counts = {k: instructions(argv) for k, argv in runs.items()}
        base = counts["python -c 'import typer'"]
        print("| command | instructions | less typer's |\n|---|---:|---:|")
        for k, n in counts.items():
            print("| `%s` | %.1f M | %+.1f M |" % (k, n / 1e6, (n - base) / 1e6))
        return
    times: Dict[str, List[Tuple[float, float]]] = {k: [] for k in runs}
    for k, argv in runs.items():  # (one run each first, untimed: the page cache, the bytecode)
        timed(argv)
    for _ in range(a.runs):
        for k, argv in runs.items():
            times[k].append(timed(argv))
    base = [statistics.median(t[i] for t in times["python -c 'import typer'"]) for i in (0, 1)]
    print("| command | median | middle half | less typer's | CPU median | less typer's |")
    print("|---|---:|---:|---:|---:|---:|")
    for k, ts in times.items():
        q = sorted(t[0] for t in ts)
        lo, hi = q[len(q) // 4], q[(3 * len(q)) // 4]
        med = [statistics.median(t[i] for t in ts) for i in (0, 1)]
        print("| `%s` | %.0f ms | %.0f-%.0f ms | %+.0f ms | %.0f ms | %+.0f ms |" % (
            k, med[0] * 1e3, lo * 1e3, hi * 1e3, (med[0] - base[0]) * 1e3, med[1] * 1e3, (med[1] - base[1]) * 1e3))
    print("\n(%d runs each, interleaved; Python %s; load average %.1f)" % (
        a.runs, sys.version.split()[0], os.getloadavg()[0]))

if __name__ == "__main__":
    main()
