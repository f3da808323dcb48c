"""The HTML report without a browser: the page from plain data (any names, escaped; the drawing is
the hood given, node for node and edge for edge; no URL but ``#``), the layered layout (every edge
left to right on an acyclic neighbourhood, no two boxes on one spot, cycles end), and the command
(where it writes, what it refuses). The browser test is tests/test_report_browser.py."""
from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Tuple

from hypothesis import given, strategies as st
from support.browser import foreign_urls, read_page
from support.cli import CliRunner

from pbtxt_scan._model import Hood, HoodEdge, HoodNode
from pbtxt_scan.cli import app
from pbtxt_scan.report import Drawing, Page, TrailRow, layout, render

DATA = Path(__file__).parent / "data"
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
runner = CliRunner()

# Names a graph may hold: anything, the markup that would break a page in particular.
NAMES = st.one_of(
    st.text(min_size=1, max_size=30),
    st.sampled_from(['</svg><script>alert(1)</script>', '"><img src=http://x/y>', "a&amp;b", "]]>", "<!--", "&#x41;", "url(http://x)"]),
)


@st.composite
def hoods(draw: st.DrawFn, acyclic: bool = True) -> Hood:
    """A neighbourhood as a search would find it: a random DAG (edges from earlier to later nodes),
    a centre, and each node's hops by breadth-first search up and down within ``up``/``down``."""
    names = draw(st.lists(NAMES, min_size=1, max_size=14, unique=True))
    n = len(names)
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))
    edges = {(a, b) if acyclic and a < b else (b, a) for a, b in pairs if a != b} if acyclic else {p for p in pairs if p[0] != p[1]}
    c = draw(st.integers(0, n - 1))
    up, down = draw(st.integers(0, 4)), draw(st.integers(0, 4))
    hops = {c: 0}
    for sign, limit in ((-1, up), (1, down)):
        frontier = [c]
        for h in range(1, limit + 1):
            nxt = [(s if sign < 0 else d) for s, d in edges for f in frontier if (d if sign < 0 else s) == f]
            nxt = [x for x in dict.fromkeys(nxt) if x not in hops]
            for x in nxt:
                hops[x] = sign * h
            frontier = nxt
    nodes = tuple(HoodNode(names[i], draw(NAMES), h, i + 1, i * 10) for i, h in sorted(hops.items()))
    kept = tuple(HoodEdge(names[s], names[d], draw(st.booleans())) for s, d in sorted(edges) if s in hops and d in hops)
    return Hood(names[c], up, down, nodes, kept)


def page_of(hood: Hood, marks: Dict[str, Tuple[str, str]], trail: List[TrailRow]) -> str:
    ans = {"kind": "fp", "name": hood.centre, "op": "MatMul", "line": 3, "offset": 9, "rule": "dataflow", "function": None,
           "reason": "<why>", "confidence": "certain", "doubt": None, "alternatives": []}
    return render(Page(hood.centre, "0", "pbtxt-scan report '%s'" % hood.centre, [("file", hood.centre)], [ans],
                       [Drawing("fp", hood, marks)], [("fp", trail)], [("env", "export X=%s" % hood.centre)]))


@given(hoods(), st.data())
def test_the_drawing_is_the_hood_and_every_string_is_escaped(hood: Hood, data: st.DataObject) -> None:
    names = [n.name for n in hood.nodes]
    marked = data.draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    marks = {m: (data.draw(st.sampled_from(["skip", "alt"])), "reason " + data.draw(NAMES)) for m in marked}
    trail = [TrailRow("line 1", n, "<op>", "skip", "because <b>&") for n in names]
    page = read_page(page_of(hood, marks, trail))
    assert page.scripts == 1 and not page.tags & {"img", "iframe", "object", "embed", "link", "base", "form"}
    assert not foreign_urls(page.urls), page.urls
    (d,) = page.drawings
    assert d.attrs["data-centre"] == hood.centre
    assert set(d.nodes) == set(names)
    assert d.edges == {(e.src, e.dst, e.control) for e in hood.edges}
    for name, (cls, reason) in marks.items():
        assert cls in d.nodes[name]["class"].split() and reason in d.nodes[name]["title"]
    assert d.nodes[hood.centre].get("data-centre") == "1"


@given(hoods())
def test_acyclic_edges_run_left_to_right_and_boxes_do_not_overlap(hood: Hood) -> None:
    lay = layout(hood)
    assert lay.layers[hood.centre] == 0
    for e in hood.edges:
        assert lay.layers[e.dst] > lay.layers[e.src], e
        assert lay.pos[e.dst][0] > lay.pos[e.src][0]
    spots = list(lay.pos.values())
    assert len(set(spots)) == len(spots) == len(hood.nodes)
    assert all(0 <= x < lay.width and 0 <= y < lay.height for x, y in spots)
    for n in hood.nodes:  # producers left of the centre, consumers right
        assert (lay.layers[n.name] > 0) == (n.hops > 0) and (lay.layers[n.name] < 0) == (n.hops < 0)


@given(hoods(acyclic=False))
def test_a_cycle_still_lays_every_node_out_once(hood: Hood) -> None:
    lay = layout(hood)
    assert set(lay.pos) == {n.name for n in hood.nodes}
    assert len(set(lay.pos.values())) == len(hood.nodes)


def test_report_writes_the_default_file_in_the_current_folder_and_says_so(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["report", str(MLP)])
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and r.stderr.strip().splitlines()[-1] == "wrote pbtxt-scan-report.html"
    html = (tmp_path / "pbtxt-scan-report.html").read_text(encoding="utf-8")
    assert "dense/MatMul" in html and "gradients/dense/MatMul_grad/MatMul_1" in html
    assert "PROFILING_OPTIONS" in html and "pbtxt-scan report " + str(MLP) in html


def test_report_never_writes_over_its_input(tmp_path: Path) -> None:
    g = tmp_path / "g.pbtxt"
    g.write_bytes(MLP.read_bytes())
    r = runner.invoke(app, ["report", str(g), "-o", str(g)])
    assert r.exit_code == 2 and "never writes over it" in r.stderr
    assert g.read_bytes() == MLP.read_bytes()


def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node {\n  name: "a"\n  op: "MatMul"\n  input: \n')
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", str(bad), "-o", str(out)])
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith(str(bad) + ":"), r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_no_bp_still_writes_the_page_and_exits_1(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = runner.invoke(app, ["report", str(DATA / "graphs" / "inference_no_gradients.pbtxt"), "-o", str(out)])
    assert r.exit_code == 1, r.stderr
    assert "no bp:" in out.read_text(encoding="utf-8")


def test_the_alternatives_are_counted_in_words(tmp_path):
    # one alternative is "1 alternative", two are "2 alternatives" (actor_critic: fp and bp have one each)
    page = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", str(DATA / "graphs" / "actor_critic_two_optimizers.pbtxt"), "-o", str(page)])
    assert r.exit_code == 0, r.stderr
    html = page.read_text()
    assert "<summary>1 alternative</summary>" in html and "1 alternatives" not in html
