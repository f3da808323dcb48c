"""What the report and ``show --context`` spend beyond fp and bp, timed inside one process.

``python -m benchmarks.hood FILE [--rounds 3]`` prints, per round, the seconds of fp, bp, the two
neighbourhoods the report draws (around the answers, found together), the page's rendering, and
``show FP --context 2``'s neighbourhood (its centre found by name, as show finds it) on a fresh
open; then the medians. The end-to-end commands and their peak memory are measured with
``/usr/bin/time -v`` (benchmarks/README.md, issue 24).
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Dict, List, Optional


def _round(path: str) -> Dict[str, float]:
    import pbtxt_scan
    from pbtxt_scan.cli._points import answer_json
    from pbtxt_scan.cli._report import FP_UP
    from pbtxt_scan.report import Drawing, Page, render

    out: Dict[str, float] = {}
    with pbtxt_scan.GraphFile.open(path) as g:
        t = time.perf_counter()
        fa = pbtxt_scan.find_fp(g)
        out["fp"] = time.perf_counter() - t
        t = time.perf_counter()
        ba = pbtxt_scan.find_bp(g)
        out["bp"] = time.perf_counter() - t
        t = time.perf_counter()
        hoods = pbtxt_scan.neighbourhoods(g, [(fa.point, FP_UP, 2), (ba.point, 2, 2)])
        out["report's hoods"] = time.perf_counter() - t
    t = time.perf_counter()
    drawings = [Drawing(a.kind, h, {}) for a, h in zip((fa, ba), hoods)]
    render(Page(path, "", "", [], [answer_json(fa, path), answer_json(ba, path)], drawings, [], [], (), ""))
    out["render"] = time.perf_counter() - t
    with pbtxt_scan.GraphFile.open(path) as g:
        t = time.perf_counter()
        pbtxt_scan.neighbourhood(g, fa.point.name, 2, 2)
        out["show fp -C 2"] = time.perf_counter() - t
    return out


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.hood", description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args(argv)
    rows: List[Dict[str, float]] = []
    for k in range(a.rounds):
        rows.append(_round(a.file))
        print("round %d: %s" % (k + 1, ", ".join("%s %.2f s" % kv for kv in rows[-1].items())), flush=True)
    print("median: %s" % ", ".join("%s %.2f s" % (key, statistics.median(r[key] for r in rows)) for key in rows[0]))


if __name__ == "__main__":
    main()
