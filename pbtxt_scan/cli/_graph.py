"""The commands that read a whole graph file or GE dump: check, nodes, show, stats. Thin: the work
is in ``pbtxt_scan._api``."""
from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import typer

from .. import PbtxtError
if TYPE_CHECKING:
    from .. import GraphFile
from ._app import (
    EXIT_BAD_INPUT, EXIT_NOT_FOUND, Common, Console, FileArg, InputKindOpt, JobsOpt, JsonlOpt, JsonOpt, RecordOpt, QuietOpt, bar, command,
    dialect, emit, format_option, jobs_of, json_option, listed, old_format, open_graph, out, output_format, plural, quiet_option, renamed,
    usage_error,
)
from ._checks import node_hint
from ._escape import plain_rows, row_text, shown
from ._suggest import tensor_node


@command(short="Validate whole files against the grammar.")
def check(
    common: Common,
    files: List[str] = typer.Argument(..., help="Files to validate ('-' for stdin, .gz accepted).", metavar="FILE", show_default=False),
    as_json: bool = JsonOpt,
    out_format: str = format_option("text"),
    quiet: bool = quiet_option("Print nothing on success, and no notes on stderr (errors still get their line)."),
    jobs: Optional[int] = JobsOpt,
    record: Optional[str] = RecordOpt,
) -> None:
    """Validate whole files against the protobuf text format grammar (binary graphs: the wire format).

    Prints 'FILE: ok (N lines, M nodes)' per valid file ('FILE: ok (N bytes, M nodes, binary
    GraphDef)' for a binary one); for the first error in a file, prints 'FILE:LINE:COL: message'
    ('FILE:offset N: message') on stderr. Exit 2 if any file is invalid or unreadable.

    A TensorBoard event file: its framing and every record's CRCs (the length's and the
    data's), then the graph it holds (the one fp and bp read, or --record's).

    Example: pbtxt-scan check graph.pbtxt
    """
    from .. import check as _check

    con = common.console
    as_json = output_format(common.out_format, common.as_json, ("text",)) == "json"
    n_jobs = jobs_of(common.jobs)
    bad = False
    for path in files:
        try:
            with open_graph(path, spool=False, record=common.record) as g, bar(g) as on_progress:
                st = _check(g, on_progress=on_progress, jobs=n_jobs)
        except PbtxtError as e:
            con.error(e)
            bad = True
            continue
        con.notes(g)
        if con.quiet:
            continue
        if as_json:
            from ._json import check_object

            emit(check_object(st))
        elif g.events is not None:
            found = g.events[0]
            out("%s: ok (%s, every CRC holds; the graph in record %s: %s, %s, %s)" % (
                st.path, plural(found.records, "record"), g.record_read, plural(st.bytes, "byte"),
                plural(st.nodes, "node"), st.kind))
        elif st.binary:
            out("%s: ok (%s, %s, %s)" % (st.path, plural(st.bytes, "byte"), plural(st.nodes, "node"), st.kind))
        else:
            out("%s: ok (%s, %s)" % (st.path, plural(st.lines, "line"), plural(st.nodes, "node")))
    if bad:
        raise typer.Exit(EXIT_BAD_INPUT)


