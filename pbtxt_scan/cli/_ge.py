"""The commands on GE Build dumps: resolve, ge-auto. Thin: the work is in ``pbtxt_scan.ge``."""
from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

import typer

from .. import PbtxtError
from ._escape import shown
from ._app import Common, LenientOpt, QuietOpt, command, format_option, jobs_of, jobs_option, json_option, output_format
from ._output import EXIT_NOT_FOUND, Console, emit, out
from ._pair import POINTS_FORMATS, AicMetricsOpt, PointsFormatOpt, ProfilingOutputOpt, TaskTraceOpt, check_paste, pasted
from ._suggest import Closest

_GE_HELP = (
    "A GE dump: ge_proto_<idx>_graph_<gid>_Build.txt (or ge_proto_<idx>_PreRunAfterBuild.txt, or a "
    "ge_onnx_*.pbtxt), or the dump directory (DUMP_GRAPH_PATH, its <pid>/ folders included), where the training graph is picked."
)


_JobsOpt = jobs_option(
    "Processes: split the dump at its op blocks and load the parts in parallel, with the same output "
    "(default: every usable core; 1: one process; stdin, pipes and .gz too: they are copied to a temporary file first)."
)


def _open(con: Console, ge: str, names: Optional[List[str]] = None, jobs: Optional[int] = 1, lenient: bool = False) -> Any:
    from ..ge import open_ge

    b, pick = open_ge(ge, names, jobs, lenient=lenient)
    if pick is not None:  # a directory: say which file was used, and why (stderr: not a result)
        con.note("using %s: %s" % (pick["file"], pick["reason"]))
    return b, pick


@command(short="Find the GE ops a TensorFlow name became.")
def resolve(
    common: Common,
    names: List[str] = typer.Argument(..., help="TensorFlow node names (as in graph.pbtxt).", metavar="NAME", show_default=False),
    ge: str = typer.Option(..., "--ge", help=_GE_HELP, metavar="PATH", show_default=False),
    as_json: bool = json_option("One JSON object per name, one a line, with its ranked matches (docs/json.md)."),
    out_format: str = format_option("text"),
    jobs: Optional[int] = _JobsOpt,
    quiet: bool = QuietOpt,
    lenient: bool = LenientOpt,
) -> None:
    """Find the GE op(s) each TensorFlow name became in a GE Build dump, most trusted first.

    Match kinds, in trust order: exact (same name); original_op_names (the op lists the TF name in
    _datadump_original_op_names, so GE accepts the TF name as is for fp_point/bp_point);
    origin_name (an output_desc _datadump_origin_name); suffix (GE added _<N>); fused (the GE name
    holds the TF name as a whole member: UB-fused, _Reduce/_Update splits, PartitionedCall_...;
    never a scope above or below it, such as gradients/<name>_grad/...).

    Output per name: the name, then '  KIND  GE_NAME  (line N)' lines; ', no task' marks an op that
    generates no task (it cannot be a profiling point). Exit 1 if any name matches nothing.

    Examples:

      pbtxt-scan resolve dense/MatMul --ge ge_proto_00000042_graph_1_Build.txt

      pbtxt-scan resolve dense/MatMul gradients/dense/MatMul_grad/MatMul_1 --ge ./ge_dump --json
    """
    from ..ge import best_match, resolve as _resolve

    con = common.console
    as_json = output_format(common.out_format, common.as_json, ("text",)) == "json"
    n_jobs = jobs_of(common.jobs)
    try:
        b, pick = _open(con, ge, names, n_jobs, common.lenient)
        results = _resolve(b, names)
    except PbtxtError as e:
        raise con.fail(e)
    for text in b.notes:  # (--lenient: the ops skipped)
        con.note(text)
    missing = [r["tf_name"] for r in results if not r["matches"]]
    if as_json:
        from ._json import ge_resolution

        for r in results:
            emit(ge_resolution(r, best_match(r), pick))
    else:
        width = max((len(m["kind"]) for r in results for m in r["matches"]), default=0)
        for r in results:
            out(shown(r["tf_name"]))
            if not r["matches"]:
                out("  (no match)")
            for m in r["matches"]:
                out("  %-*s  %s  (line %d%s)" % (width, m["kind"], shown(m["ge_name"]), m["line"], "" if m["task"] else ", no task"))
            if r["accepted_as_is"]:
                how = "its own name" if r["accepted_via"] == r["tf_name"] else (
                    "%s lists it in _datadump_original_op_names" % r["accepted_via"])
                out("  note: GE accepts %s as is for fp_point/bp_point (%s)" % (json.dumps(r["tf_name"], ensure_ascii=False), how))
    for n in missing:
        # The dump is loaded: its op names, and the TF names its ops list, are at hand.
        hint = Closest(n).offer_all(x for op in b.ops for x in (op.name,) + op.original_names).hint()
        typer.echo("%s: no GE op matches %s (tried exact, _datadump_original_op_names, _datadump_origin_name, "
                   "_N suffix, substring)%s" % (b.path, json.dumps(n, ensure_ascii=False), "; " + hint if hint else ""), err=True)
    if missing:
        raise typer.Exit(EXIT_NOT_FOUND)


