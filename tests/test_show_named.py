"""show by name at grep speed (issue 38): several names, --glob and --regex against the full
listing filtered, on every fixture, text and binary; misses and close names from the one byte
search (no block read), and a name met only in other fields' values is no node. The two tests on
every fixture run two of each kind (text, .pb, .pb.gz, .meta, a SavedModel folder) up to
``support.marks.BIG_FIXTURE`` bytes in the quick set, every fixture in CI's ``slow`` run."""
from __future__ import annotations

import fnmatch
import json
import re
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.marks import input_kind, one_of_each, slow_if_big
from support.cli import CliRunner
from support.examples import examples
from support.wire_encoder import encode, graph, node

import pbtxt_scan
from pbtxt_scan.cli import app
from pbtxt_scan.graph._input import GraphFile

DATA = Path(__file__).resolve().parent / "data"
FIXTURES = sorted((DATA / "graphs").glob("*.pbtxt")) + sorted((DATA / "binary").iterdir())  # (SavedModel folders too)
MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
MLP_PB = DATA / "binary" / "mlp_sgd.pb"
runner = CliRunner()

Row = Tuple[int, str, str]


def run(*args: object):  # type: ignore[no-untyped-def]
    return runner.invoke(app, [str(a) for a in args])


def _listing(path: Path) -> List[Row]:
    r = run("nodes", "--json", path)
    assert r.exit_code in (0, 1), r.stderr
    objs = [json.loads(x) for x in r.stdout.splitlines()]
    return [(o["line"] or o["offset"], o["name"], o["op"]) for o in objs if o["name"] is not None]


def _shown(r) -> List[Row]:  # type: ignore[no-untyped-def]
    objs = [json.loads(x) for x in r.stdout.splitlines()]
    return [(o["line"] or o["offset"], o["name"], o["op"]) for o in objs if o["name"] is not None]


GLOBS = ["*MatMul*", "*/Relu", "gradients/*_grad/Mat*", "*[Ii]terator*"]
REGEXES = ["MatMul$", "^gradients/.*_grad/", "Relu|Softmax", "(?i)iterator"]


@pytest.mark.parametrize("path", one_of_each(slow_if_big(FIXTURES), input_kind, 2), ids=lambda p: p.name)  # (two of each kind; all: CI's slow run)
def test_glob_and_regex_give_the_listing_filtered(path):
    rows = _listing(path)
    for g in GLOBS:
        want = [r for r in rows if fnmatch.fnmatchcase(r[1], g)]
        r = run("show", "--json", path, "--glob", g)
        assert r.exit_code == (0 if want else 1), (g, r.stderr)
        assert _shown(r) == want, g
    for x in REGEXES:
        want = [r for r in rows if re.search(x, r[1])]
        r = run("show", "--json", path, "--regex", x)
        assert r.exit_code == (0 if want else 1), (x, r.stderr)
        assert _shown(r) == want, x


@pytest.mark.parametrize("path", [MLP, MLP_PB], ids=lambda p: p.name)
def test_several_names_in_the_order_given_and_misses_on_stderr(path):
    r = run("show", "--json", path, "dense_1/MatMul", "no/such/node", "dense/MatMul")
    assert r.exit_code == 1
    assert [row[1] for row in _shown(r)] == ["dense_1/MatMul", "dense/MatMul"]
    assert "no node named 'no/such/node'" in r.stderr
    r = run("show", path, "dense_1/MatMul", "dense/MatMul")
    assert r.exit_code == 0, r.stderr
    text = r.stdout
    assert text.index('"dense_1/MatMul"') < text.index('"dense/MatMul"')