@command(short="List every node: line, name, op.")
def nodes(
    common: Common,
    file: str = FileArg,
    as_json: bool = json_option("One JSON object per node: name, op, line, column, name_line, offset, end, inputs."),
    jsonl: bool = JsonlOpt,
    out_format: str = format_option("text"),
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    jobs: Optional[int] = JobsOpt,
    functions: bool = typer.Option(
        False, "--functions", help="Also list the nodes of library functions (tf.function bodies), after the graph's own, "
        "with a 4th column (JSON: function) naming the function ('-' / null for the graph's own nodes)."
    ),
    quiet: bool = QuietOpt,
) -> None:
    """List every node: its line, name and op, in file order.

    Works on TF GraphDef node blocks, GE ge_proto op blocks and ge_onnx node blocks
    (detected from the first fields). Pipes cleanly: pbtxt-scan nodes graph.pbtxt | head

    On a binary graph (.pb, .meta, saved_model.pb) the first column is the node's byte offset
    (binary has no lines): offset<TAB>name<TAB>op.

    Example: pbtxt-scan nodes --json graph.pbtxt | grep MatMul
    """
    from .. import DIALECTS, NAME_AND_OP, iter_rows, row_tsv

    if jsonl:
        renamed("--jsonl", "--json")
    con = common.console
    out_format, input_kind = old_format(common.out_format, common.input_kind)
    jsonl = output_format(out_format, common.as_json or jsonl, ("text",)) == "json"
    n_jobs = jobs_of(common.jobs)
    found = False
    try:
        f = dialect(input_kind)
        with open_graph(file, spool=functions, record=common.record) as g, bar(g) as on_progress:  # (--functions: two passes)
            d = g.dialect if f is None else DIALECTS[f]
            places = [d, DIALECTS["function"]] if functions and d.name == "graphdef" else [d]
            for place in places:
                heads = place.heads if jsonl else NAME_AND_OP
                row = (_row_json if jsonl else row_text) if not functions else (_row_json_fn if jsonl else _row_tsv_fn)
                if row is row_text and g.binary and g.regular:
                    row = row_tsv  # (made straight from the nodes' bytes; a run with a name to escape is made again)
                printed = 0
                texts = iter_rows(g, row, dialect=place, heads=heads, jobs=n_jobs, on_progress=on_progress)
                with contextlib.closing(texts):  # (closed early, e.g. by `| head`: workers stop at once)
                    for text in texts:  # (the rows of many nodes at a time, in file order)
                        if row is row_tsv and not plain_rows(text):
                            break
                        found = True
                        printed += text.count("\n") + 1
                        out(text)
                    else:
                        continue
                # A name to escape, in rows made from the bytes: the rest made again, escaped.
                texts = iter_rows(g, row_text, dialect=place, heads=heads, jobs=1)
                with contextlib.closing(texts):
                    for text in texts:
                        rows = text.split("\n")[printed:]
                        printed = max(0, printed - text.count("\n") - 1)
                        if rows:
                            found = True
                            out("\n".join(rows))
    except PbtxtError as e:
        raise con.fail(e)
    con.notes(g)
    if not found:
        reason = "no nodes found"
        typer.echo("%s: %s" % (file, reason), err=True)
        if jsonl:  # (a miss is one object, as fp's: name null, with the reason)
            from ._json import node_miss

            emit(node_miss(reason))
        raise typer.Exit(EXIT_NOT_FOUND)


def _row_json(b: Any) -> str:
    return json.dumps(b.to_json(), ensure_ascii=False)


def _function_of(b: Any) -> Optional[str]:
    return b.parents[-1] if len(b.path) == 3 and b.parents else None  # (library.function.node_def)


def _row_tsv_fn(b: Any) -> str:
    return "%s\t%s" % (row_text(b), shown(_function_of(b) or "-"))


def _row_json_fn(b: Any) -> str:
    d = b.to_json()
    d["function"] = _function_of(b)
    return json.dumps(d, ensure_ascii=False)


ANY_SIZE = 1 << 62  # show --json: no bound of its own on the block (the lane keeps Lark's)

# show --format: the node's text (json: its parsed block); dot: its neighbourhood as Graphviz DOT.
SHOW_FORMATS = ("text", "dot")


