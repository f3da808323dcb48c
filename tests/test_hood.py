"""neighbourhood() and show --context / --format dot: against the naive walk over the whole parsed
graph (support.hood), on every fixture's fp and bp and on random nodes; text and binary twins
alike; the DOT read back equal to the JSON. The two tests on every fixture's points run those of
``support.data.QUICK_GRAPHS`` (one graph of each kind) in the quick set, all in CI's ``slow`` run."""
from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from support.cli import CliRunner
from support.examples import examples
from support.hood import naive_hood, whole_graph
from support.marks import quick_graphs

import pbtxt_scan
from pbtxt_scan.cli import app
from pbtxt_scan.fpbp import _hood

DATA = Path(__file__).resolve().parent / "data"
GRAPHS = sorted((DATA / "graphs").glob("*.pbtxt"))
runner = CliRunner()


def _points() -> List[Tuple[str, str, Optional[str]]]:
    out = []
    for p in GRAPHS:
        exp = json.loads(p.with_suffix(".expected.json").read_text())
        for k in ("fp", "bp"):
            if exp.get(k):
                out.append((str(p), exp[k], exp.get(k + "_function")))
    return out


POINTS = _points()


@pytest.mark.parametrize("path, name, function", quick_graphs(POINTS, lambda p: p[0]), ids=["%s:%s" % (Path(p).stem, n) for p, n, _ in POINTS])
def test_fp_and_bp_hoods_match_the_naive_walk(path: str, name: str, function: Optional[str]) -> None:
    got = pbtxt_scan.neighbourhood(path, name, 2, 2, function=function, max_nodes=100000)
    assert got == naive_hood(path, name, 2, 2, function)
    assert any(n.hops == 0 and n.name == name for n in got.nodes)


@pytest.mark.parametrize("path, name, function", POINTS[:6], ids=["%s:%s" % (Path(p).stem, n) for p, n, _ in POINTS[:6]])
def test_a_hop_read_by_passes_equals_the_byte_search(path: str, name: str, function: Optional[str]) -> None:
    searched = pbtxt_scan.neighbourhood(path, name, 3, 3, function=function, max_nodes=100000)
    with pbtxt_scan.GraphFile.open(path) as g:
        read = _hood.neighbourhood(g, name, 3, 3, function=function, max_nodes=100000, search=False)
    assert searched == read


SMALL = [p for p in GRAPHS if p.stat().st_size < 60_000]
SMALL_BINARY = [p for p in sorted((DATA / "binary").glob("*.pb")) if p.stat().st_size < 60_000]  # (binary GraphDefs)


@functools.lru_cache(maxsize=None)
def _names(path: str) -> Tuple[str, ...]:
    return tuple(sorted(whole_graph(path, None)))


@settings(max_examples=examples(0.3), deadline=None)
@given(st.sampled_from(SMALL), st.integers(0, 10 ** 6), st.integers(0, 3), st.integers(0, 3))
def test_any_node_hood_matches_the_naive_walk(path: Path, pick: int, up: int, down: int) -> None:
    names = _names(str(path))
    name = names[pick % len(names)]
    assert pbtxt_scan.neighbourhood(str(path), name, up, down, max_nodes=100000) == naive_hood(str(path), name, up, down)


@settings(max_examples=examples(0.2), deadline=None)
@given(st.sampled_from(SMALL), st.integers(0, 10 ** 6), st.integers(1, 12))
def test_a_capped_hood_is_part_of_the_whole_and_says_so(path: Path, pick: int, cap: int) -> None:
    names = _names(str(path))
    name = names[pick % len(names)]
    whole = naive_hood(str(path), name, 2, 2)
    got = pbtxt_scan.neighbourhood(str(path), name, 2, 2, max_nodes=cap)
    assert len(got.nodes) == min(cap, len(whole.nodes))
    assert got.truncated == (len(whole.nodes) > cap)
    assert {n.name for n in got.nodes} <= {n.name for n in whole.nodes}
    assert any(n.hops == 0 for n in got.nodes)


TWINS = [(DATA / "binary" / (p.stem + ".pb"), p) for p in GRAPHS if (DATA / "binary" / (p.stem + ".pb")).exists()]
TWIN_POINTS = [(str(b), name, fn, t) for b, t in TWINS for t2, name, fn in POINTS if t2 == str(t)]


def _where_free(h: pbtxt_scan.Hood) -> Any:
    return h._replace(nodes=tuple(n._replace(line=None, offset=None) for n in h.nodes))


