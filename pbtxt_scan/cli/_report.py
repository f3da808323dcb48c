"""The report command: one self-contained HTML page of both answers, their neighbourhoods (drawn),
the GE names and the options to paste, the trails, the file's facts. Thin: the answers are
``pbtxt_scan.find_fp``/``find_bp``, the neighbourhoods ``pbtxt_scan.neighbourhood``, the page
``pbtxt_scan.report.render``."""
from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import typer

from .. import PbtxtError, __version__
from ._app import (
    Common, FileArg, InputKindOpt, JsonOpt, LenientOpt, RecordOpt, RunOpt, QuietOpt, command, format_option, output_format, usage_error,
)
from ._output import EXIT_NOT_FOUND, emit, out
from ._checks import say_unmatched_ops
from ._pair import on_ge
from ._points import ConfigOpt, FilterOpt, KeepOpt, RuleOpt, SkipOpt, SourceOpt, TrainOpOpt, answer_json, fp_of, ge_points, open_input, options_of, say_doubt, say_ge_rule

DEFAULT_OUTPUT = "pbtxt-scan-report.html"
FP_UP = 4  # fp's drawing: producers this many hops up (the data's path through the skipped ops)
PASTE = (("PROFILING_OPTIONS (JSON)", "profiling"), ("shell (export lines)", "env"), ("TF1 Estimator", "tf1-estimator"),
         ("TF1 Session", "tf1-session"), ("TF2 (npu_device)", "tf2"))