@command(short="Print one node's own text, with its lines, or its neighbourhood.")
def show(
    common: Common,
    file: str = FileArg,
    name: str = typer.Argument(..., help="The node's exact name (as in its name: field).", metavar="NAME", show_default=False),
    as_json: bool = json_option("Print the parsed block as JSON (every field a list, with lines); with --context, the neighbourhood."),
    out_format: str = format_option(*SHOW_FORMATS),
    context: Optional[int] = typer.Option(
        None, "--context", "-C", metavar="N", show_default=False,
        help="Print the node's neighbourhood instead: its producers and consumers up to N hops away, with op, "
        "line (binary: offset) and hop (-1 feeds the node, 1 consumes it). --format dot gives it as Graphviz DOT "
        "(2 hops unless given).",
    ),
    max_nodes: int = typer.Option(64, "--max-nodes", metavar="N", help="With --context or --format dot: at most N nodes (a note says when cut)."),
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    function: Optional[str] = typer.Option(None, "--function", metavar="NAME", help="Look in this library function only (as fp/bp name it)."),
    quiet: bool = QuietOpt,
) -> None:
    """Print a node's own text with its line numbers (or, with --json, the parsed block), or with
    --context N its neighbourhood: what feeds it and what it feeds, N hops each way.

    A TensorFlow graph's own nodes are searched first, then the bodies of its library functions
    (a TF2 step in a tf.function); stderr then says which function holds the node. A name in
    several bodies shows the copy that points names (else the first), and stderr lists the others
    (--function picks one). A tensor name
    (dense/MatMul:0) shows the node that makes it; a name that matches nothing gets close names.

    A node of a binary graph is printed as text format (as tf.io.write_graph writes it), after a
    '# FILE offset N' comment; --json gives line null, its offset, and lines counted in that text.

    The neighbourhood is read near the node, then one byte search over the file finds what lies
    elsewhere (never the whole graph in memory): producers are the nodes the inputs name (^x: a control input, x:1: an output of x), consumers
    the nodes whose inputs name it. One row a node: hop, line (or offset), op, name, and the
    inputs it takes from the other rows.

    Example: pbtxt-scan show graph.pbtxt dense/MatMul

    Example: pbtxt-scan show graph.pbtxt dense/MatMul --context 2

    Example: pbtxt-scan show graph.pbtxt dense/MatMul --format dot | dot -Tsvg > hood.svg
    """
    con = common.console
    out_format, input_kind = old_format(common.out_format, common.input_kind)
    shape = output_format(out_format, common.as_json, SHOW_FORMATS)
    if context is not None and context < 0:
        raise usage_error("%d is negative: give the hops to show, 0 or more" % context, "--context")
    if max_nodes < 1:
        raise usage_error("%d: give 1 or more nodes" % max_nodes, "--max-nodes")
    if shape == "dot" and context is None:
        context = 2
    f = dialect(input_kind)
    try:
        with open_graph(file, record=common.record) as g:
            if context is None:
                _show(g, name, shape == "json", f, function, con=con)
            else:
                _show_hood(g, name, context, max_nodes, shape, f, function, con=con)
    except PbtxtError as e:
        raise con.fail(e)


def _show_hood(
    g: "GraphFile", name: str, hops: int, max_nodes: int, shape: str, f: Optional[str], function: Optional[str], *, con: Console
) -> None:
    from .. import neighbourhood

    also: Any = ()
    try:  # (the node by one byte search where the file allows; the names close to it only when it is not there)
        hood = neighbourhood(g, name, hops, hops, function=function, max_nodes=max_nodes)
    except LookupError:
        found = _found(g, name, f, function, con=con, miss="hood" if shape == "json" else None)  # (a tensor name: its node; else exit 1 with close names)
        also = found.also
        hood = neighbourhood(g, found.block.name or name, hops, hops, function=found.function, max_nodes=max_nodes)
    fn = next(n.function for n in hood.nodes if n.hops == 0)
    why = ""
    if fn is not None and function is None and not also:  # (in several bodies? the copy points names, as plain show)
        found = _found(g, hood.centre, f, None, con=con)
        if found.also:
            found, why = _points_copy(g, found, f)
            also = found.also
            if found.function != fn:
                hood = neighbourhood(g, hood.centre, hops, hops, function=found.function, max_nodes=max_nodes)
                fn = found.function
    said: List[str] = []
    if fn is not None:
        more = " (also in %s: --function NAME picks one)" % listed(also) if also else ""
        said.append("%s: %s is in library function %s%s%s" % (g.name, hood.centre, fn, why, more))
    if hood.truncated:
        said.append("%s: cut at %s: --max-nodes N shows more" % (g.name, plural(max_nodes, "node")))
    con.notes(g, said)
    if shape == "json":
        from ._json import hood_object

        emit(hood_object(hood, g.name))
    elif shape == "dot":
        out(hood_dot(hood))
    else:
        for line in hood_text(hood, g.name):
            out(line)


