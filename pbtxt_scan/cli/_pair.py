"""The points command: both answers, with --ge the names GE uses, and the options to paste.

A point GE will not find is not printed as usable: the profiling options leave it ``""`` (GE then
picks its own), stderr says so in one line, and ``points`` exits 1 (as ``resolve`` does for a name
with no match).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import typer

from .._kit import NamedTuple
from .. import PbtxtError
from ._escape import shown
from ._app import (
    Common, InputKindOpt, JsonOpt, LenientOpt, RecordOpt, RunOpt, QuietOpt, command, output_format, renamed, shared_format, usage_error,
)
from ._output import EXIT_NOT_FOUND, Console, emit, out
from ._checks import check_choice, inputs_of, say_ignored_filters, say_unmatched_ops
from ._points import (
    ConfigOpt, FilesArg, FilterOpt, KeepOpt, RuleOpt, SkipOpt, SourceOpt, TrainOpOpt, answer_json, filters_given, open_input, options_of,
    fp_of, ge_points, null_of, print_explain, say_doubt, say_ge_rule, say_none, worst,
)

# The profiler's values (pbtxt_scan.AIC_METRICS / TASK_TRACE), named here so --help lists them
# without loading the rules.
AIC_METRICS = (
    "ArithmeticUtilization", "PipeUtilization", "Memory", "MemoryL0", "ResourceConflictRatio", "MemoryUB",
    "L2Cache", "MemoryAccess", "PipelineExecuteUtilization",
)
TASK_TRACE = ("on", "off")  # (the PROFILING_OPTIONS pages document these two; another value reads as off)

# --format on points: the outputs a profiling run is configured from.
POINTS_FORMATS = ("text", "profiling", "env", "tf1-estimator", "tf1-session", "tf2")

# The options of the outputs to paste: points and ge-auto take the same, checked the same way.
PointsFormatOpt = shared_format(typer.Option(
    "text", "--format", metavar="FORMAT",
    help="text; profiling (the JSON for PROFILING_OPTIONS / profiling_options); env (export lines); "
    "tf1-estimator (NPURunConfig with a ProfilingConfig); tf1-session (a tf.compat.v1.Session config's "
    "custom_op parameter_map); tf2 (npu.global_options()); json (as --json). All but text and json take one file.",
))
ProfilingOutputOpt = typer.Option(
    "/tmp/profiling", "--profiling-output", metavar="DIR", help="The profiler's 'output' folder (profiling, env, tf1-*, tf2).")
TaskTraceOpt = typer.Option("on", "--task-trace", metavar="TEXT", help="profiling: 'task_trace': %s." % ", ".join(TASK_TRACE))
AicMetricsOpt = typer.Option(
    "PipeUtilization", "--aic-metrics", metavar="TEXT", help="profiling: 'aic_metrics': %s." % ", ".join(AIC_METRICS))


def check_paste(task_trace: str, aic_metrics: str) -> None:
    """The values of the options to paste, checked (a usage error names the valid ones)."""
    check_choice(task_trace, TASK_TRACE, "--task-trace")
    check_choice(aic_metrics, AIC_METRICS, "--aic-metrics")


def pasted(fmt: str, fp: Optional[str], bp: Optional[str], output: str, task_trace: str, aic_metrics: str) -> str:
    """``--format fmt``'s snippet (profiling, env, tf1-*, tf2) for these points (None: ``""``, GE picks its own)."""
    from .. import profiling_options
    from ._paste import paste

    return paste(fmt, profiling_options(fp or "", bp or "", output=output, task_trace=task_trace, aic_metrics=aic_metrics))


class _PointsRun(NamedTuple):
    """What ``points`` does with each file (its options, once checked)."""

    common: Common
    opts: Any
    fmt: str
    explain: bool
    ge: Optional[str]
    output: str
    task_trace: str
    aic_metrics: str
    null: bool = False  # -z: each file's fp and bp names, each NUL-ended ("" for none), after FILE and a NUL with several


