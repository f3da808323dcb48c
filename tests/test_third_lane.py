"""The lane protocol is complete: a third lane, written here, reads a graph stored as a JSON list of
nodes (one a line, each with its name, op, inputs and its text), and fp, bp and a node's
neighbourhood (``show``'s) answer on it as on the text graph it was made from, with no change to
the rules. The lane says how its positions are shown (byte offsets: it has no lines of its own)
and offers none of the byte searches the text and wire lanes do, so the rules read its blocks.
A second JSON lane offers a neighbourhood's two searches (blocks by name or by input, and the
blocks near an offset) in its own way, and ``show --context`` takes them, as it takes the text
and wire lanes', with no reading of the blocks."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence

import pytest

import pbtxt_scan
from pbtxt_scan import DIALECTS, Block, GraphFile, Head
from pbtxt_scan.language._grammar import parse_text_within
from pbtxt_scan.source._lane import PARSE_MAX, Found, Lane, Near

GRAPHS = Path(__file__).resolve().parent / "data" / "graphs"
# TF1 graphs (no library: the JSON lane has top-level nodes only), fp and bp on several rules' paths.
# (Not gan_one_group: there fp read without a byte search is ambiguous where the search's is
# certain, on the text lane as well: find_fp(path, search=False).)
FIXTURES = ["mlp_sgd", "estimator_queue", "global_local_copies", "label_cast_one_hot", "staging_prefetch", "tf1_iterator"]
HEADS = frozenset({"name", "op", "input", "device"})


class JsonLane(Lane):
    """Nodes as JSON objects, one a line between ``[`` and ``]``: ``{"name", "op", "input",
    "text"}``. A block is the object's bytes; it has no line (``0``), so positions are offsets."""

    unit = "offset"

    @property
    def dialect(self) -> Any:
        return DIALECTS["graphdef"]

    def _nodes(self) -> List[Block]:
        store = self.store
        f, size = store.whole()
        out, pos = [], 0
        for raw in store.read_at(0, size).splitlines(keepends=True):
            start, pos = pos, pos + len(raw)
            body = raw.rstrip(b",\r\n")
            if body[:1] == b"{":
                out.append(Block(("node",), start, start + len(body), 0, 0, ()))
        return out

    def _with(self, b: Block, heads: FrozenSet[str]) -> Block:
        node = json.loads(self.store.read_at(b.start, b.end - b.start))
        hs = [Head(k, v, 0) for k in ("name", "op") if k in heads for v in [node[k]]]
        if "input" in heads:
            hs += [Head("input", i, 0) for i in node["input"]]
        return b._replace(heads=tuple(hs))

    def forward(self, block_path: Sequence[str], heads: FrozenSet[str], *, chunk_size: int, end_state: Optional[Dict[str, Any]], validate: bool,
                schema: int = 0) -> Iterator[Block]:
        blocks = self._nodes() if tuple(block_path) == ("node",) else []
        for b in blocks:
            yield self._with(b, heads)
        if end_state is not None:
            end_state["bytes"] = self.store.bytes_read()
            end_state["lines"] = None

    def backward(self, block_path: Sequence[str], heads: FrozenSet[str], cache: Any) -> Iterator[Block]:
        blocks = self._nodes() if tuple(block_path) == ("node",) else []
        return (self._with(b, heads) for b in reversed(blocks))

    def read(self, block: Block) -> bytes:
        return json.loads(self.store.read_at(block.start, block.end - block.start))["text"].encode()

    def rescan(self, block: Block, heads: FrozenSet[str]) -> List[Block]:
        return [self._with(block, heads)]

    def parse(self, block: Block, max_bytes: int = PARSE_MAX) -> Any:
        msg = parse_text_within(self.read(block).decode(), 1, self.store.name, min(max_bytes, PARSE_MAX))
        assert msg is not None
        return msg


