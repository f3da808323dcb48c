"""bp's cost follows the tail after its answer, whatever the layout (issue 38: "a one-line 74 MB pbtxt
takes 98 s in bp, 0.5 s in fp").

A file with no column-0 opener (the whole graph on one line, as ``as_one_line`` writes it; one node
a line) used to send bp to the index path: one forward pass over the whole file by the general
scanner, then the blocks read back. It is now read back by blocks from the end, as the writer
layout is, a region starting at a top-level field's name and ``{`` wherever it is on its line
(``text._backward``'s loose openers), verified by the scanner. The bound is counted in the bytes
the scanner reads, not timed; the blocks read back are the forward reading's, reversed, with the
same lines and columns (characters), whatever the chunk a region starts in, decoys included: an
opener inside a string literal, before a ``#`` that would comment out the string's end.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, List, Tuple

import pytest

import pbtxt_scan
from pbtxt_scan import GraphFile
from pbtxt_scan.fpbp._rules import find_bp
from pbtxt_scan.graph._reverse import reverse_blocks
from pbtxt_scan.text import _backward

GRAPHS = Path(__file__).parent / "data" / "graphs"
GAN = GRAPHS / "gan_two_optimizers.pbtxt"
GAN_BP = "gradients_1/generator/g1/MatMul_grad/MatMul_1"
HEADS = frozenset({"name", "op"})


def _layout(data: bytes, layout: str) -> bytes:
    """``data`` (the writer layout) as another layout, its bytes at the same offsets."""
    one_line = data.replace(b"\n", b" ")  # (tr '\n' ' ': what the issue measured)
    if layout == "one_line":
        return one_line
    if layout == "node_a_line":  # each node on a line of its own, no column-0 "node {" line
        return one_line.replace(b" node {", b"\nnode {")
    assert layout == "canonical"
    return data


def _big(tmp_path: Path, layout: str) -> Path:
    """~3 MB: copies of GAN's nodes, then GAN itself (its bp answer near the end)."""
    body = GAN.read_bytes()
    nodes = body[body.index(b"node {\n") : body.index(b"library {") if b"library {" in body else body.index(b"versions {")]
    path = tmp_path / ("big_%s.pbtxt" % layout)
    path.write_bytes(_layout(nodes * 12 + body, layout))
    return path


def _scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, chunk: int) -> Tuple[int, int, int]:
    """bp on ``_big``'s ``layout``: the bytes its backward reading scanned, the answer's offset and
    the file's size. The index path (a forward pass over the whole file) fails the test."""
    monkeypatch.setattr(_backward, "_CHUNK", chunk)
    scanned: List[int] = []
    read = _backward._Slice.read

    def counted(self: Any, n: int = -1) -> bytes:
        data = read(self, n)
        scanned.append(len(data))
        return data

    def no_index(*a: object, **k: object) -> None:
        raise AssertionError("bp took the index path: a forward pass over the whole file")

    monkeypatch.setattr(_backward._Slice, "read", counted)
    monkeypatch.setattr(_backward, "_indexed", no_index)
    path = _big(tmp_path, layout)
    point = find_bp(path).point
    assert point is not None and point.name == GAN_BP
    return sum(scanned), point.offset, path.stat().st_size


@pytest.mark.parametrize("layout", ["one_line", "node_a_line"])
def test_bp_reads_back_as_far_as_on_the_writer_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    """The same bytes as the writer layout's backward reading (which reads from the end to its
    answer and a little past it: GAN's other optimizer), a chunk either way: not the file."""
    chunk = 1 << 14
    canonical, at, size = _scanned(tmp_path, monkeypatch, "canonical", chunk)
    assert size - at < canonical < size // 10  # (the answer near the end: a whole-file read shows)
    got, got_at, _ = _scanned(tmp_path, monkeypatch, layout, chunk)
    assert got_at == at
    assert got <= canonical + 2 * chunk, (got, canonical)


