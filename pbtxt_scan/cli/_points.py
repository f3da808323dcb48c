"""The point commands: fp, bp, points (and, with --ge, the names GE uses). Thin: the search is
``pbtxt_scan.find_fp``/``find_bp``, the GE mapping ``pbtxt_scan.ge``, the profiling options ``pbtxt_scan.profiling_options``."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Callable, Dict, List, NamedTuple, Optional

import typer

from .. import PbtxtError
from ._app import EXIT_NOT_FOUND, command, fail, open_graph, out, say_notes, usage_error
from ._checks import check_choice, inputs_of, say_ignored_filters, say_unmatched_ops, with_source_hint
from ._ge_points import AIC_METRICS as _AIC_METRICS, TASK_TRACE as _TASK_TRACE, on_ge as _on_ge

FilesArg = typer.Argument(
    None,
    help="Graphs (graph.pbtxt, .pb, .meta, saved_model.pb, a GE dump; '-' or none with a pipe: stdin; .gz "
    "accepted). Several files: one answer each (text rows start with the file), exit code the worst.",
    metavar="FILE",
    show_default=False,
)


RuleOpt = typer.Option(
    "auto",
    "--rule",
    metavar="RULE",
    help="auto (dataflow when the graph has a data source or placeholder, else doc), "
    "dataflow (first compute op fed by the training data), or doc (the documented recipe, completed).",
)
SkipOpt = typer.Option([], "--skip-op", metavar="OP", help="Also treat this op type as non-compute (repeatable).")
KeepOpt = typer.Option([], "--keep-op", metavar="OP", help="Treat this catalog op type as compute (repeatable).")
FilterOpt = typer.Option(
    None, "--name-filter", metavar="TEXT", help="doc rule: skip fp candidates whose name holds this (repeatable; replaces step, Dataset, seed, kernel)."
)
ConfigOpt = typer.Option(
    None, "--config", metavar="FILE", help='JSON file: {"skip_ops": [...], "keep_ops": [...], "name_filters": [...]}.', show_default=False
)


SourceOpt = typer.Option(
    [], "--source", metavar="NAME",
    help="fp: the node (or nodes: repeat) that carries the batch, e.g. local/Placeholder or IteratorGetNext_1; "
    "fp is then the model's first op on its data. Use it when fp says it is ambiguous.",
)
QuietOpt = typer.Option(False, "--quiet", "-q", help="No notes on stderr (an ambiguous answer, a GE dump read with TensorFlow's rules).")

CONFIG_KEYS = ("skip_ops", "keep_ops", "name_filters")


def _options(
    rule: str, skip: List[str], keep: List[str], filters: Optional[List[str]], config: Optional[Path], sources: Optional[List[str]] = None
) -> Any:
    from .. import RULES, Options

    if rule not in RULES:
        raise usage_error("choose from %s" % ", ".join(RULES), "--rule")
    skip, keep = list(skip), list(keep)
    if config is not None:
        cfg = _read_config(config)
        skip += cfg.get("skip_ops", [])
        keep += cfg.get("keep_ops", [])
        if filters is None and "name_filters" in cfg:
            filters = cfg["name_filters"]
    opts = Options(rule, frozenset(skip), frozenset(keep), sources=frozenset(sources or ()))
    return opts._replace(name_filters=tuple(filters)) if filters else opts


def _read_config(config: Path) -> Dict[str, List[str]]:
    """The --config JSON: an object whose keys are among CONFIG_KEYS, each a list of strings."""
    try:
        cfg = json.loads(Path(config).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise usage_error("cannot read %s: %s" % (config, e), "--config")
    allowed = ", ".join(CONFIG_KEYS)
    if not isinstance(cfg, dict):
        raise usage_error("%s: expected a JSON object with keys %s" % (config, allowed), "--config")
    for key, value in cfg.items():
        if key not in CONFIG_KEYS:
            raise usage_error("%s: unknown key %s (allowed: %s)" % (config, json.dumps(key), allowed), "--config")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise usage_error("%s: %s must be a list of strings" % (config, key), "--config")
    return cfg


def _answer_json(ans: Any, name: str) -> Any:
    """The answer as JSON: the same keys found or not (null where unknown), plus the reason
    (``name``: the input as answers call it, ``<stdin>`` for ``-``)."""
    from .. import Point

    d = ans.point.to_json() if ans.point is not None else dict.fromkeys(Point._fields)
    if ans.point is None:
        d.update(kind=ans.kind, rule=ans.rule, file=name)
    d["reason"] = ans.reason
    d["confidence"] = ans.confidence if ans.point is not None else None
    d["doubt"] = ans.doubt or None
    d["alternatives"] = [a.to_json() for a in ans.alternatives]
    return d


def _print_explain(ans: Any) -> None:
    from .. import explain

    typer.echo("%s (rule %s):" % (ans.kind, ans.rule), err=True)
    for line in explain(ans):
        typer.echo("  " + line, err=True)
    typer.echo("  => %s" % (ans.reason if ans.point is None else "%s at %s: %s" % (ans.point.name, ans.point.where, ans.reason)), err=True)
    if ans.point is not None:
        typer.echo("  confidence: %s%s" % (ans.confidence, ": " + ans.doubt if ans.doubt else ""), err=True)
    for a in ans.alternatives:
        typer.echo("  alternative %s (%s, %s): %s" % (a.point.name, a.point.op, a.point.where, a.reason), err=True)


def _say_doubt(file: str, ans: Any) -> None:
    """One stderr line for an answer that stands but is ambiguous (stdout keeps the name alone)."""
    if ans.point is not None and ans.confidence == "ambiguous":
        typer.echo("%s: %s %s is ambiguous: %s" % (file, ans.kind, ans.point.name, ans.doubt), err=True)


def _say_ge_rules(file: str, g: Any) -> None:
    """fp/bp on a GE dump apply TensorFlow's rules to GE's op names: say so, once."""
    if getattr(g.dialect, "name", "").startswith("ge"):
        typer.echo(
            "%s: a GE dump: fp and bp here apply TensorFlow's rules to GE's op names; "
            "'pbtxt-scan ge-auto %s' gives GE's own choice" % (file, file),
            err=True,
        )


def _one_point(kind: str, file: str, opts: Any, *, as_json: bool, explain: bool, quiet: bool, prefix: bool) -> int:
    """One file's fp or bp: its row (``FILE: NAME`` when ``prefix``) or JSON line; the exit code."""
    from .. import find_bp, find_fp

    try:
        with open_graph(file) as g:
            try:
                ans = (find_fp if kind == "fp" else find_bp)(g, opts)
            except PbtxtError as e:
                raise with_source_hint(g, e, opts.sources) from None
            if not quiet:
                say_unmatched_ops(g, opts.skip_ops, opts.keep_ops)
    except PbtxtError as e:
        return failed(e)
    say_notes(g)
    if explain:
        _print_explain(ans)
    if not quiet:
        _say_ge_rules(file, g)
        say_ignored_filters(file, kind, ans.rule, _filters_given(opts))
        if not as_json:
            _say_doubt(file, ans)
    if ans.point is None:
        if as_json:
            out(json.dumps(_answer_json(ans, g.name), ensure_ascii=False))
        typer.echo("%s: no %s: %s" % (file, kind, ans.reason), err=True)
        return EXIT_NOT_FOUND
    if as_json:
        out(json.dumps(_answer_json(ans, g.name), ensure_ascii=False))
    else:
        out("%s: %s" % (file, ans.point.name) if prefix else ans.point.name)
    return 0