@pytest.mark.parametrize("binary, name, function, text", quick_graphs(TWIN_POINTS, lambda t: t[0]), ids=["%s:%s" % (Path(b).name, n) for b, n, _, _ in TWIN_POINTS])
def test_binary_twins_give_the_same_hood(binary: str, name: str, function: Optional[str], text: str) -> None:
    b = pbtxt_scan.neighbourhood(binary, name, 2, 2, function=function)
    assert _where_free(b) == _where_free(pbtxt_scan.neighbourhood(text, name, 2, 2, function=function))
    assert all(n.line is None and n.offset is not None for n in b.nodes)
    assert b == naive_hood(binary, name, 2, 2, function)


def test_bytes_in_hand_give_the_same_hood() -> None:
    path = DATA / "binary" / "mlp_sgd.pb"
    assert pbtxt_scan.neighbourhood(path.read_bytes(), "dense/MatMul", 1, 1) == pbtxt_scan.neighbourhood(str(path), "dense/MatMul", 1, 1)


def test_a_node_in_a_library_function() -> None:
    path = str(DATA / "graphs" / "tf2_called_function.pbtxt")
    first = pbtxt_scan.find_node(path, "dense/MatMul")
    assert first is not None and first.function is not None and "__forward_forward_509" in first.also + (first.function,)
    h = pbtxt_scan.neighbourhood(path, "dense/MatMul", 1, 1)  # found in a function, as show finds it
    assert {n.function for n in h.nodes} == {first.function}
    assert h == naive_hood(path, "dense/MatMul", 1, 1, first.function)
    picked = pbtxt_scan.neighbourhood(path, "dense/MatMul", 1, 1, function="__forward_forward_509")
    assert {n.function for n in picked.nodes} == {"__forward_forward_509"}
    assert picked == naive_hood(path, "dense/MatMul", 1, 1, "__forward_forward_509")
    assert len(h.nodes) > 1 and len(picked.nodes) > 1


def test_no_such_node() -> None:
    with pytest.raises(LookupError):
        pbtxt_scan.neighbourhood(str(GRAPHS[0]), "no/such/node")


# --- the command line


def _dot_read(text: str) -> Tuple[Dict[str, int], List[Tuple[str, str, bool]], List[str]]:
    """A tiny DOT reader for what show --format dot writes: nodes with their hop, edges, filled nodes."""
    q = r'"((?:[^"\\]|\\.)*)"'
    nodes: Dict[str, int] = {}
    edges: List[Tuple[str, str, bool]] = []
    filled: List[str] = []
    unq = functools.partial(re.sub, r"\\(.)", r"\1")
    for line in text.splitlines():
        m = re.match(r"\s*%s -> %s( \[style=dashed\])?;$" % (q, q), line)
        if m:
            edges.append((unq(m.group(1)), unq(m.group(2)), bool(m.group(3))))
            continue
        m = re.match(r"\s*%s \[(.*)\];$" % q, line)
        if m:
            name = unq(m.group(1))
            nodes[name] = int(re.search(r'tooltip="hop (-?\d+)"', m.group(2)).group(1))  # type: ignore[union-attr]
            if "filled" in m.group(2):
                filled.append(name)
    assert text.startswith("digraph hood {") and text.rstrip().endswith("}")
    return nodes, edges, filled


@pytest.mark.parametrize("path, name", [
    (str(DATA / "graphs" / "mlp_sgd.pbtxt"), "gradients/dense/MatMul_grad/MatMul_1"),
    (str(DATA / "binary" / "gan_two_optimizers.pb"), "discriminator/d1/MatMul"),
    (str(DATA / "graphs" / "rnn_while.pbtxt"), "gradients/rnn/while/lstm_cell/MatMul/Enter_grad/Add"),
])
def test_dot_read_back_equals_the_json(path: str, name: str) -> None:
    dot = runner.invoke(app, ["show", path, name, "--format", "dot"])
    js = runner.invoke(app, ["show", path, name, "--context", "2", "--json"])
    assert dot.exit_code == 0 and js.exit_code == 0, (dot.stderr, js.stderr)
    obj = json.loads(js.stdout)
    nodes, edges, filled = _dot_read(dot.stdout)
    assert nodes == {n["name"]: n["hops"] for n in obj["nodes"]}
    assert sorted(edges) == sorted((e["src"], e["dst"], e["control"]) for e in obj["edges"])
    assert filled == [name]


