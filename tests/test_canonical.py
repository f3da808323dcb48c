"""The canonical-layout fast path (``_canonical.scan_canonical``) against the general scanner.

``scan`` is the reference (it is itself proved against the Lark grammar in test_scanner.py): for
every input, the fast path must yield the same blocks (offsets, lines, columns, heads, parents) and
raise the same error (class, line, column, message), whatever the chunk size, the stream kind, and
wherever it hands over to the general scanner.
"""
from __future__ import annotations

import gzip
import io
import re
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.examples import examples
from support.marks import quick_first, slow_if_big
from support.messages import PERTURB, _fields, _print

from pbtxt_scan.text import _canonical
from pbtxt_scan.text._canonical import scan_canonical
from pbtxt_scan._errors import PbtxtError
from pbtxt_scan.text._scan import scan

DATA = Path(__file__).parent / "data"
FIXTURES = sorted(
    list((DATA / "graphs").glob("*.pbtxt")) + list((DATA / "ge").glob("*_Build.*")) + list((DATA / "ge" / "dump_dir").glob("*.txt"))
)
PATHS = [("node",), ("library", "function", "node_def"), ("graph", "op"), ("graph", "node")]
HEADS = frozenset({"name", "op", "input", "device", "type", "id", "stream_id", "subgraph_name", "op_type", "output"})
DEFAULT = 1 << 20


class _Unseekable(io.RawIOBase):
    """A pipe-like stream (stdin, gzip): reads only."""

    def __init__(self, data: bytes) -> None:
        self._b = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        return self._b.read(n)


def _run(data: bytes, path: Tuple[str, ...], chunk: int = DEFAULT, fast: bool = True, seekable: bool = True, warm: Optional[int] = None) -> List[Any]:
    """The blocks, then the error (if any) as a tuple, then (fast path only) the end state.
    ``warm``: the lines walked one by one before whole blocks and batches are tried (the fixtures
    are shorter than the default, so ``_same`` runs each with none too)."""
    f: Any = io.BytesIO(data) if seekable else _Unseekable(data)
    out: List[Any] = []
    end: dict = {}
    try:
        if fast:
            it = scan_canonical(f, path, HEADS, chunk_size=chunk, display="t", end_state=end, warm_up=warm)
        else:
            it = scan(f, path, HEADS, chunk)
        for b in it:
            out.append(b)
    except PbtxtError as e:
        out.append(("error", type(e).__name__, e.line, e.column, e.msg))
        return out
    if fast:
        out.append(("end", end["bytes"], end["lines"]))
    else:
        lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") and data != b"\xef\xbb\xbf" else 0)
        out.append(("end", len(data), lines))
    return out


def _same(data: bytes, paths=PATHS, chunks=(DEFAULT,), seekable=(True,)) -> None:
    for path in paths:
        ref = _run(data, path, fast=False)
        for c in chunks:
            for s in seekable:
                for w in (None, 0):
                    got = _run(data, path, c, seekable=s, warm=w)
                    assert got == ref, (path, c, s, w, _first_diff(ref, got))


def _first_diff(a: List[Any], b: List[Any]) -> Any:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i, x, y
    return len(a), len(b), a[-1:], b[-1:]


def test_fixtures_found() -> None:
    assert len(FIXTURES) >= 15


@pytest.mark.parametrize("fixture", quick_first(FIXTURES, 10), ids=lambda p: p.name)  # (CI's slow run: all)
def test_fixture_agrees(fixture: Path) -> None:
    data = fixture.read_bytes()
    _same(data, chunks=(DEFAULT, 4096), seekable=(True, False))
    small = data[: data.find(b"\n}\n", 12000) + 3] if len(data) > 15000 else data  # a valid prefix
    _same(small, chunks=(1, 7))