@command(short="Print fp_point and bp_point, or the options to paste.")
def points(
    common: Common,
    *,
    files: Optional[List[str]] = FilesArg,
    as_json: bool = JsonOpt,
    out_format: str = PointsFormatOpt,
    explain: bool = typer.Option(False, "--explain", help="Show both trails on stderr."),
    ge: Optional[str] = typer.Option(
        None, "--ge", metavar="PATH", help="A GE ge_proto_*_Build.txt dump or a dump folder: map both names to GE's names "
        "(a name GE will not find: exit 1, and the profiling options leave it \"\")."
    ),
    profiling_output: str = ProfilingOutputOpt,
    old_output: Optional[str] = typer.Option(None, "--output", hidden=True),
    task_trace: str = TaskTraceOpt,
    aic_metrics: str = AicMetricsOpt,
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    name_filter: Optional[List[str]] = FilterOpt,
    config: Optional[Path] = ConfigOpt,
    source: List[str] = SourceOpt,
    train_op: Optional[str] = TrainOpOpt,
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    log_run: Optional[str] = RunOpt,
    lenient: bool = LenientOpt,
    null: bool = typer.Option(
        False, "--null", "-z", help="Print fp's name, a NUL, bp's name, a NUL (a point not found: an empty name), unescaped "
        "(several files: FILE and a NUL first; with --ge, GE's names; for xargs -0)."
    ),
    quiet: bool = QuietOpt,
) -> None:
    """Print both fp_point and bp_point (and, with --ge, the names GE uses).

    --format profiling, env, tf1-estimator, tf1-session or tf2 prints, ready to paste, the
    profiling options with both points, for PROFILING_OPTIONS, a TF1 Estimator, a TF1 session
    or TF2.

    With --ge, a point no GE op matches is one GE will not find: the command exits 1, says so on
    stderr, and the profiling options leave that point "" (GE then picks its own).

    A GE dump file given as FILE is answered by GE's own rule (rule ge, as ge-auto); where
    GE would pick none, exit 1 (run points GRAPH --ge DUMP with the TensorFlow graph instead).

    Examples:

      pbtxt-scan points graph.pbtxt

      pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env

      pbtxt-scan points graph.pbtxt --format tf1-session --profiling-output /home/me/prof

      pbtxt-scan points rank0/graph.pbtxt rank1/graph.pbtxt --json

      pbtxt-scan points graph.pbtxt -z | xargs -0 -n1 pbtxt-scan show graph.pbtxt
    """
    fmt = output_format(common.out_format, common.as_json, POINTS_FORMATS)
    if old_output is not None:
        renamed("--output", "--profiling-output")
        profiling_output = old_output
    check_paste(task_trace, aic_metrics)
    opts = options_of(rule, skip=skip_op, keep=keep_op, filters=name_filter, config=config, sources=source, train_op=train_op)
    run = _PointsRun(common, opts, fmt, explain, ge, profiling_output, task_trace, aic_metrics, null_of(null, fmt))
    paths = inputs_of(files, "points")
    if len(paths) > 1 and fmt not in ("text", "json"):
        raise usage_error("one file for --format %s (it prints one set of profiling options); got %d" % (fmt, len(paths)), "--format")
    code = worst([_points_of(f, run, prefix=len(paths) > 1) for f in paths])
    if code:
        raise typer.Exit(code)


def _points_of(file: str, run: _PointsRun, *, prefix: bool) -> int:
    """One file's points: its rows (each ``FILE: `` first when ``prefix``) or JSON line; the exit code."""
    from .. import Answer, find_bp

    opts, con = run.opts, run.common.console
    bp_error: Optional[PbtxtError] = None
    try:
        with open_input(file, run.common.input_kind, run.common.record, run.common.run, lenient=run.common.lenient) as g:  # one input for both searches (stdin and pipes are spooled)
            got = ge_points(g)  # a GE dump: GE's own choice, the dump read once
            if got is not None:
                fa, ba = got
            else:
                fa = fp_of(g, opts)
                try:
                    ba = find_bp(g, opts)
                except PbtxtError as e:
                    if fa.point is None:
                        raise
                    # A file cut short (training still writing it): the fp found before the cut is
                    # still right, so print it, then the error.
                    bp_error, ba = e, Answer("bp", None, fa.rule, str(e), [])
            if not con.quiet and bp_error is None and got is None:
                say_unmatched_ops(g, opts.skip_ops, opts.keep_ops)
    except PbtxtError as e:
        return con.failed(e)
    ge = run.ge
    if bp_error is not None:
        ge = None  # (and no notes, no trails: a failure is one line on stderr)
    else:
        con.notes(g)
    if run.explain and bp_error is None:  # (a failed command says one line: the error)
        print_explain(fa)
        print_explain(ba)
    if bp_error is None:
        if say_ge_rule(con, file, g, opts, (fa, ba)):
            for a in (fa, ba):  # (GE would pick none: why, and what to run instead)
                if a.point is None:
                    say_none(file, a)
        elif not con.quiet:
            say_ignored_filters(file, "fp", fa.rule, filters_given(opts))
        if run.fmt != "json":
            say_doubt(con, file, fa)
    fp_name = fa.point.name if fa.point else None
    bp_name = ba.point.name if ba.point else None
    mapped: Any = None
    unusable = False
    if ge is not None:
        try:
            mapped, fp_name, bp_name, unusable = on_ge(con, fp_name, bp_name, ge, lenient=run.common.lenient)
        except PbtxtError as e:
            return con.failed(e)
    _print_points(run, g.name, (fa, ba), (fp_name, bp_name), mapped=mapped, lead="%s: " % file if prefix else "")
    if bp_error is not None:
        return con.failed(bp_error)
    if fa.point is None or ba.point is None or unusable:
        return EXIT_NOT_FOUND
    return 0


