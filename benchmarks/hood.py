"""What the report and ``show --context`` spend beyond fp and bp, timed inside one process.

``python -m benchmarks.hood FILE --report OUT.html`` runs the ``report`` command itself in this
process, its phases timed (fp, bp, the drawings, the whole page) against its wall time.
``python -m benchmarks.hood FILE [--rounds 3]`` prints, per round, the seconds of fp, bp, the two
neighbourhoods the report draws (around the answers, found together), the page's rendering, and
``show FP --context 2``'s neighbourhood (its centre found by name, as show finds it) on a fresh
open; then the medians. The end-to-end commands and their peak memory are measured with
``/usr/bin/time -v`` (benchmarks/README.md, issue 24), or here: ``python -m benchmarks.hood FILE
--commands [--no-cache]`` runs ``fp``, one ``grep -c`` for a name, and ``show FP|BP --context 2``
as a user does, each in its own process, in interleaved rounds (``--no-cache``: each with an empty
cache folder, as on a first run), and prints their medians, peak RSS and the ratio of show to fp
plus one byte search.
"""
from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Dict, List, Optional


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


def _report_command(path: str, out: str) -> None:
    import pbtxt_scan
    from pbtxt_scan.cli import _report
    from pbtxt_scan.cli import app as cli

    spent: Dict[str, float] = {}

    def timed(name: str, f: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return f(*a, **k)
            finally:
                spent[name] = spent.get(name, 0.0) + time.perf_counter() - t

        return run

    saved = (pbtxt_scan.find_fp, pbtxt_scan.find_bp, _report._drawings, _report._page)
    pbtxt_scan.find_fp, pbtxt_scan.find_bp = timed("fp", saved[0]), timed("bp", saved[1])
    _report._drawings, _report._page = timed("drawings", saved[2]), timed("page", saved[3])
    t = time.perf_counter()
    try:
        cli(["report", path, "-o", out])
    except SystemExit:
        pass
    finally:
        pbtxt_scan.find_fp, pbtxt_scan.find_bp, _report._drawings, _report._page = saved
    whole = time.perf_counter() - t
    print("report: %s, the command %.2f s (beyond fp and bp: %.2f s)" % (
        ", ".join("%s %.2f s" % kv for kv in spent.items()), whole, whole - spent.get("fp", 0) - spent.get("bp", 0)))


def _commands(path: str, rounds: int, cache: bool, fp: Optional[str], bp: Optional[str]) -> None:
    import os
    import shutil
    import sys
    import tempfile

    from ._measure import run_once

    if fp is None or bp is None:
        import pbtxt_scan

        with pbtxt_scan.GraphFile.open(path) as g:
            fp = fp or pbtxt_scan.find_fp(g).point.name
            bp = bp or pbtxt_scan.find_bp(g).point.name
    tool = [sys.executable, "-m", "pbtxt_scan"]
    work = tempfile.mkdtemp(prefix="pbtxt-bench-hood-")
    count = os.path.join(work, "count.txt")
    runs = [
        ("fp", tool + ["fp", path]),
        # (bp's name, bare, as show searches it; to a file: to /dev/null GNU grep stops at its first hit)
        ("grep -c", ["sh", "-c", "LC_ALL=C grep -a -c -F -e '%s' '%s' > '%s'" % (bp, path, count)]),
        ("show FP -C 2", tool + ["show", path, fp, "--context", "2"]),
        ("show BP -C 2", tool + ["show", path, bp, "--context", "2"]),
    ]
    got: Dict[str, List[Dict[str, Any]]] = {k: [] for k, _ in runs}
    saved = os.environ.get("PBTXT_SCAN_CACHE_DIR")
    if not cache:
        os.environ["PBTXT_SCAN_CACHE_DIR"] = os.path.join(work, "cache")
    try:
        for k in range(rounds):
            for key, argv in runs:
                if not cache:
                    shutil.rmtree(os.path.join(work, "cache"), ignore_errors=True)
                r = run_once(argv, False, None)
                if r["rc"] != 0:
                    raise SystemExit("%s failed (exit %s): %s" % (key, r["rc"], r["stderr"].strip()[-300:]))
                got[key].append(r)
            print("round %d: %s" % (k + 1, ", ".join("%s %.2f s" % (key, got[key][-1]["wall"]) for key, _ in runs)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if saved is None:
            os.environ.pop("PBTXT_SCAN_CACHE_DIR", None)
        else:
            os.environ["PBTXT_SCAN_CACHE_DIR"] = saved
    med = {key: statistics.median(r["wall"] for r in rs) for key, rs in got.items()}
    for key, rs in got.items():
        peak = max((r["rss_mb"] or 0) for r in rs)
        print("%-13s median %.2f s (%s), peak RSS %.0f MB" % (key, med[key], " ".join("%.2f" % r["wall"] for r in rs), peak))
    budget = med["fp"] + med["grep -c"]
    print("fp + one byte search: %.2f s; show FP -C 2 / that %.2f, show BP -C 2 / that %.2f (%s cache)" % (
        budget, med["show FP -C 2"] / budget, med["show BP -C 2"] / budget, "with the" if cache else "without a"))


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.hood", description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=(
            "show --context 2 timed as a user runs it, on a generated graph (text, then binary):\n"
            "  python -m benchmarks.generate dense --size 100MB -o /tmp/g.pbtxt\n"
            "  python -m benchmarks.hood /tmp/g.pbtxt --commands --no-cache --rounds 3\n"
            "  python -m benchmarks.generate binary --size 100MB -o /tmp/g.pb\n"
            "  python -m benchmarks.hood /tmp/g.pb --commands --no-cache --rounds 3\n"
            "(fp, one grep -c and show FP|BP --context 2, each in its own process, interleaved: medians, peak RSS)"
        ),
    )
    ap.add_argument("file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--report", metavar="OUT.html", help="run the report command instead, its phases timed")
    ap.add_argument("--commands", action="store_true", help="time fp, one grep -c and show --context 2 as commands, side by side")
    ap.add_argument("--no-cache", action="store_true", help="with --commands: each command with an empty cache folder")
    ap.add_argument("--fp", help="with --commands: the fp name (default: found)")
    ap.add_argument("--bp", help="with --commands: the bp name (default: found)")
    a = ap.parse_args(argv)
    if a.commands:
        _commands(a.file, a.rounds, not a.no_cache, a.fp, a.bp)
        return
    if a.report:
        _report_command(a.file, a.report)
        return
    rows: List[Dict[str, float]] = []
    for k in range(a.rounds):
        rows.append(_round(a.file))
        print("round %d: %s" % (k + 1, ", ".join("%s %.2f s" % kv for kv in rows[-1].items())), flush=True)
    print("median: %s" % ", ".join("%s %.2f s" % (key, statistics.median(r[key] for r in rows)) for key in rows[0]))


if __name__ == "__main__":
    main()