@pytest.fixture()
def tiny_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make "big" blocks and "long" lines small, so the fixtures take every path: blocks entered
    line by line, long strings streamed (seekable) or handed over (pipes)."""
    monkeypatch.setattr(_canonical, "_BIG", 300)
    monkeypatch.setattr(_canonical, "_LONG", 90)


@pytest.mark.parametrize("fixture", slow_if_big(FIXTURES), ids=lambda p: p.name)
def test_fixture_agrees_with_tiny_limits(fixture: Path, tiny_limits: None) -> None:
    _same(fixture.read_bytes(), chunks=(DEFAULT, 4096, 97), seekable=(True, False))


def _variants(data: bytes) -> List[bytes]:
    """Broken copies: cut at several points, a brace flipped, a bad escape, invalid UTF-8 ..."""
    out = []
    n = len(data)
    for frac in (0.13, 0.5, 0.77, 0.999):
        out.append(data[: int(n * frac)])
    i = data.find(b"}\n", n // 3)
    out.append(data[:i] + b"{" + data[i + 1 :])
    i = data.find(b'"\n', n // 2)
    out.append(data[:i] + b"\\q" + data[i:])
    out.append(data[:i] + b"\n" + data[i:])  # an unterminated string
    out.append(data[:i] + b"\xff" + data[i:])  # invalid UTF-8 inside a string
    i = data.find(b"\n", 2 * n // 3)
    out.append(data[: i + 1] + b"  ;\n" + data[i + 1 :])  # a separator after a field: valid or not
    out.append(data[: i + 1] + b"#c\n" + data[i + 1 :])  # a comment (valid: hands over)
    out.append(data[:i] + b"\r" + data[i:])
    return out


@pytest.mark.parametrize("fixture", slow_if_big(FIXTURES[::2]), ids=lambda p: p.name)
def test_broken_variants_fail_alike(fixture: Path) -> None:
    for v in _variants(fixture.read_bytes()):
        _same(v, paths=PATHS[:3], chunks=(DEFAULT, 4096), seekable=(True, False))


@pytest.mark.slow
def test_mixed_file_hands_over_mid_file() -> None:
    data = (DATA / "graphs" / "mlp_sgd.pbtxt").read_bytes()
    cut = data.find(b"\nnode {", len(data) // 2) + 1
    mixed = data[:cut] + b'node { name: "x" op: "Y" input: "a" }\n' + data[cut:]
    _same(mixed, chunks=(DEFAULT, 7), seekable=(True, False))
    ref = _run(mixed, ("node",), fast=False)
    assert any(getattr(b, "name", None) == "x" for b in ref)


TRICKY = [
    b'node {\n  name: "a" } x {\n}\n',  # a line-based splitter would take `x {` as inside node
    b"node {\n  }\n  x {\n}\n",  # the indented `}` closes node; x is top-level
    b'node {\n  name: "a"\n  "b"\n  op: "c"\n}\n',  # adjacent literals across lines: name is "ab"
    b'node {\n  name: "a"\n  # c\n  "b"\n}\n',
    b'node {\n  name: "a"\n;\n}\n',  # a separator on its own line
    b'node {\n  name: "a"\n}\n;\nnode {\n  name: "b"\n}\n',
    b'node {\n  name: "a"\n}\n,\n',
    b'node {\n  name: 1\n  op: -inf\n  input: -0x1F\n}\n',
    b'node {\n  name: 1e\n}\n',  # invalid number
    b'node {\n  name: 0800\n}\n',
    b'node {\n  name: "a"\n}',  # no final newline
    b'node {\n  name: "a"\n}\n  ',
    b'node {\n  name: "a"\n  attr {\n  }\n  }\n',  # wrong indentation but valid
    b'node {\n  name: "a"\n  attr {\n    key: "b"\n}\n}\n',
    b'node {\n  name: "a"\n}\n}\n',
    b'node {\n  name: "a"\n',
    b'node <\n  name: "a"\n>\n',
    b'node {\n  name: "\\303\\251\xc3\xa9"\n  op: \'q\'\n}\n',
    b"\xef\xbb\xbfnode {\n  name: \"bom\"\n}\n",
    b"\xef\xbb\xbf",
    b"",
    b"\n",
    b'node {\r\n  name: "crlf"\r\n}\r\n',
    b'graph {\n  name: "g"\n  op {\n    name: "o"\n  }\n}\ngraph {\n  op {\n    name: "p"\n  }\n  name: "late"\n}\n',
    b'library {\n  function {\n    node_def {\n      name: "n"\n    }\n    signature {\n      name: "f"\n    }\n    node_def {\n      name: "m"\n    }\n  }\n}\n',
    b'library {\n  function {\n    signature {\n      name: "f"\n    }\n    name: "own"\n    node_def {\n      name: "m"\n    }\n  }\n}\n',
    b'graph {\n  name: "g"\n  name: "h"\n  op {\n    name: "o"\n    attr {\n      name: "deep"\n    }\n    id: 3\n  }\n}\n',
    b'node {\n  name: "a"\n  name: "b"\n  input: ""\n  input: "\\"q\\""\n}\n',
    b'node {\n  name: "\\q"\n}\n',
    b'node {\n  name: "\\400"\n}\n',
    b'node {\n  name: "a\x00"\n}\n',
    b'node {\n  name: "a"\n  op {\n  }\n  op: "b"\n}\n',
    b'node {\n  _: 1\n}\n',
    b"node {\n  name: -\n  5\n}\n",
    b'node {\n  na\xffme: "a"\n}\n',
    b'x: 1\nnode {\n  name: "a"\n}\ny: "z"\n',
]


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_tricky_layouts(text: bytes) -> None:
    _same(text, chunks=(DEFAULT, 7, 3, 4), seekable=(True, False))


def test_tricky_layouts_have_the_grammars_answer() -> None:
    assert [b.name for b in _run(TRICKY[0], ("node",))[:-1]] == ["a"]
    assert _run(TRICKY[2], ("node",))[0].name == "ab"
    blocks = _run(TRICKY[23], ("graph", "op"))
    assert [b.parents for b in blocks[:-1]] == [("g",), (None,)]
    blocks = _run(TRICKY[24], ("library", "function", "node_def"))
    assert [b.parents for b in blocks[:-1]] == [(None, None), (None, "f")]


def _long_file(n: int, bad: Optional[bytes] = None) -> bytes:
    blob = b"\\303\\251ab" * (n // 10)
    if bad is not None:
        blob = blob[: len(blob) // 2] + bad + blob[len(blob) // 2 :]
    return (
        b'node {\n  name: "c"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n'
        b'        tensor_content: "' + blob + b'"\n      }\n    }\n  }\n}\n'
        b'node {\n  name: "d"\n  op: "Identity"\n  input: "c"\n}\n'
    )


# (the valid line on every Python in the quick set; its five broken variants, 3 MB each, in the slow set)
@pytest.mark.parametrize("bad", [None] + [pytest.param(b, marks=pytest.mark.slow) for b in (b"\\q", b"\n", b"\xff", b"\x00", b'"')])
def test_long_string_lines(bad: Optional[bytes]) -> None:
    data = _long_file(3 << 20, bad)
    _same(data, paths=[("node",)], chunks=(DEFAULT, 300_000), seekable=(True, False))


def test_long_head_string_is_left_to_the_general_scanner() -> None:
    data = b'node {\n  name: "' + b"n" * (3 << 20) + b'"\n  op: "x"\n}\nnode {\n  name: "m"\n}\n'
    _same(data, paths=[("node",)], chunks=(DEFAULT,), seekable=(True, False))


@pytest.mark.slow  # a 7 MB block, scanned both ways
def test_big_block_with_many_heads() -> None:
    inputs = b"".join(b'  input: "^v%d"\n' % i for i in range(400_000))
    data = b'node {\n  name: "a"\n}\nnode {\n  name: "init"\n  op: "NoOp"\n' + inputs + b'  device: "d"\n}\n'
    _same(data, paths=[("node",)], chunks=(DEFAULT,))


def test_gzip_stream(tmp_path: Path) -> None:
    from pbtxt_scan.source._source import open_binary

    data = (DATA / "ge" / "dump_dir" / "ge_proto_00000042_graph_1_Build.txt").read_bytes()
    p = tmp_path / "g.txt.gz"
    p.write_bytes(gzip.compress(data))
    f, _ = open_binary(str(p))
    end: dict = {}
    got = list(scan_canonical(f, ("graph", "op"), HEADS, chunk_size=4096, display="g", end_state=end))
    assert got == _run(data, ("graph", "op"), fast=False)[:-1]
    assert end == {"bytes": len(data), "lines": data.count(b"\n")}


# --- random canonical messages, and the same with the layout disturbed -------------------------


RANDOM_PATHS = [("node",), ("graph", "op"), ("library", "function", "node_def"), ("x", "node"), ("signature",)]


@settings(max_examples=examples(0.3), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_fields(5))
def test_random_canonical_messages(fields: list) -> None:
    _same(_print(fields), paths=RANDOM_PATHS, chunks=(DEFAULT, 5))


@settings(max_examples=examples(0.4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
# ASCII only: a disturbance that cuts a UTF-8 character makes the general scanner's own error
# depend on its chunk size (an invalid byte and a later bad escape: which is reported first).
@given(_fields(4, ascii=True), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(PERTURB), st.booleans()), min_size=1, max_size=3))
def test_random_messages_with_layout_disturbed(fields: list, edits: list) -> None:
    data = _print(fields)
    for where, what, replace in edits:
        i = int(where * len(data))
        data = data[:i] + what + data[i + (1 if replace else 0) :]
    _same(data, paths=RANDOM_PATHS, chunks=(DEFAULT, 6))


def test_the_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guard against a silent fall back to the general scanner for the whole file (on every
    Python: before 3.11 the layout regexes are emulated by ``_atomic``, not skipped)."""
    data = (DATA / "graphs" / "mlp_sgd.pbtxt").read_bytes()
    walked, taken = [], []
    walk, hand_over = _canonical._Walker._walk, _canonical._Walker._hand_over

    def walk_spy(self: Any) -> Any:
        walked.append(self)
        return walk(self)

    def hand_over_spy(self: Any, h: Any) -> Any:
        taken.append(h.at)
        return hand_over(self, h)

    monkeypatch.setattr(_canonical._Walker, "_walk", walk_spy)
    monkeypatch.setattr(_canonical._Walker, "_hand_over", hand_over_spy)
    f = io.BytesIO(data)
    assert len(list(scan_canonical(f, ("node",), HEADS))) > 10  # (the defaults: the fast path)
    assert len(walked) == 1 and taken == []
    assert re.search(rb"^library \{", data, re.M)


