"""Benchmark driver: pbtxt-scan commands against peers on generated inputs, side by side in one run.

Usage::

    python -m benchmarks.run                                  # 3MB,100MB x dense,const,ge,feed,queue,queues, 3 repeats
    python -m benchmarks.run --sizes 3MB,100MB,1GB,2GB --kinds dense,const,ge --repeat 3
    python -m benchmarks.run --sizes 3MB,20MB --repeat 1 --json > bench.json

Inputs come from ``python -m benchmarks.generate`` and are reused by kind + size + seed in
``$PBTXT_SCAN_BENCH_DIR`` (default ``/tmp/pbtxt-scan-bench``); the generator metadata is kept next
to each file as ``<file>.meta.json``. Every command and every peer (``benchmarks/peers/``) runs in
its own subprocess under ``/usr/bin/time -v`` (``_measure``); the median over ``--repeat`` runs is
reported, each answer checked against the generator's (``_check``). The table goes to stdout and,
with the machine and the commit, to ``benchmarks/results/<date>-<commit>.md`` (``_report``).

Standard library only (the protobuf peer needs ``benchmarks/requirements.txt``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence

from benchmarks._check import correctness, resolve_names
from benchmarks._measure import TIME_BIN, measure
from benchmarks._report import commit_info, goal_ratios, machine_info, markdown, write_results
from benchmarks.generate import KINDS, default_output_path, parse_size

MB = float(1 << 20)
FULL_PARSE_LIMIT = 100 << 20  # Lark / protobuf full parses only up to 100 MB
PY = sys.executable
HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


class Job(NamedTuple):
    tool: str
    category: str  # "pbtxt-scan" or "peer"
    argv: Optional[List[str]]
    capture: bool
    skip: Optional[str]  # why it is not run, or None


def have_protobuf() -> bool:
    r = subprocess.run([PY, "-c", "import google.protobuf"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return r.returncode == 0


def ensure_input(kind: str, size: str, seed: int, log: Callable[[str], None]) -> Dict[str, Any]:
    """Generate (or reuse by kind + size + seed) one input; return the generator metadata."""
    nbytes = parse_size(size)
    path = os.path.abspath(default_output_path(kind, nbytes, seed))
    meta_path = path + ".meta.json"
    if os.path.exists(path) and os.path.exists(meta_path):
        try:
            with open(meta_path) as f:
                meta = json.load(f)
            if meta.get("bytes") == os.path.getsize(path) and meta.get("seed") == seed:
                meta["reused"] = True
                return meta
        except (OSError, ValueError):
            pass
    os.makedirs(os.path.dirname(path), exist_ok=True)
    log("generating %s %s (seed %d) -> %s" % (kind, size, seed, path))
    out = subprocess.run([PY, "-m", "benchmarks.generate", kind, "--size", str(nbytes),
                          "--seed", str(seed), "-o", path, "--json"],
                         stdout=subprocess.PIPE, check=True)
    meta = json.loads(out.stdout)
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
    meta["reused"] = False
    return meta


def cli_prefix() -> List[str]:
    return [PY, "-m", "pbtxt_scan"]


def cli_commands() -> List[str]:
    out = subprocess.run(cli_prefix() + ["--help"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT).stdout.decode("utf-8", "replace")
    cmds = []
    in_cmds = False
    for line in out.splitlines():
        if line.strip() == "Commands:":
            in_cmds = True
            continue
        if in_cmds:
            m = re.match(r"^  (\S+)\s", line + " ")
            if m and not line.startswith("   "):
                cmds.append(m.group(1))
            elif line.strip() and not line.startswith(" "):
                in_cmds = False
    return cmds


def peer(name: str, path: str) -> List[str]:
    return [PY, "-m", "benchmarks.peers." + name, path]


def jobs_for(meta: Dict[str, Any], commands: List[str], args: argparse.Namespace) -> List[Job]:
    """What runs on one input: every pbtxt-scan command, then the peers."""
    path = meta["path"]
    kind = meta["kind"]
    jobs = []
    for c in ("fp", "bp", "points", "stats", "nodes", "check"):
        if c not in commands:
            jobs.append(Job(c, "pbtxt-scan", None, False, "no such command"))
            continue
        argv = cli_prefix() + [c] + (["--json"] if c == "points" else []) + [path]
        jobs.append(Job(c, "pbtxt-scan", argv, c != "nodes", None))
    if kind == "ge":
        if "resolve" in commands:
            names = resolve_names(meta)
            argv = cli_prefix() + ["resolve"] + names + ["--ge", path]
            jobs.append(Job("resolve", "pbtxt-scan", argv, True, None if names else "no names"))
        else:
            jobs.append(Job("resolve", "pbtxt-scan", None, False, "no such command"))
    jobs.append(Job("grep -c", "peer", ["grep", "-c", "^node {", path], True, None))
    jobs.append(Job("naive", "peer", peer("naive", path), True, None))
    big = meta["bytes"] > args.full_parse_max
    limit = "%dMB" % (args.full_parse_max >> 20)
    jobs.append(Job("lark", "peer", peer("lark_parse", path), True,
                    "skipped: > %s (--full-parse-max)" % limit if big else None))
    if kind == "ge":
        pb_skip = "skipped: GraphDef types only (no ge.proto)"
    elif not args.protobuf:
        pb_skip = "skipped: protobuf not installed"
    elif big:
        pb_skip = "skipped: > %s (--full-parse-max)" % limit
    else:
        pb_skip = None
    jobs.append(Job("protobuf", "peer", peer("protobuf_text", path), True, pb_skip))
    return jobs


def bench_input(meta: Dict[str, Any], commands: List[str], args: argparse.Namespace,
                log: Callable[[str], None]) -> List[Dict[str, Any]]:
    kind = meta["kind"]
    rows = []
    for job in jobs_for(meta, commands, args):
        row = {"kind": kind, "size": meta["size_label"], "bytes": meta["bytes"], "tool": job.tool,
               "category": job.category}
        if job.skip or job.argv is None:
            row.update({"skipped": job.skip or "skipped"})
            rows.append(row)
            continue
        log("  %s %s: %s" % (kind, meta["size_label"], job.tool))
        res = measure(job.argv, args.repeat, job.capture, args.timeout)
        row.update({"wall": res["wall"], "walls": res["walls"], "time_v_wall": res["time_v_wall"],
                    "rss_mb": res["rss_mb"], "rc": res["rc"],
                    "mb_per_s": (meta["bytes"] / MB / res["wall"]) if res["wall"] > 0 else None,
                    "correct": correctness(job.tool, res, meta)})
        if res["rc"] not in (0, 1) and res["stderr"]:
            row["stderr"] = res["stderr"].strip().splitlines()[-1:]
        rows.append(row)
    ok = [r for r in rows if "wall" in r and r.get("rc") in (0, 1)]
    best = min((r["wall"] for r in ok), default=None)
    naive = next((r["wall"] for r in ok if r["tool"] == "naive"), None)
    for r in rows:
        if "wall" in r and best:
            r["x_best"] = r["wall"] / best
        if "wall" in r and naive:
            r["x_naive"] = r["wall"] / naive
    return rows


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                description="Benchmark pbtxt-scan commands against peers.")
    p.add_argument("--sizes", default="3MB,100MB", help="comma list, e.g. 3MB,100MB,1GB,2GB")
    p.add_argument("--full-parse-max", default=str(FULL_PARSE_LIMIT), type=parse_size,
                   help="largest input the whole-file Lark and protobuf peers parse (slow: ~0.3-1 MB/s)")
    p.add_argument("--kinds", default=",".join(KINDS), help="comma list of %s" % ",".join(KINDS))
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (median reported)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=3600.0, help="per-run timeout in seconds")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("--results", default=RESULTS,
                   help="folder of the results file <date>-<commit>.md (default benchmarks/results)")
    p.add_argument("--no-results", action="store_true", help="write no results file")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    return p


def _notes(protobuf: bool, commands: List[str]) -> List[str]:
    notes = []
    if not os.path.exists(TIME_BIN):
        notes.append("%s missing: peak RSS from getrusage(RUSAGE_CHILDREN) (max so far, an upper "
                     "bound)" % TIME_BIN)
    if not protobuf:
        notes.append("protobuf peer skipped: `import google.protobuf` failed "
                     "(pip install -r benchmarks/requirements.txt)")
    missing = [c for c in ("fp", "bp", "points", "stats", "nodes", "check", "resolve")
               if c not in commands]
    if missing:
        notes.append("CLI lacks: %s (skipped)" % ", ".join(missing))
    notes.append("grep -c '^node {' is the I/O reference; naive = whole file in memory + regex (x naive: "
                 "time / its time on the same input); lark = pbtxt_scan.parse_text of the whole file "
                 "(<= --full-parse-max); fp/bp/resolve are checked against the generator's expected answers")
    return notes


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = _parser()
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be >= 1")
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    for k in kinds:
        if k not in KINDS:
            p.error("unknown kind %r (choose from %s)" % (k, ", ".join(KINDS)))
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]

    def log(msg: str) -> None:
        if not args.quiet:
            print(msg, file=sys.stderr, flush=True)

    machine = machine_info()  # the load before the run
    args.protobuf = have_protobuf()
    commands = cli_commands()
    notes = _notes(args.protobuf, commands)
    rows: List[Dict[str, Any]] = []
    inputs = []
    for kind in kinds:
        for size in sizes:
            meta = ensure_input(kind, size, args.seed, log)
            meta["size_label"] = size
            inputs.append({k: meta[k] for k in ("kind", "path", "bytes", "lines", "nodes", "seed",
                                                "expected", "reused") if k in meta})
            rows.extend(bench_input(meta, commands, args, log))

    log("start-up: --version")
    exe = shutil.which("pbtxt-scan")
    s_argv = [exe, "--version"] if exe else cli_prefix() + ["--version"]
    rep = max(args.repeat, 3)
    s = measure(s_argv, rep, True, 60)
    base = measure([PY, "-c", "pass"], rep, True, 60)
    startup = {"argv": s_argv, "wall": s["wall"], "rss_mb": s["rss_mb"], "baseline": base["wall"]}
    ratios = goal_ratios(rows, startup)
    table = markdown(rows, ratios, notes, args)
    if not args.no_results:
        path = write_results(args.results, table, commit_info(os.path.dirname(HERE)), machine, argv)
        log("results: %s" % path)
    if args.json:
        json.dump({"repeat": args.repeat, "sizes": sizes, "kinds": kinds, "inputs": inputs,
                   "commands": commands, "results": rows,
                   "ratios": [dict(name=n, text=t, **d) for n, t, d in ratios],
                   "notes": notes}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
