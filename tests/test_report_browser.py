"""The report in a real browser: headless Chromium renders the page ``pbtxt-scan report`` writes
(``--dump-dom`` after its inline script ran, and a 1280x900 ``--screenshot``) on a TF1 graph, a TF2
function graph, a GE-resolved one and a binary twin, and the test checks what a user sees:

- each drawing's nodes and edges are exactly ``pbtxt_scan.neighbourhood``'s (what ``show --context``
  prints) for the point and the hops the drawing says, and each node the search skipped carries
  its reason (the trail's) in its ``<title>``;
- the fp node's box, as the browser lays it out, lies inside the first screen;
- the page references no URL but ``#``, ``data:`` or ``file:``;
- the screenshot is a 1280x900 picture with many colours, not a blank page.

Without Chromium the test skips locally, and fails where ``CI`` is set (``.ci/run`` installs it).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from support.browser import WINDOW, chromium, dump_dom, foreign_urls, png_size_and_colours, read_page, screenshot
from support.cli import CliRunner

import pbtxt_scan
from pbtxt_scan.cli import app

DATA = Path(__file__).parent / "data"
runner = CliRunner()

CASES = [
    pytest.param([DATA / "graphs" / "mlp_sgd.pbtxt"], id="tf1"),
    pytest.param([DATA / "graphs" / "keras_fit.pbtxt"], id="tf2-function", marks=pytest.mark.slow),
    pytest.param([DATA / "graphs" / "mlp_sgd.pbtxt", "--ge", DATA / "ge" / "mlp_sgd"], id="ge", marks=pytest.mark.slow),
    pytest.param([DATA / "binary" / "tf2_gradient_tape.pb"], id="binary", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def browser() -> str:
    exe = chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("no chromium on this CI machine: .ci/run installs Debian's chromium")
        pytest.skip("no chromium (CI installs it; locally: apt-get install chromium)")
    return exe


def _skips(ans: Any) -> Dict[Tuple[str, str], str]:
    """(name, position) -> why, of the nodes the search skipped (positions: lines, or offsets in binary)."""
    return {(s.name, str(s.line)): s.why for s in ans.trail if s.verdict == "skip" and s.name}


@pytest.mark.parametrize("args", CASES)
def test_the_report_in_a_browser(browser: str, tmp_path: Path, args: List[Any]) -> None:
    graph = args[0]
    page = tmp_path / "report.html"
    r = runner.invoke(app, ["report", *map(str, args), "-o", str(page)])
    assert r.exit_code == 0, r.stderr
    dom = read_page(dump_dom(page, tmp_path))
    assert not foreign_urls(dom.urls), dom.urls

    found = pbtxt_scan.points(str(graph))
    drawn = {d.attrs["aria-label"]: d for d in dom.drawings}
    assert set(drawn) == {"fp", "bp"}
    for kind, ans in (("fp", found.fp), ("bp", found.bp)):
        d = drawn[kind]
        assert d.attrs["data-centre"] == ans.point.name
        hood = pbtxt_scan.neighbourhood(str(graph), ans.point.name, int(d.attrs["data-up"]), int(d.attrs["data-down"]),
                                        function=ans.point.function)
        assert set(d.nodes) == {n.name for n in hood.nodes}
        assert d.edges == {(e.src, e.dst, e.control) for e in hood.edges}
        skipped = _skips(ans)
        alternatives = {a.point.name for a in ans.alternatives}
        seen = 0
        for name, g in d.nodes.items():
            key = (name, g["data-offset"] if ans.unit == "offset" else g["data-line"])
            if key in skipped and name not in alternatives:
                assert "skip" in g["class"].split() and skipped[key] in g["title"], (name, g)
                seen += 1
        assert seen == sum("skip" in g["class"].split() for g in d.nodes.values())  # and no other node is grey
        if kind == "fp":
            x, y, w, h = map(int, d.nodes[ans.point.name]["data-bbox"].split(","))
            assert w > 0 and h > 0 and 0 <= x and x + w <= WINDOW[0] and 0 <= y and y + h <= WINDOW[1], (x, y, w, h)

    png = screenshot(page, tmp_path / "shot.png", tmp_path)
    size, colours = png_size_and_colours(png)
    assert size == WINDOW and colours >= 16, (size, colours)


def test_a_blank_page_is_told_blank(browser: str, tmp_path: Path) -> None:
    """The screenshot check can fail: a white page has one colour."""
    page = tmp_path / "blank.html"
    page.write_text("<!DOCTYPE html><html><body style='background:#fff'></body></html>")
    size, colours = png_size_and_colours(screenshot(page, tmp_path / "blank.png", tmp_path))
    assert size == WINDOW and colours < 4
