"""The Typer app and what every command shares: exit codes, output, errors, the progress bar.

Results go to stdout (one per line, or JSON), diagnostics to stderr.
Exit codes: 0 found / valid, 1 looked and found nothing, 2 usage error or unreadable / invalid input,
130 interrupted.

The command modules (``_points``, ``_graph``, ``_ge``) import this one and register on ``app``; this
module imports none of them (``pbtxt_scan.cli`` imports them all).
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Dict, Optional, Tuple

import typer

from .. import __version__
from .. import PbtxtError
from ._help import PlainCommand, PlainGroup

EXIT_NOT_FOUND = 1
EXIT_BAD_INPUT = 2

EPILOG = (
    "Exit codes: 0 found/valid, 1 looked and found nothing, 2 usage error or unreadable/invalid input, "
    "130 interrupted."
)

ENVIRONMENT = (
    "Environment: PBTXT_SCAN_NO_PROGRESS=1 turns off the progress bar (drawn on stderr, when it is a "
    "terminal, for files over 64 MB)."
)

app = typer.Typer(
    name="pbtxt-scan",
    help=(
        "Find Ascend profiling points (fp_point, bp_point) in TensorFlow graph.pbtxt files, binary graphs "
        "(.pb, .meta, saved_model.pb) and GE dumps, streaming, in constant memory, without TensorFlow or protobuf.\n\n"
        "Examples:\n\n"
        "  pbtxt-scan points graph.pbtxt\n\n"
        "  pbtxt-scan points model_dir/model.ckpt-1000.meta\n\n"
        "  pbtxt-scan fp --explain graph.pbtxt\n\n"
        "  pbtxt-scan nodes graph.pbtxt | head\n\n"
        "  pbtxt-scan show graph.pbtxt dense/MatMul\n\n"
        "  pbtxt-scan stats --top 5 graph.pbtxt\n\n"
        "  pbtxt-scan check graph.pbtxt ge_proto_00000042_graph_1_Build.txt\n\n"
        "  pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env"
    ),
    epilog=EPILOG + "\n\n" + ENVIRONMENT,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=PlainGroup,
)


def command(name: Optional[str] = None, *, short: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@command(short=...)``: register a command on ``app``, with the plain help and the exit-code
    epilog. ``short``: the whole sentence the top-level command list shows (click would cut the
    docstring's first sentence to the terminal's width, mid-word)."""
    return app.command(name, cls=Command, epilog=EPILOG, short_help=short)


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


# --- the modes every command shares: --json, --quiet ---------------------------------------------


def _click(part: str) -> Any:
    """click's ``globals`` or ``exceptions`` module: typer 0.2x carries its own copy of click
    (``typer._click``), older typer releases use click itself."""
    import importlib

    import typer.core

    return importlib.import_module(("typer._click." if hasattr(typer.core, "_click") else "click.") + part)


def _param(name: str) -> Any:
    """The current command's option ``name`` (None outside a command, or if it has none)."""
    ctx = _click("globals").get_current_context(silent=True)
    return None if ctx is None else ctx.params.get(name)


def json_mode() -> bool:
    """The command runs with ``--json`` (or ``--format json``): errors also come as JSON on stdout."""
    return bool(_param("as_json") or _param("jsonl")) or _param("out_format") == "json"


def quiet() -> bool:
    return bool(_param("quiet"))


class Command(PlainCommand):
    """A command whose usage errors (a missing argument, a bad option value) also come as one
    JSON line on stdout under ``--json``, as bad input does (:func:`fail`)."""

    def make_context(self, info_name: Any, args: Any, parent: Any = None, **extra: Any) -> Any:
        wants_json = "--json" in args or "--format=json" in args or _pair(args, "--format", "json")
        try:
            return super().make_context(info_name, list(args), parent=parent, **extra)
        except _click("exceptions").UsageError as e:
            if wants_json:
                emit(error_object(e.format_message()))
            raise

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _click("exceptions").UsageError as e:
            if json_mode():
                emit(error_object(e.format_message()))
            raise


