"""GE's automatic fp/bp choice: a replay of ``ProfilingTaskUtils`` (shared/reference/ge.md §1.3,
§1.4, §1.8 and the decisions in tests/data/README.md "## ge/")."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .._kit import NamedTuple
from ..graph._input import Source
from ._load import ALLREDUCE_TYPES, DATA_TYPES, GLOBAL_STEP, GeBuild, GeOp, load_build

def _why_no_task(op: GeOp) -> str:
    if op.no_task:
        return "_no_task is true"
    return "no kernel lib (_ge_attr_op_kernel_lib_name empty or missing)"


def _data_like(op: GeOp) -> bool:
    return op.type in DATA_TYPES or op.original_type in DATA_TYPES


def _split_edge(edge: str) -> Tuple[str, Optional[int]]:
    src, sep, idx = edge.rpartition(":")
    if not sep:
        return edge, 0
    try:
        return src, int(idx)
    except ValueError:
        return edge, 0


def _consumers(b: GeBuild, order: List[GeOp], src: str, out_idx: int = 0) -> List[Tuple[GeOp, int]]:
    """(consumer, input index) for each data edge from ``src:out_idx``, in GetAllNodes order."""
    want = "%s:%d" % (src, out_idx)
    out = []
    for op in order:
        for i, e in enumerate(op.inputs):
            if e == want:
                out.append((op, i))
    return out


def _label(op: GeOp) -> str:
    return "%s (%s, id %d, stream %d, line %d)" % (op.name, op.type, op.id, op.stream, op.line)


def _note(trail: List[Dict[str, Any]], step: str, op: Optional[GeOp], verdict: str, why: str, name: Optional[str]) -> None:
    """One line of ge-auto's --explain trail."""
    trail.append({"step": step, "name": op.name if op else name, "type": op.type if op else None, "id": op.id if op else None,
                  "stream": op.stream if op else None, "line": op.line if op else None,
                  "verdict": verdict, "why": why})


class GeChoice(NamedTuple):
    """GE's own fp or bp as op records: the op (``None``: GE would find none), the op its rule
    starts from (``anchor``: fp's data source, bp's AllReduce or NetOutput), why, and every op
    that qualified (``candidates``, in GE's node order; the op is the one of smallest id for fp,
    largest for bp)."""

    kind: str
    op: Optional[GeOp]
    anchor: Optional[GeOp]
    reason: str
    candidates: Tuple[GeOp, ...]


def _auto_fp(b: GeBuild, order: List[GeOp], trail: List[Dict[str, Any]]) -> GeChoice:
    def note(op: Optional[GeOp], verdict: str, why: str, name: Optional[str] = None) -> None:
        _note(trail, "fp", op, verdict, why, name)

    src = None
    for op in order:
        if not _data_like(op):
            continue
        if not op.has_task:
            note(op, "dropped", "data-like (%s) but not a candidate: %s" % (op.original_type or op.type, _why_no_task(op)))
            continue
        src = op
        how = "type %s" % op.type if op.type in DATA_TYPES else "original_type %s" % op.original_type
        note(op, "source", "first candidate data-like node (%s)" % how)
        break
    if src is None:
        return GeChoice("fp", None, None, "no candidate (task-generating) node of type or original_type in %s"
                        % "/".join(sorted(DATA_TYPES)), ())

    cands: List[GeOp] = []
    seen_data = set()

    def visit(producer: GeOp) -> None:
        for c, idx in _consumers(b, order, producer.name, 0):
            if not c.has_task:
                note(c, "dropped", "reads %s:0 but has no task: %s" % (producer.name, _why_no_task(c)))
                continue
            if c.subgraphs:
                note(c, "descend", "has subgraph(s) %s: descend to the Data with _parent_node_index %d"
                     % (", ".join(c.subgraphs), idx))
                for sg in c.subgraphs:
                    data = next((o for o in b.graphs.get(sg, ()) if o.type == "Data" and o.parent_index == idx), None)
                    if data is None:
                        note(None, "dropped", "subgraph %s has no Data with _parent_node_index %d" % (sg, idx), sg)
                    elif data.name not in seen_data:
                        seen_data.add(data.name)
                        visit(data)
                continue
            note(c, "candidate", "reads %s:0 at input %d" % (producer.name, idx))
            cands.append(c)

    visit(src)
    if not cands:
        return GeChoice("fp", None, src, "%s is the source, but no task-generating op reads its output 0" % _label(src), ())
    fp = cands[0]
    for c in cands[1:]:
        if c.id < fp.id:
            fp = c
    others = ", ".join("%s (%d)" % (c.name, c.id) for c in cands)
    return GeChoice("fp", fp, src, "source %s; output-0 consumers with a task: %s; minimum id: %s"
                    % (_label(src), others, _label(fp)), tuple(cands))


def _is_global_step(b: GeBuild, op: GeOp, depth: int = 0) -> bool:
    if op.name == GLOBAL_STEP:
        return True
    if depth > 32:
        return False
    return any(o.name == GLOBAL_STEP or (o.subgraphs and _is_global_step(b, o, depth + 1))
               for sg in op.subgraphs for o in b.graphs.get(sg, ()))