def _as_json(text_graph: Path, out: Path) -> Path:
    """The text graph's top-level nodes as the JSON lane's file (each node's text, one a line)."""
    lines = []
    with GraphFile.open(text_graph) as g:
        for b in g.blocks(("node",), HEADS):
            node = {"name": b.name, "op": b.op, "input": b.inputs, "text": g.read(b).decode()}
            lines.append(json.dumps(node, sort_keys=True))
    out.write_text("[\n" + ",\n".join(lines) + "\n]\n")
    return out


def _json_graph(name: str, tmp_path: Path) -> GraphFile:
    path = _as_json(GRAPHS / (name + ".pbtxt"), tmp_path / (name + ".json"))
    return GraphFile.open(path, lane=JsonLane)


def _same(a: Any, b: Any) -> Any:
    """What must be the same on both lanes: the point, the rule, the confidence, the alternatives."""
    def key(p: Any) -> Any:
        return None if p is None else (p.name, p.op, p.rule, p.function)

    return key(a.point), a.confidence, [key(x.point) for x in a.alternatives], a.reason == b.reason


@pytest.mark.parametrize("name", FIXTURES)
def test_fp_and_bp_on_a_third_lane(name: str, tmp_path: Path) -> None:
    text = GRAPHS / (name + ".pbtxt")
    with _json_graph(name, tmp_path) as g:
        assert type(g.lane) is JsonLane
        for find in (pbtxt_scan.find_fp, pbtxt_scan.find_bp):
            want, got = find(text), find(g)
            assert got.point is not None, (find.__name__, got.reason)
            assert _same(got, want) == _same(want, want), find.__name__
            # its positions are the lane's: offsets of its own bytes, no line
            assert got.unit == "offset" and got.point.line is None
            raw = g.read_at(got.point.offset, 1 << 16)
            assert json.loads(raw[: raw.index(b"\n")].rstrip(b","))["name"] == got.point.name


@pytest.mark.parametrize("name", FIXTURES[:3])
def test_show_on_a_third_lane(name: str, tmp_path: Path) -> None:
    """A node's neighbourhood (``show --context``, the report's drawing): the same nodes and edges."""
    text = GRAPHS / (name + ".pbtxt")
    centre = pbtxt_scan.find_bp(text).point.name

    def shape(h: Any) -> Any:
        return sorted((n.name, n.op) for n in h.nodes), sorted(h.edges), h.centre

    want = pbtxt_scan.neighbourhood(text, centre, 2, 2)
    with _json_graph(name, tmp_path) as g:
        got = pbtxt_scan.neighbourhood(g, centre, 2, 2)
        assert shape(got) == shape(want)
        assert all(n.line is None for n in got.nodes)


class SearchingJsonLane(JsonLane):
    """The JSON lane with a neighbourhood's searches of its own (a scan of its lines): the blocks
    named like, or whose inputs name, a set of names, and the blocks near an offset."""

    searches: List[str] = []  # (what the rules asked of the lane, in order)

    def find_blocks(
        self, path: Sequence[str], centre: Optional[Block] = None, *, upto: Optional[int] = None,
        known: Optional[Callable[[int], bool]] = None, first: bool = False, cache: Any = None, since: int = 0,
    ) -> Optional[Found]:  # (``since``: this lane searches from the start, which the protocol allows)
        if tuple(path) != ("node",):
            return None

        def find(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Block]:
            self.searches.append("find")
            for b in self._nodes():
                if upto is not None and b.start >= upto:
                    return
                if known is not None and known(b.start):
                    continue
                node = self._with(b, HEADS)
                if node.name in want or any(i.lstrip("^").split(":")[0] in cons for i in node.inputs):
                    yield b  # (its place only: the rules read it)

        return find

    def read_near(
        self, lo: int, hi: int, at: int, heads: FrozenSet[str], *, inside: Callable[[int, int], bool], cache: Any = None,
    ) -> Optional[Near]:
        self.searches.append("near")
        blocks = [b for b in self._nodes() if b.end > min(lo, at) and b.start <= max(hi, at)]
        if at not in [b.start for b in blocks]:
            return None  # (no node there)
        span = (blocks[0].start, blocks[-1].end)
        if inside(*span):
            return Near(span, [])
        return Near(span, [self._with(b, heads) for b in blocks])


