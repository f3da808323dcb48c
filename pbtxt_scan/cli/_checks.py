"""What the user typed, checked: choice values, op types and node names that match nothing, an
option the answer's rule ignores, and where the input comes from when no FILE is given.

A wrong choice is a usage error (exit 2, the valid values listed). An op type or a filter that
has no effect is not an error (the answer stands) but gets one warning line on stderr, with the
closest names: a silently ignored ``--skip-op matmul`` (the op is ``MatMul``) gives a wrong point
with no sign of why.
"""
from __future__ import annotations

import sys
from typing import Any, FrozenSet, Iterable, List, Optional, Sequence

import typer

from ._app import usage_error
from ._output import EXIT_BAD_INPUT

_SCAN = 1 << 20


def check_choice(value: str, valid: Sequence[str], option: str) -> str:
    """``value`` if it is one of ``valid``; else a usage error listing them (and the close one)."""
    if value in valid:
        return value
    from ._suggest import Closest  # (did you mean: for what matched nothing)

    near = Closest(value, k=1).offer_all(valid).hint()
    raise usage_error("%r is not one of %s%s" % (value, ", ".join(valid), ("; " + near) if near else ""), option)


def say_unmatched_ops(g: Any, skip: Iterable[str], keep: Iterable[str]) -> None:
    """One stderr line for each ``--skip-op``/``--keep-op`` type that no op of the file has.

    Fast when the names are right: a byte search says a type's name is somewhere in the file
    (then it may be an op: no warning). Only a name found nowhere costs a pass over the ops'
    types (a set: a graph has a few hundred), which also gives the close names."""
    asked = [("--skip-op", n) for n in skip] + [("--keep-op", n) for n in keep]
    absent = _absent(g, sorted({n for _, n in asked}))
    if not absent:
        return
    types = _op_types(g)
    for option, name in asked:
        if name in absent and name not in types:
            from ._suggest import Closest  # (did you mean: for what matched nothing)

            hint = Closest(name).offer_all(sorted(types)).hint()
            typer.echo("%s: %s %s matches no op in the file%s" % (g.name, option, name, (" (%s)" % hint) if hint else ""), err=True)


def _absent(g: Any, names: List[str]) -> FrozenSet[str]:
    """The names whose bytes occur nowhere in the input (read in 1 MiB steps; overlapping so a
    name across two reads is seen)."""
    needles = {n: n.encode("utf-8", "surrogateescape") for n in names}
    left = dict(needles)
    if not left:
        return frozenset()
    keep = max(len(b) for b in needles.values()) - 1
    pos, tail = 0, b""
    while left:
        chunk = g.read_at(pos, _SCAN)
        if not chunk:
            break
        data = tail + chunk
        for n in [n for n, b in left.items() if b in data]:
            del left[n]
        pos += len(chunk)
        tail = data[-keep:] if keep else b""
    return frozenset(left)


def _op_types(g: Any) -> FrozenSet[str]:
    """The op types of the file's blocks (up to an error: the answer stands, the warning too)."""
    from .. import NAME_AND_OP, PbtxtError

    ops = set()
    try:
        for b in g.blocks(g.dialect.path, NAME_AND_OP):
            if b.op:
                ops.add(b.op[3:] if b.op.startswith("ge:") else b.op)  # (GE's ONNX view: "ge:Conv2D")
    except PbtxtError:
        pass
    return frozenset(ops)


def node_hint(g: Any, path: Any, name: str) -> str:
    """`` (did you mean X?)`` for a node name that matched nothing in ``g`` (its blocks at
    ``path``), from one more pass over the names, keeping only the closest few; ``""`` if none."""
    from .. import NAME_AND_OP, PbtxtError
    from ._suggest import Closest  # (did you mean: for what matched nothing)

    near = Closest(name)
    try:
        near.offer_all(b.name for b in g.blocks(path, NAME_AND_OP))
    except PbtxtError:
        pass  # (the names up to the error still help)
    hint = near.hint()
    return " (%s)" % hint if hint else ""


def with_source_hint(g: Any, e: Any, sources: FrozenSet[str]) -> Any:
    """The error for a ``--source`` that names no node, with the close names (one more pass over
    the names, all sources at once)."""
    from .. import NAME_AND_OP, PbtxtError

    if not sources or not e.msg.startswith("no node named"):
        return e
    from ._suggest import Closest  # (did you mean: for what matched nothing)

    near = [Closest(s) for s in sorted(sources)]
    try:
        for b in g.blocks(g.dialect.path, NAME_AND_OP):
            for c in near:
                c.offer(b.name)
    except PbtxtError:
        pass
    hints = ["%s: %s" % (c.wanted, c.hint()) for c in near if c.hint()]
    if hints:
        e.msg += " (%s)" % "; ".join(hints) if len(near) > 1 else " (%s)" % near[0].hint()
        e.args = (str(e),)
    return e


def say_ignored_filters(file: str, kind: str, rule: Optional[str], filters: Optional[Sequence[str]]) -> None:
    """``--name-filter`` is the doc rule's (fp only): say so when the answer came from another."""
    if not filters:
        return
    if kind == "bp":
        typer.echo("%s: --name-filter is ignored: it filters fp candidates (the doc rule), never bp" % file, err=True)
    elif rule is not None and rule != "doc":
        typer.echo("%s: --name-filter is ignored: this fp came from the %s rule, which does not use it "
                   "(add --rule doc to apply it)" % (file, rule), err=True)


def _stdin_is_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed
        return False


def inputs_of(files: Optional[List[str]], command: str) -> List[str]:
    """The files to read: those given, else stdin when it is piped. With none given and stdin a
    terminal, one line on how to give a graph (exit 2), not a silent wait; ``-`` on a terminal
    reads it, after saying so (the user may mean it: paste, then Ctrl-D)."""
    if files:
        if "-" in files and _stdin_is_terminal():
            typer.echo("reading the graph from stdin (the terminal): paste it and end with Ctrl-D, or give a file: "
                       "pbtxt-scan %s graph.pbtxt" % command, err=True)
        return list(files)
    if _stdin_is_terminal():
        typer.echo("pbtxt-scan %s: no FILE given: pbtxt-scan %s graph.pbtxt, or pipe one in: "
                   "pbtxt-scan %s < graph.pbtxt ('-' reads stdin)" % (command, command, command), err=True)
        raise typer.Exit(EXIT_BAD_INPUT)
    return ["-"]


__all__ = ["check_choice", "inputs_of", "node_hint", "say_ignored_filters", "say_unmatched_ops", "with_source_hint"]