def test_control_edges_are_dashed() -> None:
    path = str(DATA / "graphs" / "mlp_sgd.pbtxt")
    h = pbtxt_scan.neighbourhood(path, "GradientDescent", 2, 0)  # the train op: control inputs only
    control = [e for e in h.edges if e.control]
    assert control
    _, edges, _ = _dot_read(runner.invoke(app, ["show", path, "GradientDescent", "--format", "dot", "-C", "2"]).stdout)
    assert {(e.src, e.dst) for e in control} <= {(s, d) for s, d, dashed in edges if dashed}


def test_text_rows_name_every_node_with_its_hop_and_line() -> None:
    path = str(DATA / "graphs" / "mlp_sgd.pbtxt")
    r = runner.invoke(app, ["show", path, "dense/MatMul", "--context", "1"])
    assert r.exit_code == 0, r.stderr
    h = pbtxt_scan.neighbourhood(path, "dense/MatMul", 1, 1)
    rows = r.stdout.splitlines()[2:]
    assert len(rows) == len(h.nodes)
    for row, n in zip(rows, h.nodes):
        cells = row.replace("* ", "").split()
        assert cells[:4] == [("%+d" % n.hops if n.hops else "0"), str(n.line), n.op, n.name]


def test_without_context_show_is_unchanged() -> None:
    path = str(DATA / "graphs" / "mlp_sgd.pbtxt")
    r = runner.invoke(app, ["show", path, "dense/MatMul"])
    assert r.stdout.splitlines()[0].split()[:2] == ["944", "node"]


@pytest.mark.parametrize("args", [["--context", "-1"], ["--max-nodes", "0", "-C", "1"], ["--format", "svg"]])
def test_bad_options_are_usage_errors(args: List[str]) -> None:
    r = runner.invoke(app, ["show", str(GRAPHS[0]), "x"] + args)
    assert r.exit_code == 2 and "Traceback" not in r.stderr


def test_an_unknown_node_with_context_exits_1() -> None:
    r = runner.invoke(app, ["show", str(DATA / "graphs" / "mlp_sgd.pbtxt"), "dense/MatMu", "-C", "1"])
    assert r.exit_code == 1 and "dense/MatMul" in r.stderr


@pytest.mark.parametrize("path, name, function", POINTS[::5] + [(str(DATA / "binary" / "mlp_sgd.pb"), "dense/MatMul", None)])
def test_a_writer_layout_graph_is_searched_not_read(monkeypatch: Any, path: str, name: str, function: Optional[str]) -> None:
    def no_reading(*a: Any) -> Any:
        raise AssertionError("a hop read the blocks")

    monkeypatch.setattr(_hood, "pass_finder", no_reading)
    monkeypatch.setattr("pbtxt_scan.fpbp._hood_find.pass_finder", no_reading)
    with pbtxt_scan.GraphFile.open(path) as g:
        assert _hood.neighbourhood(g, name, 2, 2, function=function, max_nodes=100000) == naive_hood(path, name, 2, 2, function)


ODD = [
    # one line a node, then a node in the writer's layout: a hit the search cannot place reads the hop
    'node { name: "a" op: "Placeholder" }\nnode {\n  name: "b"\n  op: "Identity"\n  input: "a"\n}\n'
    'node { name: "c" op: "Neg" input: "b:0" input: "^a" }\nnode {\n  name: "d"\n  op: "Neg"\n  input: "c"\n}\n',
    # the writer's layout, then nodes indented another way
    'node {\n  name: "a"\n  op: "Placeholder"\n}\nnode {\n    name: "b"\n    op: "Identity"\n    input: "a"\n}\n'
    'node {\n  name: "c"\n  op: "Neg"\n  input: "b"\n}\n',
]


@pytest.mark.parametrize("text", ODD)
@pytest.mark.parametrize("centre", ["a", "b", "c"])
def test_other_layouts_give_the_naive_hood(tmp_path: Path, text: str, centre: str) -> None:
    p = tmp_path / "g.pbtxt"
    p.write_text(text)
    assert pbtxt_scan.neighbourhood(str(p), centre, 3, 3) == naive_hood(str(p), centre, 3, 3)


# --- read near the centre, then one byte search (_hood_near)


@settings(max_examples=examples(0.3), deadline=None)
@given(st.sampled_from(SMALL + SMALL_BINARY), st.integers(0, 10 ** 6), st.integers(0, 3), st.integers(0, 3), st.sampled_from([0, 1, 300, 3000, 1 << 20]))
def test_any_window_gives_the_naive_hood(path: Path, pick: int, up: int, down: int, window: int) -> None:
    names = _names(str(path))
    name = names[pick % len(names)]
    with pbtxt_scan.GraphFile.open(str(path)) as g:
        got = _hood.neighbourhood(g, name, up, down, max_nodes=100000, window=window)
    assert got == naive_hood(str(path), name, up, down)


