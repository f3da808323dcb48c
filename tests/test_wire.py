"""The wire-format reader (pbtxt_scan.wire._wire, _wire_text): round trips through a test-side encoder,
damaged input, and the real binary twins of tests/data/graphs (tests/data/binary)."""
from __future__ import annotations

import gzip
import io
import json
import math
import os
import struct
import tracemalloc
from typing import Any, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples import examples

import pbtxt_scan as ps
from pbtxt_scan.wire import _wire as w
from pbtxt_scan.wire import _wire_index as wi
from pbtxt_scan.wire._wire_text import DATA_TYPES, node_to_text
from support.wire_encoder import Packed, encode, float32, graph_with_offsets, node, tag, varint, wrap

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.path.join(HERE, "data", "binary")
GRAPHS = os.path.join(HERE, "data", "graphs")
BOTH = [w.NODE_PATH, w.FUNCTION_PATH]


class Stream(io.RawIOBase):
    """A non-seekable stream (a pipe, gzip through _source) giving at most ``step`` bytes a read."""

    def __init__(self, data: bytes, step: int = 1 << 30) -> None:
        self._f = io.BytesIO(data)
        self._step = step

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def read(self, n: int = -1) -> bytes:
        return self._f.read(min(n if n >= 0 else 1 << 30, self._step))


def heads(b: ps.Block) -> Tuple[Any, ...]:
    return (b.path, b.start, b.end, b.line, b.column, b.name, b.op, tuple(b.inputs), b.head("device"), b.parents)


# ---- strategies ------------------------------------------------------------------------------

names = st.text(min_size=1, max_size=24)
ops = st.sampled_from(["MatMul", "Const", "Identity", "NoOp", "ApplyGradientDescent", "Placeholder", "Op\u00e9"])
small = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
scalar_attr = st.one_of(
    st.builds(lambda v: [(2, v)], st.binary(max_size=40)),
    st.builds(lambda v: [(3, v)], small),
    st.builds(lambda v: [(4, float32(v))], st.floats(width=32)),
    st.builds(lambda v: [(5, v)], st.booleans()),
    st.builds(lambda v: [(6, v)], st.integers(0, 130)),
    st.builds(lambda d: [(7, [(2, [(1, x)]) for x in d])], st.lists(st.integers(-1, 1 << 40), max_size=4)),
    st.builds(lambda n: [(8, [(1, 1), (2, [(2, [(1, 4)])]), (4, b"\x01" * n)])], st.sampled_from([0, 3, 5000, 200000])),
    st.builds(lambda v: [(1, [(3, Packed("varint", v)), (4, Packed("f", [1.5] * len(v))), (2, "a"), (2, "b")])], st.lists(st.integers(0, 1 << 62), max_size=5)),
    st.builds(lambda s: [(10, [(1, s), (2, [(1, "T"), (2, [(6, 1)])])])], names),
)
attrs = st.lists(st.tuples(st.text(min_size=0, max_size=8), scalar_attr), max_size=4)
nodes = st.lists(
    st.builds(node, names, ops, st.lists(names, max_size=4), st.one_of(st.just(""), names), attrs), max_size=12
)
functions = st.lists(st.tuples(names, nodes), max_size=3)
kinds = st.sampled_from(["graphdef", "metagraph", "savedmodel"])


def expected(e: Any, node_list: List[list], fns: List[Tuple[str, List[list]]], which: str) -> List[Tuple[Any, ...]]:
    out = []
    flat = [(None, n) for n in node_list] if which == "node" else [(f, n) for f, fn in fns for n in fn]
    spans = e.nodes if which == "node" else e.fnodes
    for (fname, n), (s, t) in zip(flat, spans):
        fields = dict((k, v) for k, v in n if k in (1, 2, 4))
        inputs = tuple(v for k, v in n if k == 3)
        path = w.NODE_PATH if which == "node" else w.FUNCTION_PATH
        parents = () if which == "node" else (None, fname)
        out.append((path, s, t, 0, 0, fields[1], fields[2], inputs, fields.get(4), parents))
    return out


def _printable(node_list: List[list], fns: List[Tuple[str, List[list]]]) -> bool:
    all_nodes = node_list + [n for _, fn in fns for n in fn]
    strings = [f for f, _ in fns] + [v for n in all_nodes for k, v in n if k < 5] + [v[0][1] for n in all_nodes for k, v in n if k == 5]
    return all(not any(c < " " for c in s) for s in strings)


# ---- round trips -----------------------------------------------------------------------------


