"""GE loading at scanner speed agrees with the exact road, op by op.

The fast road (``ge/_fast``: attributes read off the writer layout's lines by one regex) and the
split (``ge/_split``: the dump cut at its op openers and loaded on two processes) must give the
records the exact road gives (every block through the Lark parse, or the skim): generated GE ops,
written in the writer layout and out of it (odd indentation, several fields on a line, comments,
``<>`` and ``:`` before a message, lists, separators), with the attributes GE reads in every
shape (values before keys, repeated keys, decoys nested deeper, escapes, numbers in every base),
weights longer than the pieces the fast road reads, several graph blocks. Broken dumps fail with
the same first error on every road.
"""
from __future__ import annotations

import contextlib
import functools
import os
import random
import tempfile
from typing import Any, Iterator, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from support.examples import examples

from pbtxt_scan import GraphFile, PbtxtError, ge as _ge
from pbtxt_scan.ge import _fast, _ops, _split
from pbtxt_scan.parallel._pool import can_fork

Fields = List[Tuple[str, Any]]  # (name, raw scalar text or sub-fields)

_STRINGS = ['"a/b"', "'c'", '"x\\"y"', '"\\303\\251t\\303\\251"', '"l\\nm"', '"q\'"', '"layer_0/MatMul"', '""', '"\\\\"']
_BOOLS = ["true", "false", "1", "0", "True", "t", '"true"', "f"]
_INTS = ["0", "3", "-1", "0x1F", "017", "2.5", "-0", "1e3", "-inf", "12f"]
_WANTED = ["_datadump_original_op_names", "_no_task", "_ge_attr_op_kernel_lib_name", "original_type",
           "_parent_node_index"]
_KEYS = _WANTED + ["_datadump_origin_name", "foo", "value"]


def _attr_value(rng: random.Random, key: str, weight: bool) -> Fields:
    if weight:
        body = "".join(rng.choice(["\\000", "\\377", "ab", '\\"', "\\\\", "key: ", "\\n  s: x"]) for _ in range(rng.randint(50, 400)))
        return [("t", [("desc", [("dtype", "DT_FLOAT")]), ("data", '"%s"' % body)])]
    shape = rng.choice(["s", "b", "i", "list", "func"])
    if key == "_datadump_original_op_names" and rng.random() < 0.7:
        shape = "list"
    if shape == "list":
        return [("list", [("s", rng.choice(_STRINGS)) for _ in range(rng.randint(0, 3))] + [("val_type", "VT_LIST_STRING")])]
    if shape == "func":  # a decoy: an attr GE reads, nested where it does not count
        return [("func", [("name", '"f"'), ("attr", [("key", '"%s"' % rng.choice(_WANTED)), ("value", [("b", "true"), ("s", '"d"')])])])]
    vals = {"s": _STRINGS, "b": _BOOLS, "i": _INTS}[shape]
    out: Fields = [(shape, rng.choice(vals))]
    if rng.random() < 0.2:
        out.append((rng.choice("sbi"), rng.choice(_STRINGS if rng.random() < 0.5 else _INTS)))
    return out


def _attr(rng: random.Random, keys: List[str], weight: bool = False) -> Fields:
    key = "value" if weight else rng.choice(keys)
    fields: Fields = [("key", '"%s"' % key), ("value", _attr_value(rng, key, weight))]
    if rng.random() < 0.15:
        fields.reverse()  # the value before its key
    if rng.random() < 0.1:
        fields.append(("key", '"%s"' % rng.choice(keys)))  # a repeated key (the first one counts)
    return fields


