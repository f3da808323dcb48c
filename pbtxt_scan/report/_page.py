"""The report page: one self-contained HTML file (inline style, inline SVG, a few lines of inline
script for copy and filter; no URL but ``#`` anchors)."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .._kit import NamedTuple
from .._model import Hood
from ._layout import layout
from ._svg import Mark, esc, svg


class TrailRow(NamedTuple):
    """One row of a trail: where (a line, an offset, or a range of them), name, op, verdict, reason."""

    where: str
    name: str
    op: str
    verdict: str
    reason: str


class Drawing(NamedTuple):
    """One point's drawing: its neighbourhood (None: not drawn, ``note`` says why) and the marks."""

    kind: str  # "fp" or "bp"
    hood: Optional[Hood]
    marks: Mapping[str, Mark]
    note: str = ""


class Page(NamedTuple):
    """Everything the page shows, as plain data."""

    file: str
    version: str
    command: str
    facts: Sequence[Tuple[str, str]]
    answers: Sequence[Dict[str, Any]]  # points --json's fp and bp objects (docs/json.md, answer)
    drawings: Sequence[Drawing]
    trails: Sequence[Tuple[str, Sequence[TrailRow]]]
    snippets: Sequence[Tuple[str, str]]  # (label, text to paste)
    ge: Sequence[Tuple[str, str, str, str]] = ()  # (kind, TensorFlow name, GE name, note)
    ge_file: str = ""


