"""TopWalk (wire._wire_seek) against a plain decoder of the whole buffer: random sequences of
top-level GraphDef fields (nodes with one- to three-byte lengths, library, versions, a varint
version), cut anywhere, walked in windows of any size, asked for offsets in increasing order."""
from __future__ import annotations

from typing import List, Optional, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st
from support.events import _varint as read_varint
from support.examples import examples
from support.wire_encoder import varint

from pbtxt_scan.wire import _wire_seek
from pbtxt_scan.wire._wire_seek import Field, Malformed, TopWalk


@st.composite
def _fields(draw: st.DrawFn) -> bytes:
    out = bytearray()
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(st.sampled_from(["node", "node", "node", "library", "versions", "version"]))
        if kind == "version":
            out += b"\x18" + varint(draw(st.integers(0, 1 << 40)))
            continue
        n = draw(st.sampled_from([0, 1, 5, 127, 128, 200, 16383, 16384, 20000]))
        tag = {"node": b"\x0a", "library": b"\x12", "versions": b"\x22"}[kind]
        # (a payload that itself starts like a node: the walk must skip it by its length)
        out += tag + varint(n) + (b"\x0a\x05" * n)[:n]
    return bytes(out)


def _reference(buf: bytes, off: int) -> Optional[Field]:
    """The field holding ``off``, decoded from the start; Malformed as the walk should raise it."""
    pos = 0
    size = len(buf)

    def field_varint(i: int) -> Tuple[int, int]:
        try:
            return read_varint(buf, i)
        except IndexError:
            raise Malformed("cut") from None

    while pos < size:
        key, j = field_varint(pos)
        fn, wt = key >> 3, key & 7
        if wt == 2:
            n, j = field_varint(j)
            f = Field(fn, pos, j, j + n)
        elif wt == 0:
            _, j = field_varint(j)
            f = Field(fn, pos, j, j)
        else:
            raise AssertionError("the generator writes wire types 0 and 2 only")
        if f.end > size:
            raise Malformed("past the end")
        if off < f.end:
            return f
        pos = f.end
    return None


def _outcome(get: "callable") -> object:  # type: ignore[valid-type]
    try:
        return get()
    except Malformed:
        return "Malformed"


@settings(max_examples=examples(1.0), deadline=None)
@given(_fields(), st.integers(0, 1 << 20), st.sampled_from([21, 64, 300, 4096, 1 << 20]), st.lists(st.integers(0, 1 << 17), max_size=6),
       st.data())
def test_the_walk_finds_the_field_the_whole_decoding_finds(buf: bytes, cut: int, window: int, offs: List[int], data: st.DataObject) -> None:
    how = data.draw(st.sampled_from(["whole", "cut", "short"]))
    if how == "cut":
        buf = buf[:cut]
    elif how == "short":  # (a last field a few bytes short)
        buf = buf[: max(0, len(buf) - cut % 8)]
    saved = _wire_seek._WINDOW
    _wire_seek._WINDOW = window
    try:
        walk = TopWalk(lambda p, n: buf[p:p + n], len(buf), 0)
        for off in sorted([o % (len(buf) + 2) for o in offs] + data.draw(st.lists(st.integers(len(buf), len(buf) + 30), max_size=1))):
            # (an offset before the walk's position, in a field returned already: None)
            want = None if off < walk.pos else _outcome(lambda: _reference(buf, off))
            got = _outcome(lambda: walk.holding(off))
            assert got == want, (off, len(buf))
            if want == "Malformed":
                break
    finally:
        _wire_seek._WINDOW = saved