def _op(rng: random.Random, i: int) -> Fields:
    f: Fields = [("name", '"op_%d/%s"' % (i, rng.choice(["MatMul", "Relu", "x"]))), ("type", '"%s"' % rng.choice(["Data", "MatMulV2", "Const", "NetOutput"]))]
    for _ in range(rng.randint(0, 2)):
        f.append(("input", '"op_%d:%d"' % (rng.randint(0, 9), rng.randint(-1, 1))))
    for _ in range(rng.randint(0, 5)):
        f.append(("attr", _attr(rng, _KEYS)))
    if rng.random() < 0.25:
        f.append(("attr", _attr(rng, _KEYS, weight=True)))
    if rng.random() < 0.8:
        f.append(("id", str(rng.randint(0, 50))))
    if rng.random() < 0.5:
        f.append(("stream_id", str(rng.randint(0, 2))))
    for _ in range(rng.randint(0, 2)):
        od: Fields = [("dtype", "DT_FLOAT"), ("shape", [("dim", "16")])]
        for _ in range(rng.randint(0, 3)):
            od.append(("attr", _attr(rng, ["_datadump_origin_name", "origin_format", "_no_task"])))
        f.append(("output_desc", od))
    if rng.random() < 0.1:
        f.append(("subgraph_name", '"g1"'))
    rng.shuffle(f) if rng.random() < 0.1 else None
    return f


def _dump(rng: random.Random) -> Fields:
    graphs = []
    n = 0
    for g in range(rng.choice([1, 1, 2])):
        ops = [("op", _op(rng, n + k)) for k in range(rng.randint(0, 6))]
        n += len(ops)
        name = [("name", '"g%d"' % g)] if rng.random() < 0.9 else []
        body = name + ops if rng.random() < 0.9 else ops + name  # (a name after the ops, rarely)
        graphs.append(("graph", body))
    return graphs


_ONNX_KEYS = _WANTED + ["output_desc_attr__datadump_origin_name:0", "output_desc_attr__datadump_origin_name:1",
                        "id", "stream_id", "foo"]


def _onnx_dump(rng: random.Random) -> Fields:
    nodes = []
    for k in range(rng.randint(0, 6)):
        f: Fields = [("output", '"n%d:0"' % k), ("name", '"op_%d/MatMul"' % k), ("op_type", '"ge:%s"' % rng.choice(["Data", "MatMulV2"]))]
        for _ in range(rng.randint(0, 2)):
            f.append(("input", '"op_%d:0"' % rng.randint(0, 6)))
        for _ in range(rng.randint(0, 5)):
            a: Fields = [("name", '"%s"' % rng.choice(_ONNX_KEYS))]
            for _ in range(rng.randint(0, 2)):
                shape = rng.choice(["s", "i", "b", "strings", "t"])
                if shape == "t":
                    a.append(("t", [("name", '"%s"' % rng.choice(_ONNX_KEYS)), ("s", rng.choice(_STRINGS))]))
                else:
                    a.append((shape, rng.choice(_INTS if shape == "i" else _BOOLS if shape == "b" else _STRINGS)))
            a.append(("type", "STRING"))
            if rng.random() < 0.15:
                a.reverse()
            f.append(("attribute", a))
        nodes.append(("node", f))
    name = [("name", '"g"')]
    return [("ir_version", "6"), ("producer_name", '"GE"'), ("graph", nodes + name if rng.random() < 0.8 else name + nodes)]


def _canonical(fields: Fields, d: int = 0) -> str:
    out = []
    for name, v in fields:
        if isinstance(v, list):
            out.append("%s%s {\n%s%s}\n" % ("  " * d, name, _canonical(v, d + 1), "  " * d))
        else:
            out.append("%s%s: %s\n" % ("  " * d, name, v))
    return "".join(out)


def _odd(fields: Fields, rng: random.Random, d: int = 0) -> str:
    """The same fields out of the writer layout, in places."""
    out = []
    for name, v in fields:
        ind = " " * rng.choice([2 * d, 2 * d, 2 * d, 0, 1, 2 * d + 3])
        end = rng.choice(["\n", "\n", "\n", " ", "; ", ",\n", "  # c: } {\n"])
        if isinstance(v, list):
            o, c = rng.choice([("{", "}"), ("{", "}"), ("<", ">")])
            colon = rng.choice(["", "", ":"])
            out.append("%s%s%s %s\n%s%s%s%s" % (ind, name, colon, o, _odd(v, rng, d + 1), " " * rng.choice([2 * d, 0]), c, end))
        elif name == "s" and rng.random() < 0.1:
            out.append("%s%s: [%s, %s]%s" % (ind, name, v, rng.choice(_STRINGS), end))
        else:
            out.append("%s%s: %s%s" % (ind, name, v, end))
    return "".join(out)


