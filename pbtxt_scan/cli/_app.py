"""The Typer app and what every command shares: the option vocabulary, read once into a ``Common``
(its ``Console``: ``_output``), the input, the progress bar, the entry point.

The command modules (``_points``, ``_graph``, ``_ge``) import this one and register on ``app``; this
module imports none of them (``pbtxt_scan.cli`` imports them all).
"""
from __future__ import annotations

import copy
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import typer

from .._kit import NamedTuple, regex
from .. import __version__
from ._help import APP_HELP, ENVIRONMENT, EPILOG, PlainCommand, PlainGroup
from ._output import Console, out, quiet_stdout, unwritable


app = typer.Typer(
    name="pbtxt-scan",
    help=APP_HELP,
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
    docstring's first sentence to the terminal's width, mid-word).

    The command's first parameter, ``common``, is not an option: it is the :class:`Common` built
    once from the options the command declares from the shared vocabulary below (found by what
    they are, whatever the command names its parameters), and passed in."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        import functools
        import inspect

        sig = inspect.signature(fn)
        params = list(sig.parameters.values())[1:]  # (the first is ``common``)
        shared = [p for p in params if hasattr(p.default, ROLE)]
        roles = {getattr(p.default, ROLE): p.name for p in shared}
        if len(roles) != len(shared):
            raise TypeError("%s: a shared option declared twice" % fn.__name__)

        @functools.wraps(fn)
        def run(**kwargs: Any) -> Any:
            return fn(Common.of(roles, kwargs), **kwargs)

        setattr(run, "__signature__", sig.replace(parameters=params))  # (what typer reads: the options, not ``common``)
        cls = type("Command", (Command,), {"roles": roles, "__doc__": Command.__doc__})
        return app.command(name, cls=cls, epilog=EPILOG, short_help=short)(run)

    return register


def registered() -> List[str]:
    """The commands registered on ``app`` so far, by name (typer's: the function's, ``_`` as ``-``)."""
    return [_name(info) for info in app.registered_commands if info.callback]


def _name(info: Any) -> str:
    return info.name or info.callback.__name__.lower().replace("_", "-")


def _version(value: bool) -> None:
    if value:
        out("pbtxt-scan %s" % __version__)
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """pbtxt-scan: fp/bp profiling points from graph.pbtxt and GE dumps."""


# --- the options every command shares, read once: Common, and its Console (--json, --quiet) -----


def _click(part: str) -> Any:
    """click's ``exceptions`` module: typer 0.2x carries its own copy of click (``typer._click``),
    older typer releases use click itself."""
    import importlib

    import typer.core

    return importlib.import_module(("typer._click." if hasattr(typer.core, "_click") else "click.") + part)


ROLE = "pbtxt_scan_role"  # the attribute that marks a shared option's declaration with what it is


def _shared(role: str, info: Any) -> Any:
    """A shared option's declaration (``typer.Option(...)``), marked with its role: :func:`command`
    finds the command's parameter for each role by it, so a command may name its parameters as it likes."""
    setattr(info, ROLE, role)
    return info


class Common(NamedTuple):
    """The shared options a command declares (``--json``, ``--format``, ``--quiet``, ``--input-kind``,
    ``--jobs``, ``--record``, ``--run``, ``--lenient``), read once by :func:`command` and passed in as the command's first
    argument. An option the command does not declare keeps its default here."""

    console: Console
    as_json: bool = False  # --json itself (--format json is ``out_format``)
    out_format: str = ""
    input_kind: str = "auto"
    jobs: Optional[int] = None
    record: Optional[str] = None
    run: Optional[str] = None
    lenient: bool = False

    @staticmethod
    def of(roles: Dict[str, str], values: Dict[str, Any]) -> "Common":
        """The options in ``values`` (a command's parameters, by name) that ``roles`` names
        (role -> parameter name). The one place that decides the output mode."""
        v = {role: values.get(name) for role, name in roles.items()}
        as_json = bool(v.get("json"))
        out_format = v.get("format") or ""
        console = Console(json=as_json or bool(v.get("jsonl")) or out_format == "json", quiet=bool(v.get("quiet")))
        return Common(console, as_json, out_format, v.get("input_kind") or "auto", v.get("jobs"), v.get("record"), v.get("run"),
                      bool(v.get("lenient")))