@pytest.fixture
def no_reading(monkeypatch):  # type: ignore[no-untyped-def]
    """Every reading of the blocks fails: what passes found its answer by the search alone."""

    def refuse(self, *a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("the blocks were read")

    monkeypatch.setattr(GraphFile, "blocks", refuse)


@pytest.mark.parametrize("path", [MLP, MLP_PB], ids=lambda p: p.name)
def test_a_miss_and_its_close_names_come_from_the_search(path, no_reading):
    r = run("show", path, "dense/matmul")
    assert r.exit_code == 1 and "did you mean dense/MatMul?" in r.stderr, r.stderr
    r = run("show", path, "dense/MatMl")
    assert r.exit_code == 1 and "dense/MatMul" in r.stderr, r.stderr
    r = run("show", path, "no/such/node")
    assert r.exit_code == 1 and "no node named 'no/such/node'" in r.stderr, r.stderr
    r = run("show", path, "dense/MatMul")
    assert r.exit_code == 0 and '"dense/MatMul"' in r.stdout, r.stderr
    r = run("show", path, "no/such/node", "--context", "1")
    assert r.exit_code == 1 and "no node named 'no/such/node'" in r.stderr, r.stderr
    r = run("show", path, "dense/matmul", "--context", "1")
    assert r.exit_code == 1 and "did you mean dense/MatMul?" in r.stderr, r.stderr


_TEXT = '''node {
  name: "a"
  op: "Const"
  attr {
    key: "value"
    value {
      tensor {
        dtype: DT_STRING
        tensor_content: "ghost/in_tensor"
      }
    }
  }
}
node {
  name: "b"
  op: "Identity"
  input: "ghost/in_input"
  input: "a"
  attr {
    key: "label"
    value {
      s: "ghost/in_string"
    }
  }
}
'''


@pytest.mark.parametrize("name", ["ghost/in_tensor", "ghost/in_input", "ghost/in_string"])
def test_a_name_in_another_field_is_no_node(tmp_path, name):
    p = tmp_path / "g.pbtxt"
    p.write_text(_TEXT)
    pb = tmp_path / "g.pb"
    pb.write_bytes(encode(graph([
        node("a", "Const", attrs=[("value", [(8, [(1, 7), (4, name)])]), ("label", [(2, name)])]),
        node("b", "Identity", inputs=[name, "a"]),
    ])))
    for f in (p, pb):
        assert pbtxt_scan.look_up(str(f), [name]) == pbtxt_scan.Lookup({}, frozenset()), f
        r = run("show", f, name)
        assert r.exit_code == 1 and "no node named" in r.stderr, (f, r.stderr)
        r = run("show", f, "a", "b")
        assert r.exit_code == 0 and r.stdout.count('name: "') == 2, (f, r.stdout)


@pytest.mark.parametrize("layout", [
    'node {\n  name: "x" op: "NoOp"\n}\n',  # two fields on a line
    'node {\n  name:"x"\n  op: "NoOp"\n}\n',  # no blank after the colon
    'node {\n  name: "\\170"\n  op: "NoOp"\n}\n',  # an escape
    'node {\n  name: "" "x"\n  op: "NoOp"\n}\n',  # split literals
    'node {\n  name:\n  "x"\n  op: "NoOp"\n}\n',  # its value on the next line
    "node {\n  name: 'x'\n  op: \"NoOp\"\n}\n",  # single quotes
    'node { name: "x" op: "NoOp" }\n',  # one line
])
def test_a_name_spelt_otherwise_is_still_found(tmp_path, layout):
    p = tmp_path / "g.pbtxt"
    p.write_text('node {\n  name: "first"\n  op: "NoOp"\n}\n' + layout)
    assert pbtxt_scan.look_up(str(p), ["x"]) is None  # (the search cannot tell: read)
    r = run("show", p, "x")
    assert r.exit_code == 0 and "NoOp" in r.stdout, r.stderr
    r = run("show", p, "x", "no/such")
    assert r.exit_code == 1 and "no node named 'no/such'" in r.stderr and "NoOp" in r.stdout


def test_glob_and_regex_and_names_are_one_way_each():
    r = run("show", MLP, "dense/MatMul", "--glob", "*")
    assert r.exit_code == 2 and r.stdout == ""
    r = run("show", MLP, "--glob", "*", "--regex", "x")
    assert r.exit_code == 2 and r.stdout == ""
    r = run("show", MLP, "--regex", "(")
    assert r.exit_code == 2 and "--regex" in r.stderr and r.stdout == ""
    r = run("show", MLP)
    assert r.exit_code == 2 and r.stdout == ""


_NAME_CHARS = "ab/_.M1-"


@settings(max_examples=examples(0.5), deadline=None)
@given(
    st.text(alphabet=_NAME_CHARS + "*?[]!", max_size=8),
    st.lists(st.text(alphabet=_NAME_CHARS + "[]!", min_size=1, max_size=10), max_size=12),
)
def test_a_glob_s_needle_is_in_every_name_it_matches(glob, names):
    from pbtxt_scan.cli._named import matcher

    keep = matcher(glob, None)
    for n in names + [glob]:
        if keep.keep(n):
            assert keep.needle in n, (glob, n, keep.needle)


@settings(max_examples=examples(0.5), deadline=None)
@given(
    st.text(alphabet=_NAME_CHARS + "*?+|()^$\\.", max_size=8),
    st.lists(st.text(alphabet=_NAME_CHARS, min_size=1, max_size=10), max_size=12),
)
def test_a_regex_s_needle_is_in_every_name_it_matches(regex, names):
    from pbtxt_scan.cli._named import matcher

    try:
        re.compile(regex)
    except re.error:
        return
    keep = matcher(None, regex)
    for n in names + [regex]:
        if keep.keep(n):
            assert keep.needle in n, (regex, n, keep.needle)


@pytest.mark.parametrize("path", [MLP, MLP_PB], ids=lambda p: p.name)
def test_close_names_are_bounded_and_the_search_goes_on(path, monkeypatch):
    from pbtxt_scan.text import _named as text_named
    from pbtxt_scan.wire import _hood as wire_named

    monkeypatch.setattr(text_named, "NEAR_MAX", 2)
    monkeypatch.setattr(wire_named, "NEAR_MAX", 2)
    near: List[str] = []
    last = "gradients/dense/MatMul_grad/tuple/control_dependency_1"  # (after many names holding "dense")
    got = pbtxt_scan.look_up(str(path), [last, "dense/MatMl"], near=near.append)
    assert got is not None and set(got.found) == {last}
    # (the first two close names, a name that begins the one asked for, then the one found)
    assert len(near) <= 4 and near[-1] == last, near


@pytest.mark.parametrize("layout", [
    'node {\n    name: "x"\n    op: "NoOp"\n}\n',  # four blanks a level
    'node {\n  op: "NoOp"\n  name: "x"\n}\n',  # its name not first
    'node {\n      name: "x"\n  op: "NoOp"\n}\n',  # the indent of a function's node (an op: a node needs one)
])
def test_a_name_line_in_another_layout_is_read_for(tmp_path, layout):
    p = tmp_path / "g.pbtxt"
    p.write_text('node {\n  name: "first"\n  op: "NoOp"\n}\n' + layout)
    assert pbtxt_scan.look_up(str(p), ["x"]) is None
    assert [b.name for b in pbtxt_scan.iter_named(str(p), lambda n: n == "x", needles=["x"])] == ["x"]
    r = run("show", p, "x")
    assert r.exit_code == 0 and '"x"' in r.stdout, r.stderr


@pytest.mark.parametrize("path", one_of_each(slow_if_big(FIXTURES), input_kind, 2), ids=lambda p: p.name)  # (two of each kind; all: CI's slow run)
def test_look_up_agrees_with_reading_the_blocks(path):
    """Twenty names spread over the file, names changed in case and cut short: found where
    find_node finds the graph's own node, missing where it finds none, and read for where it finds
    a function's."""
    names = [row[1] for row in _listing(path)]
    names = names[:: max(1, len(names) // 20)]
    asked = names + [n.swapcase() for n in names[:3]] + [n[:-1] for n in names[:3] if len(n) > 1]
    got = pbtxt_scan.look_up(str(path), asked)
    if got is None:
        return  # (no search on this input: read, as before)
    for n in asked:
        want = pbtxt_scan.find_node(str(path), n)
        if n in got.found:
            assert want is not None and want.function is None and want.block.start == got.found[n].start, n
            assert (want.block.line, want.block.op) == (got.found[n].line, got.found[n].op), n
        elif n in got.elsewhere:
            assert want is None or want.function is not None, n
        else:
            assert want is None, n


@pytest.mark.parametrize("layout", [
    'node {\n  name: "x"\n  "y"\n  op: "NoOp"\n}\n',  # an adjacent literal on the next line
    'node {\n  name: "x"\n  # a comment\n  \'y\'\n  op: "NoOp"\n}\n',  # after a comment
])
def test_a_name_split_over_lines_is_still_found(tmp_path, layout):
    p = tmp_path / "g.pbtxt"
    p.write_text('node {\n  name: "first"\n  op: "NoOp"\n}\n' + layout)
    assert pbtxt_scan.look_up(str(p), ["xy"]) is None
    r = run("show", p, "xy")
    assert r.exit_code == 0 and "NoOp" in r.stdout, r.stderr