@pytest.mark.parametrize("fixture", ["mlp_sgd.pbtxt", "gan_two_optimizers.pbtxt"])
def test_fast_false_is_the_general_scanner(fixture: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``fast=False``: no walk, and the general scanner's blocks, errors and end state."""
    monkeypatch.setattr(_canonical._Walker, "run", None)
    data = (DATA / "graphs" / fixture).read_bytes()
    for d in (data, data[: len(data) // 2]):
        out: List[Any] = []
        end: dict = {}
        try:
            out.extend(scan_canonical(io.BytesIO(d), ("node",), HEADS, chunk_size=4096, end_state=end, fast=False))
        except PbtxtError as e:
            out.append(("error", type(e).__name__, e.line, e.column, e.msg))
        else:
            out.append(("end", end["bytes"], end["lines"]))
        assert out == _run(d, ("node",), fast=False)


@pytest.mark.parametrize("fixture, compiles", [("mlp_sgd.pbtxt", False), ("gan_two_optimizers.pbtxt", True)])
def test_whole_block_and_batch_regexes_wait_for_the_warm_up(fixture: str, compiles: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Those regexes take 20-110 ms each to compile: a scan shorter than the warm-up (most of
    what fp reads, a frozen graph's few thousand lines) compiles none; a longer one does."""
    from pbtxt_scan.text import _layout

    data = (DATA / "graphs" / fixture).read_bytes()
    assert (data.count(b"\n") > _canonical._WARMUP_LINES) == compiles
    built: List[str] = []
    for fn in ("block_re", "field_re"):
        real = getattr(_layout, fn)
        real.cache_clear()  # (a fresh process)
        monkeypatch.setattr(_layout, fn, lambda *a, _f=fn, _real=real: built.append(_f) or _real(*a))
    assert not _layout.warm()
    assert len(_run(data, ("node",))) > 10
    assert bool(built) == compiles, built
    # Once one walk went past it, later walks of the process (bp's slices, --jobs chunks) use
    # the regexes from their first line.
    assert _layout.warm() == compiles
    del built[:]
    assert len(_run((DATA / "graphs" / "mlp_sgd.pbtxt").read_bytes(), ("node",))) > 10
    assert bool(built) == compiles, built
    # A warm-up given is walked whatever the process compiled; none: batches from the first line.
    del built[:]
    assert len(_run(data, ("node",), warm=_canonical._WARMUP_LINES)) > 10
    assert bool(built) == compiles, built
    del built[:]
    assert len(_run((DATA / "graphs" / "mlp_sgd.pbtxt").read_bytes(), ("node",), warm=0)) > 10
    assert built
