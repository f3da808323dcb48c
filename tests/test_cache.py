"""The bp cache is a hint that never makes an answer wrong: damaged files are rebuilt, in-place
edits miss, failed writes leave nothing behind, and the folder stays bounded."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.layouts import _reprint

from pbtxt_scan.graph import _cache
from pbtxt_scan.fpbp._rules import find_bp

GRAPHS = Path(__file__).parent / "data" / "graphs"
GAN = GRAPHS / "gan_two_optimizers.pbtxt"  # big enough that an edit in the middle is outside the hashed head and tail
GAN_BP = "gradients_1/generator/g1/MatMul_grad/MatMul_1"


def _cache_files(tmp_path: Path) -> "list[Path]":  # (each test's cache folder: conftest.py)
    return sorted((tmp_path / "cache").iterdir())


def _one_line(tmp_path: Path) -> Path:
    alt = tmp_path / "g.pbtxt"
    _reprint(GAN, alt, False)  # no column-0 "node {" lines: bp takes the cached index path
    return alt


def _bp_line(path: Path) -> int:
    p = find_bp(path).point
    assert p is not None and p.name == GAN_BP
    return p.line


@pytest.mark.parametrize("layout", ["canonical", "one_line"])
def test_cache_of_the_right_length_but_wrong_content_is_rebuilt(tmp_path: Path, layout: str) -> None:
    path = GAN if layout == "canonical" else _one_line(tmp_path)
    want = _bp_line(path)
    assert _cache_files(tmp_path)
    for p in _cache_files(tmp_path):  # same length, every byte zero: used to give "the file changed"
        p.write_bytes(bytes(p.stat().st_size))
    assert _bp_line(path) == want
    for p in _cache_files(tmp_path):  # 32 zero bytes: one well-formed index entry, were it believed
        p.write_bytes(bytes(32))
    assert _bp_line(path) == want


@pytest.mark.parametrize("layout", ["canonical", "one_line"])
def test_in_place_edit_keeping_size_and_mtime_misses_the_cache(tmp_path: Path, layout: str) -> None:
    path = tmp_path / "g.pbtxt"
    if layout == "canonical":
        path.write_bytes(GAN.read_bytes())
        old, new = b"{\n  name", b"{\n\n name"  # a blank line: one more line, same size
    else:
        _reprint(GAN, path, False)
        old, new = b"node { name", b"node {\nname"
    before = _bp_line(path)
    data = path.read_bytes()
    at = data.index(old, len(data) // 2 - 20000)  # outside the hashed first and last 64 KiB
    assert 65536 < at < len(data) - 65536
    st = path.stat()
    with open(str(path), "r+b") as f:  # in place: same inode, same size
        f.seek(at)
        f.write(new)
    os.utime(str(path), ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert _bp_line(path) == before + 1
    text = path.read_text().splitlines()
    assert '"%s"' % GAN_BP in "\n".join(text[before : before + 2])


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*a: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    path = _one_line(tmp_path)
    _bp_line(path)
    assert [p.name for p in _cache_files(tmp_path)] == []


def test_the_folder_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache, "MAX_BYTES", 50_000)
    for i in range(40):
        _cache.write("k%02d" % i, "index-node", bytes(4000))
    files = _cache_files(tmp_path)
    assert sum(p.stat().st_size for p in files) <= 50_000
    assert 5 <= len(files) < 40
    assert _cache.read("k39", "index-node") == bytes(4000)  # the newest are kept
    assert _cache.read("k00", "index-node") is None


@pytest.mark.parametrize("layout", ["one_line", "crlf"])
def test_bp_without_column0_openers_holds_no_block_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str) -> None:
    """A file with no column-0 opener (CRLF, one node per line) used to be read backward as one
    region, every block of the file in one list (8.9 MB CRLF: 60 MB RSS, growing with the file).
    Since issue 38 it is read back region by region as the writer layout is (a chunk's nodes
    each, from a loose opener: tests/test_bp_tail.py), never the file's thousands in one."""
    from pbtxt_scan.text import _backward as _reverse

    monkeypatch.setattr(_reverse, "_CHUNK", 1 << 15)  # (a 32 KiB chunk: ~90 of GAN's nodes)

    src = _one_line(tmp_path) if layout == "one_line" else GAN
    data = src.read_bytes()
    if layout == "crlf":
        data = data.replace(b"\n", b"\r\n")
    big = tmp_path / "big.pbtxt"
    big.write_bytes(data * 3)
    held = []
    real = _reverse._region

    def region(*a, **k):  # type: ignore[no-untyped-def]
        blocks = list(real(*a, **k))
        held.append(len(blocks))
        return reversed(blocks[::-1])

    monkeypatch.setattr(_reverse, "_region", region)
    assert find_bp(big).point.name == GAN_BP
    assert max(held, default=0) <= 300  # (a chunk's, or two: not the whole file's ~1,900)


def test_canonical_bp_never_takes_the_index_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer layout is read backward region by region (a 1 MiB chunk's nodes each): the index
    path (a whole forward pass) is only for other layouts. A region cap once set too low sent every
    canonical file there: bp on 1 GB went from 31 s to 243 s."""
    from pbtxt_scan.text import _backward as _reverse

    def no_index(*a: object, **k: object) -> None:
        raise AssertionError("took the index path")

    monkeypatch.setattr(_reverse, "_indexed", no_index)
    big = tmp_path / "big.pbtxt"
    body = GAN.read_bytes()
    nodes = body[body.index(b"node {\n") : body.index(b"library {") if b"library {" in body else body.index(b"versions {")]
    big.write_bytes(nodes * 12 + body)  # ~3 MB: many 1 MiB chunks of nodes, then the real graph
    assert _bp_line(big) > 0