def _writer_graph(nodes: List[Tuple[str, List[str]]], filler: List[int], names: Tuple[str, ...] = ()) -> str:
    """Nodes in tf.io.write_graph's layout, ``filler[k]`` unrelated Const nodes before the k-th;
    with ``names``, their attrs name those nodes as TF's do (a colocation ``loc:@``) and as a
    string may (quoted inside it, escaped)."""
    out = []
    for k, (name, inputs) in enumerate(nodes):
        for j in range(filler[k % len(filler)]):
            if not names:
                out.append('node {\n  name: "pad%d_%d"\n  op: "Const"\n}\n' % (k, j))
                continue
            other = names[(k + j) % len(names)]
            out.append('node {\n  name: "pad%d_%d"\n  op: "Const"\n  attr {\n    key: "_class"\n    value {\n      list {\n'
                       '        s: "loc:@%s"\n      }\n    }\n  }\n  attr {\n    key: "note"\n    value {\n      s: "\\"%s\\" %s:0"\n'
                       '    }\n  }\n}\n' % (k, j, other, other, other))
        out.append('node {\n  name: "%s"\n  op: "Op%d"\n%s}\n' % (name, k % 3, "".join('  input: "%s"\n' % i for i in inputs)))
    return "".join(out) + "versions {\n  producer: 1\n}\n"


# Names as real graphs hold them: short ones, and long ones that begin, end or hold one another
# (a tower's copy, a gradient's, a numbered twin), which a byte search for one meets in the others.
_NAME_POOL = ["n0", "n1", "add", "add_1", "dense/MatMul", "dense/MatMul_1", "tower_1/dense/MatMul", "dense/MatMul_grad/MatMul",
              "gradients/dense/MatMul_grad/MatMul", "dense/MatMul/ReadVariableOp", "IteratorGetNext", "IteratorGetNext_1"]


@st.composite
def _random_graphs(draw: Any) -> Tuple[str, str]:
    names = draw(st.lists(st.sampled_from(_NAME_POOL), min_size=1, max_size=9, unique=True))
    nodes = []
    for name in names:  # (inputs name any node, before or after it: the order need not be topological)
        picks = draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(["", ":1", "^"])), max_size=3))
        nodes.append((name, ["^" + p if s == "^" else p + s for p, s in picks]))
    text = _writer_graph(nodes, draw(st.lists(st.integers(0, 40), min_size=1, max_size=4)), tuple(names))
    return text, draw(st.sampled_from(names))


@settings(max_examples=examples(0.3), deadline=None)
@given(_random_graphs(), st.integers(0, 3), st.integers(0, 3), st.sampled_from([0, 40, 500, 1 << 20]), st.sampled_from([None, 0, 1, 3]))
def test_far_producers_and_consumers_are_found(
    tmp_path_factory: Any, graph: Tuple[str, str], up: int, down: int, window: int, missed: Optional[int],
) -> None:
    # (missed: the bare hits met inside other names before a search goes on quoted, as it does in
    # a real graph after thousands)
    text, centre = graph
    p = tmp_path_factory.mktemp("far") / "g.pbtxt"
    p.write_text(text)

    def no_fallback(*a: Any) -> Any:
        raise AssertionError("the search could not place a hit: the hood was made hop by hop")

    with pbtxt_scan.GraphFile.open(str(p)) as g, pytest.MonkeyPatch.context() as mp:
        mp.setattr(_hood, "_hop_by_hop", no_fallback)  # (every hit a name's, in a colocation or a string's: placed or left)
        if missed is not None:
            mp.setattr("pbtxt_scan.text._hood._MISSED_MAX", missed)
        got = _hood.neighbourhood(g, centre, up, down, max_nodes=100000, window=window)
    assert got == naive_hood(str(p), centre, up, down)


def _counting_greps(monkeypatch: Any) -> List[str]:
    import pbtxt_scan.parallel._grep as hf

    calls: List[str] = []
    real = hf._grep

    def counted(grep: str, g: Any, offset: int, pattern: str, **kw: Any) -> Any:
        calls.append(pattern)
        return real(grep, g, offset, pattern, **kw)

    monkeypatch.setattr(hf, "_grep", counted)
    return calls


