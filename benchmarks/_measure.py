"""Running one command in its own subprocess: wall time around it, peak RSS from ``/usr/bin/time -v``.

Wall time is ``time.perf_counter`` around the subprocess (``time -v`` has 10 ms resolution; its
"Elapsed (wall clock)" value is kept as ``time_v_wall``). Without ``/usr/bin/time``, peak RSS falls
back to ``resource.getrusage(RUSAGE_CHILDREN)``, the maximum over all children so far (an upper
bound). ``measure`` reports the median of the runs.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
import time
from typing import Any, Dict, List, Optional

TIME_BIN = "/usr/bin/time"


def _parse_elapsed(s: str) -> float:
    parts = [float(p) for p in s.strip().split(":")]
    t = 0.0
    for p in parts:
        t = t * 60 + p
    return t


def run_once(argv: List[str], capture: bool, timeout: Optional[float]) -> Dict[str, Any]:
    """Run argv once in its own subprocess; return wall, rss_mb, rc, stdout."""
    use_time = os.path.exists(TIME_BIN)
    tfile = None
    full = list(argv)
    if use_time:
        fd, tfile = tempfile.mkstemp(prefix="pbtxt-bench-time-")
        os.close(fd)
        full = [TIME_BIN, "-v", "-o", tfile] + full
    else:
        import resource
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    try:
        p = subprocess.run(full, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=timeout)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = None, b"", b"timeout"
    wall = time.perf_counter() - t0
    res = {"wall": wall, "rc": rc, "stdout": (out or b"").decode("utf-8", "replace"),
           "stderr": (err or b"").decode("utf-8", "replace")[-2000:], "rss_mb": None,
           "time_v_wall": None}
    if use_time:
        try:
            with open(tfile) as f:
                text = f.read()
        finally:
            os.unlink(tfile)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
        if m:
            res["rss_mb"] = int(m.group(1)) / 1024.0
        m = re.search(r"Elapsed \(wall clock\) time.*?: ([\d:.]+)", text)
        if m:
            res["time_v_wall"] = _parse_elapsed(m.group(1))
        # time -v reports the child's exit status as its own
    else:
        import resource
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # ru_maxrss of RUSAGE_CHILDREN is the max over all waited-for children (KiB on Linux):
        # exact when this child set a new maximum, otherwise only an upper bound.
        res["rss_mb"] = after / 1024.0
        res["rss_upper_bound"] = after <= before
    return res


def measure(argv: List[str], repeat: int, capture: bool, timeout: Optional[float]) -> Dict[str, Any]:
    runs = [run_once(argv, capture, timeout) for _ in range(repeat)]
    walls = [r["wall"] for r in runs]
    rss = [r["rss_mb"] for r in runs if r["rss_mb"] is not None]
    tv = [r["time_v_wall"] for r in runs if r["time_v_wall"] is not None]
    return {"argv": argv, "walls": walls, "wall": statistics.median(walls),
            "time_v_wall": statistics.median(tv) if tv else None,
            "rss_mb": max(rss) if rss else None, "rc": runs[-1]["rc"],
            "rcs": [r["rc"] for r in runs],
            "stdout": runs[-1]["stdout"], "stderr": runs[-1]["stderr"]}

