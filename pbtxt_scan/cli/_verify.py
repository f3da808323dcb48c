"""verify: what a profiling run bracketed between FP Start and BP End, checked against the points.

The reading is ``pbtxt_scan.prof``'s; this module maps the bracketing ops back to TensorFlow (with
``--ge``, through the dump's ``_datadump_original_op_names``), compares them with pbtxt-scan's own
points (``pbtxt_scan.points``) and says what to change."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import typer

from .._kit import NamedTuple
from .. import PbtxtError
from ._app import Common, LenientOpt, QuietOpt, command, format_option, json_option, open_graph, output_format
from ._output import EXIT_NOT_FOUND, Console, emit, out
from ._checks import check_choice

RIGHT, WRONG, UNCHECKED = "right points", "wrong points", "not checked"


def _us(v: Optional[float]) -> str:
    return "-" if v is None else "%.2f" % v


def _spread(s: Optional[Dict[str, Any]]) -> str:
    if s is None:
        return "-"
    return "%s µs median (%s to %s, %d iterations)" % (_us(s["median"]), _us(s["min"]), _us(s["max"]), s["count"])


class _Points:
    """pbtxt-scan's points for the graph, and with a GE dump the names GE knows them by."""

    def __init__(self, graph: Optional[str], ge: Optional[str], con: Console, lenient: bool = False) -> None:
        self.fp = self.bp = self.fp_ge = self.bp_ge = self.ge_file = None  # type: Optional[str]
        self.fp_set: Tuple[str, ...] = ()
        self.bp_set: Tuple[str, ...] = ()
        self.fp_paste = self.bp_paste = None  # type: Optional[str]
        self.build: Any = None
        if graph is not None:
            from .. import points

            with open_graph(graph, lenient=lenient) as g:
                p = points(g)
            con.notes(g)  # (which file of a folder is read; --lenient: the blocks skipped)
            self.fp, self.bp = p.fp_name, p.bp_name
            self.fp_paste, self.bp_paste = self.fp, self.bp
            self.fp_set = (self.fp,) if self.fp else ()
            self.bp_set = (self.bp,) if self.bp else ()
        if ge is not None:
            from ..ge import best_match, open_ge, resolve

            b, pick = open_ge(ge, [n for n in (self.fp, self.bp) if n], lenient=lenient)
            if pick is not None:
                con.note("using %s: %s" % (pick["file"], pick["reason"]))
            for text in b.notes:  # (--lenient: the ops skipped)
                con.note(text)
            self.build, self.ge_file = b, b.path
            for r in resolve(b, [n for n in (self.fp, self.bp) if n]):
                m = best_match(r)
                ge_names = tuple(x["ge_name"] for x in r["matches"] if x["task"] and x["kind"] in ("exact", "original_op_names"))
                if m is not None:
                    ge_names = ge_names + (m["ge_name"],)
                paste = r["tf_name"] if r["accepted_as_is"] else (m["ge_name"] if m else r["tf_name"])
                if r["tf_name"] == self.fp:
                    self.fp_ge, self.fp_set, self.fp_paste = (m["ge_name"] if m else None), self.fp_set + ge_names, paste
                if r["tf_name"] == self.bp:
                    self.bp_ge, self.bp_set, self.bp_paste = (m["ge_name"] if m else None), self.bp_set + ge_names, paste

    def is_point(self, kind: str, ge_name: str) -> Optional[bool]:
        """The timeline's op ``ge_name`` is pbtxt-scan's fp (or bp): with a dump, one of the GE names
        it became; without, by resolve's rules on names alone (a fused name, a ``_1`` twin). None:
        only a dump could tell."""
        tf = self.fp if kind == "fp" else self.bp
        if self.build is not None:
            return ge_name in (self.fp_set if kind == "fp" else self.bp_set)
        from ..ge import name_match

        return True if tf and name_match(ge_name, tf) is not None else None

    def tf_names(self, ge_name: str) -> Optional[List[str]]:
        """The TensorFlow names a GE op came from (its own name and its original names); None
        without a dump, [] when the dump has no such op."""
        if self.build is None:
            return None
        op = self.build.by_name.get(ge_name)
        if op is None:
            return []
        return [n for n in op.original_names if n] or [op.name]

    def op_type(self, ge_name: str, fallback: str) -> str:
        op = self.build.by_name.get(ge_name) if self.build is not None else None
        return (op.original_type or op.type) if op is not None else fallback

    def json(self) -> Dict[str, Any]:
        return {"fp": self.fp, "bp": self.bp, "fp_ge": self.fp_ge, "bp_ge": self.bp_ge, "ge_file": self.ge_file}


