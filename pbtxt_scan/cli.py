"""The ``pbtxt-scan`` command line: a thin layer over the Python API.

Results go to stdout (one per line, or JSON), diagnostics to stderr.
Exit codes: 0 found / valid, 1 looked and found nothing, 2 usage error or unreadable / invalid input,
130 interrupted.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer

from . import __version__
from ._errors import PbtxtError

EXIT_NOT_FOUND = 1
EXIT_BAD_INPUT = 2

_EPILOG = (
    "Exit codes: 0 found/valid, 1 looked and found nothing, 2 usage error or unreadable/invalid input, "
    "130 interrupted."
)

app = typer.Typer(
    name="pbtxt-scan",
    help=(
        "Find Ascend profiling points (fp_point, bp_point) in TensorFlow graph.pbtxt files and GE dumps, "
        "streaming, in constant memory, without TensorFlow or protobuf.\n\n"
        "Examples:\n\n"
        "  pbtxt-scan points graph.pbtxt\n\n"
        "  pbtxt-scan fp --explain graph.pbtxt\n\n"
        "  pbtxt-scan nodes graph.pbtxt | head\n\n"
        "  pbtxt-scan show graph.pbtxt dense/MatMul\n\n"
        "  pbtxt-scan stats --top 5 graph.pbtxt\n\n"
        "  pbtxt-scan check graph.pbtxt ge_proto_00000042_graph_1_Build.txt\n\n"
        "  pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env"
    ),
    epilog=_EPILOG,
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

FORMATS = "auto, graphdef, function, ge_proto, ge_onnx"


def _version(value: bool) -> None:
    if value:
        typer.echo("pbtxt-scan %s" % __version__)
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """pbtxt-scan: fp/bp profiling points from graph.pbtxt and GE dumps."""


# --- helpers -------------------------------------------------------------------------------


def _fail(err: PbtxtError) -> "typer.Exit":
    typer.echo(str(err), err=True)
    return typer.Exit(EXIT_BAD_INPUT)


def _out(line: str) -> None:
    try:
        sys.stdout.write(line + "\n")
    except BrokenPipeError:  # `| head` has read enough: stop quietly, successfully
        _quiet_stdout()
        raise typer.Exit(0) from None


def _progress(path: str) -> "Any":
    """A rich progress bar on stderr for long scans of a real file, only when stderr is a terminal."""
    if path == "-" or not sys.stderr.isatty() or os.environ.get("PBTXT_SCAN_NO_PROGRESS"):
        return None
    from ._source import file_size

    size = file_size(path)
    if not size or size < (64 << 20):
        return None
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn
    from rich.console import Console

    return _Bar(Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ), os.path.basename(path), size)


class _Bar:
    def __init__(self, progress: Any, label: str, size: int) -> None:
        self.p = progress
        self.task = progress.add_task(label, total=size)
        self._last = 0

    def __enter__(self) -> Callable[[int], None]:
        self.p.__enter__()
        return self.update

    def __exit__(self, *a: Any) -> None:
        self.p.__exit__(*a)

    def update(self, offset: int) -> None:
        if offset - self._last >= (4 << 20):
            self._last = offset
            self.p.update(self.task, completed=offset)


class _NoBar:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


def _bar(path: str) -> Any:
    return _progress(path) or _NoBar()


FileArg = typer.Argument(..., help="A graph.pbtxt or GE dump: a path, '-' for stdin, or a .gz file.", show_default=False)


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


def _options(rule: str, skip: List[str], keep: List[str], filters: Optional[List[str]], config: Optional[Path]) -> Any:
    from ._rules import DOC_NAME_FILTERS, RULES, Options

    if rule not in RULES:
        raise typer.BadParameter("choose from %s" % ", ".join(RULES), param_hint="--rule")
    skip, keep = list(skip), list(keep)
    if config is not None:
        try:
            cfg = json.loads(Path(config).read_text(encoding="utf-8"))
            skip += list(cfg.get("skip_ops", []))
            keep += list(cfg.get("keep_ops", []))
            if filters is None and "name_filters" in cfg:
                filters = list(cfg["name_filters"])
        except (OSError, ValueError, AttributeError, TypeError) as e:
            raise typer.BadParameter("cannot read %s: %s" % (config, e), param_hint="--config")
    return Options(rule, frozenset(skip), frozenset(keep), tuple(filters) if filters else DOC_NAME_FILTERS)


def _answer_json(ans: Any) -> Any:
    if ans.point is None:
        return {"name": None, "rule": ans.rule, "reason": ans.reason}
    d = ans.point.to_json()
    d["reason"] = ans.reason
    return d


def _print_explain(ans: Any) -> None:
    from ._rules import format_trail

    typer.echo("%s (rule %s):" % (ans.kind, ans.rule), err=True)
    for line in format_trail(ans.trail if ans.kind == "fp" else ans.trail):
        typer.echo("  " + line, err=True)
    typer.echo("  => %s" % (ans.reason if ans.point is None else "%s at line %d: %s" % (ans.point.name, ans.point.line, ans.reason)), err=True)


def _one_point(kind: str, file: str, opts: Any, as_json: bool, explain: bool) -> None:
    from ._rules import find_bp, find_fp

    try:
        ans = (find_fp if kind == "fp" else find_bp)(file, opts)
    except PbtxtError as e:
        raise _fail(e)
    if explain:
        _print_explain(ans)
    if ans.point is None:
        if as_json:
            _out(json.dumps(_answer_json(ans)))
        typer.echo("%s: no %s: %s" % (file, kind, ans.reason), err=True)
        raise typer.Exit(EXIT_NOT_FOUND)
    _out(json.dumps(_answer_json(ans), ensure_ascii=False) if as_json else ans.point.name)


def _point_command(kind: str, doc: str) -> Callable[..., None]:
    """fp and bp: the same options, a different search."""

    def command(
        file: str = FileArg,
        as_json: bool = typer.Option(
            False, "--json", help="One object: name, op, line, name_line, offset, rule, file, function, reason."
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

app.command("fp", epilog=_EPILOG)(_point_command("fp", _FP_DOC))
app.command("bp", epilog=_EPILOG)(_point_command("bp", _BP_DOC))


@app.command(epilog=_EPILOG)
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
    from ._rules import find_bp, find_fp

    if out_format not in ("text", "profiling", "env"):
        raise typer.BadParameter("choose from text, profiling, env", param_hint="--format")
    opts = _options(rule, skip_op, keep_op, name_filter, config)
    from ._input import GraphFile

    try:
        with GraphFile.open(file) as g:  # one input for both searches (stdin and pipes are spooled)
            fa = find_fp(g, opts)
            ba = find_bp(g, opts)
    except PbtxtError as e:
        raise _fail(e)
    if explain:
        _print_explain(fa)
        _print_explain(ba)
    fp_name = fa.point.name if fa.point else None
    bp_name = ba.point.name if ba.point else None
    mapped: Any = None
    if ge is not None:
        from . import ge as _ge

        try:
            mapped = _ge.map_points(fp_name, bp_name, ge)
        except PbtxtError as e:
            raise _fail(e)
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
        from ._profiling import format_env, format_profiling, profiling_options

        popts = profiling_options(fp_name or "", bp_name or "", output=output, task_trace=task_trace, aic_metrics=aic_metrics)
        _out(format_profiling(popts) if out_format == "profiling" else format_env(popts))
    elif as_json:
        obj = {"fp": _answer_json(fa), "bp": _answer_json(ba)}
        if mapped is not None:
            obj["ge"] = mapped
        _out(json.dumps(obj, ensure_ascii=False))
    else:
        for kind, ans, name in (("fp", fa, fp_name), ("bp", ba, bp_name)):
            if ans.point is None:
                _out("%s_point  -  (%s)" % (kind, ans.reason))
            else:
                where = "line %d" % ans.point.line
                if ans.point.function:
                    where += " in function %s" % ans.point.function
                _out("%s_point  %s  (%s, %s, rule %s)" % (kind, name, ans.point.op, where, ans.rule))
    if fa.point is None or ba.point is None:
        raise typer.Exit(EXIT_NOT_FOUND)


@app.command(epilog=_EPILOG)
def check(
    files: List[str] = typer.Argument(..., help="Files to validate ('-' for stdin, .gz accepted).", show_default=False),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing on success."),
) -> None:
    """Validate whole files against the protobuf text format grammar.

    Prints 'FILE: ok (N lines)' per valid file; for the first error in a file, prints
    'FILE:LINE:COL: message' on stderr. Exit 2 if any file is invalid or unreadable.

    Example: pbtxt-scan check graph.pbtxt
    """
    from ._api import check as _check

    bad = False
    for path in files:
        try:
            with _bar(path) as on_progress:
                st = _check(path, on_progress=on_progress)
        except PbtxtError as e:
            typer.echo(str(e), err=True)
            bad = True
            continue
        if not quiet:
            _out("%s: ok (%d lines, %d nodes)" % (st.path, st.lines, st.nodes))
    if bad:
        raise typer.Exit(EXIT_BAD_INPUT)


@app.command(epilog=_EPILOG)
def nodes(
    file: str = FileArg,
    jsonl: bool = typer.Option(False, "--jsonl", help="One JSON object per node: name, op, line, name_line, offset, inputs."),
    fmt: str = typer.Option("auto", "--format", help="What the file is: %s." % FORMATS),
) -> None:
    """List every node: its line, name and op, in file order.

    Works on TF GraphDef node blocks, GE ge_proto op blocks and ge_onnx node blocks
    (detected from the first fields). Pipes cleanly: pbtxt-scan nodes graph.pbtxt | head

    Example: pbtxt-scan nodes --jsonl graph.pbtxt | grep MatMul
    """
    from ._api import NAME_AND_OP, iter_nodes

    found = False
    rows: List[str] = []  # written in batches: one write per row costs a second per GB
    try:
        with _bar(file) as on_progress:
            for b in iter_nodes(file, _fmt(fmt), on_progress=on_progress, heads=None if jsonl else NAME_AND_OP):
                found = True
                if jsonl:
                    rows.append(json.dumps(b.to_json(), ensure_ascii=False))
                else:
                    rows.append("%d\t%s\t%s" % (b.line, b.name, b.op))
                if len(rows) >= 512:
                    _out("\n".join(rows))
                    rows.clear()
    except PbtxtError as e:
        if rows:  # the nodes before the error, then the error
            _out("\n".join(rows))
        raise _fail(e)
    if rows:
        _out("\n".join(rows))
    if not found:
        typer.echo("%s: no nodes found" % file, err=True)
        raise typer.Exit(EXIT_NOT_FOUND)


@app.command(epilog=_EPILOG)
def show(
    file: str = FileArg,
    name: str = typer.Argument(..., help="The node's exact name (as in its name: field).", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print the parsed block as JSON (every field a list, with lines)."),
    fmt: str = typer.Option("auto", "--format", help="What the file is: %s." % FORMATS),
) -> None:
    """Print a node's own text with its line numbers (or, with --json, the parsed block).

    Example: pbtxt-scan show graph.pbtxt dense/MatMul
    """
    from ._input import GraphFile

    try:
        with GraphFile.open(file) as g:
            _show(g, name, as_json, fmt)
    except PbtxtError as e:
        raise _fail(e)


def _show(g: Any, name: str, as_json: bool, fmt: str) -> None:
    from ._dialect import NAME_AND_OP, named

    f = _fmt(fmt)
    d = g.dialect if f is None else named(f)
    hit = next((b for b in g.blocks(d.path, NAME_AND_OP) if b.name == name), None)
    if hit is None:
        typer.echo("%s: no node named %r" % (g.name, name), err=True)
        raise typer.Exit(EXIT_NOT_FOUND)
    if as_json:
        msg = g.parse(hit)
        out = {"name": hit.name, "op": hit.op, "line": hit.line, "offset": hit.start}
        try:
            out["block"] = msg[0].value.to_data(lines=True)
            text = json.dumps(out, ensure_ascii=False, indent=2)
        except RecursionError:
            raise PbtxtError("nested too deeply to print as JSON (use show without --json)", hit.line, hit.column, g.name) from None
        _out(text)
        return
    text = g.read(hit).decode("utf-8", "replace")
    width = len(str(hit.line + text.count("\n")))
    for i, line in enumerate(text.split("\n")):
        prefix = " " * (hit.column - 1) if i == 0 else ""
        _out("%*d  %s%s" % (width, hit.line + i, prefix, line))


@app.command(epilog=_EPILOG)
def stats(
    file: str = FileArg,
    top: int = typer.Option(15, "--top", "-n", help="How many op types to list (0 for all)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    fmt: str = typer.Option("auto", "--format", help="What the file is: %s." % FORMATS),
) -> None:
    """Bytes, lines, node count and the most common op types (validates the file on the way).

    Example: pbtxt-scan stats --top 5 graph.pbtxt
    """
    from ._api import stats as _stats

    try:
        with _bar(file) as on_progress:
            st = _stats(file, _fmt(fmt), on_progress=on_progress)
    except PbtxtError as e:
        raise _fail(e)
    if as_json:
        _out(json.dumps(st.to_json(top or None), ensure_ascii=False))
        return
    _out("file     %s" % st.path)
    _out("format   %s" % st.format)
    _out("bytes    %d" % st.bytes)
    _out("lines    %d" % st.lines)
    _out("nodes    %d" % st.nodes)
    _out("seconds  %.3f" % st.seconds)
    ops = sorted(st.ops.items(), key=lambda kv: (-kv[1], kv[0]))
    if top:
        ops = ops[:top]
    width = max((len(k) for k, _ in ops), default=0)
    for k, v in ops:
        _out("  %-*s %d" % (width, k, v))


def _fmt(fmt: str) -> Optional[str]:
    from ._api import DIALECTS

    if fmt == "auto":
        return None
    if fmt not in DIALECTS:
        raise typer.BadParameter("unknown format %r: choose from %s" % (fmt, FORMATS), param_hint="--format")
    return fmt


def main() -> None:
    """Console-script entry: no tracebacks for a closed pipe or Ctrl-C."""
    try:
        app()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        _quiet_stdout()
        sys.exit(0)
    finally:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _quiet_stdout()


def _quiet_stdout() -> None:
    # The reader went away (`| head`): point stdout at /dev/null so the interpreter's final flush
    # does not print a second error.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


from . import _ge_cli  # noqa: E402,F401  registers the GE commands on `app`