def _print_points(run: _PointsRun, name: str, answers: Tuple[Any, Any], names: Tuple[Optional[str], Optional[str]], *, mapped: Any, lead: str) -> None:
    """The output ``--format`` asks for, of both answers and the names to use (GE's, with --ge)."""
    fa, ba = answers
    if run.fmt == "json":
        obj = {"fp": answer_json(fa, name), "bp": answer_json(ba, name)}
        if mapped is not None:
            obj["ge"] = _ge_json(mapped)
        emit(obj)
    elif run.fmt != "text":
        out(pasted(run.fmt, names[0], names[1], run.output, run.task_trace, run.aic_metrics))
    elif run.null:
        out("\0".join(([lead[:-2]] if lead else []) + [names[0] or "", names[1] or ""]), end="\0")
    else:
        for kind, ans, point_name in (("fp", fa, names[0]), ("bp", ba, names[1])):
            if ans.point is None:
                out("%s%s_point  -  (%s)" % (lead, kind, ans.reason))
            else:
                where = ans.point.where
                if ans.point.function:
                    where += " in function %s" % ans.point.function
                out("%s%s_point  %s  (%s, %s, rule %s)" % (lead, kind, shown(point_name or "") or '""', shown(ans.point.op), shown(where), ans.rule))


def on_ge(
    con: Console, fp_name: Optional[str], bp_name: Optional[str], ge: str, *, lenient: bool = False,
) -> Tuple[Any, Optional[str], Optional[str], bool]:
    """The points mapped onto a GE dump: (the mapping, the names GE knows, whether a point is one
    GE will not find), with a stderr line for each one GE renamed, will not find, or would pick
    otherwise by itself. A point GE will not find becomes ``None`` (profiling: ``""``): GE then
    picks its own, where the TF name would trace nothing. ``lenient``: ``--lenient``, for the dump too."""
    from .. import ge as _ge

    mapped = _ge.map_points(fp_name, bp_name, ge, lenient=lenient)
    pick = mapped.get("pick")
    if pick is not None:  # a folder: which dump was read, and why (as resolve and ge-auto say it)
        con.note("using %s: %s" % (pick["file"], pick["reason"]))
    for text in mapped.get("notes", ()):  # (--lenient: the dump's ops skipped)
        con.note(text)
    auto = mapped.get("ge_auto") or {}
    names = {"fp": fp_name, "bp": bp_name}
    unusable = False
    for kind in ("fp", "bp"):
        m = mapped.get(kind) or {}
        tf_name = names[kind]
        own = (auto.get(kind) or {}).get("name")
        if tf_name and not m.get("ge_name"):
            unusable = True
            names[kind] = None
            typer.echo("%s: no GE op matches %s: GE will not find this point (is it the training graph's dump?); "
                       "%s_point is left \"\" so GE picks its own%s" % (kind, tf_name, kind, " (%s)" % own if own else ""), err=True)
            continue
        if m.get("ge_name") and m.get("ge_name") != tf_name:
            con.note("%s: GE renamed %s to %s (%s)" % (kind, tf_name, m["ge_name"], m.get("kind")))
        if own and m.get("ge_name") and own != m.get("ge_name"):
            con.note("note: GE's own automatic %s would be %s, not %s" % (kind, own, m["ge_name"]))
        names[kind] = m.get("ge_name") or tf_name
    return mapped, names["fp"], names["bp"], unusable


def _ge_json(mapped: Dict[str, Any]) -> Dict[str, Any]:
    """points --ge --json: the GE side, in the shapes resolve and ge-auto print (docs/json.md)."""
    from ._json import ge_op, ge_pick, ge_resolution

    def one(kind: str) -> Optional[Dict[str, Any]]:
        m = mapped.get(kind)
        if m is None:
            return None
        best = next((x for x in m["matches"] if x["ge_name"] == m["ge_name"] and x["kind"] == m["kind"]), None)
        r = dict(m, file=mapped["file"])
        return ge_resolution(r, best, None)

    auto = mapped.get("ge_auto") or {}
    return {"file": mapped["file"], "pick": ge_pick(mapped.get("pick")), "fp": one("fp"), "bp": one("bp"),
            "ge_auto": {"fp": ge_op(auto.get("fp")), "bp": ge_op(auto.get("bp"))}}


__all__ = [
    "AIC_METRICS", "AicMetricsOpt", "POINTS_FORMATS", "PointsFormatOpt", "ProfilingOutputOpt", "TASK_TRACE", "TaskTraceOpt", "check_paste",
    "on_ge", "pasted", "points",
]