def _task(t: Optional[Dict[str, Any]], pts: _Points) -> Optional[Dict[str, Any]]:
    if t is None:
        return None
    d = {k: t[k] for k in ("name", "op", "task_type", "stream", "task_id", "start", "end", "trace_gap")}
    d["op"] = pts.op_type(t["name"], t["op"])
    names = pts.tf_names(t["name"])
    if names is not None:
        d["tf_names"] = names
    if "iterations" in t:
        d["iterations"] = t["iterations"]
    return d


class _Verdict(NamedTuple):
    """:func:`_judge`'s answer: the verdict, its reasons, the points to set (``fixes``), the notes
    (stderr), and ``unchecked``: the bracketing ops only a GE dump could map to the points (no
    --ge): the verdict is then "not checked", never "wrong points"."""

    verdict: str
    reasons: List[str]
    fixes: List[str]
    notes: List[str]
    unchecked: List[str]


def _judge(devs: List[Dict[str, Any]], pts: _Points, checked: bool) -> _Verdict:
    """The verdict on the devices' brackets (``checked``: --graph given, the points to check against)."""
    from ..prof import DATA_SIDE

    reasons: List[str] = []
    fixes: List[str] = []
    notes: List[str] = []
    unchecked: List[str] = []

    def fix(kind: str, paste: Optional[str], tf: Optional[str]) -> None:
        if paste:
            extra = "" if paste == tf else " (GE's name for %s)" % tf
            line = '"%s_point":"%s"%s' % (kind, paste, extra)
        elif checked:
            line = "%s_point: pbtxt-scan finds none in the graph; leave it \"\" for GE's own choice" % kind
        else:
            line = "%s_point: run `pbtxt-scan points GRAPH --ge DUMP` for a name GE finds, or give --graph here" % kind
        if line not in fixes:
            fixes.append(line)

    def compare(d: Dict[str, Any], t: Optional[Dict[str, Any]], kind: str, how: str) -> None:
        tf = pts.fp if kind == "fp" else pts.bp
        if not checked or t is None or not tf:
            return
        hit = pts.is_point(kind, t["name"])
        if hit is None:
            unchecked.append("%s: the bracket is %s by %s, which no name rule maps to pbtxt-scan's %s %s: not checked "
                             "without --ge (a GE dump's original names can)" % (d["device"], how, t["name"], kind, tf))
        elif not hit:
            reasons.append("%s: the bracket is %s by %s, not by pbtxt-scan's %s %s" % (d["device"], how, t["name"], kind, tf))
            fix(kind, pts.fp_paste if kind == "fp" else pts.bp_paste, tf)

    for d in devs:
        n = len(d["iterations"])
        if d["fp_start_zero"]:
            reasons.append("%s: FP Start is 0 in %d of %d iterations: GE matched no op to fp_point" % (d["device"], d["fp_start_zero"], n))
            fix("fp", pts.fp_paste, pts.fp)
        if d["bp_end_zero"]:
            reasons.append("%s: BP End is 0 in %d of %d iterations: GE matched no op to bp_point" % (d["device"], d["bp_end_zero"], n))
            fix("bp", pts.bp_paste, pts.bp)
        o, c = d["opened_by"], d["closed_by"]
        if o is not None and o["op"] in DATA_SIDE and not (checked and pts.is_point("fp", o["name"])):
            msg = "%s: the bracket is opened by %s, a data-side op (%s): FP Start is on the input, not the first compute op" % (
                d["device"], o["name"], o["op"])
            if checked:
                reasons.append(msg)
                fix("fp", pts.fp_paste, pts.fp)
            else:
                notes.append(msg + "? (give --graph to check)")
        else:
            compare(d, o, "fp", "opened")
        compare(d, c, "bp", "closed")
        if o is None and c is None and not d["fp_start_zero"] and not d["bp_end_zero"]:
            notes.append("%s: no task timeline covers its iterations (was task_trace on?): the bracketing ops are unknown" % d["device"])
    if reasons:
        return _Verdict(WRONG, reasons, fixes, notes, unchecked)
    if checked and not unchecked and all(d["opened_by"] is not None and d["closed_by"] is not None for d in devs):
        return _Verdict(RIGHT, reasons, fixes, notes, unchecked)
    return _Verdict(UNCHECKED, reasons, fixes, notes, unchecked)