def _answers(name: str) -> List[str]:
    text = GRAPHS / (name + ".pbtxt")
    return [pbtxt_scan.find_fp(text).point.name, pbtxt_scan.find_bp(text).point.name]


def _where_free(h: Any) -> Any:
    """A Hood less where its nodes are (lines on text, the lane's own offsets on JSON)."""
    return h._replace(nodes=tuple(n._replace(line=None, offset=None) for n in h.nodes))


@pytest.mark.parametrize("lane", [JsonLane, SearchingJsonLane])
@pytest.mark.parametrize("name", FIXTURES[:4])
def test_show_and_show_context_2_on_a_third_lane(name: str, lane: Any, tmp_path: Path) -> None:
    """``show NAME`` (the node found, its text and its parse, as the command reads them) and
    ``show NAME --context 2`` on fp's and bp's nodes: asked by name, and by the answers' points
    together (as the report draws them)."""
    from pbtxt_scan import find_node

    text = GRAPHS / (name + ".pbtxt")
    path = _as_json(text, tmp_path / (name + ".json"))
    with GraphFile.open(text) as t, GraphFile.open(path, lane=lane) as g:
        assert type(g.lane) is lane
        for node in _answers(name):
            want, got = find_node(t, node), find_node(g, node)
            assert got is not None and got.function is None and got.block.name == node
            assert g.read(got.block) == t.read(want.block)
            assert g.parse(got.block, max_bytes=1 << 62)[0].value.to_data() == t.parse(want.block, max_bytes=1 << 62)[0].value.to_data()
            assert got.block.line == 0 and got.block.where == "offset %d" % got.block.start
            for cap in (64, 5):
                want_h = pbtxt_scan.neighbourhood(t, node, 2, 2, max_nodes=cap)
                got_h = pbtxt_scan.neighbourhood(g, node, 2, 2, max_nodes=cap)
                assert _where_free(got_h) == _where_free(want_h)
                assert all(n.line is None and n.offset is not None for n in got_h.nodes)
        asks = [(find(g).point, 2, 2) for find in (pbtxt_scan.find_fp, pbtxt_scan.find_bp)]
        both = pbtxt_scan.neighbourhoods(g, asks)
        assert [_where_free(h) for h in both] == [_where_free(pbtxt_scan.neighbourhood(t, n, 2, 2)) for n in _answers(name)]


@pytest.mark.parametrize("name", FIXTURES[:4])
def test_a_third_lanes_own_searches_draw_the_neighbourhood(name: str, tmp_path: Path, monkeypatch: Any) -> None:
    """A lane that offers the two searches is asked for them, and the blocks are never read
    through: by name, the centre's search then one more (read near the centre); by the answers'
    points, one search for both."""
    import pbtxt_scan.fpbp._hood as hood

    def no_reading(*a: Any) -> Any:
        raise AssertionError("a hop read the blocks")

    monkeypatch.setattr(hood, "pass_finder", no_reading)
    monkeypatch.setattr("pbtxt_scan.fpbp._hood_find.pass_finder", no_reading)
    path = _as_json(GRAPHS / (name + ".pbtxt"), tmp_path / (name + ".json"))
    with GraphFile.open(path, lane=SearchingJsonLane) as g:
        for node in _answers(name):
            SearchingJsonLane.searches = []
            got = pbtxt_scan.neighbourhood(g, node, 2, 2)
            assert got.centre == node and any(n.hops == 0 and n.name == node for n in got.nodes)
            assert SearchingJsonLane.searches[:3] == ["find", "near", "find"], SearchingJsonLane.searches
        SearchingJsonLane.searches = []
        asks = [(find(g).point, 2, 2) for find in (pbtxt_scan.find_fp, pbtxt_scan.find_bp)]
        SearchingJsonLane.searches = []
        pbtxt_scan.neighbourhoods(g, asks)
        assert SearchingJsonLane.searches.count("find") == 1, SearchingJsonLane.searches