def hood_text(hood: Any, file: str) -> List[str]:
    """The neighbourhood as rows: hop, line (binary: @offset), op, name, and the inputs it takes
    from the other rows (^: a control input); the centre marked with '*'."""
    centre = next(n for n in hood.nodes if n.hops == 0)
    where = "line %d" % centre.line if centre.line else "offset %d" % centre.offset
    fn = ", in function %s" % centre.function if centre.function else ""
    head = "# %s: %s (%s, %s%s): %s up, %s down" % (
        file, hood.centre, centre.op, where, fn, plural(hood.up, "hop"), plural(hood.down, "hop"))
    feeds: Dict[str, List[str]] = {}
    for e in hood.edges:
        feeds.setdefault(e.dst, []).append(("^" if e.control else "") + e.src)
    rows = [("hop", "line" if centre.line else "offset", "op", "name", "inputs here")]
    for n in hood.nodes:
        rows.append((
            "%+d" % n.hops if n.hops else "0", str(n.line) if n.line else "@%d" % n.offset, n.op,
            ("* " if n.hops == 0 else "  ") + n.name, ", ".join(feeds.get(n.name, ())) or "-",
        ))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = [head]
    for r in rows:
        lines.append("%*s  %*s  %-*s  %-*s  %s" % (widths[0], r[0], widths[1], r[1], widths[2], r[2], widths[3], r[3], r[4]))
    return lines


def _dot_esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def _dot_id(s: str) -> str:
    return '"%s"' % _dot_esc(s)