@pytest.mark.parametrize("path, name, function", [p for p in POINTS if p[2] is None][::4])
def test_context_2_is_the_centres_search_and_one_more(monkeypatch: Any, path: str, name: str, function: Optional[str]) -> None:
    calls = _counting_greps(monkeypatch)
    with pbtxt_scan.GraphFile.open(path) as g:
        got = _hood.neighbourhood(g, name, 2, 2, max_nodes=100000)
    assert got == naive_hood(path, name, 2, 2)
    assert len(calls) == 2, calls  # (the centre's, then every name the walk asked for at once)


def test_a_consumer_far_away_costs_a_second_search_only_for_its_own_consumers(tmp_path: Path, monkeypatch: Any) -> None:
    # c is a's consumer; d, far after it, is c's consumer: the window (40 bytes) holds a alone
    text = _writer_graph([("a", []), ("b", ["a"]), ("c", ["a:1"]), ("d", ["^c"]), ("e", ["d"])], [0, 30, 0, 30, 0])
    p = tmp_path / "g.pbtxt"
    p.write_text(text)
    calls = _counting_greps(monkeypatch)
    with pbtxt_scan.GraphFile.open(str(p)) as g:
        got = _hood.neighbourhood(g, "a", 0, 3, window=40)
    assert [(n.name, n.hops) for n in got.nodes] == [("a", 0), ("b", 1), ("c", 1), ("d", 2), ("e", 3)]
    assert got == naive_hood(str(p), "a", 0, 3)
    assert len(calls) == 4, calls  # the centre, {a}, {b, c}, {d}: each hop's consumers far away


TOGETHER = [str(DATA / "graphs" / "mlp_sgd.pbtxt")] + [t[0] for t in TWIN_POINTS if t[2] is None][::3]


@pytest.mark.parametrize("path", sorted(set(TOGETHER)))
def test_answers_drawn_together_share_their_search(monkeypatch: Any, path: str) -> None:
    pts = pbtxt_scan.points(path)
    calls = _counting_greps(monkeypatch)
    with pbtxt_scan.GraphFile.open(path) as g:
        fp, bp = _hood.neighbourhoods(g, [(pts.fp.point, 4, 2, None), (pts.bp.point, 2, 2, None)], max_nodes=100000)
    assert len(calls) == 1, calls  # (no centre searched: the answers say where they are)
    assert fp == naive_hood(path, pts.fp_name, 4, 2) and bp == naive_hood(path, pts.bp_name, 2, 2)


@pytest.mark.parametrize("window", [0, 40, 100, 1000, 1 << 18])
def test_of_two_nodes_named_alike_the_first_is_the_producer_whatever_the_window(tmp_path: Path, window: int) -> None:
    # TensorFlow refuses such a graph; the walk takes the first p (line 1), as the hop-by-hop search did
    p = tmp_path / "g.pbtxt"
    p.write_text(_writer_graph([("p", []), ("p", ["q"]), ("c", ["p"]), ("q", [])], [0, 30, 0, 0]))
    with pbtxt_scan.GraphFile.open(str(p)) as g:
        got = _hood.neighbourhood(g, "c", 2, 0, window=window)
        assert got == _hood.neighbourhood(g, "c", 2, 0, search=False)
    assert [(n.name, n.op, n.hops, n.line) for n in got.nodes] == [("p", "Op0", -1, 1), ("c", "Op2", 0, 130)]


@pytest.mark.parametrize("missed", [0, 1, 20000])
@pytest.mark.parametrize("window", [0, 1 << 20])
def test_a_search_gone_quoted_finds_a_value_just_after_a_name_met_inside_another(
    tmp_path: Path, monkeypatch: Any, missed: int, window: int,
) -> None:
    # x's first input holds "dense/MatMul" inside another name, its second is dense/MatMul itself:
    # the search, quoted from the first of them on, must still meet the second (24 bytes on)
    p = tmp_path / "g.pbtxt"
    p.write_text(_writer_graph([("dense/MatMul", []), ("tower_1/dense/MatMul", []), ("x", ["tower_1/dense/MatMul", "dense/MatMul"])], [0, 30, 30]))
    monkeypatch.setattr("pbtxt_scan.text._hood._MISSED_MAX", missed)
    with pbtxt_scan.GraphFile.open(str(p)) as g:
        got = _hood.neighbourhood(g, "dense/MatMul", 0, 1, window=window)
    assert got == naive_hood(str(p), "dense/MatMul", 0, 1)
    assert [n.name for n in got.nodes] == ["dense/MatMul", "x"]


