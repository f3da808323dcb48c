"""The commands that read a whole graph file or GE dump: check, nodes, show, stats. Thin: the work
is in ``pbtxt_scan._api`` (show's printing in ``_show``, loaded when show runs)."""
from __future__ import annotations

import contextlib
import json
from typing import Any, Callable, Generator, Iterator, List, Optional, cast

import typer

from .._kit import NamedTuple
from .. import PbtxtError
from ._app import (
    Common, FileArg, InputKindOpt, JobsOpt, JsonlOpt, JsonOpt, LenientOpt, RecordOpt, RunOpt, QuietOpt, bar, command, dialect, format_option,
    jobs_of,
    json_option, old_format, open_graph, output_format, quiet_option, renamed, usage_error,
)
from ._output import EXIT_BAD_INPUT, EXIT_NOT_FOUND, emit, out, plural
from ._escape import plain_rows, row_text, shown, unshown


@command(short="Validate whole files against the grammar and the schema.")
def check(
    common: Common,
    files: List[str] = typer.Argument(..., help="Files to validate ('-' for stdin, .gz accepted).", metavar="FILE", show_default=False),
    as_json: bool = JsonOpt,
    out_format: str = format_option("text"),
    quiet: bool = quiet_option("Print nothing on success, and no notes on stderr (errors still get their line)."),
    jobs: Optional[int] = JobsOpt,
    record: Optional[str] = RecordOpt,
    run: Optional[str] = RunOpt,
    every: bool = typer.Option(
        False, "--all", help="List every schema error of a file (up to 1000, then how many more), not only the first; "
        "a syntax error still ends the list.",
    ),
) -> None:
    """Validate whole files against the protobuf text format grammar (binary graphs: the wire format)
    and against the schema of what they are: TensorFlow 2.21's GraphDef, MetaGraphDef or SavedModel,
    a GE ge_onnx dump's onnx.proto (field names, value types and ranges, enum values, a singular
    field or a oneof set twice), as TensorFlow's own parser refuses them, with a did-you-mean.
    A GE ge_proto dump (its ge_ir.proto is not vendored): its field names against those seen in
    GE's dumps, a name not seen warned of on stderr (once each, with a did-you-mean), not refused.

    Prints 'FILE: ok (N lines, M nodes)' per valid file ('FILE: ok (N bytes, M nodes, binary
    GraphDef)' for a binary one); for the first error in a file, prints 'FILE:LINE:COL: message'
    ('FILE:offset N: message') on stderr; with --all, every schema error, one a line. Exit 2 if any
    file is invalid or unreadable.

    A TensorBoard event file: its framing and every record's CRCs (the length's and the
    data's), then the graph it holds (the one fp and bp read, or --record's).

    Example: pbtxt-scan check graph.pbtxt

    Example: pbtxt-scan check --all graph.pbtxt
    """
    from .. import check as _check

    con = common.console
    as_json = output_format(common.out_format, common.as_json, ("text",)) == "json"
    n_jobs = jobs_of(common.jobs)
    bad = False
    for path in files:
        try:
            with open_graph(path, spool=False, record=common.record, run=common.run) as g, bar(g) as on_progress:
                st = _check(g, on_progress=on_progress, jobs=n_jobs, every=every)
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
        elif st.binary or st.lines is None:  # (a binary graph: no lines)
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
    run: Optional[str] = RunOpt,
    jobs: Optional[int] = JobsOpt,
    functions: bool = typer.Option(
        False, "--functions", help="Also list the nodes of library functions (tf.function bodies), after the graph's own, "
        "with a 4th column (JSON: function) naming the function ('-' / null for the graph's own nodes)."
    ),
    op: List[str] = typer.Option([], "--op", metavar="OP", help="Only nodes of this op type, exactly (repeatable: any of them)."),
    name: List[str] = typer.Option(
        [], "--name", metavar="GLOB", help="Only nodes whose whole name matches this shell glob: * any characters, / included; "
        "? one; [...] one of a set (repeatable: any of them; with --op, both must hold)."
    ),
    count: bool = typer.Option(False, "--count", "-c", help="Print only the number of nodes listed (0: exit 1)."),
    null: bool = typer.Option(False, "--null", "-z", help="End each row with a NUL, not a newline, its names unescaped (for xargs -0)."),
    quiet: bool = QuietOpt,
) -> None:
    """List every node: its line, name and op, in file order.

    Works on TF GraphDef node blocks, GE ge_proto op blocks and ge_onnx node blocks
    (detected from the first fields). Pipes cleanly: pbtxt-scan nodes graph.pbtxt | head

    On a binary graph (.pb, .meta, saved_model.pb) the first column is the node's byte offset
    (binary has no lines): offset<TAB>name<TAB>op.

    --op and --name are tested as the file is read (on every core), so a filtered listing costs
    no more than the whole one.

    Example: pbtxt-scan nodes --json graph.pbtxt | grep MatMul

    Example: pbtxt-scan nodes graph.pbtxt --op MatMul --op Conv2D

    Example: pbtxt-scan nodes graph.pbtxt --name 'layer_1/*' --count

    Example: pbtxt-scan nodes graph.pbtxt --op MatMul -z | cut -z -f2 | xargs -0 -n1 pbtxt-scan show graph.pbtxt
    """
    from .. import DIALECTS, NodeFilter

    if jsonl:
        renamed("--jsonl", "--json")
    con = common.console
    out_format, input_kind = old_format(common.out_format, common.input_kind)
    jsonl = output_format(out_format, common.as_json or jsonl, ("text",)) == "json"
    if null and (jsonl or count):
        raise usage_error("NUL-ended rows are text rows: not with %s" % ("--count" if count else "--json"), "-z")
    try:
        where = NodeFilter(op, name) if op or name else None
    except ValueError as e:
        raise usage_error(str(e), "--name")
    sink = _counted if count else _nul_ended if null else out
    how = _Listing(jsonl and not count, functions, where, jobs_of(common.jobs), sink)
    listed = 0
    try:
        f = dialect(input_kind)
        with open_graph(file, spool=functions, record=common.record, run=common.run) as g, bar(g) as on_progress:  # (--functions: two passes)
            d = g.dialect if f is None else DIALECTS[f]
            for place in [d, DIALECTS["function"]] if functions and d.name == "graphdef" else [d]:
                listed += _list(g, place, how, on_progress)
    except PbtxtError as e:
        raise con.fail(e)
    con.notes(g)
    if count:
        out("%d" % listed)
    if not listed:
        asked = " ".join(["--op %s" % shown(o) for o in op] + ["--name %s" % shown(n) for n in name])
        reason = "no nodes found" if where is None else "no node matches %s" % asked
        typer.echo("%s: %s" % (file, reason), err=True)
        if jsonl and not count:  # (a miss is one object, as fp's: name null, with the reason)
            from ._json import node_miss

            emit(node_miss(reason))
        raise typer.Exit(EXIT_NOT_FOUND)