def _text(rng: random.Random, layout: str, onnx: bool = False) -> str:
    tree = _onnx_dump(rng) if onnx else _dump(rng)
    if layout == "canonical":
        return _canonical(tree)
    if layout == "odd":
        return _odd(tree, rng)
    # mixed: the writer layout, then (from some op on) not
    text = _canonical(tree)
    lines = text.split("\n")
    at = rng.randrange(len(lines))
    lines[at] = lines[at] + rng.choice(["  # a comment", " ", ";"]) if lines[at] else lines[at]
    return "\n".join(lines)


@contextlib.contextmanager
def _written(text: str) -> Iterator[str]:
    fd, path = tempfile.mkstemp(prefix="ge_proto_00000001_graph_1_Build.", suffix=".txt")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
        yield path
    finally:
        os.unlink(path)


@contextlib.contextmanager
def _small(piece: int, split: int) -> Iterator[None]:
    old = _fast._PIECE, _split.load
    _fast._PIECE, _split.load = piece, functools.partial(_split.load, split_bytes=split)
    try:
        yield
    finally:
        _fast._PIECE, _split.load = old


def _outcome(path: str, **kw: Any) -> Any:
    try:
        return _ge.load_build(path, **kw).ops
    except PbtxtError as e:
        return ("error", str(e))


_NAMES = ["op_1/MatMul", "layer_0/MatMul", "a/b", "op_2", "x"]


@settings(max_examples=examples(0.2), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), layout=st.sampled_from(["canonical", "odd", "mixed"]),
       piece=st.sampled_from([64, 257, 1 << 20]), split=st.sampled_from([40, 200, 1000]), onnx=st.booleans())
def test_every_road_gives_the_same_records(seed: int, layout: str, piece: int, split: int, onnx: bool):
    rng = random.Random(seed)
    text = _text(rng, layout, onnx)
    with _written(text) as path, _small(piece, split):
        with GraphFile.open(path) as g:
            assert g.dialect.name == ("ge_onnx" if onnx else "ge_proto")
        exact = _outcome(path, fast=False)  # every block through the Lark parse
        assert _outcome(path, fast=False, full_parse_max=0) == exact  # ... or the skim
        assert _outcome(path) == exact
        assert _outcome(path, jobs=2) == exact
        if not isinstance(exact, tuple):
            want = _ge.resolve(_ge.load_build(path, fast=False), _NAMES)
            assert _ge.resolve(_ge.load_build(path, jobs=2), _NAMES) == want


@settings(max_examples=examples(0.06), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), cut=st.floats(0, 1), how=st.sampled_from(["truncate", "garbage", "unclose"]))
def test_broken_dumps_fail_alike_on_every_road(seed: int, cut: float, how: str):
    rng = random.Random(seed)
    text = _canonical(_dump(rng))
    at = int(len(text) * cut)
    at = text.rfind("\n", 0, at) + 1
    if how == "truncate":
        text = text[:at]
    elif how == "garbage":
        text = text[:at] + rng.choice(["  op {\n", "}\n", "  x: \n", "  op {\n  }\n  }\n", ":\n"]) + text[at:]
    else:
        text = text[:at] + "  op {\n" + text[at:]
    with _written(text) as path, _small(1 << 20, 60):
        exact = _outcome(path, fast=False)
        assert _outcome(path) == exact
        assert _outcome(path, jobs=2) == exact


def test_the_writer_layout_takes_the_fast_road(monkeypatch: pytest.MonkeyPatch):
    """On the fixtures (the writer layout), every op is read by the fast road, and the split uses
    every chunk (no fallback to one process)."""
    from pathlib import Path

    dumps = sorted((Path(__file__).parent / "data" / "ge").glob("**/*Build*.*t*"))
    dumps = [p for p in dumps if not p.name.endswith(".json")]
    assert dumps
    got = []
    real = _fast.canonical_attrs
    monkeypatch.setattr(_ops, "canonical_attrs", lambda *a: got.append(real(*a)) or got[-1])
    monkeypatch.setattr(_ops, "skim_block", None)
    monkeypatch.setattr(GraphFile, "parse", None)
    monkeypatch.setattr(_split, "ops_from", None)  # (the fallback)
    monkeypatch.setattr(_split, "load", functools.partial(_split.load, split_bytes=200))
    for p in dumps:
        got.clear()
        ops = _ge.load_build(p).ops
        assert len(got) == len(ops) and all(m is not None for m in got), p
        # (the workers read every op the fast way too: the exact roads and the fallback are gone)
        assert len(_split.plan(GraphFile.open(p), ("graph", "op"), 2, split_bytes=200) or ()) > 3 or "onnx" in p.name
        assert _ge.load_build(p, jobs=2).ops == ops


