"""Benchmark runner: pbtxt-scan commands against peers on generated inputs.

Usage::

    python -m benchmarks.run                                  # 3MB,100MB x dense,const,ge, 3 repeats
    python -m benchmarks.run --sizes 3MB,100MB,1GB,2GB --kinds dense,const,ge --repeat 3
    python -m benchmarks.run --sizes 3MB,20MB --repeat 1 --json > bench.json

Inputs come from ``benchmarks.gen_graph`` and are reused by name + size + seed in
``$PBTXT_SCAN_BENCH_DIR`` (default ``/tmp/pbtxt-scan-bench``); the generator metadata is kept
next to each file as ``<file>.meta.json``.  Every command and every peer runs in its own
subprocess under ``/usr/bin/time -v`` (peak RSS from "Maximum resident set size"); when
``/usr/bin/time`` is missing, peak RSS falls back to ``resource.getrusage(RUSAGE_CHILDREN)``.
Wall time is measured around the subprocess with ``time.perf_counter`` (``time -v`` only has
10 ms resolution; its "Elapsed (wall clock)" value is kept in the JSON as ``time_v_wall``).
The median over ``--repeat`` runs is reported.

Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from benchmarks.gen_graph import KINDS, default_output_path, parse_size

MB = float(1 << 20)
TIME_BIN = "/usr/bin/time"
FULL_PARSE_LIMIT = 100 << 20  # Lark / protobuf full parses only up to 100 MB
PY = sys.executable

# --------------------------------------------------------------------------------------------
# peers
# --------------------------------------------------------------------------------------------

# Shared fp/bp heuristic for the naive and protobuf peers: first compute op that is not part of
# an initializer / input pipeline / gradient; last op under gradients/ that is not a pass-through.
_HEURISTIC = r'''
COMPUTE = {"MatMul", "MatMulV2", "BatchMatMul", "BatchMatMulV2", "Conv2D", "Conv3D",
           "DepthwiseConv2dNative", "Conv2DBackpropInput", "Einsum"}
SKIP = ("Initializer/", "gradients/", "IteratorGetNext", "normalize_element", "save/", "input")
PASS = {"Identity", "NoOp", "Const"}
def fp_bp(pairs):
    fp = bp = None
    for name, op in pairs:
        if fp is None and op in COMPUTE and not any(s in name for s in SKIP):
            fp = name
        if name.startswith("gradients/") and op not in PASS:
            bp = name
    return fp, bp
'''

# naive: read everything, regex the (name, op/type) pairs of every node / GE op.
NAIVE = _HEURISTIC + r'''
import re, sys
data = open(sys.argv[1], encoding="utf-8", errors="replace").read()
pairs = re.findall(r'^ *(?:node|op) \{\n *name: "([^"]*)"\n *(?:op|type): "([^"]*)"', data, re.M)
fp, bp = fp_bp(pairs)
print(fp); print(bp)
'''

LARK = r'''
import sys, pbtxt_scan
pbtxt_scan.parse_text(open(sys.argv[1], encoding="utf-8").read())
print("parsed")
'''

# protobuf text_format into a GraphDef whose types are built from descriptor_pb2 (no TensorFlow).
PROTOBUF = _HEURISTIC + r'''
import sys
from google.protobuf import descriptor_pb2, descriptor_pool, text_format
try:
    from google.protobuf import message_factory
    def get_cls(desc):
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(desc)
        return message_factory.MessageFactory().GetPrototype(desc)
except ImportError:  # pragma: no cover
    raise
F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED
fd = descriptor_pb2.FileDescriptorProto(name="bench_tf_graph.proto", package="tensorflow", syntax="proto3")
dt = fd.enum_type.add(name="DataType")
base = ["INVALID", "FLOAT", "DOUBLE", "INT32", "UINT8", "INT16", "INT8", "STRING", "COMPLEX64",
        "INT64", "BOOL", "QINT8", "QUINT8", "QINT32", "BFLOAT16", "QINT16", "QUINT16", "UINT16",
        "COMPLEX128", "HALF", "RESOURCE", "VARIANT", "UINT32", "UINT64", "FLOAT8_E5M2",
        "FLOAT8_E4M3FN", "INT4", "UINT4"]
for i, n in enumerate(base):
    dt.value.add(name="DT_" + n, number=i)
for i, n in enumerate(base[1:], 1):
    dt.value.add(name="DT_%s_REF" % n, number=100 + i)
def msg(parent, name):
    return parent.add(name=name)
def fld(m, name, num, typ, label=OPT, type_name=None, packed=None):
    f = m.field.add(name=name, number=num, type=typ, label=label)
    if type_name:
        f.type_name = type_name
    if packed is not None:
        f.options.packed = packed
    return f
def map_field(m, name, num, value_type_name):
    entry = m.nested_type.add(name=name[0].upper() + name[1:] + "Entry")
    entry.options.map_entry = True
    fld(entry, "key", 1, F.TYPE_STRING)
    fld(entry, "value", 2, F.TYPE_MESSAGE, type_name=value_type_name)
    fld(m, name, num, F.TYPE_MESSAGE, REP, ".tensorflow.%s.%s" % (m.name, entry.name))
T = ".tensorflow."
shp = msg(fd.message_type, "TensorShapeProto")
dim = shp.nested_type.add(name="Dim")
fld(dim, "size", 1, F.TYPE_INT64); fld(dim, "name", 2, F.TYPE_STRING)
fld(shp, "dim", 2, F.TYPE_MESSAGE, REP, T + "TensorShapeProto.Dim")
fld(shp, "unknown_rank", 3, F.TYPE_BOOL)
ten = msg(fd.message_type, "TensorProto")
fld(ten, "dtype", 1, F.TYPE_ENUM, type_name=T + "DataType")
fld(ten, "tensor_shape", 2, F.TYPE_MESSAGE, type_name=T + "TensorShapeProto")
fld(ten, "version_number", 3, F.TYPE_INT32)
fld(ten, "tensor_content", 4, F.TYPE_BYTES)
fld(ten, "float_val", 5, F.TYPE_FLOAT, REP, packed=True)
fld(ten, "double_val", 6, F.TYPE_DOUBLE, REP, packed=True)
fld(ten, "int_val", 7, F.TYPE_INT32, REP, packed=True)
fld(ten, "string_val", 8, F.TYPE_BYTES, REP)
fld(ten, "int64_val", 10, F.TYPE_INT64, REP, packed=True)
fld(ten, "bool_val", 11, F.TYPE_BOOL, REP, packed=True)
fld(ten, "half_val", 13, F.TYPE_INT32, REP, packed=True)
nal = msg(fd.message_type, "NameAttrList")
fld(nal, "name", 1, F.TYPE_STRING)
map_field(nal, "attr", 2, T + "AttrValue")
av = msg(fd.message_type, "AttrValue")
lv = av.nested_type.add(name="ListValue")
fld(lv, "s", 2, F.TYPE_BYTES, REP); fld(lv, "i", 3, F.TYPE_INT64, REP, packed=True)
fld(lv, "f", 4, F.TYPE_FLOAT, REP, packed=True); fld(lv, "b", 5, F.TYPE_BOOL, REP, packed=True)
fld(lv, "type", 6, F.TYPE_ENUM, REP, T + "DataType", packed=True)
fld(lv, "shape", 7, F.TYPE_MESSAGE, REP, T + "TensorShapeProto")
fld(lv, "tensor", 8, F.TYPE_MESSAGE, REP, T + "TensorProto")
fld(lv, "func", 9, F.TYPE_MESSAGE, REP, T + "NameAttrList")
av.oneof_decl.add(name="value")
for name, num, typ, tn in (("list", 1, F.TYPE_MESSAGE, T + "AttrValue.ListValue"),
                           ("s", 2, F.TYPE_BYTES, None), ("i", 3, F.TYPE_INT64, None),
                           ("f", 4, F.TYPE_FLOAT, None), ("b", 5, F.TYPE_BOOL, None),
                           ("type", 6, F.TYPE_ENUM, T + "DataType"),
                           ("shape", 7, F.TYPE_MESSAGE, T + "TensorShapeProto"),
                           ("tensor", 8, F.TYPE_MESSAGE, T + "TensorProto"),
                           ("placeholder", 9, F.TYPE_STRING, None),
                           ("func", 10, F.TYPE_MESSAGE, T + "NameAttrList")):
    fld(av, name, num, typ, type_name=tn).oneof_index = 0
nd = msg(fd.message_type, "NodeDef")
fld(nd, "name", 1, F.TYPE_STRING); fld(nd, "op", 2, F.TYPE_STRING)
fld(nd, "input", 3, F.TYPE_STRING, REP); fld(nd, "device", 4, F.TYPE_STRING)
map_field(nd, "attr", 5, T + "AttrValue")
vd = msg(fd.message_type, "VersionDef")
fld(vd, "producer", 1, F.TYPE_INT32); fld(vd, "min_consumer", 2, F.TYPE_INT32)
fld(vd, "bad_consumers", 3, F.TYPE_INT32, REP, packed=True)
gd = msg(fd.message_type, "GraphDef")
fld(gd, "node", 1, F.TYPE_MESSAGE, REP, T + "NodeDef")
fld(gd, "version", 3, F.TYPE_INT32)
fld(gd, "versions", 4, F.TYPE_MESSAGE, type_name=T + "VersionDef")
pool = descriptor_pool.DescriptorPool()
pool.Add(fd)
GraphDef = get_cls(pool.FindMessageTypeByName("tensorflow.GraphDef"))
g = GraphDef()
# `library { ... }` (FunctionDefLibrary) is not modelled: skipped as an unknown field.
text_format.Parse(open(sys.argv[1], encoding="utf-8").read(), g, allow_unknown_field=True)
fp, bp = fp_bp((n.name, n.op) for n in g.node)
print(fp); print(bp)
'''


def have_protobuf() -> bool:
    r = subprocess.run([PY, "-c", "import google.protobuf"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return r.returncode == 0


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------


def ensure_input(kind: str, size: str, seed: int, log) -> Dict[str, Any]:
    """Generate (or reuse by kind + size + seed) one input; return the generator metadata."""
    nbytes = parse_size(size)
    path = default_output_path(kind, nbytes, seed)
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
    out = subprocess.run([PY, "-m", "benchmarks.gen_graph", kind, "--size", str(nbytes),
                          "--seed", str(seed), "-o", path, "--json"],
                         stdout=subprocess.PIPE, check=True)
    meta = json.loads(out.stdout)
    with open(meta_path, "w") as f:
        json.dump(meta, f, indent=2)
    meta["reused"] = False
    return meta


# --------------------------------------------------------------------------------------------
# measuring
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# the CLI under test
# --------------------------------------------------------------------------------------------


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


def _lines(s: str) -> List[str]:
    return [x.strip() for x in s.strip().splitlines() if x.strip()]


def check_fp_bp(answer: Dict[str, Optional[str]], meta: Dict[str, Any]) -> str:
    """'ok' / 'WRONG ...' comparing answered fp/bp with the generator's expected ones."""
    e = meta["expected"]
    want = {"fp": e.get("fp", e.get("manual_fp")), "bp": e.get("bp", e.get("manual_bp"))}
    alt = {"fp": e.get("auto_fp"), "bp": e.get("auto_bp")}
    bad = []
    notes = []
    for k, v in answer.items():
        if v == want[k]:
            continue
        if alt.get(k) and v == alt[k]:
            notes.append("%s=auto" % k)
            continue
        bad.append("%s=%s" % (k, v))
    if bad:
        return "WRONG " + ", ".join(bad)
    return "ok" + (" (%s)" % ", ".join(notes) if notes else "")