@command(short="Write an HTML page: both answers, drawn with their neighbourhoods.")
def report(
    common: Common,
    *,
    file: str = FileArg,
    as_json: bool = JsonOpt,
    out_format: str = format_option("html"),
    output: Optional[str] = typer.Option(
        None, "--output", "-o", metavar="FILE", help="Where to write the page ('-': stdout; default: %s in the current folder)." % DEFAULT_OUTPUT,
        show_default=False),
    ge: Optional[str] = typer.Option(
        None, "--ge", metavar="PATH", help="A GE ge_proto_*_Build.txt dump or a dump folder: show the names GE uses, "
        "and put them in the options to paste."),
    context: int = typer.Option(2, "--context", metavar="N", help="Hops drawn around each point: bp's producers, and both "
                                "points' consumers (fp's producers: %d, the data's path to it)." % FP_UP),
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    name_filter: Optional[List[str]] = FilterOpt,
    config: Optional[Path] = ConfigOpt,
    source: List[str] = SourceOpt,
    train_op: Optional[str] = TrainOpOpt,
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    run: Optional[str] = RunOpt,
    lenient: bool = LenientOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Write one self-contained HTML page that shows fp and bp, and why.

    The page has the answers (op, line or offset, rule, function, confidence,
    alternatives), a drawing of each point's neighbourhood (fp: the data's path to it
    through the ops the rule skipped, and its consumers; bp: its producers and consumers;
    skipped nodes grey, hover one for the reason; alternatives red), the names GE uses
    (--ge), the profiling options ready to paste (copy buttons), both --explain trails as
    a filterable table, and the file's facts. It needs no network: open it from disk, mail
    it, attach it to a ticket. Stderr says where it was written; stdout stays empty
    (--json: one line with the page's path and both answers; -o -: the page itself).

    Exit 0 when both points were found, 1 when one was not (the page still says why),
    2 for bad input (nothing is written).

    Examples:

      pbtxt-scan report graph.pbtxt                 (writes pbtxt-scan-report.html)

      pbtxt-scan report graph.pbtxt --ge ge_dump_dir/ -o run42.html

      pbtxt-scan report model.ckpt-1000.meta --source local/Placeholder
    """
    as_json = output_format(common.out_format, common.as_json, ("html",)) == "json"
    opts = options_of(rule, skip=skip_op, keep=keep_op, filters=name_filter, config=config, sources=source, train_op=train_op)
    if context < 0:
        raise usage_error("%d: give 0 or more hops" % context, "--context")
    to_stdout = output == "-"  # (as everywhere a file is written: '-' is stdout, never a file named '-')
    if to_stdout and as_json:
        raise usage_error("-o - writes the page to stdout, where --json writes its line: give one of them", "--output")
    target = Path(output or DEFAULT_OUTPUT)
    if not to_stdout and file != "-" and target.exists() and Path(file).exists() and os.path.samefile(str(target), file):
        raise usage_error("%s is the input: the report never writes over it" % target, "--output")
    try:
        page, found = _page(file, opts, ge=ge, context=context, common=common, argv=_argv(
            file, output=output, ge=ge, context=context, rule=rule, source=source, train_op=train_op, picked=common))
    except PbtxtError as e:
        raise common.console.fail(e) from None
    from ..report import render

    if to_stdout:
        out(render(page).rstrip("\n"))
    else:
        _write(target, render(page))
    if as_json:
        emit({"report": str(target), "fp": page.answers[0], "bp": page.answers[1]})
    if not found:
        raise typer.Exit(EXIT_NOT_FOUND)


def _write(target: Path, page: str) -> None:
    try:
        with open(str(target), "w", encoding="utf-8", errors="backslashreplace") as f:
            f.write(page)
    except OSError as e:
        raise usage_error("cannot write %s: %s" % (target, e.strerror or e), "--output") from None
    typer.echo("wrote %s" % target, err=True)


def _argv(file: str, *, output: Optional[str], ge: Optional[str], context: int, rule: str, source: Sequence[str],
          train_op: Optional[str], picked: Common) -> str:
    """The command line that makes this page (the options that change it; ``picked``: --run, --record)."""
    words = ["pbtxt-scan", "report", file]
    if picked.run is not None:
        words += ["--run", picked.run]
    if picked.record is not None:
        words += ["--record", picked.record]
    if ge:
        words += ["--ge", ge]
    if rule != "auto":
        words += ["--rule", rule]
    if context != 2:
        words += ["--context", str(context)]
    for s in source:
        words += ["--source", s]
    if train_op:
        words += ["--train-op", train_op]
    if output:
        words += ["-o", output]
    return " ".join(shlex.quote(w) for w in words)


def _page(
    file: str, opts: Any, *, ge: Optional[str], context: int, common: Common, argv: str
) -> Tuple[Any, bool]:
    from .. import find_bp
    from ..report import Page

    con = common.console
    with open_input(file, common.input_kind, common.record, common.run, lenient=common.lenient) as g:
        got = ge_points(g)  # a GE dump: GE's own choice
        fa, ba = got if got is not None else (fp_of(g, opts), find_bp(g, opts))
        if got is None and not con.quiet:
            say_unmatched_ops(g, opts.skip_ops, opts.keep_ops)
        drawings = _drawings(g, [(fa, FP_UP, context), (ba, context, context)])
        facts = _facts(g, fa, ba)
    con.notes(g)
    say_ge_rule(con, file, g, opts, (fa, ba))
    say_doubt(con, file, fa)
    answers = [answer_json(fa, g.name), answer_json(ba, g.name)]
    fp_name = fa.point.name if fa.point else None
    bp_name = ba.point.name if ba.point else None
    ge_rows: List[Tuple[str, str, str, str]] = []
    ge_file = ""
    unusable = False
    if ge is not None:
        mapped, fp_name, bp_name, unusable = on_ge(con, fp_name, bp_name, ge, lenient=common.lenient)
        ge_file = str(mapped.get("file") or ge)
        for kind in ("fp", "bp"):
            m = mapped.get(kind) or {}
            if m:
                ge_rows.append((kind, m.get("tf_name") or "", m.get("ge_name") or "(none: GE will not find it)", m.get("kind") or ""))
    from .. import profiling_options

    from ._paste import paste

    popts = profiling_options(fp_name or "", bp_name or "")
    snippets = [(label, paste(fmt, popts)) for label, fmt in PASTE]
    page = Page(g.name, __version__, argv, facts, answers, drawings,
                [("fp", _rows(fa)), ("bp", _rows(ba))], snippets, tuple(ge_rows), ge_file)
    return page, fa.point is not None and ba.point is not None and not unusable


def _marks(ans: Any, hood: Any) -> Dict[str, Tuple[str, str]]:
    """The hood's nodes the search skipped (grey, with the trail's reason) or weighed as alternatives,
    told by name and position (a function body may hold a node of the same name as another body)."""
    binary = ans.unit == "offset"
    where = {n.name: (n.offset if binary else n.line) for n in hood.nodes}
    marks: Dict[str, Tuple[str, str]] = {}
    for s in ans.trail:
        if s.verdict == "skip" and s.name in where and where[s.name] == s.line:
            marks[s.name] = ("skip", "%s skipped it: %s" % (ans.kind, s.why))
    for a in ans.alternatives:
        p = a.point
        if p.name in where and where[p.name] == (p.offset if binary else p.line):
            marks[p.name] = ("alt", "alternative to %s: %s" % (ans.kind, a.reason))
    return marks


def _drawings(g: Any, asks: List[Tuple[Any, int, int]]) -> List[Any]:
    """Each answer's drawing; the neighbourhoods found together (one byte search for both where
    the input allows), else each on its own (one that fails says why on its own)."""
    from ..report import Drawing
    import pbtxt_scan

    both = [(a, up, down) for a, up, down in asks if a.point is not None]
    find = getattr(pbtxt_scan, "neighbourhoods", None)
    if find is not None and both:
        try:
            hoods = dict(zip((id(a) for a, _, _ in both), find(g, [(a.point, up, down) for a, up, down in both])))
        except LookupError:
            pass
        else:
            return [Drawing(a.kind, hoods[id(a)], _marks(a, hoods[id(a)])) if id(a) in hoods else _drawing(g, a, up, down)
                    for a, up, down in asks]
    return [_drawing(g, a, up, down) for a, up, down in asks]


def _drawing(g: Any, ans: Any, up: int, down: int) -> Any:
    from ..report import Drawing
    import pbtxt_scan

    if ans.point is None:
        return Drawing(ans.kind, None, {}, "no %s: %s" % (ans.kind, ans.reason))
    find = getattr(pbtxt_scan, "neighbourhood", None)
    if find is None:
        return Drawing(ans.kind, None, {}, "this pbtxt-scan has no neighbourhood search yet")
    try:
        hood = find(g, ans.point.name, up, down, function=ans.point.function)
    except LookupError as e:  # (the answer's node is there: this is a search that failed to find it)
        return Drawing(ans.kind, None, {}, "its neighbourhood was not found: %s" % e)
    return Drawing(ans.kind, hood, _marks(ans, hood))


def _rows(ans: Any) -> List[Any]:
    from ..report import TrailRow

    rows = []
    unit = ans.unit
    for s in ans.trail:
        if s.verdict == "more":
            rows.append(TrailRow("%ss %d-%d" % (unit, s.line, s.upto), "(%d more)" % s.count, "", "skip", s.why))
        else:
            rows.append(TrailRow("%s %d" % (unit, s.line), s.name, s.op or "", s.verdict, s.why))
    return rows


def _facts(g: Any, fa: Any, ba: Any) -> List[Tuple[str, str]]:
    size = g.size
    facts = [("file", g.name), ("size", "%s bytes" % format(size, ",") if size is not None else "a stream (%s bytes read)" % format(g.bytes_read(), ","))]
    kind = getattr(g, "binary", None) or "text format"
    facts.append(("kind", "%s, %s" % (kind, getattr(g.dialect, "name", "?"))))
    unit = fa.unit
    fl = [s.line for s in fa.trail if s.verdict != "more"] + [s.upto for s in fa.trail if s.verdict == "more"]
    if fl:
        facts.append(("fp read", "forward from the top to %s %d (then a bounded byte search ahead)" % (unit, max(fl))))
    bl = [s.line for s in ba.trail]
    if bl:
        facts.append(("bp read", "backward from the end to %s %d" % (ba.unit, min(bl))))
    return facts