def _pair(args: Any, option: str, value: str) -> bool:
    args = list(args)
    return any(a == option and b == value for a, b in zip(args, args[1:]))


# --- output and errors -----------------------------------------------------------------------


def error_object(message: str, file: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
    """An error as JSON (docs/json.md, ``error``)."""
    return {"error": message, "file": file, "line": line, "column": column, "offset": offset}


def say_error(err: PbtxtError) -> None:
    """The one-line message on stderr, and under ``--json`` the same error as one JSON line on stdout."""
    typer.echo(str(err), err=True)
    if json_mode():
        emit(error_object(err.msg, err.path, err.line, err.column, err.offset))


def fail(err: PbtxtError) -> "typer.Exit":
    """:func:`say_error`; ``raise fail(e)`` exits 2."""
    say_error(err)
    return typer.Exit(EXIT_BAD_INPUT)


def usage_error(message: str, option: str) -> "typer.BadParameter":
    """``raise usage_error(...)``: click's usage message naming the option, exit 2."""
    return typer.BadParameter(message, param_hint=option)


def note(text: str) -> None:
    """A note on stderr (which file was read, a renamed point, an ambiguous answer): none under --quiet."""
    if not quiet():
        typer.echo(text, err=True)


def renamed(old: str, new: str) -> None:
    """An old spelling still accepted: one stderr line naming the new one (even under --quiet:
    scripts must learn of it before it goes)."""
    typer.echo("%s is the old spelling of %s, which it will stop meaning in a later release" % (old, new), err=True)


def emit(obj: Any) -> None:
    """One JSON object on one line of stdout."""
    out(json.dumps(obj, ensure_ascii=False))


def out(line: str) -> None:
    try:
        try:
            sys.stdout.write(line + "\n")
        except UnicodeEncodeError:
            # A name that was not UTF-8 in the file (escapes such as "\345\236" are kept as
            # surrogates when read), or a terminal that cannot show a character: backslash
            # escapes (in JSON, valid \u escapes), never a traceback.
            enc = getattr(sys.stdout, "encoding", None) or "utf-8"
            sys.stdout.write((line + "\n").encode(enc, "backslashreplace").decode(enc))
    except BrokenPipeError:  # `| head` has read enough: stop quietly, successfully
        _quiet_stdout()
        raise typer.Exit(0) from None


def plural(n: int, word: str) -> str:
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _quiet_stdout() -> None:
    # The reader went away (`| head`): point stdout at /dev/null so the interpreter's final flush
    # does not print a second error.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


# --- the option vocabulary (docs/json.md; every command declares its options from these) -----------

INPUT_KINDS = ("auto", "graphdef", "function", "ge_proto", "ge_onnx")

FileArg = typer.Argument(
    ...,
    help="A graph.pbtxt or GE dump, a binary graph (.pb, .meta, saved_model.pb), a text SavedModel (saved_model.pbtxt), "
    "or a SavedModel or model_dir folder: a path, '-' for stdin, or a .gz file.",
    metavar="FILE",
    show_default=False,
)
JsonOpt = typer.Option(False, "--json", help="JSON: one object per line (docs/json.md).")
QuietOpt = typer.Option(False, "--quiet", "-q", help="No notes on stderr (errors still get their one line).")
InputKindOpt = typer.Option(
    "auto", "--input-kind", metavar="KIND", help="What the input is: %s (auto: told by its content)." % ", ".join(INPUT_KINDS)
)


RecordOpt = typer.Option(
    None, "--record", metavar="N", show_default=False,
    help="A TensorBoard event file: read the graph in record N (counted from 0; default: the last training graph, "
    "and stderr says which record that is).",
)


def format_option(*choices: str) -> Any:
    """``--format``: which output, among ``choices`` (json: the same as --json)."""
    return typer.Option(choices[0], "--format", metavar="FORMAT", help="Output: %s." % ", ".join(choices + ("json",)))


def output_format(out_format: str, as_json: bool, choices: Tuple[str, ...]) -> str:
    """The output a command was asked for: one of ``choices`` or ``json``."""
    if out_format not in choices + ("json",):
        raise usage_error("%s: choose from %s" % (out_format, ", ".join(choices + ("json",))), "--format")
    if as_json and out_format not in (choices[0], "json"):
        raise usage_error("--json and --format %s: give one of them" % out_format, "--format")
    return "json" if as_json else out_format


def old_format(out_format: str, input_kind: str) -> Tuple[str, str]:
    """nodes/show/stats: ``--format KIND`` was the input kind there; take it as --input-kind, saying so."""
    if out_format in INPUT_KINDS:
        renamed("--format %s" % out_format, "--input-kind %s" % out_format)
        return "text", out_format
    return out_format, input_kind


JobsOpt = typer.Option(
    None,
    "--jobs",
    "-j",
    metavar="INTEGER",
    help="Processes: split the file at top-level blocks and validate the parts in parallel, with the same "
    "output (default: every usable core; 1: one process; stdin, pipes and .gz use one).",
    show_default=False,
)


def jobs_of(jobs: Optional[int]) -> Optional[int]:
    """The --jobs option as the API's process count (None: every core this process may use)."""
    if jobs is None:
        return None
    if jobs < 1:
        raise usage_error("%d: give 1 or more processes" % jobs, "--jobs")
    return jobs


def dialect(kind: str) -> Optional[str]:
    """The --input-kind option as the API's dialect (None: detect it)."""
    from .. import DIALECTS

    if kind == "auto":
        return None
    if kind not in DIALECTS:
        raise usage_error("unknown input kind %r: choose from %s" % (kind, ", ".join(INPUT_KINDS)), "--input-kind")
    return kind


# --- the input ---------------------------------------------------------------------------------


def open_graph(path: str, spool: bool = True, record: Optional[int] = None) -> Any:
    """``GraphFile.open``, keeping its notes (which MetaGraph of a SavedModel, which record of an
    event file is read) for :func:`say_notes`: a command says them once it has its result, and
    drops them when it fails (a failure is one line on stderr)."""
    from .. import GraphFile

    if record is not None and record < 0:
        raise usage_error("%d is negative: records are counted from 0" % record, "--record")
    g = GraphFile.open(path, spool=spool, record=record)
    g.notes = [n for n in (g.picked, g.chosen) if n]  # (a folder: which file in it; an event file: which record)
    g.on_note = g.notes.append
    return g


def say_notes(g: Any) -> None:
    """The notes of an input opened by :func:`open_graph`, on stderr (and, of an event file whose
    graph record's CRC was not checked, that note: ``check`` and ``stats`` check it, and clear it)."""
    for text in getattr(g, "notes", ()):
        note(text)
    g.notes = []
    if getattr(g, "unchecked", None):
        note(g.unchecked)
        g.unchecked = None


# --- progress bar ------------------------------------------------------------------------------


PROGRESS_MIN_BYTES = 64 << 20  # smaller files scan in about a second: no bar


def bar(g: Any) -> Any:
    """``with bar(graph_file) as on_progress``: a rich bar on stderr for long scans of a regular
    file when stderr is a terminal; otherwise on_progress is None. The bar never touches stdout
    (rich would otherwise redirect it through its live display, swallowing the results and the
    broken pipe that stops ``| head``)."""
    return _progress(g) or _NoBar()


def _progress(g: Any) -> Any:
    size = g.size  # (None for stdin, pipes and gzip)
    if not size or size < PROGRESS_MIN_BYTES or not sys.stderr.isatty() or os.environ.get("PBTXT_SCAN_NO_PROGRESS"):
        return None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

    return _Bar(Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
    ), os.path.basename(g.name), size)


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


# --- entry point -------------------------------------------------------------------------------


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
