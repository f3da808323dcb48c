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
from typing import Any, Callable, Iterator, List, Optional

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
        "  pbtxt-scan nodes graph.pbtxt | head\n\n"
        "  pbtxt-scan show graph.pbtxt dense/MatMul\n\n"
        "  pbtxt-scan stats --top 5 graph.pbtxt\n\n"
        "  pbtxt-scan check graph.pbtxt ge_proto_00000042_graph_1_Build.txt"
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
    from ._api import iter_nodes

    found = False
    try:
        with _bar(file) as on_progress:
            for b in iter_nodes(file, _fmt(fmt), on_progress=on_progress):
                found = True
                if jsonl:
                    _out(json.dumps(b.to_json(), ensure_ascii=False))
                else:
                    _out("%d\t%s\t%s" % (b.line, b.name, b.op))
    except PbtxtError as e:
        raise _fail(e)
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
    from ._api import iter_nodes, parse_block, read_block_bytes

    try:
        hit = next((b for b in iter_nodes(file, _fmt(fmt)) if b.name == name), None)
        if hit is None:
            typer.echo("%s: no node named %r" % (file, name), err=True)
            raise typer.Exit(EXIT_NOT_FOUND)
        if as_json:
            msg = parse_block(file, hit)
            out = {"name": hit.name, "op": hit.op, "line": hit.line, "offset": hit.start}
            out["block"] = msg[0].value.to_data(lines=True)
            _out(json.dumps(out, ensure_ascii=False, indent=2))
            return
        text = read_block_bytes(file, hit).decode("utf-8", "replace")
        width = len(str(hit.line + text.count("\n")))
        lines = text.split("\n")
        for i, line in enumerate(lines):
            prefix = " " * (hit.column - 1) if i == 0 else ""
            _out("%*d  %s%s" % (width, hit.line + i, prefix, line))
    except PbtxtError as e:
        raise _fail(e)


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
