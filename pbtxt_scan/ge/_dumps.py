"""Dump folders: the final-stage dumps in a folder, and which of them is the training graph."""
from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .._errors import PbtxtError
from ..graph._input import GraphFile
from ..source._source import PathLike
from ._auto import ge_auto
from ..parallel._pool import Pool, PoolError, can_fork
from ._load import GeBuild, load_build
from ._resolve import best_match, resolve

_DUMP_RE = re.compile(r"^ge_proto_([0-9]+)_([A-Za-z0-9_-]+)\.txt$")  # ge.md §2.1
_ONNX_DUMP_RE = re.compile(r"^ge_onnx_([0-9]+)_([A-Za-z0-9_-]+)\.pbtxt$")
_STAGE_RE = re.compile(r"^graph_([0-9]+)_(.+)$")
FINAL_STAGES = frozenset({"Build", "PreRunAfterBuild"})
_LISTED = 5  # the other dumps a pick's reason names (then "and N more"), as every list of candidates on stderr

def dump_files(directory: PathLike) -> List[Dict[str, Any]]:
    """The GE dumps in ``directory``, by index.

    Each: ``{"file", "path", "index", "graph_id", "stage", "is_build"}``. Named as GE names them
    (ge.md §2.1: ``ge_proto_<idx>_<suffix>.txt``, also gzipped): ``is_build`` for the final-graph
    stages ``Build`` (``ge_proto_<idx>_graph_<gid>_Build.txt``) and ``PreRunAfterBuild`` (old
    naming, no graph id); ``ge_onnx_*.pbtxt`` dumps are listed only when there is no ``ge_proto``
    one (``DUMP_GRAPH_FORMAT=onnx``). When no file is named as a final-stage dump, every file
    whose *content* is a GE dump is listed as a candidate (stage ``None``, ``is_build`` true): a
    renamed dump is still found, and the training graph is then chosen by what it holds.

    Dumps in folders below ``directory`` count too (GE writes them to ``DUMP_GRAPH_PATH/<pid>/``):
    their ``file`` is the path relative to ``directory``, and they are chosen among as one folder.
    """
    files = _files_under(str(directory))
    out = []
    for regex in (_DUMP_RE, _ONNX_DUMP_RE):
        for fn, path in files:
            m = regex.match(_unzipped(os.path.basename(fn)))
            if not m:
                continue
            sm = _STAGE_RE.match(m.group(2))
            gid, stage = (int(sm.group(1)), sm.group(2)) if sm else (None, m.group(2))
            out.append({"file": fn, "path": path, "index": int(m.group(1)),
                        "graph_id": gid, "stage": stage, "is_build": stage in FINAL_STAGES})
        if out:
            break
    if not any(d["is_build"] for d in out):
        named = {d["path"] for d in out}
        for i, (fn, path) in enumerate(files):
            if path not in named and _is_ge_dump(path):
                out.append({"file": fn, "path": path, "index": -len(files) + i, "graph_id": None,
                            "stage": None, "is_build": True})
    out.sort(key=lambda d: (d["index"], d["file"]))
    return out


def _files_under(directory: str) -> List[Tuple[str, str]]:
    """``(path relative to directory, path)`` of every file under it, sorted (folders below
    included; symlinked folders are not followed, so a loop cannot trap the walk)."""
    try:
        os.listdir(directory)  # (os.walk would pass over an unreadable top folder in silence)
    except OSError as e:
        raise PbtxtError("cannot list directory: %s" % (e.strerror or e), path=directory) from None
    out = []
    for root, dirs, names in os.walk(directory):
        dirs.sort()
        for fn in names:
            path = os.path.join(root, fn)
            if os.path.isfile(path):
                out.append((os.path.relpath(path, directory), path))
    return sorted(out)


def _unzipped(fn: str) -> str:
    return fn[:-3] if fn.endswith(".gz") else fn