class _Listing(NamedTuple):
    """How ``nodes`` lists each place (the graph's nodes, its functions' nodes)."""

    jsonl: bool
    functions: bool
    where: Any  # a NodeFilter, or None: every node
    jobs: Optional[int]
    sink: Callable[[str], None]  # prints a text of rows joined by newlines (or counts it)


def _list(g: Any, place: Any, how: _Listing, on_progress: Any) -> int:
    """The rows of one place's nodes handed to ``how.sink``, in file order; how many."""
    from .. import NAME_AND_OP, iter_rows, row_tsv

    heads = place.heads if how.jsonl else NAME_AND_OP
    row = (_row_json if how.jsonl else row_text) if not how.functions else (_row_json_fn if how.jsonl else _row_tsv_fn)
    if row is row_text and g.binary and g.regular:
        row = row_tsv  # (made straight from the nodes' bytes; a run with a name to escape is made again)
    listed = 0
    texts = _closable(iter_rows(g, row, dialect=place, heads=heads, jobs=how.jobs, on_progress=on_progress, where=how.where))
    with contextlib.closing(texts):  # (closed early, e.g. by `| head`: workers stop at once)
        for text in texts:  # (the rows of many nodes at a time, in file order)
            if row is row_tsv and not plain_rows(text):
                break
            listed += text.count("\n") + 1
            how.sink(text)
        else:
            return listed
    # A name to escape, in rows made from the bytes: the rest made again, escaped.
    skip = listed
    texts = _closable(iter_rows(g, row_text, dialect=place, heads=heads, jobs=1, where=how.where))
    with contextlib.closing(texts):
        for text in texts:
            rows = text.split("\n")[skip:]
            skip = max(0, skip - text.count("\n") - 1)
            if rows:
                listed += len(rows)
                how.sink("\n".join(rows))
    return listed


def _counted(text: str) -> None:
    """``--count``: the rows are counted, not printed."""


def _nul_ended(text: str) -> None:
    """``-z``: escaped rows (one a line, no raw newline in them) printed NUL-ended, unescaped."""
    out(unshown(text.replace("\n", "\0")), end="\0")


def _closable(texts: Iterator[str]) -> "Generator[str, None, None]":
    """``iter_rows``'s texts as what they are, a generator (its signature says Iterator): closed
    early, e.g. by ``| head``, its workers stop at once."""
    return cast("Generator[str, None, None]", texts)


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


# show --format: the node's text (json: its parsed block); dot: its neighbourhood as Graphviz DOT.
SHOW_FORMATS = ("text", "dot")