def _filters_given(opts: Any) -> Any:
    """The --name-filter values (or the config's), ``None`` when the rule's own are in use."""
    from .. import Options

    return opts.name_filters if opts.name_filters != Options().name_filters else None


def failed(e: PbtxtError) -> int:
    """One file's error, said as every command says one (:func:`fail`); the others go on."""
    return fail(e).exit_code


def worst(codes: List[int]) -> int:
    """The exit code of several files: 2 (bad input) over 1 (nothing found) over 0."""
    return max(codes, default=0)


def _point_command(kind: str, doc: str) -> Callable[..., None]:
    """fp and bp: the same options, a different search."""

    def command(
        *,
        files: Optional[List[str]] = FilesArg,
        as_json: bool = typer.Option(
            False, "--json", help="One object per file: kind, name, op, line, name_line, offset, rule, file, function, reason, confidence, doubt, alternatives (the same keys when nothing is found, null where unknown)."
        ),
        explain: bool = typer.Option(
            False, "--explain", help="Show on stderr each node considered, its line, and why it was skipped."
        ),
        rule: str = RuleOpt,
        skip_op: List[str] = SkipOpt,
        keep_op: List[str] = KeepOpt,
        name_filter: Optional[List[str]] = FilterOpt,
        config: Optional[Path] = ConfigOpt,
        source: List[str] = SourceOpt,
        quiet: bool = QuietOpt,
    ) -> None:
        opts = _options(rule, skip_op, keep_op, name_filter, config, source)
        paths = inputs_of(files, kind)
        codes = [_one_point(kind, f, opts, as_json=as_json, explain=explain, quiet=quiet, prefix=len(paths) > 1) for f in paths]
        if worst(codes):
            raise typer.Exit(worst(codes))

    command.__doc__ = doc
    return command


