"""The commands on graph files: fp, bp, points, nodes, show, stats, check. Thin: the work is in the API."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import typer

from .._errors import PbtxtError
from ._app import (
    EPILOG,
    EXIT_BAD_INPUT,
    EXIT_NOT_FOUND,
    FileArg,
    FormatOpt,
    app,
    bar,
    dialect,
    fail,
    open_graph,
    out,
    say_notes,
    plural,
    usage_error,
)

# --- commands ------------------------------------------------------------------------------


RuleOpt = typer.Option(
    "auto",
    "--rule",
    help="auto (dataflow when the graph has a data source or placeholder, else doc), "
    "dataflow (first compute op fed by the training data), or doc (the documented recipe, completed).",
)
SkipOpt = typer.Option([], "--skip-op", help="Also treat this op type as non-compute (repeatable).")
KeepOpt = typer.Option([], "--keep-op", help="Treat this catalog op type as compute (repeatable).")
FilterOpt = typer.Option(
    None, "--name-filter", help="doc rule: skip fp candidates whose name holds this (repeatable; replaces step, Dataset, seed, kernel)."
)
ConfigOpt = typer.Option(
    None, "--config", help='JSON file: {"skip_ops": [...], "keep_ops": [...], "name_filters": [...]}.', show_default=False
)


CONFIG_KEYS = ("skip_ops", "keep_ops", "name_filters")


def _options(rule: str, skip: List[str], keep: List[str], filters: Optional[List[str]], config: Optional[Path]) -> Any:
    from .._rules import DOC_NAME_FILTERS, RULES, Options

    if rule not in RULES:
        raise usage_error("choose from %s" % ", ".join(RULES), "--rule")
    skip, keep = list(skip), list(keep)
    if config is not None:
        cfg = _read_config(config)
        skip += cfg.get("skip_ops", [])
        keep += cfg.get("keep_ops", [])
        if filters is None and "name_filters" in cfg:
            filters = cfg["name_filters"]
    return Options(rule, frozenset(skip), frozenset(keep), tuple(filters) if filters else DOC_NAME_FILTERS)


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


def _answer_json(ans: Any, file: str) -> Any:
    """The answer as JSON: the same keys found or not (null where unknown), plus the reason."""
    from .._rules import Point
    from .._source import display_name

    d = ans.point.to_json() if ans.point is not None else dict.fromkeys(Point._fields)
    if ans.point is None:
        d.update(kind=ans.kind, rule=ans.rule, file=display_name(file))
    d["reason"] = ans.reason
    return d


def _print_explain(ans: Any) -> None:
    from .._rules import format_trail

    typer.echo("%s (rule %s):" % (ans.kind, ans.rule), err=True)
    for line in format_trail(ans.trail, ans.unit):
        typer.echo("  " + line, err=True)
    typer.echo("  => %s" % (ans.reason if ans.point is None else "%s at %s: %s" % (ans.point.name, ans.point.where, ans.reason)), err=True)


def _one_point(kind: str, file: str, opts: Any, as_json: bool, explain: bool) -> None:
    from .._rules import find_bp, find_fp

    try:
        with open_graph(file) as g:
            ans = (find_fp if kind == "fp" else find_bp)(g, opts)
    except PbtxtError as e:
        raise fail(e)
    say_notes(g)
    if explain:
        _print_explain(ans)
    if ans.point is None:
        if as_json:
            out(json.dumps(_answer_json(ans, file), ensure_ascii=False))
        typer.echo("%s: no %s: %s" % (file, kind, ans.reason), err=True)
        raise typer.Exit(EXIT_NOT_FOUND)
    out(json.dumps(_answer_json(ans, file), ensure_ascii=False) if as_json else ans.point.name)


def _point_command(kind: str, doc: str) -> Callable[..., None]:
    """fp and bp: the same options, a different search."""

    def command(
        file: str = FileArg,
        as_json: bool = typer.Option(
            False,
            "--json",
            help="One object: name, op, line, name_line, offset, rule, file, function, reason (line and name_line are null in a binary graph).",
        ),
        explain: bool = typer.Option(
            False, "--explain", help="Show on stderr each node considered, its line, and why it was skipped."
        ),
        rule: str = RuleOpt,
        skip_op: List[str] = SkipOpt,
        keep_op: List[str] = KeepOpt,
        name_filter: Optional[List[str]] = FilterOpt,
        config: Optional[Path] = ConfigOpt,
    ) -> None:
        _one_point(kind, file, _options(rule, skip_op, keep_op, name_filter, config), as_json, explain)

    command.__doc__ = doc
    return command


_FP_DOC = """Print fp_point: the first compute operator of forward propagation.

    The first op, in file order, that computes on the training data: fed by IteratorGetNext,
    a queue dequeue or GetNext (or a batch placeholder), directly or through Identity, Reshape
    and the like. Skipped: variables and their initializers, the input pipeline, summaries,
    save/restore. Reads forward and stops at the answer; stdout is the name alone, so
    FP=$(pbtxt-scan fp graph.pbtxt) works. A TF2 graph whose step runs in a tf.function is
    answered from that function (named in --json).

    Examples:

      pbtxt-scan fp --explain graph.pbtxt

      pbtxt-scan fp --skip-op Cast graph.pbtxt   (when the input's Cast should not count)
    """

_BP_DOC = """Print bp_point: the last operator of backward propagation.

    Reads backward from the end of the file and stops at the answer: the last op in a
    gradients scope (gradients/, gradients_N/, gradient_tape/, at any depth) that computes.
    Exit 1 for an inference graph (no gradients).

    Example: pbtxt-scan bp --json graph.pbtxt
    """

app.command("fp", epilog=EPILOG)(_point_command("fp", _FP_DOC))
app.command("bp", epilog=EPILOG)(_point_command("bp", _BP_DOC))


@app.command(epilog=EPILOG)
def points(
    file: str = FileArg,
    as_json: bool = typer.Option(False, "--json", help="One object with fp and bp."),
    explain: bool = typer.Option(False, "--explain", help="Show both trails on stderr."),
    ge: Optional[str] = typer.Option(None, "--ge", help="A GE ge_proto_*_Build.txt dump or a dump folder: map both names to GE's names."),
    out_format: str = typer.Option("text", "--format", help="text, profiling (the JSON for PROFILING_OPTIONS / profiling_options) or env (export lines)."),
    output: str = typer.Option("/tmp/profiling", "--output", help="profiling: the 'output' folder."),
    task_trace: str = typer.Option("on", "--task-trace", help="profiling: 'task_trace'."),
    aic_metrics: str = typer.Option("PipeUtilization", "--aic-metrics", help="profiling: 'aic_metrics'."),
    rule: str = RuleOpt,
    skip_op: List[str] = SkipOpt,
    keep_op: List[str] = KeepOpt,
    name_filter: Optional[List[str]] = FilterOpt,
    config: Optional[Path] = ConfigOpt,
) -> None:
    """Print both fp_point and bp_point (and, with --ge, the names GE uses).

    Examples:

      pbtxt-scan points graph.pbtxt

      pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env
    """
    from .._rules import Answer, find_bp, find_fp

    if out_format not in ("text", "profiling", "env"):
        raise usage_error("choose from text, profiling, env", "--format")
    opts = _options(rule, skip_op, keep_op, name_filter, config)
    bp_error: Optional[PbtxtError] = None
    try:
        with open_graph(file) as g:  # one input for both searches (stdin and pipes are spooled)
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
    if explain and bp_error is None:
        _print_explain(fa)
        _print_explain(ba)
    fp_name = fa.point.name if fa.point else None
    bp_name = ba.point.name if ba.point else None
    mapped: Any = None
    if ge is not None:
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
                typer.echo("%s: GE renamed %s to %s (%s)" % (kind, tf_name, m["ge_name"], m.get("kind")), err=True)
        auto = mapped.get("auto") or {}
        for kind in ("fp", "bp"):
            a = auto.get(kind) or {}
            m = mapped.get(kind) or {}
            if a.get("name") and m.get("ge_name") and a.get("name") != m.get("ge_name"):
                typer.echo("note: GE's own automatic %s would be %s, not %s" % (kind, a["name"], m["ge_name"]), err=True)
        fp_name = (mapped.get("fp") or {}).get("ge_name") or fp_name
        bp_name = (mapped.get("bp") or {}).get("ge_name") or bp_name
    if out_format != "text":
        from .._profiling import format_env, format_profiling, profiling_options

        popts = profiling_options(fp_name or "", bp_name or "", output=output, task_trace=task_trace, aic_metrics=aic_metrics)
        out(format_profiling(popts) if out_format == "profiling" else format_env(popts))
    elif as_json:
        obj = {"fp": _answer_json(fa, file), "bp": _answer_json(ba, file)}
        if mapped is not None:
            obj["ge"] = mapped
        out(json.dumps(obj, ensure_ascii=False))
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


@app.command(epilog=EPILOG)
def check(
    files: List[str] = typer.Argument(..., help="Files to validate ('-' for stdin, .gz accepted).", show_default=False),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Validate whole files against the protobuf text format grammar (binary graphs: the wire format).

    Prints 'FILE: ok (N lines, M nodes)' per valid file ('FILE: ok (N bytes, M nodes, binary
    GraphDef)' for a binary one); for the first error in a file, prints 'FILE:LINE:COL: message'
    ('FILE:offset N: message') on stderr. Exit 2 if any file is invalid or unreadable.

    Example: pbtxt-scan check graph.pbtxt
    """
    from .._api import check as _check
    from .._binary import describe

    bad = False
    for path in files:
        try:
            with open_graph(path, spool=False) as g, bar(g) as on_progress:
                st = _check(g, on_progress=on_progress)
        except PbtxtError as e:
            typer.echo(str(e), err=True)
            bad = True
            continue
        say_notes(g)
        if quiet:
            continue
        if st.binary:
            out("%s: ok (%s, %s, %s)" % (st.path, plural(st.bytes, "byte"), plural(st.nodes, "node"), describe(st.binary)))
        else:
            out("%s: ok (%s, %s)" % (st.path, plural(st.lines, "line"), plural(st.nodes, "node")))
    if bad:
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command(epilog=EPILOG)
def nodes(
    file: str = FileArg,
    jsonl: bool = typer.Option(
        False, "--jsonl", help="One JSON object per node: name, op, line, name_line, offset, inputs (line null in a binary graph)."
    ),
    fmt: str = FormatOpt,
) -> None:
    """List every node: its line, name and op, in file order.

    Works on TF GraphDef node blocks, GE ge_proto op blocks and ge_onnx node blocks
    (detected from the first fields). Pipes cleanly: pbtxt-scan nodes graph.pbtxt | head

    On a binary graph (.pb, .meta, saved_model.pb) the first column is the node's byte offset
    (binary has no lines): offset<TAB>name<TAB>op.

    Example: pbtxt-scan nodes --jsonl graph.pbtxt | grep MatMul
    """
    from .._api import NAME_AND_OP, iter_nodes

    found = False
    rows: List[str] = []  # written in batches: one write per row costs a second per GB
    try:
        with open_graph(file, spool=False) as g, bar(g) as on_progress:
            for b in iter_nodes(g, dialect(fmt), on_progress=on_progress, heads=None if jsonl else NAME_AND_OP):
                found = True
                if jsonl:
                    rows.append(json.dumps(b.to_json(), ensure_ascii=False))
                else:
                    rows.append("%d\t%s\t%s" % (b.line or b.start, b.name, b.op))  # binary: the offset
                if len(rows) >= 512:
                    out("\n".join(rows))
                    rows.clear()
    except PbtxtError as e:
        if rows:  # the nodes before the error, then the error
            out("\n".join(rows))
        raise fail(e)
    if rows:
        out("\n".join(rows))
    say_notes(g)
    if not found:
        typer.echo("%s: no nodes found" % file, err=True)
        raise typer.Exit(EXIT_NOT_FOUND)


@app.command(epilog=EPILOG)
def show(
    file: str = FileArg,
    name: str = typer.Argument(..., help="The node's exact name (as in its name: field).", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the parsed block as JSON (every field a list, with lines)."),
    fmt: str = FormatOpt,
) -> None:
    """Print a node's own text with its line numbers (or, with --json, the parsed block).

    A node of a binary graph is printed as text format (as tf.io.write_graph writes it), after a
    '# FILE offset N' comment; --json gives line null, its offset, and lines counted in that text.

    Example: pbtxt-scan show graph.pbtxt dense/MatMul
    """
    try:
        with open_graph(file) as g:
            _show(g, name, as_json, fmt)
    except PbtxtError as e:
        raise fail(e)


def _show(g: Any, name: str, as_json: bool, fmt: str) -> None:
    from .._dialect import NAME_AND_OP, named

    f = dialect(fmt)
    d = g.dialect if f is None else named(f)
    hit = next((b for b in g.blocks(d.path, NAME_AND_OP) if b.name == name), None)
    if hit is None:
        say_notes(g)
        typer.echo("%s: no node named %r" % (g.name, name), err=True)
        raise typer.Exit(EXIT_NOT_FOUND)
    if as_json:
        msg = g.parse(hit)
        obj = {"name": hit.name, "op": hit.op, "line": hit.line or None, "offset": hit.start}
        try:
            obj["block"] = msg[0].value.to_data(lines=True)
            text = json.dumps(obj, ensure_ascii=False, indent=2)
        except RecursionError:
            raise PbtxtError("nested too deeply to print as JSON (use show without --json)", hit.line, hit.column, g.name) from None
        say_notes(g)
        out(text)
        return
    text = g.read(hit).decode("utf-8", "replace")
    say_notes(g)
    if hit.binary:  # text format made from the NodeDef: no file lines to number
        out("# %s offset %d (%s, a %d-byte NodeDef)" % (g.name, hit.start, g.binary, hit.end - hit.start))
        out(text.rstrip("\n"))
        return
    width = len(str(hit.line + text.count("\n")))
    for i, line in enumerate(text.split("\n")):
        prefix = " " * (hit.column - 1) if i == 0 else ""
        out("%*d  %s%s" % (width, hit.line + i, prefix, line))


@app.command(epilog=EPILOG)
def stats(
    file: str = FileArg,
    top: int = typer.Option(15, "--top", "-n", help="How many op types to list (0 for all)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    fmt: str = FormatOpt,
) -> None:
    """Bytes, lines, node count and the most common op types (validates the file on the way).

    Example: pbtxt-scan stats --top 5 graph.pbtxt
    """
    from .._api import stats as _stats
    from .._binary import describe

    if top < 0:
        raise usage_error("%d is negative: give 0 for every op type, or a positive count" % top, "--top")
    try:
        with open_graph(file, spool=False) as g, bar(g) as on_progress:
            st = _stats(g, dialect(fmt), on_progress=on_progress)
    except PbtxtError as e:
        raise fail(e)
    say_notes(g)
    if as_json:
        out(json.dumps(st.to_json(top or None), ensure_ascii=False))
        return
    out("file     %s" % st.path)
    out("format   %s" % (st.format if st.binary is None else "%s (%s)" % (st.format, describe(st.binary))))
    out("bytes    %d" % st.bytes)
    out("lines    %s" % ("-" if st.lines is None else st.lines))
    out("nodes    %d" % st.nodes)
    out("seconds  %.3f" % st.seconds)
    ops = sorted(st.ops.items(), key=lambda kv: (-kv[1], kv[0]))
    if top:
        ops = ops[:top]
    width = max((len(k) for k, _ in ops), default=0)
    for k, v in ops:
        out("  %-*s %d" % (width, k, v))
