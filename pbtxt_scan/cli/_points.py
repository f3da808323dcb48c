"""The point commands: fp, bp, points (and, with --ge, the names GE uses). Thin: the search is
``pbtxt_scan.find_fp``/``find_bp``, the GE mapping ``pbtxt_scan.ge``, the profiling options ``pbtxt_scan.profiling_options``."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import typer

from .._kit import NamedTuple
from .. import PbtxtError
from ._escape import shown, terminal_safe
from ._app import (
    Common, InputKindOpt, JsonOpt, LenientOpt, RecordOpt, RunOpt, QuietOpt, command, dialect, format_option, open_graph, output_format,
    usage_error,
)
from ._output import EXIT_NOT_FOUND, Console, emit, out
from ._checks import inputs_of, say_ignored_filters, say_unmatched_ops, with_source_hint

FilesArg = typer.Argument(
    None,
    help="Graphs (graph.pbtxt, .pb, .meta, saved_model.pb, a folder holding one, a GE dump; '-' or none with a "
    "pipe: stdin; .gz accepted). Several files: one answer each (text rows start with the file), exit code the worst.",
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
TrainOpOpt = typer.Option(
    None, "--train-op", metavar="NAME",
    help="The optimizer whose step you profile, when several train the graph (a GAN's d_adam, an "
    "actor's and a critic's): its update op, its name scope, the train op or tf.group your script runs, or "
    "a step function's name. "
    "bp is then the last gradient op that optimizer applies, and fp the first op its step runs that "
    "reads a trained variable. Use it when fp or bp says it is ambiguous.",
    show_default=False,
)
ExplainOpt = typer.Option(False, "--explain", help="Show on stderr each node considered, its line, and why it was skipped.")
NullOpt = typer.Option(
    False, "--null", "-z", help="Print each answer's name followed by a NUL, not a newline, unescaped (several files: FILE, NUL, "
    "then the name; for xargs -0)."
)


def null_of(null: bool, fmt: str) -> bool:
    """``-z``, refused with an output that is not the names (``--json``, ``--format`` other than text)."""
    if null and fmt != "text":
        raise usage_error("NUL-ended names are text output: not with %s" % ("--json" if fmt == "json" else "--format " + fmt), "-z")
    return null

CONFIG_KEYS = ("skip_ops", "keep_ops", "name_filters")


def options_of(
    rule: str, *, skip: List[str], keep: List[str], filters: Optional[List[str]] = None, config: Optional[Path] = None,
    sources: Optional[List[str]] = None, train_op: Optional[str] = None,
) -> Any:
    """The rules' :class:`Options` from the command's options (--rule, --skip-op, --keep-op,
    --name-filter, --config's lists added, --source, --train-op)."""
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
    opts = Options(rule, frozenset(skip), frozenset(keep), sources=frozenset(sources or ()), train_op=train_op or None)
    return opts._replace(name_filters=tuple(filters)) if filters else opts


def _read_config(config: Path) -> Dict[str, List[str]]:
    """The --config JSON: an object whose keys are among CONFIG_KEYS, each a list of strings."""
    import json

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


def answer_json(ans: Any, name: str) -> Any:
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


def print_explain(ans: Any) -> None:
    from .. import explain

    typer.echo("%s (rule %s):" % (ans.kind, ans.rule), err=True)
    for line in explain(ans):  # (the names in it with their control characters escaped: stderr is a terminal too)
        typer.echo("  " + terminal_safe(line), err=True)
    typer.echo("  => %s" % terminal_safe(ans.reason if ans.point is None else "%s at %s: %s" % (ans.point.name, ans.point.where, ans.reason)), err=True)
    if ans.point is not None:
        typer.echo("  confidence: %s%s" % (ans.confidence, ": " + ans.doubt if ans.doubt else ""), err=True)
    for a in ans.alternatives:
        typer.echo("  alternative %s (%s, %s): %s" % (a.point.name, a.point.op, a.point.where, a.reason), err=True)


def say_doubt(con: Console, file: str, ans: Any) -> None:
    """One stderr line for an answer that stands but is ambiguous (stdout keeps the name alone)."""
    if ans.point is not None and ans.confidence == "ambiguous":
        con.note("%s: %s %s is ambiguous: %s" % (file, ans.kind, ans.point.name, ans.doubt))


def say_none(file: str, ans: Any) -> None:
    """The stderr line of a point not found: why (on a GE dump, what to run instead)."""
    typer.echo("%s: no %s: %s" % (file, ans.kind, ans.reason), err=True)


def fp_of(g: Any, opts: Any) -> Any:
    """fp by TensorFlow's rules, an error naming the ``--source`` nodes that are not in the file."""
    from .. import find_fp

    try:
        return find_fp(g, opts)
    except PbtxtError as e:
        raise with_source_hint(g, e, opts.sources) from None


def is_ge(g: Any) -> bool:
    """Whether the input is read as a GE dump (its content says so, or ``--input-kind``)."""
    return getattr(g.dialect, "name", "") in ("ge_proto", "ge_onnx")


def ge_points(g: Any) -> Optional[Tuple[Any, Any]]:
    """A GE dump's fp and bp: GE's own choice (rule ge), from one reading of the dump; ``None``
    for a TensorFlow graph."""
    if not is_ge(g):
        return None
    from .. import points

    return tuple(points(g))


def say_ge_rule(con: Console, file: str, g: Any, opts: Any, answers: Sequence[Any]) -> bool:
    """On a GE dump, say once that the answers are GE's own choice (and that the TensorFlow rules'
    options do not apply); whether it is one (then the TensorFlow rules' notes do not apply)."""
    if not is_ge(g):
        return False
    if any(a.point is not None for a in answers):
        con.note("%s: a GE dump: the points GE picks by itself (rule ge, as ge-auto computes them); "
             "for a TensorFlow graph's points in GE's names: pbtxt-scan points GRAPH --ge %s" % (file, file))
    given = [flag for flag, on in (
        ("--rule", opts.rule != "auto"), ("--skip-op", opts.skip_ops), ("--keep-op", opts.keep_ops),
        ("--name-filter", filters_given(opts)), ("--source", opts.sources)) if on]
    if given:
        con.note("%s: %s ignored: TensorFlow's rules' option%s, not GE's" % (file, ", ".join(given), "" if len(given) == 1 else "s"))
    return True


def open_input(file: str, input_kind: str, record: Optional[str] = None, run: Optional[str] = None, *, lenient: bool = False) -> Any:
    """The input, read as ``--input-kind`` says (auto: as its content says); ``record``: an event
    file's record to read the graph from (``--record``); ``run``: a logdir's run (``--run``);
    ``lenient``: ``--lenient``."""
    return open_graph(file, record=record, kind=dialect(input_kind), run=run, lenient=lenient)


class _Asked(NamedTuple):
    """How fp or bp answers each file it is given."""

    common: Common
    opts: Any
    as_json: bool
    explain: bool
    prefix: bool  # several files: each text row starts with its file
    null: bool = False  # -z: the name (after the file and a NUL, when ``prefix``) and a NUL, unescaped


def _one_point(kind: str, file: str, asked: _Asked) -> int:
    """One file's fp or bp: its row (``FILE: NAME`` when ``prefix``) or JSON line; the exit code."""
    from .. import find_bp, find_fp

    opts, con = asked.opts, asked.common.console
    try:
        with open_input(file, asked.common.input_kind, asked.common.record, asked.common.run, lenient=asked.common.lenient) as g:
            try:
                ans = (find_fp if kind == "fp" else find_bp)(g, opts)  # (a GE dump: GE's own choice)
            except PbtxtError as e:
                raise with_source_hint(g, e, opts.sources) from None
            if not con.quiet and not is_ge(g):
                say_unmatched_ops(g, opts.skip_ops, opts.keep_ops)
    except PbtxtError as e:
        return con.failed(e)
    con.notes(g)
    if asked.explain:
        print_explain(ans)
    if not say_ge_rule(con, file, g, opts, [ans]) and not con.quiet:
        say_ignored_filters(file, kind, ans.rule, filters_given(opts))
    if not asked.as_json:
        say_doubt(con, file, ans)
    if ans.point is None:
        if asked.as_json:
            emit(answer_json(ans, g.name))
        say_none(file, ans)
        return EXIT_NOT_FOUND
    if asked.as_json:
        emit(answer_json(ans, g.name))
    elif asked.null:
        out("%s\0%s" % (file, ans.point.name) if asked.prefix else ans.point.name, end="\0")
    else:
        out("%s: %s" % (file, shown(ans.point.name)) if asked.prefix else shown(ans.point.name))
    return 0


def filters_given(opts: Any) -> Any:
    """The --name-filter values (or the config's), ``None`` when the rule's own are in use."""
    from .. import Options

    return opts.name_filters if opts.name_filters != Options().name_filters else None


def worst(codes: List[int]) -> int:
    """The exit code of several files: 2 (bad input) over 1 (nothing found) over 0."""
    return max(codes, default=0)


def _each(kind: str, files: Optional[List[str]], common: Common, opts: Any, *, as_json: bool, explain: bool, null: bool) -> None:
    paths = inputs_of(files, kind)
    asked = _Asked(common, opts, as_json, explain, len(paths) > 1, null)
    code = worst([_one_point(kind, f, asked) for f in paths])
    if code:
        raise typer.Exit(code)


_POINT_FORMAT = format_option("text")


def _fp_command(
    common: Common,
    *,
    files: Optional[List[str]] = FilesArg,
    as_json: bool = JsonOpt,
    out_format: str = _POINT_FORMAT,
    explain: bool = ExplainOpt,
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
    null: bool = NullOpt,
    quiet: bool = QuietOpt,
) -> None:
    fmt = output_format(common.out_format, common.as_json, ("text",))
    opts = options_of(rule, skip=skip_op, keep=keep_op, filters=name_filter, config=config, sources=source, train_op=train_op)
    _each("fp", files, common, opts, as_json=fmt == "json", explain=explain, null=null_of(null, fmt))


def _bp_command(
    common: Common,
    *,
    files: Optional[List[str]] = FilesArg,
    as_json: bool = JsonOpt,
    out_format: str = _POINT_FORMAT,
    explain: bool = ExplainOpt,
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    config: Optional[Path] = ConfigOpt,
    train_op: Optional[str] = TrainOpOpt,
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    run: Optional[str] = RunOpt,
    lenient: bool = LenientOpt,
    null: bool = NullOpt,
    quiet: bool = QuietOpt,
) -> None:
    fmt = output_format(common.out_format, common.as_json, ("text",))
    opts = options_of(rule, skip=skip_op, keep=keep_op, config=config, train_op=train_op)
    _each("bp", files, common, opts, as_json=fmt == "json", explain=explain, null=null_of(null, fmt))


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
    --json). A GE dump file is answered by GE's own rule (rule ge, as ge-auto): the fp GE
    picks by itself; exit 1 where GE would pick none.

    Examples:

      pbtxt-scan fp --explain graph.pbtxt

      pbtxt-scan fp --source local/Placeholder graph.pbtxt

      pbtxt-scan fp --keep-op Cast graph.pbtxt   (when the input's Cast should count)

      pbtxt-scan fp -z model_dir/ | xargs -0 pbtxt-scan show model_dir/
    """

_BP_DOC = """Print bp_point: the last operator of backward propagation.

    Reads backward from the end of the file and stops at the answer: the last op in a
    gradients scope (gradients/, gradients_N/, gradient_tape/, at any depth) that computes.
    Exit 1 for an inference graph (no gradients). A GE dump file: the bp GE picks by itself
    (rule ge, as ge-auto).

    Examples:

      pbtxt-scan bp --json graph.pbtxt

      pbtxt-scan bp -z graph.pbtxt | xargs -0 pbtxt-scan show graph.pbtxt --context 1
    """

_fp_command.__doc__ = _FP_DOC
_bp_command.__doc__ = _BP_DOC
command("fp", short="Print fp_point, the first forward compute op.")(_fp_command)
command("bp", short="Print bp_point, the last backward op.")(_bp_command)