class Command(PlainCommand):
    """A command whose usage errors (a missing argument, a bad option value, one raised by the
    command itself) also come as one JSON line on stdout under ``--json``, as bad input does
    (:meth:`Console.fail`). ``roles``: its shared options' parameters (set by :func:`command`)."""

    roles: Dict[str, str] = {}

    def parse_args(self, ctx: Any, args: Any) -> Any:
        if ctx.resilient_parsing:  # (the probe of :meth:`_console_of`)
            return super().parse_args(ctx, args)
        try:
            return super().parse_args(ctx, list(args))
        except _click("exceptions").UsageError as e:
            self._console_of(ctx, args).usage(e)
            raise

    def _console_of(self, ctx: Any, args: Any) -> Console:
        """The output mode of a command line that did not parse: click parses it again, leniently
        (unknown options and bad values left out), and :meth:`Common.of` reads its shared options."""
        try:
            probe = self.make_context(ctx.info_name, list(args), parent=ctx.parent, resilient_parsing=True,
                                      ignore_unknown_options=True)
        except _click("exceptions").ClickException:
            return Console()
        return Common.of(self.roles, probe.params).console

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _click("exceptions").UsageError as e:
            Common.of(self.roles, ctx.params).console.usage(e)
            raise


# --- the option vocabulary (docs/json.md; every command declares its options from these) -----------


def usage_error(message: str, option: str) -> "typer.BadParameter":
    """``raise usage_error(...)``: click's usage message naming the option, exit 2."""
    return typer.BadParameter(message, param_hint=option)


def renamed(old: str, new: str) -> None:
    """An old spelling still accepted: one stderr line naming the new one (even under --quiet:
    scripts must learn of it before it goes)."""
    typer.echo("%s is the old spelling of %s, which it will stop meaning in a later release" % (old, new), err=True)


INPUT_KINDS = ("auto", "graphdef", "function", "ge_proto", "ge_onnx")

FileArg = typer.Argument(
    ...,
    help="A graph.pbtxt or GE dump, a binary graph (.pb, .meta, saved_model.pb), a text SavedModel (saved_model.pbtxt), "
    "or a SavedModel or model_dir folder: a path, '-' for stdin, or a .gz file.",
    metavar="FILE",
    show_default=False,
)


def json_option(help: str = "JSON: one object per line (docs/json.md).") -> Any:
    """``--json`` (a command's own ``help`` where its objects deserve their own words)."""
    return _shared("json", typer.Option(False, "--json", help=help))


def quiet_option(help: str = "No notes on stderr (errors still get their one line).") -> Any:
    return _shared("quiet", typer.Option(False, "--quiet", "-q", help=help))


JsonOpt = json_option()
JsonlOpt = _shared("jsonl", typer.Option(False, "--jsonl", hidden=True))  # (nodes: the old spelling of --json)
QuietOpt = quiet_option()
InputKindOpt = _shared("input_kind", typer.Option(
    "auto", "--input-kind", metavar="KIND", help="What the input is: %s (auto: told by its content)." % ", ".join(INPUT_KINDS)
))


RecordOpt = _shared("record", typer.Option(
    None, "--record", metavar="RECORD", show_default=False,
    help="A TensorBoard event file (or the one a folder gives): R reads the graph in record R, R.G its graph G (a "
    "trace_export summary holds one per traced function); both counted from 0, as stderr names them (default: "
    "the last training graph, and stderr says which, e.g. 'record 1.4').",
))


RunOpt = _shared("run", typer.Option(
    None, "--run", metavar="NAME", show_default=False,
    help="A TensorBoard logdir (a logs/ folder): read the run NAME in it, named as TensorBoard names runs, by its "
    "folder under the logdir (train, validation; '.' for the logdir's own event files; pbtxt-scan events lists them). "
    "Example: pbtxt-scan points logs/ --run validation",
))
LenientOpt = _shared("lenient", typer.Option(
    False, "--lenient",
    help="Skip a block read before the answer that is no valid node (a top-level field a GraphDef has not, such as "
    "'nod {'; a node without a name or an op, a GE op without a name or a type, or a name that is no string) rather than stop at it with check's "
    "error; one stderr line says how many were skipped and where the first was. Binary graphs: protobuf keeps an "
    "unknown field number, so there only a node without a name or an op counts. "
    "Example: pbtxt-scan fp --lenient graph.pbtxt",
))


