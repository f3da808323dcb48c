"""show's names (loaded with ``_show``): each found by the lane's one byte search with the close
names of a miss from the same pass (``pbtxt_scan.look_up``); several names in turn; --glob and
--regex, every node whose name matches (``pbtxt_scan.iter_named``), searched by a fixed string
every such name holds."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

import typer

from .._kit import NamedTuple
from ._output import EXIT_NOT_FOUND, Console, emit
from ._show import elsewhere, look_up_names, looked_up, print_node, show_node

if TYPE_CHECKING:
    from .. import GraphFile


def asked(names: Sequence[str], filters: int, *, context: Optional[int], shape: str, max_nodes: int) -> Optional[int]:
    """What ``show`` was asked, checked: names, or a filter (--glob, --regex), not both; a
    neighbourhood's one node (``context``: its hops, 2 for ``--format dot`` unless given)."""
    from ._app import usage_error

    if (1 if names else 0) + filters != 1:
        raise usage_error("give NAMEs, --glob or --regex: one of them" if names or filters else "give a NAME, --glob or --regex", "NAME")
    if context is not None and context < 0:
        raise usage_error("%d is negative: give the hops to show, 0 or more" % context, "--context")
    if max_nodes < 1:
        raise usage_error("%d: give 1 or more nodes" % max_nodes, "--max-nodes")
    if shape == "dot" and context is None:
        context = 2
    if context is not None and len(names) != 1:
        raise usage_error("a neighbourhood is one node's: give one NAME", "--context" if shape != "dot" else "--format")
    return context


def show_names(g: "GraphFile", names: Sequence[str], *, as_json: bool, f: Optional[str], function: Optional[str], con: Console) -> None:
    """``show NAME...``: each node in turn, in the order given; exit 1 if any is missing (each miss
    said on stderr, with its close names)."""
    looked = look_up_names(g, names, f, function)
    missing = 0
    for k, name in enumerate(names):
        try:
            if looked is None or elsewhere(looked.found, name):
                show_node(g, name, as_json=as_json, f=f, function=function, con=con)
            else:
                found = looked_up(g, looked, name, con=con, miss="show" if as_json else None)
                print_node(g, found, "", as_json=as_json, con=con, notes=k == 0)
        except typer.Exit as e:
            if e.exit_code != EXIT_NOT_FOUND:
                raise
            missing += 1
    if missing:
        raise typer.Exit(EXIT_NOT_FOUND)


class Keep(NamedTuple):
    """A filter on names (--glob, --regex): ``keep(name)``, a fixed string every name it keeps
    holds (``""``: none known), and how stderr names it."""

    keep: Callable[[str], bool]
    needle: str
    what: str


def matcher(glob: Optional[str], regex: Optional[str]) -> Optional[Keep]:
    """The filter --glob or --regex asks for (``None``: names were given); a regex that does
    not compile is a usage error."""
    import fnmatch

    from ._app import usage_error

    if glob is not None:
        return Keep(lambda n: fnmatch.fnmatchcase(n, glob), _glob_needle(glob), "--glob %r" % glob)
    if regex is not None:
        try:
            rx = re.compile(regex)
        except re.error as e:
            raise usage_error("%r: %s" % (regex, e), "--regex") from None
        return Keep(lambda n: rx.search(n) is not None, _regex_needle(rx), "--regex %r" % regex)
    return None


def _glob_needle(glob: str) -> str:
    """The longest run of ``glob`` that fnmatch matches literally (``*``, ``?`` and ``[...]`` end a run)."""
    runs, run, i = [], "", 0
    while i < len(glob):
        c = glob[i]
        j = -1
        if c == "[":  # (a set, as fnmatch reads one: a first "!" negates, a "]" right after is in it)
            k = i + 1 + (glob[i + 1:i + 2] == "!")
            j = glob.find("]", k + (glob[k:k + 1] == "]"))
        if c in "*?" or j > 0:
            runs.append(run)
            run = ""
            i = j + 1 if c == "[" else i + 1
            continue
        run += c
        i += 1
    return max(runs + [run], key=len)


def _regex_needle(rx: "re.Pattern[str]") -> str:
    """The longest run of literal characters at the regex's top level (every match holds it);
    ``""`` when there is none, or case is ignored."""
    import importlib

    parser: Any
    try:
        parser = importlib.import_module("re._parser")  # (Python 3.11 on; sre_parse before)
    except ImportError:
        parser = importlib.import_module("sre_parse")
    if rx.flags & re.IGNORECASE:
        return ""
    runs, run = [], ""
    for op, av in parser.parse(rx.pattern, rx.flags):
        if op == parser.LITERAL and 32 < av < 127 and chr(av) not in '"\\':
            run += chr(av)
        else:
            runs.append(run)
            run = ""
    return max(runs + [run], key=len)


def show_matching(g: "GraphFile", keep: Keep, *, as_json: bool, f: Optional[str], function: Optional[str], con: Console) -> None:
    """``show --glob/--regex``: every node whose name ``keep`` keeps, in file order (the graph's own
    nodes, by one byte search where the file allows; ``function``: that function's, read)."""
    from .. import DIALECTS, NAME_AND_OP, Found, iter_named

    if function is not None:
        blocks: Any = (b for b in g.blocks(DIALECTS["function"].path, NAME_AND_OP) if b.parents[-1:] == (function,) and keep.keep(b.name or ""))
    elif f is not None:
        blocks = (b for b in g.blocks(DIALECTS[f].path, NAME_AND_OP) if keep.keep(b.name or ""))
    else:
        blocks = iter_named(g, keep.keep, needles=[keep.needle] if keep.needle else [])
    shown = 0
    for b in blocks:
        print_node(g, Found(b, function), "", as_json=as_json, con=con, notes=shown == 0)
        shown += 1
    if not shown:
        reason = "no node matches %s%s" % (keep.what, " in function %s" % function if function else "")
        con.notes(g)
        typer.echo("%s: %s" % (g.name, reason), err=True)
        if as_json:
            from ._json import miss_object

            emit(miss_object("show", g.name, function, reason))
        raise typer.Exit(EXIT_NOT_FOUND)
