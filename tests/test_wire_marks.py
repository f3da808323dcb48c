"""far_marks (wire._wire_marks): the boundaries parallel parts prove are the file's own, whatever
the bytes a part starts its lead in (payloads that chain like nodes, serialized graphs inside a
node, fields longer than the lead, a file cut short); on real graphs the parts do join (the graphs of
``support.data.QUICK_GRAPHS`` in the quick set, every binary GraphDef in CI's ``slow`` run)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.events import _varint as read_varint
from support.marks import quick_graphs
from support.examples import examples
from support.wire_encoder import varint

from pbtxt_scan.wire import _wire_marks
from pbtxt_scan.wire._wire_seek import Malformed

DATA = Path(__file__).resolve().parent / "data" / "binary"


def _boundaries(buf: bytes) -> Tuple[List[int], bool]:
    """Every place the file's own walk stands at, decoded from the start: each top-level field's
    start, up to the one that does not fit (its start too: the walk stands there before it fails)
    or the file's end; and whether the fields chain to the end."""
    out, pos = [], 0
    try:
        while pos < len(buf):
            out.append(pos)
            key, j = read_varint(buf, pos)
            if key & 7 == 2:
                n, j = read_varint(buf, j)
                j += n
            else:
                _, j = read_varint(buf, j)
            if j > len(buf):
                break
            pos = j
    except IndexError:
        pass
    return out + ([pos] if pos == len(buf) else []), pos == len(buf)  # (the file's end: a walk stands there too)


@st.composite
def _graph(draw: st.DrawFn) -> bytes:
    out = bytearray()
    for _ in range(draw(st.integers(1, 60))):
        kind = draw(st.sampled_from(["plain", "plain", "nodes", "graph", "version"]))
        if kind == "version":
            out += b"\x18" + varint(draw(st.integers(0, 1 << 40)))
            continue
        n = draw(st.integers(0, 3000))
        if kind == "plain":
            payload = b"\x0a\x03abc\x12\x05MatMul"[:n] + bytes(max(0, n - 13))
        elif kind == "nodes":  # (bytes that chain as nodes: a walk started in them goes a false way)
            payload = (b"\x0a\x02\x0a\x00" * n)[:n]
        else:  # (a serialized GraphDef in an attr, as TF-TRT's engines hold theirs)
            inner = b"".join(b"\x0a" + varint(k) + b"\x0a" * k for k in range(1, 40))
            payload = (b"\x2a" + varint(len(inner)) + inner) * (1 + n // 1000)
        out += b"\x0a" + varint(len(payload)) + payload
    return bytes(out)


def _marks(monkeypatch: pytest.MonkeyPatch, buf: bytes, jobs: int, lead: int, mark: int) -> List[int]:
    monkeypatch.setattr(_wire_marks, "SPLIT_MIN", 1)
    monkeypatch.setattr(_wire_marks, "LEAD", lead)
    return _wire_marks.far_marks(lambda p, n: buf[p:p + n], len(buf), 0, len(buf), mark, jobs)


@settings(max_examples=examples(0.3), deadline=None)
@given(_graph(), st.integers(0, 1 << 20), st.integers(2, 5), st.sampled_from([1, 7, 200, 1 << 16]), st.sampled_from([1, 100, 5000]))
def test_every_mark_is_a_boundary_of_the_file(buf: bytes, cut: int, jobs: int, lead: int, mark: int) -> None:
    buf = buf[: cut % (len(buf) + 1)] if cut % 3 == 0 else buf
    true, whole = _boundaries(buf)
    with pytest.MonkeyPatch.context() as mp:
        try:
            got = _marks(mp, buf, jobs, lead, mark)
        except Malformed:
            assert not whole  # (only the file's own fields, cut short, are malformed)
            return
    assert got == sorted(got)
    assert set(got) <= set(true), sorted(set(got) - set(true))


@pytest.mark.parametrize("path", quick_graphs(sorted(DATA.glob("*.pb"))), ids=lambda p: p.name)
def test_on_real_graphs_the_parts_join(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    buf = path.read_bytes()
    true, whole = _boundaries(buf)
    assert whole
    got = _marks(monkeypatch, buf, 4, 1 << 12, 256)
    assert set(got) <= set(true)
    # (the parts met: the marks run to the last part, a mark or a few fields from the file's end)
    assert got and len(buf) - got[-1] < 4096 + max(b - a for a, b in zip(true, true[1:]))