def format_option(*choices: str) -> Any:
    """``--format``: which output, among ``choices`` (json: the same as --json)."""
    return _shared("format", typer.Option(choices[0], "--format", metavar="FORMAT", help="Output: %s." % ", ".join(choices + ("json",))))


def shared_format(info: Any) -> Any:
    """A command's own ``--format`` declaration (its own help), as :func:`format_option`'s: json among its values."""
    return _shared("format", info)


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


def jobs_option(help: str) -> Any:
    return _shared("jobs", typer.Option(None, "--jobs", "-j", metavar="INTEGER", help=help, show_default=False))


JobsOpt = jobs_option(
    "Processes: split the file at top-level blocks and validate the parts in parallel, with the same "
    "output (default: every usable core; 1: one process; stdin, pipes and .gz use one)."
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


def open_graph(
    path: str, spool: bool = True, record: Optional[str] = None, kind: Optional[str] = None, run: Optional[str] = None,
    *, lenient: bool = False,
) -> Any:
    """``GraphFile.open`` with ``--record`` (``record``), ``--input-kind`` (``kind``: None for
    auto, told by content), ``--run`` (``run``) and ``--lenient``; :meth:`Console.notes` says its
    notes once the command has its result (a lenient reading's skipped blocks among them)."""
    from .. import DIALECTS, GraphFile

    number, graph = record_of(record)
    return GraphFile.open(path, spool=spool, record=number, graph=graph, dialect=None if kind is None else DIALECTS[kind],
                          run=run, lenient=lenient)


_RECORD = regex(r"(-?[0-9]+)(?:\.([0-9]+))?")


def record_of(text: Optional[str]) -> Tuple[Optional[int], Optional[int]]:
    """``--record R[.G]`` as (record, graph in it): ``(None, None)`` when not given."""
    if text is None:
        return None, None
    m = _RECORD.fullmatch(text.strip())
    if m is None:
        raise usage_error("%r: give a record, R, or a graph in it, R.G (both counted from 0)" % text, "--record")
    if m.group(1).startswith("-"):
        raise usage_error("%s is negative: records are counted from 0" % m.group(1), "--record")
    return int(m.group(1)), None if m.group(2) is None else int(m.group(2))


# --- progress bar ------------------------------------------------------------------------------


PROGRESS_MIN_BYTES = 64 << 20  # smaller files scan in about a second: no bar


def bar(g: Any) -> Any:
    """``with bar(graph_file) as on_progress``: a rich bar on stderr (``_bar``, never on stdout) for
    long scans of a regular file when stderr is a terminal; otherwise on_progress is None."""
    return _progress(g) or _NoBar()


def _progress(g: Any) -> Any:
    size = g.size  # (None for stdin, pipes and gzip)
    if not size or size < PROGRESS_MIN_BYTES or not sys.stderr.isatty() or os.environ.get("PBTXT_SCAN_NO_PROGRESS"):
        return None
    from ._bar import Bar

    return Bar(g.name, size)


class _NoBar:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: Any) -> None:
        return None


# --- entry point -------------------------------------------------------------------------------


def _running(only: Optional[str]) -> Any:
    """``app``, or a copy with the command ``only`` alone (typer builds every command it has, ~1 ms each)."""
    if only not in registered():
        return app
    one = copy.copy(app)
    one.registered_commands = [c for c in app.registered_commands if c.callback and _name(c) == only]
    return one


class Terminated(BaseException):
    """SIGTERM, raised where the program is (as Ctrl-C raises KeyboardInterrupt), so that the
    ``finally`` and ``with`` blocks on the way out stop and reap the workers."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def main(only: Optional[str] = None) -> None:
    """Console-script entry: no tracebacks for a closed pipe, a full disk, Ctrl-C or SIGTERM.
    ``only``: the command the command line runs, the one typer builds (each costs ~1 ms)."""
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)  # (workers put it back to the default: parallel._pool)
    try:
        _running(only)()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    except Terminated:
        sys.stderr.write("terminated\n")
        sys.exit(128 + signal.SIGTERM)
    except BrokenPipeError:
        quiet_stdout()
        sys.exit(0)
    finally:
        try:
            sys.stdout.flush()  # (buffered results: an error writing them is the run's error)
        except BrokenPipeError:
            quiet_stdout()
        except OSError as e:
            sys.exit(unwritable(e))
