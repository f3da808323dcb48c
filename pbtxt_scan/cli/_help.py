"""``--help`` in click's plain form, the same on every typer version the package allows.

typer < 0.26 prints ``FILE``, ``TEXT``, ``[FILE]...`` (or, when rich is installed, boxed panels);
typer 0.26+ prints ``{file}``, ``<str>``, ``<list[str]>``. These two classes write the usage line
and the Arguments / Options sections themselves from the parameters' own metavars (every command
sets one on each argument and each option that takes a value), through click's formatter API,
which all those versions share. tests/test_help.py checks the result on every Python in CI.
"""
from __future__ import annotations

from typing import Any, List, Tuple

from typer.core import TyperCommand, TyperGroup


# The texts every --help shows: the app's own, and the epilog of each command's.
EPILOG = (
    "Exit codes: 0 found/valid, 1 looked and found nothing, 2 usage error or unreadable/invalid input, "
    "130 interrupted, 143 terminated."
)

ENVIRONMENT = (
    "Environment: PBTXT_SCAN_NO_PROGRESS=1 turns off the progress bar (drawn on stderr, when it is a "
    "terminal, for files over 64 MB)."
)

APP_HELP = (
    "Find Ascend profiling points (fp_point, bp_point) in TensorFlow graph.pbtxt files, binary graphs "
    "(.pb, .meta, saved_model.pb) and GE dumps, streaming, in constant memory, without TensorFlow or protobuf.\n\n"
    "Examples:\n\n"
    "  pbtxt-scan points graph.pbtxt\n\n"
    "  pbtxt-scan points model_dir/model.ckpt-1000.meta\n\n"
    "  pbtxt-scan fp --explain graph.pbtxt\n\n"
    "  pbtxt-scan nodes graph.pbtxt | head\n\n"
    "  pbtxt-scan show graph.pbtxt dense/MatMul\n\n"
    "  pbtxt-scan stats --top 5 graph.pbtxt\n\n"
    "  pbtxt-scan events logs/\n\n"
    "  pbtxt-scan check graph.pbtxt ge_proto_00000042_graph_1_Build.txt\n\n"
    "  pbtxt-scan points graph.pbtxt --ge ge_dump_dir/ --format env"
)


def _is_argument(param: Any) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def _argument_metavar(param: Any, usage: bool) -> str:
    var = param.metavar or (param.name or "").upper()
    if usage and not param.required:
        var = "[%s]" % var
    if param.nargs != 1:
        var += "..."
    return var


def _usage_pieces(cmd: Any, ctx: Any) -> List[str]:
    pieces = [cmd.options_metavar] if cmd.options_metavar else []
    pieces += [_argument_metavar(p, usage=True) for p in cmd.get_params(ctx) if _is_argument(p)]
    return pieces


def _format_params(cmd: Any, ctx: Any, formatter: Any) -> None:
    args: List[Tuple[str, str]] = []
    opts: List[Tuple[str, str]] = []
    for p in cmd.get_params(ctx):
        if getattr(p, "hidden", False):
            continue
        if _is_argument(p):
            extra = "[required]" if p.required else ""
            help_text = getattr(p, "help", None) or ""
            args.append((_argument_metavar(p, usage=False), ("%s  %s" % (help_text, extra)).strip()))
        else:
            record = p.get_help_record(ctx)
            if record:  # some typer releases escape "[default: ...]" for rich even when rich is off
                opts.append((record[0], record[1].replace("\\[", "[")))
    for title, rows in (("Arguments", args), ("Options", opts)):
        if rows:
            with formatter.section(title):
                formatter.write_dl(rows)


def _format_help(cmd: Any, ctx: Any, formatter: Any) -> None:
    cmd.format_usage(ctx, formatter)
    cmd.format_help_text(ctx, formatter)
    _format_params(cmd, ctx, formatter)
    if hasattr(cmd, "format_commands"):
        cmd.format_commands(ctx, formatter)
    cmd.format_epilog(ctx, formatter)


class PlainCommand(TyperCommand):
    def collect_usage_pieces(self, ctx: Any) -> List[str]:
        return _usage_pieces(self, ctx)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _format_help(self, ctx, formatter)


class PlainGroup(TyperGroup):
    def list_commands(self, ctx: Any) -> List[str]:
        return list(self.commands)  # the order they were written in (click < 8.2 sorts them)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _format_help(self, ctx, formatter)