def _is_ge_dump(path: str) -> bool:
    """Whether the file's first fields are a GE dump's (unreadable or other files: no)."""
    try:
        with GraphFile.open(path, spool=False) as g:
            return g.dialect.name in ("ge_proto", "ge_onnx")
    except PbtxtError:
        return False


def _dump_index(path: str) -> Optional[int]:
    m = _DUMP_RE.match(_unzipped(os.path.basename(path))) or _ONNX_DUMP_RE.match(_unzipped(os.path.basename(path)))
    return int(m.group(1)) if m else None


def find_build_files(directory: PathLike) -> List[str]:
    """The final-graph dumps (stage ``Build`` or ``PreRunAfterBuild``) in ``directory``, by index."""
    return [d["path"] for d in dump_files(directory) if d["is_build"]]


def _summarize(
    path: str, names: Sequence[str], keep_if_training: bool = True, jobs: Optional[int] = 1, lenient: bool = False,
) -> Tuple[Dict[str, Any], Optional[GeBuild]]:
    b = load_build(path, jobs=jobs, lenient=lenient)
    s: Dict[str, Any] = {"file": os.path.basename(path), "path": path, "ops": len(b.ops),
                         "has_gradients": b.has_gradients, "has_root_netoutput": b.root_netoutput is not None}
    if names:
        rs = resolve(b, names)
        s["names_matched"] = sum(1 for r in rs if r["matches"])
        s["names_accepted"] = sum(1 for r in rs if r["accepted_as_is"])
    keep = keep_if_training and ((s["has_gradients"] and s["has_root_netoutput"]) or s.get("names_matched"))
    return s, (b if keep else None)


def _score(s: Dict[str, Any], index: int) -> Tuple[Any, ...]:
    return (s.get("names_accepted", 0), s.get("names_matched", 0),
            s["has_gradients"] and s["has_root_netoutput"], s["has_root_netoutput"], s["ops"], index)


def _summaries(
    files: List[str], names: List[str], n: int, lenient: bool = False,
) -> Optional[List[Tuple[Dict[str, Any], Optional[GeBuild]]]]:
    """Each file summarized on one of ``n`` workers, in order; None if the workers cannot do it
    (then the caller summarizes them itself, and meets any file's error there)."""

    def one(f: str) -> Tuple[Dict[str, Any], Optional[GeBuild]]:
        return _summarize(f, names, lenient=lenient)

    try:
        with Pool(min(n, len(files)), [one]) as pool:
            return list(pool.map(one, files, ahead=len(files)))
    except PoolError:
        return None


def _pick(
    files: Sequence[PathLike], names: Optional[Sequence[str]], workers: Optional[int] = None, jobs: Optional[int] = 1,
    lenient: bool = False,
) -> Tuple[Dict[str, Any], GeBuild]:
    paths = [str(f) for f in files]
    if not paths:
        raise PbtxtError("no GE Build dumps given")
    wanted = [n for n in (names or ()) if n]
    n = workers if workers is not None else min(4, os.cpu_count() or 1, len(paths))
    shared = _summaries(paths, wanted, n, lenient) if n > 1 and len(paths) > 1 and can_fork() else None
    results = shared if shared is not None else [_summarize(f, wanted, jobs=jobs, lenient=lenient) for f in paths]  # (one file: on ``jobs`` processes itself)
    index = {f: i for i, f in enumerate(paths)}
    for f in paths:
        k = _dump_index(f)
        index[f] = k if k is not None else index[f]
    best_i = max(range(len(paths)), key=lambda i: _score(results[i][0], index[paths[i]]))
    s, b = results[best_i]
    if b is None:
        b = load_build(paths[best_i], jobs=jobs, lenient=lenient)
    s = dict(s)
    why = []
    if wanted:
        why.append("%d of %d names resolve here (%d as is)" % (s["names_matched"], len(wanted), s["names_accepted"]))
    if s["has_gradients"] and s["has_root_netoutput"]:
        others = sum(1 for r, _ in results if r["has_gradients"] and r["has_root_netoutput"])
        why.append("it has gradients ops and a root NetOutput (the training graph%s)"
                   % ("" if others == 1 else "; %d files qualify, this one ranks first" % others))
    else:
        why.append("no file has both gradients ops and a root NetOutput; picked the largest graph")
    rest = [r for i, (r, _) in enumerate(results) if i != best_i]
    if rest:  # (the first few: a folder of hundreds keeps its note one short line; ``files`` has them all)
        why.append("others: " + ", ".join(
            "%s (%s)" % (r["file"], "gradients" if r["has_gradients"] else "no gradients") for r in rest[:_LISTED])
            + (", and %d more" % (len(rest) - _LISTED) if len(rest) > _LISTED else ""))
    pick = {"file": paths[best_i], "reason": "; ".join(why), "files": [r for r, _ in results]}
    return pick, b


