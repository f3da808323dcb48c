"""The point commands: fp, bp, points (and, with --ge, the names GE uses). Thin: the search is
``pbtxt_scan.find_fp``/``find_bp``, the GE mapping ``pbtxt_scan.ge``, the profiling options ``pbtxt_scan.profiling_options``."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from .. import PbtxtError
from ._app import (
    EXIT_NOT_FOUND, FileArg, InputKindOpt, JsonOpt, QuietOpt, command, dialect, emit, fail, format_option, note,
    open_graph, out, output_format, renamed, say_notes, usage_error,
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
ExplainOpt = typer.Option(False, "--explain", help="Show on stderr each node considered, its line, and why it was skipped.")

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
        note("%s: %s %s is ambiguous: %s" % (file, ans.kind, ans.point.name, ans.doubt))


def _say_ge_rules(file: str, g: Any) -> None:
    """fp/bp on a GE dump apply TensorFlow's rules to GE's op names: say so, once."""
    if getattr(g.dialect, "name", "").startswith("ge"):
        note(
            "%s: a GE dump: fp and bp here apply TensorFlow's rules to GE's op names; "
            "'pbtxt-scan ge-auto %s' gives GE's own choice" % (file, file)
        )


def _open(file: str, input_kind: str) -> Any:
    """The input, read as ``--input-kind`` says (auto: as its content says)."""
    kind = dialect(input_kind)
    g = open_graph(file)
    if kind is not None:
        from .. import DIALECTS

        g.dialect = DIALECTS[kind]
    return g


def _one_point(kind: str, file: str, opts: Any, *, as_json: bool, explain: bool, input_kind: str) -> None:
    from .. import find_bp, find_fp

    try:
        with _open(file, input_kind) as g:
            ans = (find_fp if kind == "fp" else find_bp)(g, opts)
    except PbtxtError as e:
        raise fail(e)
    say_notes(g)
    if explain:
        _print_explain(ans)
    _say_ge_rules(file, g)
    if not as_json:
        _say_doubt(file, ans)
    if ans.point is None:
        if as_json:
            emit(_answer_json(ans, g.name))
        typer.echo("%s: no %s: %s" % (file, kind, ans.reason), err=True)
        raise typer.Exit(EXIT_NOT_FOUND)
    if as_json:
        emit(_answer_json(ans, g.name))
    else:
        out(ans.point.name)


_POINT_FORMAT = format_option("text")


def _fp_command(
    *,
    file: str = FileArg,
    as_json: bool = JsonOpt,
    out_format: str = _POINT_FORMAT,
    explain: bool = ExplainOpt,
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    name_filter: Optional[List[str]] = FilterOpt,
    config: Optional[Path] = ConfigOpt,
    source: List[str] = SourceOpt,
    input_kind: str = InputKindOpt,
    quiet: bool = QuietOpt,
) -> None:
    as_json = output_format(out_format, as_json, ("text",)) == "json"
    opts = _options(rule, skip_op, keep_op, name_filter, config, source)
    _one_point("fp", file, opts, as_json=as_json, explain=explain, input_kind=input_kind)


def _bp_command(
    *,
    file: str = FileArg,
    as_json: bool = JsonOpt,
    out_format: str = _POINT_FORMAT,
    explain: bool = ExplainOpt,
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    config: Optional[Path] = ConfigOpt,
    input_kind: str = InputKindOpt,
    quiet: bool = QuietOpt,
) -> None:
    as_json = output_format(out_format, as_json, ("text",)) == "json"
    opts = _options(rule, skip_op, keep_op, None, config)
    _one_point("bp", file, opts, as_json=as_json, explain=explain, input_kind=input_kind)


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

_fp_command.__doc__ = _FP_DOC
_bp_command.__doc__ = _BP_DOC
command("fp", short="Print fp_point, the first forward compute op.")(_fp_command)
command("bp", short="Print bp_point, the last backward op.")(_bp_command)

# --format on points: the outputs a profiling run is configured from.
POINTS_FORMATS = ("text", "profiling", "env", "tf1-estimator", "tf1-session", "tf2")


@command(short="Print fp_point and bp_point, or the options to paste.")
def points(
    *,
    file: str = FileArg,
    as_json: bool = JsonOpt,
    out_format: str = typer.Option(
        "text", "--format", metavar="FORMAT",
        help="text; profiling (the JSON for PROFILING_OPTIONS / profiling_options); env (export lines); "
        "tf1-estimator (NPURunConfig with a ProfilingConfig); tf1-session (a tf.compat.v1.Session config's "
        "custom_op parameter_map); tf2 (npu.global_options()); json (as --json).",
    ),
    explain: bool = typer.Option(False, "--explain", help="Show both trails on stderr."),
    ge: Optional[str] = typer.Option(None, "--ge", metavar="PATH", help="A GE ge_proto_*_Build.txt dump or a dump folder: map both names to GE's names."),
    profiling_output: str = typer.Option("/tmp/profiling", "--profiling-output", metavar="DIR", help="The profiler's 'output' folder (profiling, env, tf1-*, tf2)."),
    old_output: Optional[str] = typer.Option(None, "--output", hidden=True),
    task_trace: str = typer.Option("on", "--task-trace", metavar="TEXT", help="profiling: 'task_trace'."),
    aic_metrics: str = typer.Option("PipeUtilization", "--aic-metrics", metavar="TEXT", help="profiling: 'aic_metrics'."),
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    name_filter: Optional[List[str]] = FilterOpt,
    config: Optional[Path] = ConfigOpt,
    source: List[str] = SourceOpt,
    input_kind: str = InputKindOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Print both fp_point and bp_point (and, with --ge, the names GE uses).

    --format profiling, env, tf1-estimator, tf1-session or tf2 prints, ready to paste, the
    profiling options with both points, for PROFILING_OPTIONS, a TF1 Estimator, a TF1 session
    or TF2.

    Examples:

      pbtxt-scan points graph.pbtxt

      pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env

      pbtxt-scan points graph.pbtxt --format tf1-session --profiling-output /home/me/prof
    """
    from .. import Answer, find_bp, find_fp

    fmt = output_format(out_format, as_json, POINTS_FORMATS)
    if old_output is not None:
        renamed("--output", "--profiling-output")
        profiling_output = old_output
    opts = _options(rule, skip_op, keep_op, name_filter, config, source)
    bp_error: Optional[PbtxtError] = None
    try:
        with _open(file, input_kind) as g:  # one input for both searches (stdin and pipes are spooled)
            fa = find_fp(g, opts)
            try:
                ba = find_bp(g, opts)
            except PbtxtError as e:
                if fa.point is None:
                    raise
                # A file cut short (training still writing it): the fp found before the cut is
                # still right, so print it, then the error.
                bp_error, ba = e, Answer("bp", None, fa.rule, str(e), [])
    except PbtxtError as e:
        raise fail(e)
    if bp_error is not None:
        ge = None  # (and no notes, no trails: a failure is one line on stderr)
    else:
        say_notes(g)
    if explain and bp_error is None:  # (a failed command says one line: the error)
        _print_explain(fa)
        _print_explain(ba)
    if bp_error is None:
        _say_ge_rules(file, g)
        if fmt != "json":
            _say_doubt(file, fa)
    fp_name = fa.point.name if fa.point else None
    bp_name = ba.point.name if ba.point else None
    mapped: Any = None
    if ge is not None:
        mapped = _map_on_ge(fp_name, bp_name, ge)
        fp_name = (mapped.get("fp") or {}).get("ge_name") or fp_name
        bp_name = (mapped.get("bp") or {}).get("ge_name") or bp_name
    if fmt == "json":
        obj = {"fp": _answer_json(fa, g.name), "bp": _answer_json(ba, g.name)}
        if mapped is not None:
            obj["ge"] = _ge_json(mapped)
        emit(obj)
    elif fmt != "text":
        from .. import profiling_options
        from ._paste import paste

        popts = profiling_options(fp_name or "", bp_name or "", output=profiling_output, task_trace=task_trace, aic_metrics=aic_metrics)
        out(paste(fmt, popts))
    else:
        for kind, ans, name in (("fp", fa, fp_name), ("bp", ba, bp_name)):
            if ans.point is None:
                out("%s_point  -  (%s)" % (kind, ans.reason))
            else:
                where = ans.point.where
                if ans.point.function:
                    where += " in function %s" % ans.point.function
                out("%s_point  %s  (%s, %s, rule %s)" % (kind, name, ans.point.op, where, ans.rule))
    if bp_error is not None:
        raise fail(bp_error)
    if fa.point is None or ba.point is None:
        raise typer.Exit(EXIT_NOT_FOUND)