def _three_readings(monkeypatch: Any, path: str, name: str, up: int, down: int, cap: int) -> List[pbtxt_scan.Hood]:
    """The Hood read near its centre, searched hop by hop, and read hop by hop by passes."""
    import pbtxt_scan.fpbp._hood_near as hn

    with pbtxt_scan.GraphFile.open(path) as g:
        near = _hood.neighbourhood(g, name, up, down, max_nodes=cap)
    real = hn.near_hoods
    monkeypatch.setattr(_hood, "near_hoods", lambda *a, **kw: real(*a, **dict(kw, limit=0)))  # (any block found: hop by hop)
    with pbtxt_scan.GraphFile.open(path) as g:
        searched = _hood.neighbourhood(g, name, up, down, max_nodes=cap)
    monkeypatch.setattr(_hood, "near_hoods", real)
    with pbtxt_scan.GraphFile.open(path) as g:
        read = _hood.neighbourhood(g, name, up, down, max_nodes=cap, search=False)
    return [near, searched, read]


@settings(max_examples=examples(0.3), deadline=None)
@given(st.sampled_from(SMALL + SMALL_BINARY), st.integers(0, 10 ** 6), st.integers(0, 3), st.integers(0, 3), st.integers(1, 12))
def test_a_capped_hood_is_the_same_whichever_way_it_is_read(path: Path, pick: int, up: int, down: int, cap: int) -> None:
    # each hop takes its new nodes in file order until the cap: the near reading, the hop-by-hop
    # search (which stops each hop's search there) and the reading by passes keep the same ones
    names = _names(str(path))
    name = names[pick % len(names)]
    with pytest.MonkeyPatch.context() as mp:
        near, searched, read = _three_readings(mp, str(path), name, up, down, cap)
    assert near == searched == read
    whole = naive_hood(str(path), name, up, down)
    assert near.truncated == (len(whole.nodes) > cap)
    assert {n.name for n in near.nodes} <= {n.name for n in whole.nodes}


@pytest.mark.parametrize("binary", [False, True])
def test_a_node_with_thousands_of_consumers_is_read_only_up_to_the_cap(tmp_path: Path, monkeypatch: Any, binary: bool) -> None:
    # an optimizer's learning rate feeds every apply op: the hood reads the first few, not all
    # (36 s and 377 MB on a 1 GB graph's 153,937 before), and draws the first in file order
    fan = 5000  # (past the near search's limit, 4096 blocks)
    nodes = [("lr", [])] + [("apply_%d" % k, ["lr", "grad_%d" % k]) for k in range(fan)]
    text = _writer_graph(nodes, [0])
    path = tmp_path / "g.pbtxt"
    path.write_text(text)
    if binary:
        from support.wire_encoder import encode, graph, node

        path = tmp_path / "g.pb"
        path.write_bytes(encode(graph([node(n, "Op%d" % (k % 3), i) for k, (n, i) in enumerate(nodes)])))
    rescans: List[int] = []
    real = pbtxt_scan.GraphFile.rescan
    assert len(text) > 1 << 17
    monkeypatch.setattr(pbtxt_scan.GraphFile, "rescan", lambda self, b, h: rescans.append(b.start) or real(self, b, h))
    with pbtxt_scan.GraphFile.open(str(path)) as g:
        got = _hood.neighbourhood(g, "lr", 1, 1, max_nodes=10, window=0)  # (no window: what is read is what the search found)
    assert len(rescans) < 4200, len(rescans)  # (the near search gives up past its limit; each hop's search stops when full)
    assert got == pbtxt_scan.neighbourhood(str(path), "lr", 1, 1, max_nodes=10)
    assert [n.name for n in got.nodes] == ["lr"] + ["apply_%d" % k for k in range(9)]
    assert got.truncated


@settings(max_examples=examples(1.0), deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 15)), max_size=12))
@example([(0, 5), (5, 5)])  # (spans that touch: one)
@example([(5, 5), (0, 5)])
def test_spans_read_whole_cover_what_was_read_and_stay_apart(spans: List[Tuple[int, int]]) -> None:
    from pbtxt_scan.fpbp._hood_near import Known

    known = Known()
    read = set()
    for start, length in spans:
        known.cover(start, start + length)
        read.update(range(start, start + length))
    assert [o for o in range(80) if known.covers(o)] == sorted(read)
    assert all(a[1] < b[0] for a, b in zip(known.spans, known.spans[1:]))  # (in order, apart: one bisect finds a span)