def pick_training_graph(files: Sequence[PathLike], names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Choose the training graph among Build dumps: ``{"file", "reason", "files": [summary]}``.

    Ranking: most of ``names`` accepted as is, then resolved at all; then having gradients ops and
    a root NetOutput; then the most ops; then the highest dump index. Files are scanned in
    parallel (2-4 processes) when there are several.
    """
    return _pick(files, names)[0]


def open_ge(
    build_or_dir: Union[GeBuild, PathLike], names: Optional[Sequence[str]] = None, jobs: Optional[int] = 1, *,
    lenient: bool = False,
) -> Tuple[GeBuild, Optional[Dict[str, Any]]]:
    """A loaded build from a dump file, a dump directory (the training graph is picked), or a build.

    ``jobs``: processes for loading one dump (a directory's dumps are loaded in parallel anyway).
    ``lenient``: an op that is no valid node is skipped (the build's ``notes`` say so), not refused."""
    if isinstance(build_or_dir, GeBuild):
        return build_or_dir, None
    if str(build_or_dir) != "-" and os.path.isdir(build_or_dir):
        files = find_build_files(build_or_dir)
        if not files:
            raise PbtxtError("no GE Build dumps here (expected ge_proto_<idx>_graph_<gid>_Build.txt or "
                             "ge_proto_<idx>_PreRunAfterBuild.txt, or any file holding a GE dump)", path=str(build_or_dir))
        pick, b = _pick(files, names, jobs=jobs, lenient=lenient)
        return b, pick
    return load_build(build_or_dir, jobs=jobs, lenient=lenient), None


def map_points(
    fp_name: Optional[str], bp_name: Optional[str], ge: Union[GeBuild, PathLike], *, lenient: bool = False,
) -> Dict[str, Any]:
    """Map TF fp/bp names onto a GE dump (file or directory) for the ``points`` command.

    Returns ``{"file", "pick", "fp", "bp", "ge_auto": {"fp", "bp"}}``; ``fp``/``bp`` are ``None``
    when no name was given, else ``{"tf_name", "ge_name", "kind", "line", "task", "accepted_as_is",
    "accepted_via", "matches"}`` (``matches``: :func:`resolve`'s, most trusted first) with
    ``ge_name``/``kind``/``line`` ``None`` when nothing matched; ``notes``: the dump's (``lenient``:
    see :func:`open_ge`).
    """
    names = [n for n in (fp_name, bp_name) if n]
    b, pick = open_ge(ge, names, lenient=lenient)
    res = {r["tf_name"]: r for r in resolve(b, names)}
    auto = ge_auto(b)

    def one(tf: Optional[str]) -> Optional[Dict[str, Any]]:
        if not tf:
            return None
        r = res[tf]
        m = best_match(r)
        return {"tf_name": tf, "ge_name": m["ge_name"] if m else None, "kind": m["kind"] if m else None,
                "line": m["line"] if m else None, "task": m["task"] if m else None,
                "accepted_as_is": r["accepted_as_is"], "accepted_via": r["accepted_via"], "matches": r["matches"]}

    return {"file": b.path, "pick": pick, "fp": one(fp_name), "bp": one(bp_name),
            "ge_auto": {"fp": auto["fp"], "bp": auto["bp"]}, "notes": b.notes}