_FP_DOC = """Print fp_point: the first compute operator of forward propagation.

    The first op of the model on the training step's data: where the batch from
    IteratorGetNext, the last queue dequeue or a staging area's Unstage (else a batch
    placeholder) meets a trained variable, or the model's first op before that on the same
    data. Label-side ops, input preprocessing (a Cast of the batch), ops nothing uses and
    the backward pass are skipped and listed as alternatives (--explain, --json). With two
    copies of the model (global/local, train/eval) the one the gradients train is chosen and
    stderr says the answer is ambiguous; --source names the input yourself. Reads forward and
    stops at the answer; stdout is the name alone, so FP=$(pbtxt-scan fp graph.pbtxt) works.
    A TF2 graph whose step runs in a tf.function is answered from that function (named in
    --json).

    Examples:

      pbtxt-scan fp --explain graph.pbtxt

      pbtxt-scan fp --source local/Placeholder graph.pbtxt

      pbtxt-scan fp --keep-op Cast graph.pbtxt   (when the input's Cast should count)
    """

_BP_DOC = """Print bp_point: the last operator of backward propagation.

    Reads backward from the end of the file and stops at the answer: the last op in a
    gradients scope (gradients/, gradients_N/, gradient_tape/, at any depth) that computes.
    Exit 1 for an inference graph (no gradients).

    Example: pbtxt-scan bp --json graph.pbtxt
    """

command("fp")(_point_command("fp", _FP_DOC))
command("bp")(_point_command("bp", _BP_DOC))


class _PointsRun(NamedTuple):
    """What ``points`` does with each file (its options, once checked)."""

    opts: Any
    as_json: bool
    explain: bool
    quiet: bool
    ge: Optional[str]
    out_format: str
    output: str
    task_trace: str
    aic_metrics: str


