"""events: what a TensorBoard event file holds, a record a line (``pbtxt_scan.iter_events``)."""
from __future__ import annotations

import datetime
from typing import Any, Dict, Optional

import typer

from .. import PbtxtError
from ._app import Common, JsonOpt, QuietOpt, RunOpt, command, format_option, output_format
from ._escape import shown
from ._output import emit, out


@command(short="List an event file's records: step, kind, tags, graphs.")
def events(
    common: Common,
    path: str = typer.Argument(..., help="A TensorBoard event file (events.out.tfevents.*), '-' for stdin, or a logdir: "
                               "every event file under it, with its run.", metavar="FILE_OR_LOGDIR", show_default=False),
    as_json: bool = JsonOpt,
    out_format: str = format_option("text"),
    run: Optional[str] = RunOpt,
    quiet: bool = QuietOpt,
) -> None:
    """List the records of an event file, one line each, numbered as --record numbers them:
    record, wall time (UTC), step, bytes, what the Event holds (file_version, graph_def,
    meta_graph_def, summary, session_log, log_message, tagged_run_metadata), the
    graphs --record R or R.G reads from it ('-': none), and what it says: a summary's tags with
    their plugins (a trace_export's graphs among them), a session's status, the file version.
    '(read)' marks the graph fp and bp read by default.

    A logdir (a logs/ folder): every event file under it, oldest first within its run, each after
    a '# FILE (run NAME)' line; runs are named as TensorBoard names them, by their folder under
    the logdir ('.' for the logdir's own files).

    Every record's CRCs are checked; a damaged or cut record stops the listing there (exit 2,
    after the records before it).

    Example: pbtxt-scan events events.out.tfevents.1700000000.host.1.0.v2

    Example: pbtxt-scan events logs/ --run train --json
    """
    from .. import iter_events

    con = common.console
    as_json = output_format(common.out_format, common.as_json, ("text",)) == "json"
    shown_file = None
    try:
        for ev in iter_events(path, run=common.run, on_note=con.note):
            if as_json:
                emit(event_object(ev))
                continue
            if ev.run is not None and ev.file != shown_file:
                out("# %s (run %s)" % (shown(ev.file), shown(ev.run)))
                shown_file = ev.file
            out(event_row(ev))
    except PbtxtError as e:
        raise con.fail(e)


def when(t: Optional[float]) -> str:
    """A wall time as UTC, to the millisecond (``-``: none)."""
    if t is None:
        return "-"
    try:
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z"
    except (OverflowError, OSError, ValueError):  # (a time no calendar holds: the number)
        return repr(t)


def event_row(ev: Any) -> str:
    """``record<TAB>wall time<TAB>step<TAB>bytes<TAB>what<TAB>graphs<TAB>detail``."""
    r = ev.listed
    graphs = ",".join(g.label for g in r.graphs) or "-"
    return "%d\t%s\t%d\t%d\t%s\t%s\t%s" % (r.record, when(r.wall_time), r.step, r.bytes, r.what, graphs, _detail(ev))


def _detail(ev: Any) -> str:
    r = ev.listed
    said = []
    if r.values:
        said.append(", ".join(shown(v.tag) + (" (%s)" % shown(v.plugin) if v.plugin else "") for v in r.values))
        if r.value_count > len(r.values):
            said[-1] += ", and %d more" % (r.value_count - len(r.values))
    elif r.text is not None:
        said.append(shown(r.text))
    if r.graphs:
        n = len(r.graphs)
        what = "a MetaGraphDef" if r.graphs[0].binary == "metagraph" else "a GraphDef"
        said.append("%s of %s bytes" % (what, format(r.graphs[0].bytes, ",")) if n == 1 else "%d graphs (%s bytes)" % (
            n, ", ".join(format(g.bytes, ",") for g in r.graphs)))
        said.extend("%s (read)" % g.label for g in r.graphs if g.label == ev.read)
    return "; ".join(said) or "-"


def event_object(ev: Any) -> Dict[str, Any]:
    """docs/json.md's ``event``."""
    r = ev.listed
    return {
        "file": ev.file, "run": ev.run, "record": r.record, "offset": r.offset, "bytes": r.bytes,
        "wall_time": r.wall_time, "step": r.step, "what": r.what, "text": r.text,
        "values": [{"tag": v.tag, "plugin": v.plugin or None} for v in r.values], "value_count": r.value_count,
        "graphs": [{"graph": g.label, "bytes": g.bytes, "binary": g.binary, "read": g.label == ev.read} for g in r.graphs],
    }