STYLE = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;padding:10px 16px;color:#1d2330;background:#fff}
h1{font-size:17px;margin:0 0 6px}h2{font-size:15px;margin:14px 0 4px}
code,pre,td.m{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #e3e6ec}
.pts td.k{font-weight:600}.amb{color:#a15c00}.none{color:#a00}
.draw{border:1px solid #d5d9e0;border-radius:6px;padding:4px;margin:4px 0;overflow:auto}
svg.hood{display:block;max-width:100%;height:auto;max-height:340px}
.node rect{fill:#e8f0fe;stroke:#4a6fb5;stroke-width:1.2}.node text{font:11px ui-monospace,Menlo,monospace;fill:#1d2330}
.node text.o{fill:#5b6475;font-size:10px}.node.centre rect{fill:#ffe8a3;stroke:#c77700;stroke-width:2.5}
.node.skip rect{fill:#eceef1;stroke:#a3a9b3;stroke-dasharray:3 2}.node.skip text{fill:#7b818c}
.node.alt rect{fill:#fde2e4;stroke:#c2364b;stroke-width:2}.node:hover rect{stroke-width:3}
.edge{fill:none;stroke:#8a93a3;stroke-width:1.3}.edge.control{stroke-dasharray:4 3}.arrow{fill:#8a93a3}
.key span{display:inline-block;padding:0 6px;margin-right:6px;border-radius:4px;border:1px solid #aaa;font-size:12px}
pre{background:#f5f6f8;border:1px solid #e3e6ec;padding:6px;margin:2px 0 8px;white-space:pre-wrap;word-break:break-all}
button{font-size:12px}details{margin:6px 0}summary{cursor:pointer;font-weight:600}
tr.skip td{color:#6b7280}tr.chosen td{font-weight:600;background:#fff5d6}.small{color:#5b6475;font-size:12px}
"""

SCRIPT = """
document.querySelectorAll('button.copy').forEach(function(b){b.addEventListener('click',function(){
var t=document.getElementById(b.dataset.for).textContent;
if(navigator.clipboard){navigator.clipboard.writeText(t).then(function(){b.textContent='copied'});}
else{var a=document.createElement('textarea');a.value=t;document.body.appendChild(a);a.select();document.execCommand('copy');a.remove();b.textContent='copied';}});});
document.querySelectorAll('input.filter').forEach(function(f){f.addEventListener('input',function(){
var q=f.value.toLowerCase();document.querySelectorAll('#'+f.dataset.for+' tbody tr').forEach(function(r){
r.style.display=r.textContent.toLowerCase().indexOf(q)<0?'none':'';});});});
document.querySelectorAll('g.node').forEach(function(g){var r=g.getBoundingClientRect();
g.setAttribute('data-bbox',[r.left+scrollX,r.top+scrollY,r.width,r.height].map(Math.round).join(','));});
"""


def _answer_rows(a: Dict[str, Any]) -> str:
    kind = esc(a.get("kind", "?"))
    if a.get("name") is None:
        return '<tr><td class="k">%s</td><td colspan="6" class="none">none: %s</td></tr>' % (kind, esc(a.get("reason", "")))
    where = "line %s" % a["line"] if a.get("line") is not None else "offset %s" % a.get("offset")
    conf = esc(a.get("confidence") or "")
    if a.get("doubt"):
        conf = '<span class="amb">%s</span>: %s' % (conf, esc(a["doubt"]))
    alts = "".join(
        "<li><code>%s</code> (%s, %s): %s</li>" % (
            esc(x.get("name")), esc(x.get("op")),
            esc("line %s" % x["line"] if x.get("line") is not None else "offset %s" % x.get("offset")), esc(x.get("reason")))
        for x in a.get("alternatives") or ())
    return (
        '<tr><td class="k"><a href="#draw-%s">%s</a></td><td class="m">%s</td><td>%s</td><td>%s</td><td>%s</td>'
        "<td>%s</td><td>%s</td></tr>%s"
    ) % (
        kind, kind, esc(a["name"]), esc(a.get("op")), esc(where), esc(a.get("rule")), esc(a.get("function") or "-"), conf,
        '<tr><td></td><td colspan="6" class="small">why: %s%s</td></tr>' % (
            esc(a.get("reason", "")), "<details><summary>%s</summary><ul>%s</ul></details>" % (
                _count(len(a.get("alternatives") or ()), "alternative"), alts) if alts else ""),
    )


def _drawing(d: Drawing) -> str:
    head = '<h2 id="draw-%s">%s: its neighbourhood</h2>' % (esc(d.kind), esc(d.kind))
    if d.hood is None:
        return head + '<p class="small">%s</p>' % esc(d.note or "not drawn")
    lay = layout(d.hood)
    sub = "%d producers' hops up, %d consumers' hops down; %d nodes, %d edges%s" % (
        d.hood.up, d.hood.down, len(d.hood.nodes), len(d.hood.edges),
        " (cut at the node cap: not the whole neighbourhood)" if d.hood.truncated else "")
    return head + '<p class="small">%s%s</p><div class="draw">%s</div>' % (
        esc(sub), " " + esc(d.note) if d.note else "", svg(d.hood, lay, d.marks, label=d.kind))


def _trail(kind: str, rows: Sequence[TrailRow]) -> str:
    tid = "trail-%s" % esc(kind)
    body = "".join(
        '<tr class="%s"><td class="m">%s</td><td class="m">%s</td><td>%s</td><td>%s</td><td>%s</td></tr>'
        % (esc(r.verdict), esc(r.where), esc(r.name), esc(r.op), esc(r.verdict), esc(r.reason))
        for r in rows)
    return (
        '<details><summary>%s trail: %d rows</summary><p><input class="filter" data-for="%s" placeholder="filter (name, op, reason)" size="40"></p>'
        '<table id="%s"><thead><tr><th>where</th><th>name</th><th>op</th><th>verdict</th><th>reason</th></tr></thead>'
        "<tbody>%s</tbody></table></details>"
    ) % (esc(kind), len(rows), tid, tid, body)


def render(p: Page) -> str:
    """The page as one HTML string."""
    out: List[str] = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        "<title>pbtxt-scan report: %s</title><style>%s</style></head><body>" % (esc(p.file), STYLE),
        '<h1>pbtxt-scan report: <code>%s</code></h1>' % esc(p.file),
        '<table class="pts"><thead><tr><th></th><th>name</th><th>op</th><th>where</th><th>rule</th><th>function</th>'
        "<th>confidence</th></tr></thead><tbody>%s</tbody></table>" % "".join(_answer_rows(a) for a in p.answers),
        '<p class="key small">key: <span style="background:#ffe8a3">the point</span><span style="background:#eceef1">'
        'skipped (hover: why)</span><span style="background:#fde2e4">an alternative</span><span>---- control edge</span></p>',
    ]
    out += [_drawing(d) for d in p.drawings]
    if p.ge:
        out.append("<h2>GE names</h2><p class=\"small\">from <code>%s</code></p><table><thead><tr><th></th><th>TensorFlow</th>"
                   "<th>GE</th><th></th></tr></thead><tbody>%s</tbody></table>" % (
                       esc(p.ge_file), "".join('<tr><td>%s</td><td class="m">%s</td><td class="m">%s</td><td>%s</td></tr>'
                                               % tuple(esc(x) for x in row) for row in p.ge)))
    if p.snippets:
        out.append("<h2>Profiling options, ready to paste</h2>")
        for i, (label, text) in enumerate(p.snippets):
            out.append('<p>%s <button class="copy" data-for="paste-%d">copy</button></p><pre id="paste-%d">%s</pre>'
                       % (esc(label), i, i, esc(text)))
    out.append("<h2>Trails (--explain)</h2>")
    out += [_trail(kind, rows) for kind, rows in p.trails]
    out.append("<h2>The file</h2><table>%s</table>" % "".join(
        "<tr><td>%s</td><td class=\"m\">%s</td></tr>" % (esc(k), esc(v)) for k, v in p.facts))
    out.append('<p class="small">pbtxt-scan %s; made by <code>%s</code></p>' % (esc(p.version), esc(p.command)))
    out.append("<script>%s</script></body></html>\n" % SCRIPT)
    return "".join(out)


def _count(n: int, word: str) -> str:
    return "%d %s%s" % (n, word, "" if n == 1 else "s")