def correctness(tool: str, res: Dict[str, Any], meta: Dict[str, Any]) -> str:
    if res["rc"] is None:
        return "timeout"
    out = res["stdout"]
    if res["rc"] == 1 and tool in ("fp", "bp", "points"):
        return "not found (rc=1)"
    if tool in ("stats", "check"):
        if res["rc"] != 0:
            return "rc=%s" % res["rc"]
        pat = r"\bnodes\s+%d\b|\b%d nodes\b" % (meta.get("nodes", -1), meta.get("nodes", -1))
        return "count ok" if re.search(pat, out) else "count differs"
    if tool in ("fp", "bp"):
        if res["rc"] != 0:
            return "rc=%s" % res["rc"]
        ls = _lines(out)
        return check_fp_bp({tool: ls[0] if ls else None}, meta)
    if tool == "points":
        if res["rc"] != 0:
            return "rc=%s" % res["rc"]
        try:
            j = json.loads(out)
            return check_fp_bp({"fp": (j.get("fp") or {}).get("name"),
                                "bp": (j.get("bp") or {}).get("name")}, meta)
        except ValueError:
            return "unparsed"
    if tool in ("naive", "protobuf"):
        if res["rc"] != 0:
            return "rc=%s" % res["rc"]
        ls = out.strip().splitlines()
        ls = (ls + ["None", "None"])[:2]
        return check_fp_bp({"fp": ls[0].strip(), "bp": ls[1].strip()}, meta)
    if tool == "resolve":
        if res["rc"] not in (0, 1):
            return "rc=%s" % res["rc"]
        exp = [r for r in meta["expected"].get("resolve", []) if _resolve_target(r)]
        missing = [_resolve_target(r) for r in exp if _resolve_target(r) not in out]
        return "ok" if not missing else "missing %d/%d" % (len(missing), len(exp))
    if tool == "grep -c":
        if meta["kind"] == "ge":
            return "-"
        n = out.strip()
        return "count ok" if n == str(meta.get("nodes")) else "count %s" % n
    return "rc=%s" % res["rc"] if res["rc"] not in (0,) else "-"