def _row(r: Dict[str, Any], pts: _Points) -> Dict[str, Any]:
    return {"iteration": r["iteration"], "fp_start": r["fp_start"], "bp_end": r["bp_end"], "fp_bp_time": r["fp_bp_time"],
            "iteration_time": r["iteration_time"], "opened_by": _task(r["opened_by"], pts), "closed_by": _task(r["closed_by"], pts)}


def _task_text(t: Dict[str, Any]) -> str:
    bits = [t["op"]]
    if t["stream"] is not None:
        bits.append("stream %d" % t["stream"])
    if t["task_id"] is not None:
        bits.append("task %d" % t["task_id"])
    g = t["trace_gap"]
    if g is not None:
        if g["missing"] is None:
            bits.append("no task %s it in the timeline: no trace-task gap to tell" % ("before" if g["task_id"] is None or
                                                                                   g["task_id"] < t["task_id"] else "after"))
        else:
            bits.append("task %d %s" % (g["task_id"], "missing: GE's trace task" if g["missing"] else "present: no trace-task gap"))
    s = "%s  (%s)" % (t["name"], ", ".join(bits))
    if t.get("tf_names") is not None:
        s += "  <- TF %s" % (", ".join(t["tf_names"]) if t["tf_names"] else "(not in the GE dump)")
    return s


def _why_none(d: Dict[str, Any], key: str) -> str:
    zero = d["fp_start_zero" if key == "opened_by" else "bp_end_zero"]
    if zero == len(d["iterations"]):
        return "(none: %s is 0)" % ("FP Start" if key == "opened_by" else "BP End")
    return "(unknown: no task in the timeline around it)"