def hood_dot(hood: Any) -> str:
    """The neighbourhood as Graphviz DOT: a box a node (name, op, line or offset; the tooltip
    gives its hop), the centre filled and bold, control edges dashed."""
    lines = ["digraph hood {", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica", fontsize=10];']
    for n in hood.nodes:
        where = "line %d" % n.line if n.line else "offset %d" % n.offset
        attrs = ['label="%s\\n%s\\n%s"' % (_dot_esc(n.name), _dot_esc(n.op), where), "tooltip=%s" % _dot_id("hop %d" % n.hops)]
        if n.hops == 0:
            attrs += ['style="filled,bold"', 'fillcolor="#ffd966"', "penwidth=2"]
        lines.append("  %s [%s];" % (_dot_id(n.name), ", ".join(attrs)))
    for e in hood.edges:
        lines.append("  %s -> %s%s;" % (_dot_id(e.src), _dot_id(e.dst), " [style=dashed]" if e.control else ""))
    lines.append("}")
    return "\n".join(lines)


def _found(g: "GraphFile", name: str, f: Optional[str], function: Optional[str], *, con: Console, miss: Optional[str] = None) -> Any:
    """The node ``name`` names (a tensor name: the node that makes it), or exit 1 with close names
    (``miss``: under --json, the shape of the one object that says so, ``show`` or ``hood``)."""
    from .. import DIALECTS, find_node

    found = find_node(g, name, dialect=f, function=function)
    node = tensor_node(name)  # `dense/MatMul:0` names a tensor: show the node that makes it
    if found is None and node is not None:
        found = find_node(g, node, dialect=f, function=function)
        if found is not None:
            con.note("%s: %r names output %s of node %s: showing that node" % (g.name, name, name.rsplit(":", 1)[1], node))
    if found is None:
        d = g.dialect if f is None else DIALECTS[f]
        hint = node_hint(g, d.path, name)
        con.notes(g)
        where = " in function %s" % function if function else ""
        reason = "no node named %r%s%s" % (name, where, hint)
        typer.echo("%s: %s" % (g.name, reason), err=True)
        if miss is not None:
            from ._json import miss_object

            emit(miss_object(miss, g.name, function, reason))
        raise typer.Exit(EXIT_NOT_FOUND)
    return found


def _show(g: "GraphFile", name: str, as_json: bool, f: Optional[str], function: Optional[str], *, con: Console) -> None:
    found = _found(g, name, f, function, con=con, miss="show" if as_json else None)
    why = ""
    if found.also:  # (in several function bodies: the copy the points name, if they name one)
        found, why = _points_copy(g, found, f)
    hit = found.block
    said: List[str] = []
    if found.function is not None:
        also = " (also in %s: --function NAME picks one)" % listed(found.also) if found.also else ""
        said.append("%s: %s is in library function %s%s%s" % (g.name, hit.name, found.function, why, also))
    if as_json:
        # Any size, as the text: memory is bounded by the block (the writer layout's lines, or
        # Lark on all but its long strings, each parsed apart), never by Lark's tree of it.
        msg = g.parse(hit, max_bytes=ANY_SIZE)
        obj = {"name": hit.name, "op": hit.op, "line": hit.line or None, "offset": hit.start, "file": g.name, "function": found.function,
               "reason": None}
        try:
            obj["block"] = msg[0].value.to_data(lines=True)
            text = json.dumps(obj, ensure_ascii=False)
        except RecursionError:
            raise PbtxtError("nested too deeply to print as JSON (use show without --json)", hit.line, hit.column, g.name) from None
        del msg, obj  # (a big block's values, before its JSON is written)
        con.notes(g, said)
        out(text)
        return
    text = g.read(hit).decode("utf-8", "replace")
    con.notes(g, said)
    if hit.binary:  # text format made from the NodeDef: no file lines to number
        out("# %s offset %d (%s, a %d-byte NodeDef)" % (g.name, hit.start, g.binary, hit.end - hit.start))
        out(text.rstrip("\n"))
        return
    width = len(str(hit.line + text.count("\n")))
    for i, line in enumerate(text.split("\n")):
        prefix = " " * (hit.column - 1) if i == 0 else ""
        out("%*d  %s%s" % (width, hit.line + i, prefix, line))


def _points_copy(g: "GraphFile", found: Any, f: Optional[str]) -> Any:
    """``(found, why)``: of a node in several function bodies, the copy ``points`` names when fp or
    bp is this node (``why`` then says so, and ``also`` lists the other bodies); else the first."""
    from .. import PbtxtError, find_bp, find_fp, find_node

    name = found.block.name
    for find in (find_fp, find_bp):
        try:
            p = find(g).point
        except PbtxtError:  # (the rules stop at a fault the node's own block does not have: keep the first)
            return found, ""
        if p is None or p.name != name or p.function not in (found.function,) + tuple(found.also):
            continue
        if p.function == found.function:
            return found, ", the copy points names"
        hit = find_node(g, name, dialect=f, function=p.function)
        if hit is None:
            break
        others = tuple(x for x in (found.function,) + tuple(found.also) if x != p.function)
        return hit._replace(also=others), ", the copy points names"
    return found, ""


@command(short="Print sizes, node count and the commonest op types.")
def stats(
    common: Common,
    file: str = FileArg,
    top: int = typer.Option(15, "--top", "-n", metavar="INTEGER", help="How many op types to list (0 for all; ties by name)."),
    as_json: bool = JsonOpt,
    out_format: str = format_option("text"),
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    jobs: Optional[int] = JobsOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Bytes, lines, node count and the most common op types (validates the file on the way).

    Example: pbtxt-scan stats --top 5 graph.pbtxt
    """
    from .. import stats as _stats

    from ._json import stats_object

    con = common.console
    out_format, input_kind = old_format(common.out_format, common.input_kind)
    as_json = output_format(out_format, common.as_json, ("text",)) == "json"
    if top < 0:
        raise usage_error("%d is negative: give 0 for every op type, or a positive count" % top, "--top")
    n_jobs = jobs_of(common.jobs)
    f = dialect(input_kind)
    try:
        with open_graph(file, spool=False, record=common.record) as g, bar(g) as on_progress:
            st = _stats(g, f, on_progress=on_progress, jobs=n_jobs)
    except PbtxtError as e:
        raise con.fail(e)
    con.notes(g)
    obj = stats_object(st, top or None)  # (the text lists the same ops, in the same order)
    if as_json:
        emit(obj)
        return
    out("file     %s" % st.path)
    out("format   %s" % (st.format if st.binary is None else "%s (%s)" % (st.format, st.kind)))
    out("bytes    %d" % st.bytes)
    out("lines    %s" % ("-" if st.lines is None else st.lines))
    out("nodes    %d" % st.nodes)
    out("seconds  %.3f" % st.seconds)
    ops = list(obj["ops"].items())
    width = max((len(k) for k, _ in ops), default=0)
    for k, v in ops:
        out("  %-*s %d" % (width, shown(k), v))
