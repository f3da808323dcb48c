"""The command line's JSON objects, in the one shape docs/json.md writes down (and
tests/test_json_schema.py checks every command's output against): the same key for the same thing
everywhere, whatever the library's dicts call it. An op type is ``op``, a file ``file``, an
explanation ``reason``, a match kind ``match``; a GE op is ``{name, op, id, line}`` wherever it
appears, and a TF name's GE matches are the same object in ``resolve`` and ``points --ge``."""
from __future__ import annotations

from typing import Any, Dict, List, Optional


def ge_op(op: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """A GE op (the library's ``{name, type, id, line}``): ``{name, op, id, line}``, or None."""
    if op is None:
        return None
    return {"name": op["name"], "op": op["type"], "id": op["id"], "line": op["line"]}


def ge_match(m: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """One GE op a TF name matched: a GE op plus how (``match``), its graph and whether it makes a task."""
    if m is None:
        return None
    return {"name": m["ge_name"], "op": m["type"], "id": m["id"], "line": m["line"], "graph": m["graph"],
            "task": m["task"], "match": m["kind"]}


def ge_resolution(r: Dict[str, Any], best: Optional[Dict[str, Any]], pick: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """What a TF name became in a GE dump: every match, most trusted first, and the one to configure."""
    return {
        "tf_name": r["tf_name"],
        "best": ge_match(best),
        "matches": [ge_match(m) for m in r["matches"]],
        "accepted_as_is": r["accepted_as_is"],
        "accepted_via": r["accepted_via"],
        "file": r["file"],
        "pick": ge_pick(pick),
    }


def ge_pick(pick: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """Which dump of a folder was read and why (None for a file): ``file`` is a path, as everywhere."""
    if pick is None:
        return None
    files: List[Dict[str, Any]] = []
    for s in pick.get("files", ()):
        d = {"file": s.get("path", s.get("file"))}
        # (``ops`` is an op-type histogram elsewhere: a count of them is ``nodes``, as in stats)
        d.update(("nodes" if k == "ops" else k, v) for k, v in s.items() if k not in ("file", "path"))
        files.append(d)
    return {"file": pick["file"], "reason": pick["reason"], "files": files}


def ge_point(kind: str, res: Dict[str, Any], anchor_key: str) -> Dict[str, Any]:
    """ge-auto's fp or bp: the GE op (its keys null when GE would find none), why, and the op the
    rule starts from (``anchor``: fp's data source, bp's AllReduce or NetOutput)."""
    op = ge_op(res[kind]) or dict.fromkeys(("name", "op", "id", "line"))
    d: Dict[str, Any] = {"kind": kind}
    d.update(op)
    d["reason"] = res[kind + "_reason"]
    d["anchor"] = ge_op(res.get(anchor_key))
    return d


def stats_object(st: Any, top: Optional[int], file_bytes: Optional[int] = None) -> Dict[str, Any]:
    """stats: the file's counts, and its op types most common first (ties: by name, as the text).
    ``file_bytes``: an event file's own size (``bytes`` is then its graph's)."""
    ops = sorted(st.ops.items(), key=lambda kv: (-kv[1], kv[0]))
    if top:
        ops = ops[:top]
    return {"file": st.path, "format": st.format, "binary": st.binary, "bytes": st.bytes, "file_bytes": file_bytes,
            "lines": st.lines, "nodes": st.nodes, "seconds": st.seconds, "ops": dict(ops)}


def check_object(st: Any) -> Dict[str, Any]:
    """check: one valid file."""
    return {"file": st.path, "ok": True, "format": st.format, "binary": st.binary, "bytes": st.bytes,
            "lines": st.lines, "nodes": st.nodes}


def hood_object(hood: Any, file: str) -> Dict[str, Any]:
    """``show --context --json``: docs/json.md's ``hood`` (``hood`` None: a miss, nothing shown; its ``reason`` set after)."""
    if hood is None:
        return {"name": None, "file": file, "up": 0, "down": 0, "truncated": False, "nodes": [], "edges": [], "reason": None}
    return {
        "name": hood.centre, "file": file, "up": hood.up, "down": hood.down, "truncated": hood.truncated, "reason": None,
        "nodes": [
            {"name": n.name, "op": n.op, "hops": n.hops, "line": n.line, "offset": n.offset, "function": n.function}
            for n in hood.nodes
        ],
        "edges": [{"src": e.src, "dst": e.dst, "control": e.control} for e in hood.edges],
    }


def miss_object(shape: str, file: str, function: Optional[str], reason: str) -> Dict[str, Any]:
    """A name found nowhere, as ``fp`` says it: the command's object (``show`` or ``hood``) with
    ``name`` null and a ``reason`` (the stderr line's words)."""
    if shape == "hood":
        d = hood_object(None, file)
    else:
        d = {"name": None, "op": None, "line": None, "offset": None, "file": file, "function": function, "block": None}
    d["reason"] = reason
    return d


def node_miss(reason: str) -> Dict[str, Any]:
    """``nodes --json`` on a file with none: one ``node`` with ``name`` null and a ``reason``."""
    return {"name": None, "op": None, "line": None, "column": None, "name_line": None, "offset": None, "end": None, "inputs": [],
            "reason": reason}