def _auto_bp(b: GeBuild, order: List[GeOp], trail: List[Dict[str, Any]]) -> GeChoice:
    def note(op: Optional[GeOp], verdict: str, why: str, name: Optional[str] = None) -> None:
        _note(trail, "bp", op, verdict, why, name)

    tgt = None
    for op in order:
        if op.type in ALLREDUCE_TYPES:
            if op.has_task:
                tgt = op
            else:
                note(op, "dropped", "AllReduce but not a candidate: %s" % _why_no_task(op))
    if tgt is not None:
        note(tgt, "target", "the last candidate %s" % "/".join(sorted(ALLREDUCE_TYPES)))
        what = "the last candidate AllReduce"
    else:
        for op in order:
            if op.type == "NetOutput" and op.graph == b.root:
                if op.has_task:
                    tgt = op
                    break
                note(op, "dropped", "root NetOutput but not a candidate: %s" % _why_no_task(op))
        if tgt is None:
            return GeChoice("bp", None, None, "no candidate AllReduce and no candidate root NetOutput", ())
        note(tgt, "target", "no candidate AllReduce: the root NetOutput")
        what = "no AllReduce, so the root NetOutput"

    cands: List[GeOp] = []

    def producers(op: GeOp) -> List[str]:
        names: List[str] = []
        for e in op.inputs:
            if e:
                n = _split_edge(e)[0]
                if n not in names:
                    names.append(n)
        return names

    def visit(names: List[str], via: str, stream: Optional[int], depth: int = 0) -> None:
        for n in names:
            p = b.by_name.get(n)
            if p is None:
                note(None, "dropped", "input of %s, but no op of that name in the dump" % via, n)
                continue
            if _is_global_step(b, p):
                note(p, "dropped", "ge_global_step is skipped")
                continue
            if not p.has_task:
                note(p, "dropped", "no task: %s" % _why_no_task(p))
                continue
            if p.subgraphs:
                if depth > 32:
                    continue
                for sg in p.subgraphs:
                    out = next((o for o in b.graphs.get(sg, ()) if o.type == "NetOutput"), None)
                    if out is None:
                        note(p, "dropped", "subgraph %s has no NetOutput" % sg)
                        continue
                    note(p, "descend", "has subgraph %s: its NetOutput's inputs count, with no stream filter" % sg)
                    visit(producers(out), out.name, None, depth + 1)
                continue
            if stream is not None and p.stream != stream:
                note(p, "dropped", "stream %d, target stream %d" % (p.stream, stream))
                continue
            note(p, "candidate", "producer of %s" % via)
            cands.append(p)

    visit(producers(tgt), tgt.name, tgt.stream)
    if not cands:
        return GeChoice("bp", None, tgt, "target %s (%s) has no producer that qualifies" % (_label(tgt), what), ())
    bp = cands[0]
    for c in cands[1:]:
        if c.id > bp.id:
            bp = c
    others = ", ".join("%s (%d)" % (c.name, c.id) for c in cands)
    return GeChoice("bp", bp, tgt, "target %s (%s); qualifying producers: %s; maximum id: %s"
                    % (_label(tgt), what, others, _label(bp)), tuple(cands))


def ge_choices(build: Union[GeBuild, Source], jobs: Optional[int] = 1) -> Tuple[GeBuild, GeChoice, GeChoice, List[Dict[str, Any]]]:
    """GE's own fp and bp as op records (:class:`GeChoice`), with the dump loaded (``jobs``: its
    processes) and the trail of every op examined (as :func:`ge_auto`'s ``explain``)."""
    b = build if isinstance(build, GeBuild) else load_build(build, jobs=jobs)
    order = b.all_nodes()
    trail: List[Dict[str, Any]] = []
    fp = _auto_fp(b, order, trail)
    return b, fp, _auto_bp(b, order, trail), trail


def ge_auto(build: Union[GeBuild, Source]) -> Dict[str, Any]:
    """What GE picks with ``"fp_point":""``/``"bp_point":""`` (ge.md §1.3, §1.4, §1.8).

    Returns ``{"fp", "fp_source", "fp_reason", "bp", "bp_target", "bp_reason", "explain", "file"}``
    where ops are ``{"name", "type", "id", "line"}`` (or ``None``) and ``explain`` lists every op
    examined (``step``, ``name``, ``type``, ``id``, ``stream``, ``line``) with its verdict
    (``source``/``target``/``candidate``/``descend``/``dropped``) and why.
    """
    b, fp, bp, trail = ge_choices(build)
    brief = lambda op: op.brief() if op is not None else None
    return {
        "fp": brief(fp.op), "fp_reason": fp.reason, "fp_source": brief(fp.anchor),
        "bp": brief(bp.op), "bp_reason": bp.reason, "bp_target": brief(bp.anchor),
        "file": b.path, "explain": trail,
    }