def _map_on_ge(fp_name: Optional[str], bp_name: Optional[str], ge: str) -> Dict[str, Any]:
    """points --ge: the names GE uses for both points, with a stderr line for each one GE renamed,
    will not find, or would pick otherwise by itself."""
    from .. import ge as _ge

    try:
        mapped = _ge.map_points(fp_name, bp_name, ge)
    except PbtxtError as e:
        raise fail(e)
    for kind in ("fp", "bp"):
        m = mapped.get(kind) or {}
        tf_name = fp_name if kind == "fp" else bp_name
        if tf_name and not m.get("ge_name"):
            typer.echo("%s: no GE op matches %s: GE will not find this point (is it the training graph's dump?)" % (kind, tf_name), err=True)
        elif m.get("ge_name") and m.get("ge_name") != tf_name:
            note("%s: GE renamed %s to %s (%s)" % (kind, tf_name, m["ge_name"], m.get("kind")))
    auto = mapped.get("ge_auto") or {}
    for kind in ("fp", "bp"):
        a = auto.get(kind) or {}
        m = mapped.get(kind) or {}
        if a.get("name") and m.get("ge_name") and a.get("name") != m.get("ge_name"):
            note("note: GE's own automatic %s would be %s, not %s" % (kind, a["name"], m["ge_name"]))
    return mapped


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