def _op_text(op: Optional[Dict[str, Any]]) -> str:
    if op is None:
        return "(none)"
    return "%s  (%s, id %d, line %d)" % (shown(op["name"]), shown(op["type"]), op["id"], op["line"])


@command("ge-auto", short="Predict the fp and bp GE picks by itself.")
def ge_auto(
    common: Common,
    ge: str = typer.Argument(..., help=_GE_HELP, metavar="PATH", show_default=False),
    as_json: bool = json_option('One JSON object: {"fp": {kind, name, op, id, line, reason, anchor}, "bp": {...}, "file", "pick"}.'),
    out_format: str = PointsFormatOpt,
    explain: bool = typer.Option(False, "--explain", help="Also show on stderr every op examined, with why it was kept or dropped."),
    profiling_output: str = ProfilingOutputOpt,
    task_trace: str = TaskTraceOpt,
    aic_metrics: str = AicMetricsOpt,
    jobs: Optional[int] = _JobsOpt,
    quiet: bool = QuietOpt,
    lenient: bool = LenientOpt,
) -> None:
    """Predict the fp/bp GE picks by itself ("fp_point":"" / "bp_point":"") from a Build dump.

    Replays GE's ProfilingTaskUtils: fp is, among the task-generating consumers of output 0 of the
    first Data/GetNext/IteratorV2 node (descending into subgraphs), the one with the smallest op id;
    bp is, among the producers of the last HcomAllReduce (else the root NetOutput) on its stream,
    the one with the largest id. Exit 1 if GE would find no fp or no bp.

    --format profiling, env, tf1-estimator, tf1-session or tf2 prints what points --format
    prints for GE's choice (a point GE would not find: "").

    Examples:

      pbtxt-scan ge-auto ge_proto_00000042_graph_1_Build.txt

      pbtxt-scan ge-auto ./ge_dump --explain

      pbtxt-scan ge-auto ge_proto_00000042_graph_1_Build.txt --json
    """
    from ..ge import ge_auto as _ge_auto

    con = common.console
    fmt = output_format(common.out_format, common.as_json, POINTS_FORMATS)  # (points' values, checked as points checks them)
    check_paste(task_trace, aic_metrics)
    as_json = fmt == "json"
    n_jobs = jobs_of(common.jobs)
    try:
        b, pick = _open(con, ge, None, n_jobs, common.lenient)
        res = _ge_auto(b)
    except PbtxtError as e:
        raise con.fail(e)
    for text in b.notes:  # (--lenient: the ops skipped)
        con.note(text)
    if as_json:
        from ._json import ge_pick, ge_point

        emit({"fp": ge_point("fp", res, "fp_source"), "bp": ge_point("bp", res, "bp_target"), "file": res["file"],
              "pick": ge_pick(pick)})
    elif fmt != "text":
        fp, bp = [(res[k] or {}).get("name") for k in ("fp", "bp")]
        out(pasted(fmt, fp, bp, profiling_output, task_trace, aic_metrics))
    else:
        out("fp  %s" % _op_text(res["fp"]))
        out("bp  %s" % _op_text(res["bp"]))
    if explain or (not as_json and (res["fp"] is None or res["bp"] is None)):
        # Why: on stderr, so FP=$(pbtxt-scan ge-auto ...) keeps the answer alone.
        typer.echo("fp: %s" % res["fp_reason"], err=True)
        typer.echo("bp: %s" % res["bp_reason"], err=True)
    if explain:
        for t in res["explain"]:
            where = "" if t["id"] is None else "  (id %d, stream %d, line %d)" % (t["id"], t["stream"], t["line"])
            typer.echo("%s  %-9s  %s%s: %s" % (t["step"], t["verdict"], t["name"], where, t["why"]), err=True)
    if res["fp"] is None or res["bp"] is None:
        typer.echo("%s: GE would find no %s here (it only logs a warning and traces nothing)"
                   % (b.path, " and no ".join(k for k in ("fp", "bp") if res[k] is None)), err=True)
        raise typer.Exit(EXIT_NOT_FOUND)


__all__ = ["ge_auto", "resolve"]