@pytest.mark.parametrize("layout", ["one_line", "node_a_line"])
def test_bp_answers_as_on_the_writer_layout(tmp_path: Path, layout: str) -> None:
    want = find_bp(_big(tmp_path, "canonical")).point
    got = find_bp(_big(tmp_path, layout)).point
    assert want is not None and got is not None
    assert (got.name, got.offset, got.rule) == (want.name, want.offset, want.rule)
    if layout == "one_line":
        assert got.line == 1


def _both(path: Path) -> Tuple[List[Tuple[Any, ...]], List[Tuple[Any, ...]]]:
    fw = [(b.start, b.end, b.line, b.column, b.heads) for b in pbtxt_scan.iter_blocks(path, ("node",), HEADS)]
    with GraphFile.open(path) as g:
        bw = [(b.start, b.end, b.line, b.column, b.heads) for b in reverse_blocks(g, ("node",), HEADS)]
    return fw[::-1], bw


_UNICODE = 'node { name: "ünïcödé/α" op: "NoOp" } '.encode()


@pytest.mark.parametrize("layout", ["one_line", "node_a_line", "mid_line"])
@pytest.mark.parametrize("chunk", [1000, 4096])
def test_the_blocks_read_back_are_the_forward_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, chunk: int) -> None:
    """Lines and columns too: a column counts characters (the first node's name is not ASCII), and a
    region that starts mid-line counts its column back from the end of the line, or from its start."""
    monkeypatch.setattr(_backward, "_CHUNK", chunk)
    data = _UNICODE + GAN.read_bytes()
    if layout == "mid_line":  # several nodes a line, lines that start mid-node
        data = data.replace(b"\n", b" ").replace(b"} node {", b"}  node {").replace(b' op: "', b'\n op: "')
    else:
        data = _layout(data, layout)
    path = tmp_path / "g.pbtxt"
    path.write_bytes(data)
    fw, bw = _both(path)
    assert len(fw) > 600 and bw == fw


# Decoys: an opener inside a string (a name, a tensor's bytes), before a "#" that, read from the
# decoy, would comment out the rest of the line; nested braces in strings; another top-level field.
DECOYS = [
    b'node { name: "a" op: "Const" attr { key: "s" value { s: "} node { name: \'fake\' op: \'NoOp\' } # " } } }'
    b' node { name: "b" op: "NoOp" input: "a" }',
    b'node { name: "x node { name: \\"y\\" op: \\"z\\" }" op: "NoOp" } node { name: "w" op: "NoOp" }',
    b"node { name: 'p' op: 'NoOp' attr { key: 'k' value { s: \"node {\" } } } versions { producer: 1 }"
    b" node { name: 'q#' op: 'NoOp' }",
    b'node { name: "a" op: "NoOp" } library { function { signature { name: "f" } node_def { name: "n" op: "NoOp" } } }'
    b' node { name: "c" op: "NoOp" }',
]


@pytest.mark.parametrize("text", DECOYS, ids=["hash_after_decoy", "escaped_quotes", "single_quotes", "library"])
def test_a_decoy_opener_never_starts_a_region(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: bytes) -> None:
    """Every chunk size, so that each decoy is the first opener of some chunk."""
    path = tmp_path / "g.pbtxt"
    path.write_bytes(text)
    want, _ = _both(path)
    assert len(want) >= 2
    for chunk in range(1, len(text) + 2):
        monkeypatch.setattr(_backward, "_CHUNK", chunk)
        assert _both(path)[1] == want, chunk


@pytest.mark.parametrize("name", ["one_line_extra_close_brace", "one_line_unknown_field"])
def test_a_one_line_error_is_the_forward_one_whatever_the_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    from support.hostile import CASES

    text, message = next((d, m) for n, d, m in CASES if n == name)
    path = tmp_path / "g.pbtxt"
    path.write_bytes(text)
    for chunk in range(1, len(text) + 2):
        monkeypatch.setattr(_backward, "_CHUNK", chunk)
        with pytest.raises(pbtxt_scan.PbtxtError) as e:
            find_bp(path)
        assert "%s:%s: %s" % (e.value.line, e.value.column, e.value.msg) == message, chunk