@command(short="Check what a profiling run bracketed against the points.")
def verify(
    common: Common,
    prof_dir: str = typer.Argument(..., help="The profiling output: PROF_* (either layout), its mindstudio_profiler_output/, "
                                   "one device_N/, or a folder holding one PROF_*.", metavar="PROF_DIR", show_default=False),
    graph: Optional[str] = typer.Option(None, "--graph", help="The training graph (as for fp/bp): check the run bracketed "
                                        "the points pbtxt-scan chooses.", metavar="FILE", show_default=False),
    ge: Optional[str] = typer.Option(None, "--ge", help="The GE dump (file or folder) of the same run: map the timeline's GE "
                                     "names back to TensorFlow through _datadump_original_op_names.", metavar="DUMP", show_default=False),
    layout: str = typer.Option("auto", "--layout", help="Which msprof layout to read where a PROF_* folder has both: "
                               "mindstudio_profiler_output (current) or device (older, device_N/timeline or summary).",
                               metavar="LAYOUT"),
    iterations: bool = typer.Option(False, "--iterations", help="Also list every iteration (text output)."),
    as_json: bool = json_option("One verify object (docs/json.md)."),
    out_format: str = format_option("text"),
    lenient: bool = LenientOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Read a profiling run's output and say what it bracketed between FP Start and BP End.

    The step trace has times only. verify finds, per iteration, the op that opened the bracket (the
    first compute task at or after FP Start) and the op that closed it (the last compute task ending
    at or before BP End), from the task timeline (op_summary_*.csv, task_time_*.json or
    msprof_*.json). GE puts a trace task on the op's stream just before the fp op and just after
    the bp op, so "task N missing" beside a task confirms it (said only where the stream's tasks go
    on past N). Times are µs: FP to BP time and iteration time, median and spread over iterations,
    for each device, and whether the devices agree.

    With --graph (and --ge), the verdict: "right points" (the run bracketed pbtxt-scan's fp and bp),
    "wrong points" (FP Start or BP End of 0, a bracket opened by a data-side op such as Cast or
    IteratorGetNext, or other ops than pbtxt-scan's), each with the fp_point/bp_point to set.
    Without --ge the timeline's GE names are matched by resolve's rules on names (a fused name, a
    _1 twin); a name only a dump could map is "not checked without --ge". Without --graph the
    verdict is "not checked" unless FP Start or BP End is 0.

    A PROF_* folder with both msprof layouts is refused: choose with --layout (or give the
    sub-folder). Two step traces holding one device (two runs in one folder) are refused too.

    Exit 0; 1 for "wrong points"; 2 for a folder that is no profiling output, nothing to check (no
    iterations), or a step trace or task row cut short, non-numeric or nan (FILE:LINE: column X is '...').

    Examples:

      pbtxt-scan verify PROF_000001_20230818142704322_COJGGGCANRMICFBC

      pbtxt-scan verify ./prof/PROF_000001 --graph graph.pbtxt --ge ./ge_dump

      pbtxt-scan verify ./prof/PROF_000001/device_0 --iterations --json
    """
    from ..prof import LAYOUTS, agree, read_run, summary

    con = common.console
    as_json = output_format(common.out_format, common.as_json, ("text",)) == "json"
    check_choice(layout, ("auto",) + LAYOUTS, "--layout")
    if ge is not None and graph is None:
        con.note("--ge without --graph: the timeline's ops are mapped back to TensorFlow, but not checked against the points")
    try:
        run = read_run(prof_dir, None if layout == "auto" else layout)
        pts = _Points(graph, ge, con, common.lenient)
    except PbtxtError as e:
        raise con.fail(e)
    devs = [summary(d) for d in run.devices]
    v = _judge([dict(d, opened_by=_task(d["opened_by"], pts), closed_by=_task(d["closed_by"], pts)) for d in devs], pts,
               graph is not None)
    together = agree(devs)
    if as_json:
        emit(_verify_object(run, devs, pts, v, together=together, with_points=graph is not None or ge is not None))
    else:
        _say(run, devs, pts, v, together=together, checked=graph is not None, iterations=iterations, con=con)
    if v.verdict == WRONG:
        raise typer.Exit(EXIT_NOT_FOUND)


def _verify_object(run: Any, devs: List[Dict[str, Any]], pts: _Points, v: _Verdict, *, together: bool,
                   with_points: bool) -> Dict[str, Any]:
    """verify's one JSON object (docs/json.md); ``with_points``: --graph or --ge given."""
    return {
        "file": run.path, "layout": run.layout, "agree": together, "verdict": v.verdict, "reasons": v.reasons, "fixes": v.fixes,
        "notes": v.unchecked + v.notes, "points": pts.json() if with_points else None,
        "devices": [{
            "device": d["device"], "files": d["files"], "fp_start_zero": d["fp_start_zero"], "bp_end_zero": d["bp_end_zero"],
            "fp_bp_time": d["fp_bp_time"], "iteration_time": d["iteration_time"],
            "opened_by": _task(d["opened_by"], pts), "closed_by": _task(d["closed_by"], pts),
            "iterations": [_row(r, pts) for r in d["iterations"]],
        } for d in devs],
    }


def _say(run: Any, devs: List[Dict[str, Any]], pts: _Points, v: _Verdict, *, together: bool, checked: bool, iterations: bool,
         con: Console) -> None:
    """verify's text: each device's times and bracket (``iterations``: every iteration too), the
    points (``checked``: --graph given), the verdict with its reasons and fixes; the notes on stderr."""
    out("%s: %s layout, %d device%s" % (run.path, run.layout, len(devs), "" if len(devs) == 1 else "s"))
    for d in devs:
        out("%s: %d iterations; FP to BP %s; iteration %s" % (d["device"], len(d["iterations"]), _spread(d["fp_bp_time"]),
                                                             _spread(d["iteration_time"])))
        for key, label in (("opened_by", "opened by"), ("closed_by", "closed by")):
            t = _task(d[key], pts)
            out("  %s  %s" % (label, _task_text(t) + ("  in %d of %d iterations" % (t["iterations"], len(d["iterations"])))
                               if t is not None else _why_none(d, key)))
        if iterations:
            for r in d["iterations"]:
                o, c = r["opened_by"], r["closed_by"]
                out("    iteration %d  FP Start %s  BP End %s  FP to BP %s  iteration %s  %s .. %s" % (
                    r["iteration"], _us(r["fp_start"]), _us(r["bp_end"]), _us(r["fp_bp_time"]), _us(r["iteration_time"]),
                    o["name"] if o else "-", c["name"] if c else "-"))
    if len(devs) > 1:
        out("devices %s" % ("agree" if together else "disagree: see each device above"))
    if checked:
        out("points: fp %s, bp %s%s" % (pts.fp or "(none)", pts.bp or "(none)",
                                       "; in GE: fp %s, bp %s" % (pts.fp_ge, pts.bp_ge) if pts.build is not None else ""))
    out("verdict: %s" % (v.verdict + " without --ge" if v.verdict == UNCHECKED and v.unchecked else v.verdict))
    for r in v.reasons + v.unchecked:
        out("  %s" % r)
    for f in v.fixes:
        out("  set %s" % f)
    for n in v.notes:
        con.note("note: %s" % n)
