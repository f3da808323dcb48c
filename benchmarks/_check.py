"""Is a command's answer right? fp/bp, counts and ``resolve`` output against the generator's
``expected`` metadata."""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional


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


def resolve_names(meta: Dict[str, Any]) -> List[str]:
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