@command()
def points(
    *,
    files: Optional[List[str]] = FilesArg,
    as_json: bool = typer.Option(False, "--json", help="One object per file with fp and bp."),
    explain: bool = typer.Option(False, "--explain", help="Show both trails on stderr."),
    ge: Optional[str] = typer.Option(None, "--ge", metavar="PATH", help="A GE ge_proto_*_Build.txt dump or a dump folder: map both names to GE's names (a name GE will not find: exit 1, and the profiling options leave it \"\")."),
    out_format: str = typer.Option("text", "--format", metavar="FORMAT", help="text, profiling (the JSON for PROFILING_OPTIONS / profiling_options) or env (export lines); profiling and env take one file."),
    output: str = typer.Option("/tmp/profiling", "--output", metavar="DIR", help="profiling: the 'output' folder."),
    task_trace: str = typer.Option("on", "--task-trace", metavar="TEXT", help="profiling: 'task_trace': %s." % ", ".join(_TASK_TRACE)),
    aic_metrics: str = typer.Option("PipeUtilization", "--aic-metrics", metavar="TEXT", help="profiling: 'aic_metrics': %s." % ", ".join(_AIC_METRICS)),
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    name_filter: Optional[List[str]] = FilterOpt,
    config: Optional[Path] = ConfigOpt,
    source: List[str] = SourceOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Print both fp_point and bp_point (and, with --ge, the names GE uses).

    With --ge, a point no GE op matches is one GE will not find: the command exits 1, says so on
    stderr, and --format profiling/env leave that point "" (GE then picks its own).

    Examples:

      pbtxt-scan points graph.pbtxt

      pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env

      pbtxt-scan points rank0/graph.pbtxt rank1/graph.pbtxt --json
    """
    if out_format not in ("text", "profiling", "env"):
        raise usage_error("choose from text, profiling, env", "--format")
    check_choice(task_trace, _TASK_TRACE, "--task-trace")
    check_choice(aic_metrics, _AIC_METRICS, "--aic-metrics")
    run = _PointsRun(_options(rule, skip_op, keep_op, name_filter, config, source), as_json, explain, quiet, ge,
                     out_format, output, task_trace, aic_metrics)
    paths = inputs_of(files, "points")
    if len(paths) > 1 and out_format != "text":
        raise usage_error("one file for --format %s (it prints one PROFILING_OPTIONS); got %d" % (out_format, len(paths)), "--format")
    codes = [_points_of(f, run, prefix=len(paths) > 1) for f in paths]
    if worst(codes):
        raise typer.Exit(worst(codes))


def _points_of(file: str, run: _PointsRun, *, prefix: bool) -> int:
    """One file's points: its rows (each ``FILE: `` first when ``prefix``) or JSON line; the exit code."""
    from .. import Answer, find_bp, find_fp

    opts = run.opts
    bp_error: Optional[PbtxtError] = None
    try:
        with open_graph(file) as g:  # one input for both searches (stdin and pipes are spooled)
            try:
                fa = find_fp(g, opts)
            except PbtxtError as e:
                raise with_source_hint(g, e, opts.sources) from None
            try:
                ba = find_bp(g, opts)
            except PbtxtError as e:
                if fa.point is None:
                    raise
                # A file cut short (training still writing it): the fp found before the cut is
                # still right, so print it, then the error.
                bp_error, ba = e, Answer("bp", None, fa.rule, str(e), [])
            if not run.quiet and bp_error is None:
                say_unmatched_ops(g, opts.skip_ops, opts.keep_ops)
    except PbtxtError as e:
        return failed(e)
    ge = run.ge
    if bp_error is not None:
        ge = None  # (and no notes, no trails: a failure is one line on stderr)
    else:
        say_notes(g)
    if run.explain and bp_error is None:  # (a failed command says one line: the error)
        _print_explain(fa)
        _print_explain(ba)
    if not run.quiet and bp_error is None:
        _say_ge_rules(file, g)
        say_ignored_filters(file, "fp", fa.rule, _filters_given(opts))
        if not run.as_json:
            _say_doubt(file, fa)
    fp_name = fa.point.name if fa.point else None
    bp_name = ba.point.name if ba.point else None
    mapped: Any = None
    unusable = False
    if ge is not None:
        try:
            mapped, fp_name, bp_name, unusable = _on_ge(fp_name, bp_name, ge)
        except PbtxtError as e:
            return failed(e)
    lead = "%s: " % file if prefix else ""
    if run.out_format != "text":
        from .. import profiling_options

        popts = profiling_options(fp_name or "", bp_name or "", output=run.output, task_trace=run.task_trace, aic_metrics=run.aic_metrics)
        out(_format_profiling(popts) if run.out_format == "profiling" else _format_env(popts))
    elif run.as_json:
        obj = {"fp": _answer_json(fa, g.name), "bp": _answer_json(ba, g.name)}
        if mapped is not None:
            obj["ge"] = mapped
        out(json.dumps(obj, ensure_ascii=False))
    else:
        for kind, ans, name in (("fp", fa, fp_name), ("bp", ba, bp_name)):
            if ans.point is None:
                out("%s%s_point  -  (%s)" % (lead, kind, ans.reason))
            else:
                where = ans.point.where
                if ans.point.function:
                    where += " in function %s" % ans.point.function
                out("%s%s_point  %s  (%s, %s, rule %s)" % (lead, kind, name or '""', ans.point.op, where, ans.rule))
    if bp_error is not None:
        return failed(bp_error)
    if fa.point is None or ba.point is None or unusable:
        return EXIT_NOT_FOUND
    return 0


def _format_profiling(opts: Dict[str, Any]) -> str:
    """Compact JSON to paste into ``PROFILING_OPTIONS`` / ``profiling_options``."""
    return json.dumps(opts, ensure_ascii=False, separators=(",", ":"))


def _format_env(opts: Dict[str, Any]) -> str:
    """Shell lines enabling profiling with ``opts``; the JSON is quoted safely for sh/bash."""
    return "export PROFILING_MODE=true\nexport PROFILING_OPTIONS=%s" % shlex.quote(_format_profiling(opts))