def _resolve_target(entry: Any) -> Optional[str]:
    if isinstance(entry, dict):
        for k in ("ge", "expected", "op", "ge_op"):
            if k in entry:
                return entry[k]
        return None
    if isinstance(entry, (list, tuple)) and len(entry) >= 2:
        return entry[1]
    return None


def _resolve_names(meta: Dict[str, Any]) -> List[str]:
    names = []
    for entry in meta["expected"].get("resolve", []):
        if isinstance(entry, dict):
            n = entry.get("tf") or entry.get("name")
        elif isinstance(entry, (list, tuple)) and entry:
            n = entry[0]
        else:
            n = None
        if n:
            names.append(n)
    return names


# --------------------------------------------------------------------------------------------
# main loop
# --------------------------------------------------------------------------------------------


def bench_input(meta: Dict[str, Any], commands: List[str], args, log) -> List[Dict[str, Any]]:
    path = meta["path"]
    kind = meta["kind"]
    rows = []
    jobs = []  # (tool, category, argv, capture, skip_reason)
    for c in ("fp", "bp", "points", "stats", "nodes", "check"):
        if c not in commands:
            jobs.append((c, "pbtxt-scan", None, False, "no such command"))
            continue
        argv = cli_prefix() + [c] + (["--json"] if c == "points" else []) + [path]
        jobs.append((c, "pbtxt-scan", argv, c != "nodes", None))
    if kind == "ge":
        if "resolve" in commands:
            names = _resolve_names(meta)
            argv = cli_prefix() + ["resolve"] + names + ["--ge", path]
            jobs.append(("resolve", "pbtxt-scan", argv, True, None if names else "no names"))
        else:
            jobs.append(("resolve", "pbtxt-scan", None, False, "no such command"))
    jobs.append(("grep -c", "peer", ["grep", "-c", "^node {", path], True, None))
    jobs.append(("naive", "peer", [PY, "-c", NAIVE, path], True, None))
    big = meta["bytes"] > args.full_parse_max
    limit = "%dMB" % (args.full_parse_max >> 20)
    jobs.append(("lark", "peer", [PY, "-c", LARK, path], True,
                 "skipped: > %s (--full-parse-max)" % limit if big else None))
    if kind == "ge":
        pb_skip = "skipped: GraphDef types only (no ge.proto)"
    elif not args.protobuf:
        pb_skip = "skipped: protobuf not installed"
    elif big:
        pb_skip = "skipped: > %s (--full-parse-max)" % limit
    else:
        pb_skip = None
    jobs.append(("protobuf", "peer", [PY, "-c", PROTOBUF, path], True, pb_skip))

    for tool, cat, argv, capture, skip in jobs:
        row = {"kind": kind, "size": meta["size_label"], "bytes": meta["bytes"], "tool": tool,
               "category": cat}
        if skip or argv is None:
            row.update({"skipped": skip or "skipped"})
            rows.append(row)
            continue
        log("  %s %s: %s" % (kind, meta["size_label"], tool))
        res = measure(argv, args.repeat, capture, args.timeout)
        row.update({"wall": res["wall"], "walls": res["walls"], "time_v_wall": res["time_v_wall"],
                    "rss_mb": res["rss_mb"], "rc": res["rc"],
                    "mb_per_s": (meta["bytes"] / MB / res["wall"]) if res["wall"] > 0 else None,
                    "correct": correctness(tool, res, meta)})
        if res["rc"] not in (0, 1) and res["stderr"]:
            row["stderr"] = res["stderr"].strip().splitlines()[-1:]
        rows.append(row)
    best = min((r["wall"] for r in rows if "wall" in r and r.get("rc") in (0, 1)), default=None)
    for r in rows:
        if "wall" in r and best:
            r["x_best"] = r["wall"] / best
    return rows


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
         "| kind | size | bytes | tool | median s | MB/s | peak RSS MB | x best | correct |",
         "|---|---|---:|---|---:|---:|---:|---:|---|"]
    for r in rows:
        tool = r["tool"] if r["category"] == "pbtxt-scan" else "peer: " + r["tool"]
        if "skipped" in r:
            L.append("| %s | %s | %s | %s | - | - | - | - | %s |" % (
                r["kind"], r["size"], format(r["bytes"], ","), tool, r["skipped"]))
            continue
        corr = r.get("correct", "-")
        if r.get("rc") not in (0, 1):
            corr = "%s (rc=%s)" % (corr, r.get("rc"))
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["kind"], r["size"], format(r["bytes"], ","), tool, _fmt(r["wall"], "%.3f"),
            _fmt(r.get("mb_per_s"), "%.0f"), _fmt(r.get("rss_mb"), "%.0f"),
            _fmt(r.get("x_best"), "%.1f"), corr))
    L += ["", "### Goal ratios", "", "| ratio | value |", "|---|---|"]
    for name, text, _ in ratios:
        L.append("| %s | %s |" % (name, text))
    if notes:
        L += ["", "Notes:", ""] + ["* " + n for n in notes]
    return "\n".join(L) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                description="Benchmark pbtxt-scan commands against peers.")
    p.add_argument("--sizes", default="3MB,100MB", help="comma list, e.g. 3MB,100MB,1GB,2GB")
    p.add_argument("--full-parse-max", default=str(FULL_PARSE_LIMIT), type=parse_size,
                   help="largest input the whole-file Lark and protobuf peers parse (slow: ~0.3-1 MB/s)")
    p.add_argument("--kinds", default=",".join(KINDS), help="comma list of dense,const,ge")
    p.add_argument("--repeat", type=int, default=3, help="runs per measurement (median reported)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=float, default=3600.0, help="per-run timeout in seconds")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
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

    notes = []
    if not os.path.exists(TIME_BIN):
        notes.append("%s missing: peak RSS from getrusage(RUSAGE_CHILDREN) (max so far, an upper "
                     "bound)" % TIME_BIN)
    args.protobuf = have_protobuf()
    if not args.protobuf:
        notes.append("protobuf peer skipped: `import google.protobuf` failed "
                     "(pip install -r benchmarks/requirements.txt)")
    commands = cli_commands()
    missing = [c for c in ("fp", "bp", "points", "stats", "nodes", "check", "resolve")
               if c not in commands]
    if missing:
        notes.append("CLI lacks: %s (skipped)" % ", ".join(missing))
    notes.append("grep -c '^node {' is the I/O reference; naive = whole file in memory + regex; "
                 "lark = pbtxt_scan.parse_text of the whole file (<= 100MB); ge resolve/fp/bp "
                 "are checked against the generator's expected answers")

    rows = []  # type: List[Dict[str, Any]]
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

    if args.json:
        json.dump({"repeat": args.repeat, "sizes": sizes, "kinds": kinds, "inputs": inputs,
                   "commands": commands, "results": rows,
                   "ratios": [{"name": n, "text": t, **d} for n, t, d in ratios],
                   "notes": notes}, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(markdown(rows, ratios, notes, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