def test_a_weight_longer_than_a_piece_is_passed_over(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """A long line that is not of interest is never held; a kept one takes the exact road."""
    monkeypatch.setattr(_fast, "_PIECE", 1000)
    w = "".join('\\%03o' % (i % 256) for i in range(20000))
    text = ('graph {\n  name: "g"\n  op {\n    name: "w"\n    type: "Const"\n    attr {\n      key: "value"\n'
            '      value {\n        t {\n          data: "%s"\n        }\n      }\n    }\n    attr {\n'
            '      key: "_datadump_original_op_names"\n      value {\n        list {\n          s: "%s"\n'
            '        }\n      }\n    }\n    attr {\n      key: "_ge_attr_op_kernel_lib_name"\n      value {\n'
            '        s: "lib"\n      }\n    }\n  }\n}\n')
    for name, fast in (("dense/kernel", True), ("k" * 5000, False)):
        p = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
        p.write_text(text % (w, name))
        with GraphFile.open(p) as g:
            b = next(iter(g.nodes()))
            msg = _fast.canonical_attrs(g.reader(b.start, b.end), b.column, "ge_proto")
        assert (msg is not None) == fast
        op = _ge.load_build(p).ops[0]
        assert op.original_names == (name,) and op.lib == "lib"
        assert _ge.load_build(p, fast=False).ops == [op]


def test_the_split_walks_long_lines_as_one_process(monkeypatch: pytest.MonkeyPatch, tmp_path):
    """Weights on lines longer than ``_canonical._LONG`` (and than a read), in every chunk: each
    worker streams them with the scanner's own walk (its state included: once, a chunk started
    inside a graph block missed what the walk sets up, and failed at its first long line), every
    chunk is used, and the records are the single process's."""
    from pbtxt_scan.source._source import DEFAULT_CHUNK
    from pbtxt_scan.text import _canonical as _scanner

    if not can_fork():
        pytest.skip("no fork")
    weight = '"%s"' % "".join("\\%03o" % (i * 7 % 256) for i in range(560_000))  # (2.2 MB)
    assert len(weight) > 2 * max(_scanner._LONG, DEFAULT_CHUNK)  # (never whole in the buffer: streamed)
    ops = []
    for i in range(6):
        attrs: Fields = [("attr", [("key", '"value"'), ("value", [("t", [("desc", [("dtype", "DT_FLOAT")]), ("data", weight)])])]),
                         ("attr", [("key", '"_ge_attr_op_kernel_lib_name"'), ("value", [("s", '"lib%d"' % i)])])]
        ops.append(("op", [("name", '"w%d"' % i), ("type", '"Const"')] + attrs + [("id", str(i))]))
        ops.append(("op", [("name", '"m%d"' % i), ("type", '"MatMulV2"'), ("input", '"w%d:0"' % i), ("id", str(10 + i))]))
    p = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    p.write_text(_canonical([("graph", [("name", '"g"')] + ops)]))
    one = _ge.load_build(p).ops
    assert [op.name for op in one] == [n % i for i in range(6) for n in ("w%d", "m%d")]
    assert _ge.load_build(p, fast=False).ops == one
    monkeypatch.setattr(_split, "load", functools.partial(_split.load, split_bytes=1 << 20))  # (about one weight a chunk)
    with GraphFile.open(p) as g:
        assert len(_split.plan(g, ("graph", "op"), 2, split_bytes=1 << 20) or ()) > 6
    monkeypatch.setattr(_split, "ops_from", None)  # (the fallback: a chunk not used)
    assert _ge.load_build(p, jobs=2).ops == one