@settings(max_examples=examples(0.15), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(nodes, functions, kinds, st.integers(64, 5000), st.booleans(), st.integers(0, 2), st.integers(0, 2))
def test_round_trip_forward_and_backward(node_list, fns, kind, chunk, stream, before, after):
    e = wrap(graph_with_offsets(node_list, fns), kind, before, after)
    want_nodes = expected(e, node_list, fns, "node")
    want_fns = expected(e, node_list, fns, "fn")
    if (node_list or fns or kind != "graphdef") and _printable(node_list, fns):
        assert w.sniff(e.data[: w.SNIFF_BYTES]) == kind  # (sniff wants names without control characters)
    f = Stream(e.data, chunk // 3 + 1) if stream else io.BytesIO(e.data)
    info: dict = {}
    got = [heads(b) for b in w.iter_wire_blocks(f, BOTH, kind=kind, chunk_size=chunk, info=info)]
    assert info["kind"] == kind
    if stream and kind == "savedmodel" and before:
        assert info["meta_graph"] == 0 and "not seekable" in info["why"]  # a stream cannot go back
        return
    assert got == sorted(want_nodes + want_fns, key=lambda h: h[1])
    if kind == "savedmodel":
        assert info["meta_graph"] == before and info["meta_graphs"] == before + after + 1
    if stream:
        return
    for path, want in ((w.NODE_PATH, want_nodes), (w.FUNCTION_PATH, want_fns)):
        ix = w.build_index(io.BytesIO(e.data), path, kind=kind, chunk_size=chunk, region=64)  # many checkpoints
        assert ix.nodes == len(want)
        back = [heads(b) for b in w.iter_wire_blocks_reversed(io.BytesIO(e.data), ix, chunk_size=chunk)]
        assert back == want[::-1]


@settings(max_examples=examples(0.1), deadline=None)
@given(st.builds(node, names, ops, st.lists(names, max_size=4), st.one_of(st.just(""), names), attrs))
def test_node_to_text_parses_with_the_grammar(n):
    text = node_to_text(encode(n))
    msg = ps.parse_text(text)
    (top,) = msg
    assert top.name == "node"
    body = top.value
    fields = dict((k, v) for k, v in n if k in (1, 2, 4))
    assert body.get("name") == fields[1]
    assert body.get("op") == fields[2]
    assert body.all("input") == [v for k, v in n if k == 3]
    assert body.get("device") == fields.get(4)
    keys = [a.get("key") for a in body.all("attr")]
    assert keys == sorted(set(k for f, (k, _v) in [(f, (dict(v)[1], v)) for f, v in n if f == 5]), key=lambda s: s.encode())


def test_node_to_text_values():
    n = node(
        "a\n\"b\u00e9",
        "Const",
        attrs=[
            ("f", [(4, float32(0.1))]),
            ("inf", [(4, float32(float("-inf")))]),
            ("i", [(3, -5)]),
            ("b", [(5, False)]),
            ("s", [(2, b"\x00\xff'")]),
            ("type", [(6, 1)]),
            ("odd", [(6, 77)]),
            ("list", [(1, [(3, Packed("varint", [1, 2])), (6, Packed("varint", [1, 9])), (4, float32(2.5))])]),
            ("value", [(8, [(1, 1), (2, [(2, [(1, 2)]), (2, [])]), (5, Packed("f", [1.0, -0.0]))])]),
        ],
    )
    text = node_to_text(encode(n), "node_def", indent=2)
    assert text == (
        "  node_def {\n"
        '    name: "a\\n\\"b\\303\\251"\n'
        '    op: "Const"\n'
        '    attr {\n      key: "b"\n      value {\n        b: false\n      }\n    }\n'
        '    attr {\n      key: "f"\n      value {\n        f: 0.10000000149011612\n      }\n    }\n'
        '    attr {\n      key: "i"\n      value {\n        i: -5\n      }\n    }\n'
        '    attr {\n      key: "inf"\n      value {\n        f: -inf\n      }\n    }\n'
        '    attr {\n      key: "list"\n      value {\n        list {\n          i: 1\n          i: 2\n'
        "          f: 2.5\n          type: DT_FLOAT\n          type: DT_INT64\n        }\n      }\n    }\n"
        '    attr {\n      key: "odd"\n      value {\n        type: 77\n      }\n    }\n'
        '    attr {\n      key: "s"\n      value {\n        s: "\\000\\377\\\'"\n      }\n    }\n'
        '    attr {\n      key: "type"\n      value {\n        type: DT_FLOAT\n      }\n    }\n'
        '    attr {\n      key: "value"\n      value {\n        tensor {\n          dtype: DT_FLOAT\n'
        "          tensor_shape {\n            dim {\n              size: 2\n            }\n            dim {\n"
        "            }\n          }\n          float_val: 1.0\n          float_val: -0.0\n        }\n      }\n    }\n"
        "  }\n"
    )
    ps.parse_text(text)
    assert DATA_TYPES[101] == "DT_FLOAT_REF" and DATA_TYPES[23] == "DT_UINT64"


# ---- damaged input ---------------------------------------------------------------------------

SMALL = wrap(graph_with_offsets([node("a", "Const", ["x"], "/cpu:0", [("v", [(8, [(1, 1), (4, b"zz")])])]), node("b", "Add")], [("f", [node("c", "Neg")])]), "savedmodel", 1, 0).data


def read_all(data: bytes, **kw: Any) -> List[ps.Block]:
    return list(w.iter_wire_blocks(io.BytesIO(data), BOTH, **kw))


@pytest.mark.parametrize("kind", ["graphdef", "metagraph", "savedmodel"])
def test_every_truncation_is_a_clean_error(kind):
    data = wrap(graph_with_offsets([node("a", "Const", ["x"], "/cpu:0", [("v", [(8, [(1, 1), (4, b"zz" * 200)])])]), node("b", "Add")], [("f", [node("c", "Neg")])]), kind, 1, 0).data
    for cut in range(1, len(data)):
        packed = gzip.GzipFile(fileobj=io.BytesIO(gzip.compress(data[:cut])))  # seekable, size unknown
        for f in (io.BytesIO(data[:cut]), Stream(data[:cut], 7), packed):
            try:
                got = list(w.iter_wire_blocks(f, BOTH, kind=kind))
                # a cut between whole fields leaves a valid, shorter message: the same for all inputs
                assert [b.end for b in got] == [b.end for b in read_all(data[:cut], kind=kind)]
            except ps.PbtxtError as e:
                assert e.offset is not None and 0 <= e.offset <= cut, (cut, e)
                assert "\n" not in str(e)
        try:
            ix = w.build_index(io.BytesIO(data[:cut]), kind=kind)
            list(w.iter_wire_blocks_reversed(io.BytesIO(data[:cut]), ix))
        except ps.PbtxtError:
            pass


def test_truncated_node_text():
    data = encode(node("a", "Const", ["x"], attrs=[("v", [(8, [(1, 1), (4, b"zz")])])]))
    for cut in range(len(data)):
        try:
            node_to_text(data[:cut], base=100)
        except ps.PbtxtError as e:
            assert e.offset is not None and 100 <= e.offset <= 100 + cut


@settings(max_examples=examples(0.3), deadline=None)
@given(st.data())
def test_damaged_bytes_never_crash(data):
    buf = bytearray(SMALL)
    for _ in range(data.draw(st.integers(1, 4))):
        buf[data.draw(st.integers(0, len(buf) - 1))] = data.draw(st.integers(0, 255))
    raw = bytes(buf)
    try:
        for b in read_all(raw, kind="savedmodel"):
            node_to_text(raw[b.start : b.end], base=b.start)
    except ps.PbtxtError as e:
        assert e.offset is not None
    try:
        w.sniff(raw)
    except Exception as e:  # pragma: no cover - the point of the test
        pytest.fail("sniff raised %r" % e)


@pytest.mark.parametrize(
    "data, message, offset",
    [
        (b"\x0a\x05\x0a\x01a", "truncated: a length-delimited field runs past the end of the file", 0),
        (b"\x0a\x02\x0a\x05", "truncated: a field runs past the end of its enclosing message", 2),
        (b"\x0a\x80", "truncated: the file ends inside a varint", 1),
        (b"\x0e\x00", "wire type 6 is not valid", 0),
        (b"\x0a\x00\x1f", "wire type 7 is not valid", 2),
        (b"\x0a\x00" + b"\xff" * 11, "bad varint", 2),
        (b"\x0a\x00\x02\x00", "field number 0 is not valid", 2),
        (b"\x0a\x00\x24", "end-group tag without a group", 2),
    ],
)
def test_error_messages(data, message, offset):
    with pytest.raises(ps.PbtxtError) as e:
        read_all(data, kind="graphdef")
    assert e.value.msg.startswith(message)
    assert e.value.offset == offset
    assert e.value.line is None


def test_groups_are_skipped():
    g = b"\x0b\x08\x01\x13\x14\x0c"  # group 1 { varint; group 2 {} }
    data = encode([(1, node("a", "B"))]) + g + encode([(1, node("c", "D"))])
    assert [b.name for b in read_all(data, kind="graphdef")] == ["a", "c"]


def test_big_tensor_is_skipped_not_held():
    big = 30 << 20
    data = encode([(1, node("a", "Const", attrs=[("value", [(8, [(1, 1), (4, b"\0" * big)])])])), (1, node("b", "Add", ["a"]))])
    tracemalloc.start()
    try:
        got = [b.name for b in w.iter_wire_blocks(Stream(data, 1 << 16), chunk_size=1 << 16)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got == ["a", "b"]
    assert peak < 4 << 20, peak
    f = io.BytesIO(data)
    ix = w.build_index(f)
    assert [b.name for b in w.iter_wire_blocks_reversed(f, ix)] == ["b", "a"]
    assert len(ix.offs) == 2  # a node past the region size starts a new region


# ---- detection -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(os.listdir(GRAPHS)))
def test_text_is_not_binary(name):
    if name.endswith(".pbtxt"):
        with open(os.path.join(GRAPHS, name), "rb") as f:
            assert w.sniff(f.read(w.SNIFF_BYTES)) is None


@given(st.text(alphabet=st.characters(min_codepoint=9, max_codepoint=0x2FF), max_size=300).map(lambda s: s.encode()))
def test_sniff_text(head):
    # (Not a newline: 0x0A is also the tag of a GraphDef's first node, so random text after one
    # can read as a tiny graph; the newline cases a text file has are below.)
    if head[:1].isalpha() or head[:1] in (b"#", b" ", b"\t", b"_"):
        assert w.sniff(head) is None


@pytest.mark.parametrize("head", [
    b"\n08080\xc2\x80\xc2\x80\xc2\x80\xc2\x80\xc2\x80",  # (found by hypothesis) a first node of 48 bytes, cut
    b"\nnode {\n  name: \"a\"\n  op: \"Const\"\n}\n",  # a blank line, then the writer layout
    b"\n\n# a comment\nnode { name: 'a' }\n",
    b"\n",
])
def test_sniff_text_after_a_newline(head):
    assert w.sniff(head) is None


def test_sniff_kinds():
    big_first = graph_with_offsets([node("w", "Const", attrs=[("value", [(8, [(1, 1), (4, b"\x0a" * 300000)])])])]).data
    assert w.sniff(big_first[: w.SNIFF_BYTES]) == "graphdef"  # the first node is cut by the head
    assert w.sniff(wrap(graph_with_offsets([node("a", "B")]), "metagraph").data) == "metagraph"
    assert w.sniff(b"") is None
    assert w.sniff(b"node {\n  name: \"a\"\n}\n") is None
    assert w.sniff(b"\x89PNG\r\n\x1a\n") is None


# ---- the real binary twins (tests/data/binary, made with TensorFlow 2.15.1) ------------------

TWINS = [
    ("mlp_sgd.pb", "mlp_sgd", "graphdef", 9909, 29544),
    ("mlp_sgd.pb.gz", "mlp_sgd", "graphdef", 9909, 29544),
    ("mlp_sgd.meta", "mlp_sgd", "metagraph", 13717, 33352),
    ("mlp_sgd_saved_model/saved_model.pb", "mlp_sgd", "savedmodel", 40976, 63369),
    ("tf2_gradient_tape.pb", "tf2_gradient_tape", "graphdef", 2707, 11366),
    ("tf2_gradient_tape.meta", "tf2_gradient_tape", "metagraph", 5150, 13809),
    ("estimator_queue.pb", "estimator_queue", "graphdef", 12033, 35368),
    ("estimator_queue.meta", "estimator_queue", "metagraph", 17767, 41102),
    ("gan_two_optimizers.pb", "gan_two_optimizers", "graphdef", 14894, 89133),
    ("gan_two_optimizers.meta", "gan_two_optimizers", "metagraph", 20483, 94722),
]
assert all(os.path.exists(os.path.join(BINARY, t[0])) for t in TWINS)


def _raw(name: str) -> bytes:
    with open(os.path.join(BINARY, name), "rb") as f:
        data = f.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _same(b: ps.Block) -> Tuple[Any, ...]:
    return (b.path, b.name, b.op, tuple(b.inputs), b.head("device"), b.parents)


@pytest.mark.parametrize("name, stem, kind, fp, bp", TWINS)
def test_twin_matches_its_text(name, stem, kind, fp, bp):
    raw = _raw(name)
    assert w.sniff(raw[: w.SNIFF_BYTES]) == kind
    with open(os.path.join(GRAPHS, stem + ".expected.json")) as f:
        answers = json.load(f)
    text_path = os.path.join(GRAPHS, stem + ".pbtxt")
    opened = gzip.open(os.path.join(BINARY, name)) if name.endswith(".gz") else open(os.path.join(BINARY, name), "rb")
    with opened as f:
        for path in BOTH:
            got = list(w.iter_wire_blocks(f, [path]))
            f.seek(0)
            want = [_same(b) for b in ps.iter_blocks(text_path, path)]
            assert [_same(b) for b in got[: len(want)]] == want
            extra = got[len(want) :]
            assert all(b.name.startswith("save/") for b in extra) and (not extra or kind == "savedmodel")
            back = list(w.iter_wire_blocks_reversed(f, w.build_index(f, path)))
            assert back == got[::-1]
            f.seek(0)
    by_name = {b.name: b.start for p in BOTH for b in w.iter_wire_blocks(io.BytesIO(raw), [p])}
    assert by_name[answers["fp"]] == fp
    assert by_name[answers["bp"]] == bp
    # the same through a non-seekable stream, and every node renders as text the grammar parses
    mg = 1 if kind == "savedmodel" else None  # (a stream cannot look for the train tag ahead)
    streamed = list(w.iter_wire_blocks(Stream(raw, 4096), BOTH, chunk_size=4096, meta_graph=mg))
    assert streamed == list(w.iter_wire_blocks(io.BytesIO(raw), BOTH))


def _f32(x: Any) -> Any:
    if isinstance(x, float) and math.isfinite(x):
        return struct.unpack("<f", struct.pack("<f", x))[0]
    return x


def _plain(m: Any) -> Any:
    if isinstance(m, list):
        return [(f.name, _plain(f.value)) for f in m]
    return _f32(m)


@pytest.mark.parametrize("stem", ["mlp_sgd", "tf2_gradient_tape", "estimator_queue", "gan_two_optimizers"])
def test_node_text_equals_the_text_twin(stem):
    """node_to_text gives the text twin's own node text (values equal as float32: mlp_sgd's text
    prints a few floats in their shortest float32 form, TF's writer the double's repr)."""
    raw = _raw(stem + ".pb")
    text_path = os.path.join(GRAPHS, stem + ".pbtxt")
    exact = 0
    for path, field in ((w.NODE_PATH, "node"), (w.FUNCTION_PATH, "node_def")):
        mine = list(w.iter_wire_blocks(io.BytesIO(raw), [path]))
        theirs = list(ps.iter_blocks(text_path, path))
        assert len(mine) == len(theirs)
        for b, t in zip(mine, theirs):
            text = node_to_text(raw[b.start : b.end], field, indent=t.column - 1, base=b.start)
            assert _plain(ps.parse_text(text)) == _plain(ps.parse_block(text_path, t))
            exact += text == " " * (t.column - 1) + ps.read_block_bytes(text_path, t).decode() + "\n"
    assert exact >= len(mine) - 5


def test_saved_model_choice():
    path = os.path.join(BINARY, "mlp_sgd_saved_model", "saved_model.pb")
    raw = _raw("mlp_sgd_saved_model/saved_model.pb")
    info: dict = {}
    with open(path, "rb") as f:
        names = [b.name for b in w.iter_wire_blocks(f, info=info)]
    assert info == {"kind": "savedmodel", "meta_graph": 1, "tags": ("train",), "meta_graphs": 2, "why": "tagged train"}
    assert any("gradients" in n for n in names)
    info = {}
    serve = [b.name for b in w.iter_wire_blocks(io.BytesIO(raw), meta_graph=0, info=info)]
    assert info["tags"] == ("serve",) and len(serve) == 72 and not any("gradients" in n for n in serve)
    info = {}
    assert [b.name for b in w.iter_wire_blocks(Stream(raw), info=info)] == serve
    assert info["meta_graph"] == 0 and "not seekable" in info["why"] and info["meta_graphs"] == 2
    with pytest.raises(ps.PbtxtError, match="no MetaGraph 5"):
        list(w.iter_wire_blocks(io.BytesIO(raw), meta_graph=5))
    ix = w.build_index(io.BytesIO(raw))
    assert ix.info.meta_graph == 1 and ix.nodes == len(names)


def test_reread_block_with_other_heads():
    raw = _raw("tf2_gradient_tape.meta")
    f = io.BytesIO(raw)
    light = frozenset({"name", "op"})
    for path in BOTH:
        full = list(w.iter_wire_blocks(io.BytesIO(raw), [path]))
        back = list(w.iter_wire_blocks_reversed(f, w.build_index(f, path), light))
        assert [b.heads for b in back] == [tuple(h for h in b.heads if h.name in light) for b in full[::-1]]
        assert [w.reread_block(f, b) for b in back] == full[::-1]
    with pytest.raises(ps.PbtxtError, match="seekable"):
        w.reread_block(Stream(raw), back[0])


def test_unknown_kind_and_paths():
    with pytest.raises(ps.PbtxtError, match="not a binary GraphDef"):
        read_all(b"node {\n}\n")
    with pytest.raises(ValueError):
        read_all(SMALL, kind="onnx")
    with pytest.raises(ValueError):
        list(w.iter_wire_blocks(io.BytesIO(SMALL), [("graph", "op")]))
    with pytest.raises(ps.PbtxtError, match="seekable"):
        list(w.iter_wire_blocks_reversed(Stream(SMALL), w.build_index(io.BytesIO(SMALL))))


def test_varints_and_tags_of_many_bytes():
    n = node("a" * 300, "B", ["c" * 20000])
    data = tag(1, 2) + varint(len(encode(n))) + encode(n) + encode([(1000, 5), (1, node("z", "Y"))])
    assert [b.name for b in read_all(data, kind="graphdef")] == ["a" * 300, "z"]


def test_validate_checks_inside_attrs():
    bad_attr = [(5, [(1, "k"), (2, b"\x42\x05ab")])]  # AttrValue.shape with a length past its end
    data = encode([(1, node("a", "B") + bad_attr)])
    assert [b.name for b in read_all(data, kind="graphdef")] == ["a"]  # the listing skips attrs
    with pytest.raises(ps.PbtxtError, match="truncated") as e:
        read_all(data, kind="graphdef", validate=True)
    assert e.value.offset is not None and e.value.offset > 2
    for name, *_ in TWINS:
        read_all(_raw(name), validate=True)


def test_main_lists_nodes(tmp_path, capsys):
    assert w.main([os.path.join(BINARY, "mlp_sgd.pb.gz")]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 155 and out.startswith("2\t")
    assert "kind=graphdef" in err
    assert w.main(["--backward", os.path.join(BINARY, "mlp_sgd_saved_model", "saved_model.pb")]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].endswith("save/restore_all\tNoOp") and "tagged train" in err
    cut = tmp_path / "cut.pb"
    cut.write_bytes(_raw("mlp_sgd.pb")[:1000])
    assert w.main([str(cut)]) == 2
    assert "offset 569: truncated" in capsys.readouterr().err


def test_binary_kind_holds_the_dense_nodes(tmp_path):
    """benchmarks/generate/binary.py: the binary kind is the dense kind's nodes, node for node, and
    each renders back to the dense text byte for byte."""
    import sys

    sys.path.insert(0, os.path.dirname(HERE))
    from benchmarks.generate import binary, generate

    meta = generate("binary", str(tmp_path / "g.pb"), 600 << 10)
    generate("dense", str(tmp_path / "g.pbtxt"), meta["text_bytes"])
    raw = (tmp_path / "g.pb").read_bytes()
    text = (tmp_path / "g.pbtxt").read_bytes()
    assert w.sniff(raw[: w.SNIFF_BYTES]) == "graphdef" and abs(len(raw) - (600 << 10)) < 60 << 10
    for path in BOTH:
        mine = list(w.iter_wire_blocks(io.BytesIO(raw), [path]))
        theirs = list(ps.iter_blocks(str(tmp_path / "g.pbtxt"), path))
        assert [_same(b) for b in mine] == [_same(b) for b in theirs] and mine
        for b, t in zip(mine, theirs):
            assert node_to_text(raw[b.start : b.end], path[-1], t.column - 1) == " " * (t.column - 1) + text[t.start : t.end].decode() + "\n"
    assert meta["nodes"] == len(list(w.iter_wire_blocks(io.BytesIO(raw))))
    ix = w.build_index(io.BytesIO(raw))
    assert ix.nodes == meta["nodes"] and len(ix.offs) <= len(raw) // wi.REGION + 2  # sparse
    assert binary.varint(300) == b"\xac\x02"