@command(short="Print nodes' own text, with their lines, or a node's neighbourhood.")
def show(
    common: Common,
    file: str = FileArg,
    names: Optional[List[str]] = typer.Argument(
        None, help="The nodes' exact names (as in their name: field), each shown in turn, in the order given.", metavar="NAME", show_default=False),
    glob: Optional[str] = typer.Option(None, "--glob", metavar="GLOB", show_default=False, help=(
        "Show every node whose whole name GLOB matches (* ? [...], as fnmatch; quote it), in file order.")),
    regex: Optional[str] = typer.Option(None, "--regex", metavar="REGEX", show_default=False, help=(
        "Show every node whose name REGEX matches (Python re, found anywhere in the name, as grep: ^...$ for the whole name), in file order.")),
    as_json: bool = json_option("Print the parsed block as JSON (every field a list, with lines), one line a node; with --context, the neighbourhood."),
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
    run: Optional[str] = RunOpt,
    function: Optional[str] = typer.Option(None, "--function", metavar="NAME", help="Look in this library function only (as fp/bp name it)."),
    lenient: bool = LenientOpt,
    quiet: bool = QuietOpt,
) -> None:
    """Print a node's own text with its line numbers (or, with --json, the parsed block), or with
    --context N its neighbourhood: what feeds it and what it feeds, N hops each way.

    Several names are shown in turn (exit 1 if any is missing); --glob and --regex show every
    node whose name matches, in file order (the graph's own, as nodes lists them). A name costs
    one byte search of its name line (binary: its name field), however late or missing.

    A TensorFlow graph's own nodes are searched first, then the bodies of its library functions
    (a TF2 step in a tf.function); stderr then says which function holds the node. A name in
    several bodies shows the copy that points names (else the first), and stderr lists the others
    (--function picks one). A tensor name (dense/MatMul:0) shows the node that makes it; a name
    that matches nothing gets close names.

    A node of a binary graph is printed as text format (as tf.io.write_graph writes it), after a
    '# FILE offset N' comment; --json gives line null, its offset, and lines counted in that text.

    The neighbourhood is read near the node, then one byte search finds what lies elsewhere:
    producers are the nodes the inputs name (^x: a control input, x:1: an output of x), consumers
    the nodes whose inputs name it. One row a node: hop, line (or offset), op, name, and the
    inputs it takes from the other rows.

    Example: pbtxt-scan show graph.pbtxt dense/MatMul

    Example: pbtxt-scan show graph.pbtxt dense/MatMul dense_1/MatMul

    Example: pbtxt-scan show graph.pbtxt --glob 'layer_*/MatMul'

    Example: pbtxt-scan show graph.pbtxt --regex '^gradients/.*/MatMul_1$'

    Example: pbtxt-scan show graph.pbtxt dense/MatMul --context 2

    Example: pbtxt-scan show graph.pbtxt dense/MatMul --format dot | dot -Tsvg > hood.svg
    """
    from ._named import asked, matcher, show_matching, show_names
    from ._show import show_hood

    con = common.console
    out_format, input_kind = old_format(common.out_format, common.input_kind)
    shape = output_format(out_format, common.as_json, SHOW_FORMATS)
    names = list(names or ())
    context = asked(names, (glob is not None) + (regex is not None), context=context, shape=shape, max_nodes=max_nodes)
    f = dialect(input_kind)
    keep = matcher(glob, regex)
    try:
        with open_graph(file, record=common.record, run=common.run, lenient=common.lenient) as g:
            if context is not None:
                show_hood(g, names[0], hops=context, max_nodes=max_nodes, shape=shape, f=f, function=function, con=con)
            elif keep is not None:
                show_matching(g, keep, as_json=shape == "json", f=f, function=function, con=con)
            else:
                show_names(g, names, as_json=shape == "json", f=f, function=function, con=con)
    except PbtxtError as e:
        raise con.fail(e)


@command(short="Print sizes, node count and the commonest op types.")
def stats(
    common: Common,
    file: str = FileArg,
    top: int = typer.Option(15, "--top", "-n", metavar="INTEGER", help="How many op types to list (0 for all; ties by name)."),
    as_json: bool = JsonOpt,
    out_format: str = format_option("text"),
    input_kind: str = InputKindOpt,
    record: Optional[str] = RecordOpt,
    run: Optional[str] = RunOpt,
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
        with open_graph(file, spool=False, record=common.record, run=common.run) as g, bar(g) as on_progress:
            st = _stats(g, f, on_progress=on_progress, jobs=n_jobs)
    except PbtxtError as e:
        raise con.fail(e)
    con.notes(g)
    found = g.events[0] if g.events is not None else None  # (an event file: its graph's bytes, and its own)
    obj = stats_object(st, top or None, found.size if found else None)  # (the text lists the same ops, in the same order)
    if as_json:
        emit(obj)
        return
    out("file     %s" % st.path)
    out("format   %s" % (st.format if st.binary is None else "%s (%s)" % (st.format, st.kind)))
    out("bytes    %d%s" % (st.bytes, " (the graph: record %s)" % g.record_read if found else ""))
    if found:
        out("file_bytes %d (the event file: %s)" % (found.size, plural(found.records, "record")))
    out("lines    %s" % ("-" if st.lines is None else st.lines))
    out("nodes    %d" % st.nodes)
    out("seconds  %.3f" % st.seconds)
    ops = list(obj["ops"].items())
    width = max((len(k) for k, _ in ops), default=0)
    for k, v in ops:
        out("  %-*s %d" % (width, shown(k), v))
