"""The report of a run: the Markdown table, the goal ratios, and the results file
``benchmarks/results/<date>-<commit>.md`` with the machine and the commit it ran on."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from typing import Any, Dict, List, Tuple


def goal_ratios(rows: List[Dict[str, Any]], startup: Dict[str, Any]) -> List[Tuple[str, str, Any]]:
    def find(kind, tool):
        rs = [r for r in rows if r["kind"] == kind and r["tool"] == tool and "wall" in r]
        rs.sort(key=lambda r: r["bytes"])
        return rs

    out = []
    dense_bp = find("dense", "bp") or find("const", "bp") or find("ge", "bp")
    if len(dense_bp) >= 2:
        lo, hi = dense_bp[0], dense_bp[-1]
        out.append(("bp(largest)/bp(smallest) [%s %s vs %s]" % (lo["kind"], hi["size"], lo["size"]),
                    "%.2fx time for %.1fx bytes" % (hi["wall"] / lo["wall"], hi["bytes"] / lo["bytes"]),
                    {"time_ratio": hi["wall"] / lo["wall"], "bytes_ratio": hi["bytes"] / lo["bytes"]}))
    dense_fp = find("dense", "fp")
    if len(dense_fp) >= 2:
        lo, hi = dense_fp[0], dense_fp[-1]
        out.append(("fp(largest dense)/fp(smallest dense) [%s vs %s]" % (hi["size"], lo["size"]),
                    "%.2fx time for %.1fx bytes" % (hi["wall"] / lo["wall"], hi["bytes"] / lo["bytes"]),
                    {"time_ratio": hi["wall"] / lo["wall"], "bytes_ratio": hi["bytes"] / lo["bytes"]}))
    cfp, cgrep = find("const", "fp"), find("const", "grep -c")
    if cfp and cgrep:
        a, b = cfp[-1], cgrep[-1]
        pct = 100.0 * a["mb_per_s"] / b["mb_per_s"]
        out.append(("fp on const-heavy vs grep -c throughput [%s]" % a["size"],
                    "%.0f%% (%.0f vs %.0f MB/s)" % (pct, a["mb_per_s"], b["mb_per_s"]),
                    {"percent": pct, "fp_mb_per_s": a["mb_per_s"], "grep_mb_per_s": b["mb_per_s"]}))
    if startup:
        s = startup
        out.append(("pbtxt-scan --version start-up",
                    "%.0f ms (python -c pass: %.0f ms), %.1f MB RSS" % (
                        s["wall"] * 1000, s["baseline"] * 1000, s["rss_mb"] or 0),
                    {"seconds": s["wall"], "python_baseline_seconds": s["baseline"],
                     "rss_mb": s["rss_mb"], "argv": s["argv"]}))
    return out


def _fmt(v: Any, f: str) -> str:
    return "-" if v is None else f % v


def markdown(rows: List[Dict[str, Any]], ratios, notes: List[str], args) -> str:
    L = ["## pbtxt-scan benchmark (median of %d, MB = 2^20 bytes)" % args.repeat, "",
         "| kind | size | bytes | tool | median s | MB/s | peak RSS MB | x best | x naive | correct |",
         "|---|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        tool = r["tool"] if r["category"] == "pbtxt-scan" else "peer: " + r["tool"]
        if "skipped" in r:
            L.append("| %s | %s | %s | %s | - | - | - | - | - | %s |" % (
                r["kind"], r["size"], format(r["bytes"], ","), tool, r["skipped"]))
            continue
        corr = r.get("correct", "-")
        if r.get("rc") not in (0, 1):
            corr = "%s (rc=%s)" % (corr, r.get("rc"))
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["kind"], r["size"], format(r["bytes"], ","), tool, _fmt(r["wall"], "%.3f"),
            _fmt(r.get("mb_per_s"), "%.0f"), _fmt(r.get("rss_mb"), "%.0f"),
            _fmt(r.get("x_best"), "%.1f"), _fmt(r.get("x_naive"), "%.2f"), corr))
    L += ["", "### Goal ratios", "", "| ratio | value |", "|---|---|"]
    for name, text, _ in ratios:
        L.append("| %s | %s |" % (name, text))
    if notes:
        L += ["", "Notes:", ""] + ["* " + n for n in notes]
    return "\n".join(L) + "\n"


def _git(root: str, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", root] + list(args), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.decode("utf-8", "replace").strip() if out.returncode == 0 else ""


def commit_info(root: str) -> Dict[str, Any]:
    """The commit the run measured: short and full hash, subject, and whether the tree differed."""
    full = _git(root, "rev-parse", "HEAD")
    dirty = bool(_git(root, "status", "--porcelain", "--untracked-files=no"))
    return {"short": full[:7] or "nogit", "full": full or "-", "subject": _git(root, "log", "-1", "--format=%s"),
            "dirty": dirty}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _mem_total_gb() -> str:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return "%.1f GB" % (int(line.split()[1]) / float(1 << 20))
    except OSError:
        pass
    return "?"


def machine_info() -> Dict[str, str]:
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = "%.2f %.2f %.2f" % os.getloadavg() if hasattr(os, "getloadavg") else "?"
    return {"cpu": _cpu_model(), "cores": "%s (%s usable)" % (os.cpu_count(), usable), "memory": _mem_total_gb(),
            "os": platform.platform(), "python": "%s (%s)" % (platform.python_version(), sys.executable),
            "load": load}


def write_results(directory: str, table: str, commit: Dict[str, Any], machine: Dict[str, str],
                  argv: List[str]) -> str:
    """Write ``<directory>/<date>-<commit>.md``: when, what, where, and the run's table; return its path."""
    date = time.strftime("%Y-%m-%d")
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "%s-%s.md" % (date, commit["short"]))
    head = ["# Benchmark run %s, commit %s" % (date, commit["short"]), "",
            "- commit: `%s` %s%s" % (commit["full"], commit["subject"],
                                     " (with uncommitted changes)" if commit["dirty"] else ""),
            "- started: %s" % time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "- command: `python -m benchmarks.run %s`" % " ".join(argv),
            "- machine: %s, %s cores, %s RAM; %s" % (machine["cpu"], machine["cores"], machine["memory"],
                                                      machine["os"]),
            "- Python: %s" % machine["python"],
            "- load average at the start: %s" % machine["load"], "", ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(head) + table)
    return path
