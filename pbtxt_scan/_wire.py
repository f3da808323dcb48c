"""Streaming reader of binary TensorFlow graphs (protobuf wire format), without protobuf.

Reads a binary ``GraphDef`` (``.pb``), ``MetaGraphDef`` (``.meta``) or ``SavedModel``
(``saved_model.pb``) from a file object in constant memory and hands out the same
:class:`~pbtxt_scan._model.Block` objects as the text scanner.

Field numbers, each checked against TensorFlow's own ``.proto`` files (repo ``tensorflow/tensorflow``,
and its mirror ``buildbuddy-io/tensorflow-proto`` for the newest fields):

- ``tensorflow/core/framework/graph.proto``: ``GraphDef`` node = 1, library = 2, version = 3
  (deprecated), versions = 4.
- ``tensorflow/core/framework/node_def.proto``: ``NodeDef`` name = 1, op = 2, input = 3, device = 4,
  attr = 5 (``map<string, AttrValue>``: entries key = 1, value = 2), experimental_debug_info = 6,
  experimental_type = 7.
- ``tensorflow/core/framework/function.proto``: ``FunctionDefLibrary`` function = 1, gradient = 2;
  ``FunctionDef`` signature = 1 (an ``OpDef``), node_def = 3, ret = 4, attr = 5, control_ret = 6,
  arg_attr = 7 (2 is reserved).
- ``tensorflow/core/framework/op_def.proto``: ``OpDef`` name = 1.
- ``tensorflow/core/protobuf/meta_graph.proto``: ``MetaGraphDef`` meta_info_def = 1, graph_def = 2;
  ``MetaInfoDef`` tags = 4.
- ``tensorflow/core/protobuf/saved_model.proto``: ``SavedModel`` saved_model_schema_version = 1,
  meta_graphs = 2.

Conventions (binary has no lines):

- ``Block.line``, ``Block.column`` and every ``Head.line`` are ``0`` (text lines start at 1, so 0
  always means "binary"): callers print ``offset N`` with ``N = Block.start`` where text prints
  ``line N``.
- ``Block.start``/``Block.end`` delimit the serialized ``NodeDef`` message itself (after its tag and
  length prefix): ``read_block_bytes`` gives bytes that :func:`pbtxt_scan._wire_text.node_to_text`
  renders. ``Block.path`` is ``("node",)`` or ``("library", "function", "node_def")`` (relative
  to the GraphDef, also inside a MetaGraphDef or SavedModel); ``parents`` is ``()`` for graph nodes
  and ``(None, function_name)`` for function nodes, as from text.
- Errors are :class:`PbtxtError` with ``offset`` (the byte where the bad field starts) and no line.

Memory: one read buffer (``chunk_size``, 1 MiB by default, plus one node when a node is larger
than that; nodes over ``_INLINE_MAX`` are read field by field) and the heads of one node. Every
field not needed (``attr`` tensors of any size, ``versions``, collections, signatures) is skipped by
its length: ``seek`` on seekable files, read-and-discard in ``chunk_size`` pieces otherwise (gzip,
pipes). Backward reading uses a sparse index (:class:`WireIndex`) built by one forward pass over the
length prefixes: one checkpoint (3 integers) per ``_REGION`` (256 KiB) of nodes, i.e. about 100 KB
per GB of graph; each region is then decoded forward and its blocks yielded last-first, so memory
for a backward pass is the index plus one region's blocks.
"""
from __future__ import annotations

import io
import os
from array import array
from typing import Any, BinaryIO, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from ._errors import PbtxtError
from ._model import Block, Head

GRAPHDEF, METAGRAPH, SAVEDMODEL = "graphdef", "metagraph", "savedmodel"
KINDS = (GRAPHDEF, METAGRAPH, SAVEDMODEL)
NODE_PATH = ("node",)
FUNCTION_PATH = ("library", "function", "node_def")
HEADS = frozenset({"name", "op", "input", "device"})
_HEAD_FIELD = {"name": 1, "op": 2, "input": 3, "device": 4}
_FIELD_HEAD = {v: k for k, v in _HEAD_FIELD.items()}

DEFAULT_CHUNK = 1 << 20
SNIFF_BYTES = 1 << 16
_INLINE_MAX = 8 << 20  # nodes up to this size are read whole; bigger ones field by field
_REGION = 256 << 10  # bytes of nodes per backward-index checkpoint

TRUNCATED_FILE = "truncated: a length-delimited field runs past the end of the file"
TRUNCATED_MSG = "truncated: a field runs past the end of its enclosing message"


def _error(msg: str, offset: int) -> PbtxtError:
    return PbtxtError(msg, offset=offset)


class _Bad(Exception):
    """The fast path met something unusual: decode the node again the careful way."""


# --------------------------------------------------------------------------------------------
# reading: a buffered reader that knows absolute offsets and skips by length
# --------------------------------------------------------------------------------------------


class _Reader:
    """Bytes of ``f`` from absolute offset ``base``; ``buf[i]`` is the byte at ``base + i``."""

    __slots__ = ("f", "buf", "i", "base", "chunk", "seekable", "size")

    def __init__(self, f: BinaryIO, chunk: int = DEFAULT_CHUNK) -> None:
        self.f = f
        self.buf = b""
        self.i = 0
        self.chunk = max(chunk, 64)
        self.seekable = _seekable(f)
        self.base = f.tell() if self.seekable else 0
        self.size = _size(f) if self.seekable else None

    def tell(self) -> int:
        return self.base + self.i

    def fill(self, n: int) -> int:
        """Make ``n`` bytes from the current position available in ``buf`` (fewer at the end of the
        file); returns how many are."""
        avail = len(self.buf) - self.i
        if avail >= n:
            return avail
        parts = [self.buf[self.i :]]
        self.base += self.i
        self.i = 0
        while avail < n:
            data = _read(self.f, max(n - avail, self.chunk))
            if not data:
                break
            parts.append(data)
            avail += len(data)
        self.buf = b"".join(parts)
        return avail

    def at_eof(self) -> bool:
        return self.fill(1) == 0

    def skip_to(self, off: int, field_start: int) -> None:
        """Move forward to ``off`` without holding what lies between."""
        end = self.base + len(self.buf)
        if off <= end:
            self.i = off - self.base
            return
        if self.seekable:
            if self.size is not None and off > self.size:
                raise _error(TRUNCATED_FILE, field_start)
            if self.f.seek(off) != off:  # (a gzip file stops at its end)
                raise _error(TRUNCATED_FILE, field_start)
        else:
            left = off - end
            while left > 0:
                data = _read(self.f, min(left, self.chunk))
                if not data:
                    raise _error(TRUNCATED_FILE, field_start)
                left -= len(data)
        self.buf = b""
        self.i = 0
        self.base = off

    def seek(self, off: int) -> None:
        """Go to any offset (seekable files only: backward reading)."""
        if self.base <= off <= self.base + len(self.buf):
            self.i = off - self.base
            return
        self.f.seek(off)
        self.buf = b""
        self.i = 0
        self.base = off

    def varint(self) -> int:
        if len(self.buf) - self.i < 10:
            self.fill(10)
        buf = self.buf
        i = self.i
        start = self.base + i
        try:
            b = buf[i]
        except IndexError:
            raise _error("truncated: the file ends inside a field", start) from None
        if b < 0x80:
            self.i = i + 1
            return b
        v, j = _varint_slow(buf, i, start)
        self.i = j
        return v

    def take(self, n: int, field_start: int) -> bytes:
        if self.fill(n) < n:
            raise _error(TRUNCATED_FILE, field_start)
        i = self.i
        self.i = i + n
        return self.buf[i : i + n]


def _read(f: BinaryIO, n: int) -> bytes:
    try:
        return f.read(n)
    except PbtxtError:
        raise
    except OSError as e:
        raise PbtxtError("read error: %s" % (e.strerror or e)) from None


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, ValueError, OSError):
        return False


def _size(f: Any) -> Optional[int]:
    """The size of a plain file or a seekable stream (not of a gzip file: its fd is the packed one)."""
    if isinstance(f, (io.BufferedReader, io.FileIO)):
        try:
            return os.fstat(f.fileno()).st_size
        except (OSError, ValueError, io.UnsupportedOperation):
            pass
    try:
        here = f.tell()
        size = f.seek(0, 2)
        f.seek(here)
        return int(size)
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None


def _varint_slow(buf: bytes, i: int, start: int) -> Tuple[int, int]:
    """A varint of 2 or more bytes at ``buf[i]``; ``start`` is its absolute offset (for errors)."""
    v = 0
    shift = 0
    for k in range(10):
        try:
            b = buf[i + k]
        except IndexError:
            raise _error("truncated: the file ends inside a varint", start) from None
        v |= (b & 0x7F) << shift
        if b < 0x80:
            if k == 9 and b > 1:
                raise _error("bad varint: more than 64 bits", start)
            return v, i + k + 1
        shift += 7
    raise _error("bad varint: more than 10 bytes", start)


def _tag(r: _Reader) -> Tuple[int, int, int]:
    """(field number, wire type, offset of the tag) of the next field."""
    off = r.tell()
    t = r.varint()
    fn = t >> 3
    wt = t & 7
    if fn == 0:
        raise _error("field number 0 is not valid", off)
    if wt > 5:
        raise _error("wire type %d is not valid" % wt, off)
    return fn, wt, off


def _skip_value(r: _Reader, fn: int, wt: int, off: int, end: Optional[int]) -> None:
    """Skip the value of a field whose tag was just read."""
    if wt == 2:
        n = r.varint()
        p = r.tell()
        _check_end(p + n, end, off, r)
        r.skip_to(p + n, off)
    elif wt == 0:
        r.varint()
    elif wt == 1 or wt == 5:
        n = 8 if wt == 1 else 4
        _check_end(r.tell() + n, end, off, r)
        r.skip_to(r.tell() + n, off)
    elif wt == 3:  # a group (proto2; TensorFlow never writes one): skip to its end tag
        while True:
            if end is not None and r.tell() >= end:
                raise _error("truncated: a group has no end tag", off)
            f2, w2, o2 = _tag(r)
            if w2 == 4:
                if f2 != fn:
                    raise _error("end-group tag %d does not match its group %d" % (f2, fn), o2)
                return
            _skip_value(r, f2, w2, o2, end)
    else:
        raise _error("end-group tag without a group", off)
    if end is not None and r.tell() > end:
        raise _error(TRUNCATED_MSG, off)


def _check_end(stop: int, end: Optional[int], off: int, r: _Reader) -> None:
    if end is not None and stop > end:
        raise _error(TRUNCATED_MSG, off)
    if r.size is not None and stop > r.size:
        raise _error(TRUNCATED_FILE, off)


def _fields(r: _Reader, end: Optional[int]) -> Iterator[Tuple[int, int, int, int]]:
    """The length-delimited fields of a message ending at ``end`` (``None``: the end of the file)
    as ``(field, tag offset, payload start, payload end)``, the reader at the payload start; the
    caller may read into the payload, the rest is skipped. Other wire types are skipped here."""
    while True:
        if end is None:
            if r.at_eof():
                return
        elif r.tell() >= end:
            if r.tell() > end:
                raise _error(TRUNCATED_MSG, r.tell())
            return
        fn, wt, off = _tag(r)
        if wt != 2:
            _skip_value(r, fn, wt, off, end)
            continue
        n = r.varint()
        p = r.tell()
        _check_end(p + n, end, off, r)
        yield fn, off, p, p + n
        if r.tell() != p + n:
            r.skip_to(p + n, off)


# --------------------------------------------------------------------------------------------
# detection
# --------------------------------------------------------------------------------------------

# Mini-schemas for telling the kinds apart: field -> "s" (printable string), "v" (varint),
# "m" (any length-delimited bytes) or a nested schema.
_S_NODE: Dict[int, Any] = {1: "s", 2: "s", 3: "s", 4: "s", 5: {1: "s", 2: "m"}, 6: "m", 7: "m"}
_S_FUNC: Dict[int, Any] = {1: "m", 3: _S_NODE, 4: "m", 5: "m", 6: "m", 7: "m", 8: "m"}
_S_GRAPH: Dict[int, Any] = {1: _S_NODE, 2: {1: _S_FUNC, 2: "m", 3: "m"}, 3: "v", 4: "m", 5: "m"}
_S_INFO: Dict[int, Any] = {1: "s", 2: "m", 3: "m", 4: "s", 5: "s", 6: "s", 7: "v", 8: "m"}
_S_META: Dict[int, Any] = {1: _S_INFO, 2: _S_GRAPH, 3: "m", 4: "m", 5: "m", 6: "m", 7: "m"}
_S_SAVED: Dict[int, Any] = {1: "v", 2: _S_META}
_SNIFF = ((GRAPHDEF, _S_GRAPH), (METAGRAPH, _S_META), (SAVEDMODEL, _S_SAVED))


def sniff(head: bytes) -> Optional[str]:
    """The kind of binary graph whose file starts with ``head`` (its first bytes, up to
    :data:`SNIFF_BYTES`): ``"graphdef"``, ``"metagraph"``, ``"savedmodel"``, or ``None`` for text
    format (which starts with an identifier, ``#`` or whitespace) and anything else.

    Each kind's fields are checked against a mini-schema of its known fields (at the top level)
    and the messages below (where fields numbered above the known ones are allowed: TensorFlow
    adds fields with new numbers). The kind that explains the most bytes wins; it must explain all
    of ``head`` (a cut last field is fine) or at least its first 1 KiB of whole top-level fields.
    """
    if not head:
        return None
    best, best_len = None, 0
    for kind, schema in _SNIFF:
        ok = _plausible(head, 0, len(head), schema, 0)
        if ok > best_len:
            best, best_len = kind, ok
    if best is None or best_len < min(len(head), 1024):
        return None
    if len(head) < 16 and _plausible(head, 0, len(head), dict(_SNIFF)[best], 0, True) < len(head):
        return None  # a few bytes, cut: too little to tell (text "\n" is not a cut GraphDef)
    return best


def _plausible(buf: bytes, i: int, end: int, schema: Dict[int, Any], depth: int, strict: bool = False) -> int:
    """How far ``buf[i:end]`` reads as ``schema`` (``end`` when it all does; a field cut by the
    end of ``buf`` counts as read unless ``strict``)."""
    while i < end:
        start = i
        try:
            t, i = _varint_slow(buf, i, i) if buf[i] >= 0x80 else (buf[i], i + 1)
        except (PbtxtError, IndexError):
            return start if strict or i < len(buf) - 10 else end
        fn, wt = t >> 3, t & 7
        kind = schema.get(fn)
        if kind is None:
            if depth == 0 or fn <= max(schema) or wt not in (0, 1, 2, 5):
                return start
            kind = "v" if wt == 0 else "m"
            if wt != 0 and wt != 2:
                i += 8 if wt == 1 else 4
                continue
        if (kind == "v") != (wt == 0) or (kind != "v" and wt != 2):
            return start
        try:
            v, i = _varint_slow(buf, i, i) if buf[i] >= 0x80 else (buf[i], i + 1)
        except (PbtxtError, IndexError):
            return end if len(buf) - i < 10 and not strict else start
        if wt == 0:
            continue
        stop = i + v
        if stop > end and (end < len(buf) or strict):
            return start  # runs past its enclosing message (or, strict, the bytes given)
        if kind == "s":
            try:
                s = buf[i:stop].decode("utf-8")
            except UnicodeDecodeError as e:
                if stop <= len(buf) or e.start < len(buf) - i - 3:
                    return start
                s = ""
            if any(c < " " for c in s):
                return start
        elif isinstance(kind, dict) and depth < 4:
            got = _plausible(buf, i, min(stop, len(buf)), kind, depth + 1, strict)
            if got < min(stop, len(buf)):
                return start
        i = stop
    return end


class WireInfo(NamedTuple):
    """What was read: the kind, and for a SavedModel which MetaGraph (0-based) and why."""

    kind: str
    meta_graph: Optional[int] = None
    tags: Tuple[str, ...] = ()
    meta_graphs: Optional[int] = None
    why: str = ""


# --------------------------------------------------------------------------------------------
# walking the containers down to the nodes
# --------------------------------------------------------------------------------------------


def _kind_of(r: _Reader, kind: Optional[str]) -> str:
    if kind is not None:
        if kind not in KINDS:
            raise ValueError("unknown binary kind %r (choose from %s)" % (kind, ", ".join(KINDS)))
        return kind
    r.fill(SNIFF_BYTES)
    found = sniff(r.buf[r.i : r.i + SNIFF_BYTES])
    if found is None:
        raise _error("not a binary GraphDef, MetaGraphDef or SavedModel", r.tell())
    return found


def _sites(r: _Reader, kind: str, which: Sequence[Any], meta_graph: Optional[int], info: Optional[Dict[str, Any]]) -> Iterator[Any]:
    """Walk to every node field of the wanted paths (``which[0]`` graph nodes, ``which[1]``
    function nodes) in file order, calling ``which[2](r, path index, tag offset, payload start,
    payload end, end of the enclosing message, function name)`` with the reader at the payload;
    yields what it returns unless ``None``. It may read the node; the walk skips what is left."""
    end = None  # the top level runs to the end of the file (checked against ``r.size``)
    if kind == GRAPHDEF:
        _note(info, WireInfo(GRAPHDEF))
        yield from _graph(r, end, which)
    elif kind == METAGRAPH:
        _note(info, WireInfo(METAGRAPH))
        yield from _meta(r, end, which)
    else:
        yield from _saved(r, end, which, meta_graph, info)


def _note(info: Optional[Dict[str, Any]], what: WireInfo) -> None:
    if info is not None:
        info.update(what._asdict())


def _graph(r: _Reader, end: Optional[int], which: Sequence[bool]) -> Iterator[Any]:
    """The GraphDef level: the hot loop (millions of ``node`` fields), written out by hand."""
    want_nodes, want_lib = which[0], which[1]
    visit = which[2]  # type: ignore[misc]
    while True:
        # 1. the next tag, a single byte for every field GraphDef has
        buf = r.buf
        i = r.i
        if len(buf) - i < 20:
            r.fill(20)
            buf = r.buf
            i = r.i
        if i >= len(buf) or (end is not None and r.base + i >= end):
            if end is not None and r.base + i > end:
                raise _error(TRUNCATED_MSG, r.base + i)
            if end is not None and r.base + i < end:
                raise _error(TRUNCATED_FILE, r.base + i)
            return
        t = buf[i]
        # 2. node (field 1, length-delimited), by far the most common: its length, then yield
        if t == 0x0A:
            off = r.base + i
            n = buf[i + 1] if i + 1 < len(buf) else 0x80
            if n < 0x80:
                i += 2
            else:
                r.i = i + 1
                n = r.varint()
                i = r.i
            p = r.base + i
            q = p + n
            if end is not None and q > end:
                raise _error(TRUNCATED_MSG, off)
            if r.size is not None and q > r.size:
                raise _error(TRUNCATED_FILE, off)
            r.i = i
            if want_nodes:
                got = visit(r, 0, off, p, q, end if end is not None else -1, None)
                if got is not None:
                    yield got
            if r.base + r.i != q:
                r.skip_to(q, off)
            continue
        # 3. anything else: library (descend when function nodes are wanted) or skip
        r.i = i
        fn, wt, off = _tag(r)
        if fn == 2 and wt == 2 and want_lib:
            n = r.varint()
            p = r.tell()
            _check_end(p + n, end, off, r)
            yield from _library(r, p + n, visit)
            r.skip_to(p + n, off)
        else:
            _skip_value(r, fn, wt, off, end)


def _library(r: _Reader, end: int, visit: Any) -> Iterator[Any]:
    for fn, _off, p, q in _fields(r, end):
        if fn == 1:
            yield from _function(r, q, visit)


def _function(r: _Reader, end: int, visit: Any) -> Iterator[Any]:
    fname: Optional[str] = None
    for fn, off, p, q in _fields(r, end):
        if fn == 3:
            got = visit(r, 1, off, p, q, end, fname)
            if got is not None:
                yield got
        elif fn == 1:  # signature (OpDef): its name = 1
            for fn2, off2, p2, q2 in _fields(r, q):
                if fn2 == 1:
                    fname = _text(r.take(q2 - p2, off2))


def _meta(r: _Reader, end: Optional[int], which: Sequence[Any]) -> Iterator[Any]:
    for fn, _off, p, q in _fields(r, end):
        if fn == 2:  # graph_def
            yield from _graph(r, q, which)


def _tags_of_meta(r: _Reader, end: int) -> Tuple[str, ...]:
    tags: List[str] = []
    for fn, _off, p, q in _fields(r, end):
        if fn == 1:  # meta_info_def
            for fn2, off2, p2, q2 in _fields(r, q):
                if fn2 == 4:
                    tags.append(_text(r.take(q2 - p2, off2)))
    return tuple(tags)


def _saved(r: _Reader, end: Optional[int], which: Sequence[Any], meta_graph: Optional[int], info: Optional[Dict[str, Any]]) -> Iterator[Any]:
    if r.seekable:
        # 1. a first pass over the MetaGraphs' tags (their graphs are skipped by seeking)
        start = r.tell()
        metas: List[Tuple[int, int, Tuple[str, ...]]] = []
        for fn, _off, p, q in _fields(r, end):
            if fn == 2:
                metas.append((p, q, _tags_of_meta(r, q)))
        if not metas:
            raise _error("this SavedModel has no MetaGraph", start)
        # 2. the choice: asked for, else the one tagged train, else the first
        if meta_graph is not None:
            if not 0 <= meta_graph < len(metas):
                raise _error("this SavedModel has %d MetaGraphs, no MetaGraph %d" % (len(metas), meta_graph), start)
            k, why = meta_graph, "as asked"
        else:
            train = [k for k, m in enumerate(metas) if "train" in m[2]]
            k, why = (train[0], "tagged train") if train else (0, "the first (none is tagged train)")
        p, q, tags = metas[k]
        _note(info, WireInfo(SAVEDMODEL, k, tags, len(metas), why))
        r.seek(p)
        yield from _meta(r, q, which)
        return
    # A stream cannot go back: the first MetaGraph (or the one asked for), tags read on the way.
    k = -1
    want = 0 if meta_graph is None else meta_graph
    for fn, off, p, q in _fields(r, end):
        if fn != 2:
            continue
        k += 1
        if k != want:
            continue
        why = "as asked" if meta_graph is not None else "the first (the input is not seekable: later ones were not checked for a train tag)"
        tags: List[str] = []
        _note(info, WireInfo(SAVEDMODEL, k, (), None, why))
        for fn2, off2, p2, q2 in _fields(r, q):
            if fn2 == 1:
                for fn3, off3, p3, q3 in _fields(r, q2):
                    if fn3 == 4:
                        tags.append(_text(r.take(q3 - p3, off3)))
                if info is not None:
                    info["tags"] = tuple(tags)
            elif fn2 == 2:
                yield from _graph(r, q2, which)
    if k < want:
        raise _error("this SavedModel has %d MetaGraphs, no MetaGraph %d" % (k + 1, want), r.tell())
    if info is not None:
        info["meta_graphs"] = k + 1


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


# --------------------------------------------------------------------------------------------
# nodes: heads from the NodeDef bytes
# --------------------------------------------------------------------------------------------


def _node_fast(buf: bytes, i: int, end: int, want: Dict[int, str]) -> List[Head]:
    """Heads of a NodeDef held whole in ``buf[i:end]`` (``want``: tag byte -> head name); raises
    :class:`_Bad` on anything unusual (the careful path then says what and where)."""
    heads: List[Head] = []
    try:
        while i < end:
            # 1. every field NodeDef has is length-delimited with a one-byte tag: read its length
            t = buf[i]
            n = buf[i + 1]
            if n < 0x80:
                s = i + 2
            else:
                n, s = _varint_slow(buf, i + 1, 0)
            j = s + n
            # 2. attr (0x2a), the most common field, is skipped; then the heads
            if t == 0x2A:
                if j > end:
                    raise _Bad
                i = j
                continue
            name = want.get(t)
            if name is not None:
                if j > end:
                    raise _Bad
                heads.append(Head(name, buf[s:j].decode("utf-8", "surrogateescape"), 0))
                i = j
                continue
            # 3. anything else, by its wire type
            if t >= 0x80 or t < 8:
                raise _Bad  # a field number over 15, or 0
            wt = t & 7
            if wt == 2:
                if j > end:
                    raise _Bad
                i = j
            elif wt == 0:
                i += 1
                k = i
                while buf[i] >= 0x80:
                    i += 1
                if i - k > 9:
                    raise _Bad
                i += 1
            elif wt == 1:
                i += 9
            elif wt == 5:
                i += 5
            else:
                raise _Bad
    except (IndexError, PbtxtError):
        raise _Bad from None
    if i != end:
        raise _Bad
    return heads


def _node_careful(r: _Reader, start: int, end: int, want: Dict[int, str]) -> List[Head]:
    """Heads of the NodeDef at ``[start, end)``, read field by field (any size; precise errors)."""
    heads: List[Head] = []
    for fn, off, p, q in _fields(r, end):
        name = want.get(fn << 3 | 2)
        if name is not None:
            heads.append(Head(name, _text(r.take(q - p, off)), 0))
    return heads


def _want(heads: FrozenSet[str]) -> Dict[int, str]:
    """Head names by their tag (field << 3 | wire type 2)."""
    return {_HEAD_FIELD[h] << 3 | 2: h for h in heads if h in _HEAD_FIELD}


_PATHS = (NODE_PATH, FUNCTION_PATH)
_NO_PARENTS: Tuple[Optional[str], ...] = ()


def _block(r: _Reader, which: int, start: int, end: int, fname: Optional[str], want: Dict[int, str]) -> Block:
    """The block of the NodeDef at ``[start, end)``, the reader at ``start``."""
    n = end - start
    i = r.i
    if n <= len(r.buf) - i or (n <= _INLINE_MAX and r.fill(n) >= n):
        i = r.i
        try:
            heads = _node_fast(r.buf, i, i + n, want)
        except _Bad:
            heads = _node_careful(r, start, end, want)
    else:
        heads = _node_careful(r, start, end, want)
    return Block(_PATHS[which], start, end, 0, 0, tuple(heads), _NO_PARENTS if which == 0 else (None, fname))


def _which(paths: Sequence[Sequence[str]]) -> Tuple[bool, bool]:
    ps = [tuple(p) for p in paths]
    for p in ps:
        if p not in _PATHS:
            raise ValueError("binary graphs have nodes at %s, not %s" % (" and ".join(".".join(x) for x in _PATHS), ".".join(p)))
    return NODE_PATH in ps, FUNCTION_PATH in ps


def iter_wire_blocks(
    f: BinaryIO,
    paths: Sequence[Sequence[str]] = (NODE_PATH,),
    heads: FrozenSet[str] = HEADS,
    kind: Optional[str] = None,
    meta_graph: Optional[int] = None,
    chunk_size: int = DEFAULT_CHUNK,
    info: Optional[Dict[str, Any]] = None,
) -> Iterator[Block]:
    """The node blocks of a binary graph in file order, in constant memory.

    ``f`` is a binary file object at offset 0 (seekable or not). ``paths``: ``("node",)`` and/or
    ``("library", "function", "node_def")``. ``heads``: which of name, op, input, device to read.
    ``kind`` is sniffed from the first bytes unless given; ``meta_graph`` picks a SavedModel's
    MetaGraph (default: the one tagged ``train``, else the first). ``info``, if given, is filled
    with the :class:`WireInfo` fields (which MetaGraph was read, and why).
    Raises :class:`PbtxtError` (with ``offset``) on malformed input.
    """
    r = _Reader(f, chunk_size)
    k = _kind_of(r, kind)
    want = _want(heads)

    def visit(r: _Reader, which: int, off: int, p: int, q: int, parent_end: int, fname: Optional[str]) -> Block:
        return _block(r, which, p, q, fname, want)

    yield from _sites(r, k, _which(paths) + (visit,), meta_graph, info)


# --------------------------------------------------------------------------------------------
# backward: a sparse index of node offsets, regions decoded forward and yielded last-first
# --------------------------------------------------------------------------------------------


class WireIndex(NamedTuple):
    """Checkpoints of one forward pass over the length prefixes, for reading nodes backward.

    ``offs[k]`` is the tag offset of a node field, ``ends[k]`` the end of its enclosing message
    (GraphDef or FunctionDef), ``fids[k]`` its function (index in ``fnames``, -1 for graph nodes).
    A checkpoint starts every :data:`_REGION` bytes and at each new enclosing message.
    """

    path: Tuple[str, ...]
    offs: "array[int]"
    ends: "array[int]"
    fids: "array[int]"
    fnames: Tuple[Optional[str], ...]
    nodes: int
    size: Optional[int]
    info: WireInfo


def build_index(
    f: BinaryIO,
    path: Sequence[str] = NODE_PATH,
    kind: Optional[str] = None,
    meta_graph: Optional[int] = None,
    chunk_size: int = DEFAULT_CHUNK,
) -> WireIndex:
    """One forward pass over ``f`` (seekable) reading only length prefixes."""
    r = _Reader(f, chunk_size)
    k = _kind_of(r, kind)
    which = _which([path])
    info: Dict[str, Any] = {}
    offs, ends, fids = array("q"), array("q"), array("q")
    fnames: List[Optional[str]] = []
    state = [-_REGION, None, 0]  # last checkpoint offset, its enclosing end, nodes

    def visit(r: _Reader, which: int, off: int, p: int, q: int, parent_end: int, fname: Optional[str]) -> None:
        state[2] += 1
        if off - state[0] >= _REGION or parent_end != state[1]:
            if which == 1 and parent_end != state[1]:
                fnames.append(fname)
            offs.append(off)
            ends.append(parent_end)
            fids.append(len(fnames) - 1 if which == 1 else -1)
            state[0], state[1] = off, parent_end

    for _ in _sites(r, k, which + (visit,), meta_graph, info):
        pass
    return WireIndex(tuple(path), offs, ends, fids, tuple(fnames), state[2], r.size, WireInfo(**info))


def iter_wire_blocks_reversed(
    f: BinaryIO,
    index: WireIndex,
    heads: FrozenSet[str] = HEADS,
    chunk_size: int = 1 << 16,
) -> Iterator[Block]:
    """The blocks of ``index.path`` last-first: the same blocks :func:`iter_wire_blocks` gives."""
    if not _seekable(f):
        raise PbtxtError("reading backward needs a seekable file (copy the stream to a file first)")
    r = _Reader(f, chunk_size)
    want = _want(heads)
    which = 0 if tuple(index.path) == NODE_PATH else 1
    field = 1 if which == 0 else 3
    offs, ends, fids = index.offs, index.ends, index.fids
    for k in range(len(offs) - 1, -1, -1):
        stop = ends[k] if ends[k] >= 0 else (index.size if index.size is not None else 1 << 62)
        if k + 1 < len(offs) and offs[k + 1] < stop:
            stop = offs[k + 1]
        fname = index.fnames[fids[k]] if fids[k] >= 0 else None
        region: List[Block] = []
        r.seek(offs[k])
        while r.tell() < stop:
            fn, wt, off = _tag(r)
            if fn == field and wt == 2:
                n = r.varint()
                p = r.tell()
                _check_end(p + n, ends[k] if ends[k] >= 0 else None, off, r)
                region.append(_block(r, which, p, p + n, fname, want))
                r.seek(p + n)
            else:
                _skip_value(r, fn, wt, off, stop)
        for b in reversed(region):
            yield b


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m pbtxt_scan._wire [--backward] [--functions] FILE``: ``offset<TAB>name<TAB>op``
    per node, and which MetaGraph was read on stderr: a debugging and benchmarking tool."""
    import argparse
    import sys

    p = argparse.ArgumentParser(prog="python -m pbtxt_scan._wire", description=main.__doc__)
    p.add_argument("file")
    p.add_argument("--backward", action="store_true", help="last node first (index pass, then regions)")
    p.add_argument("--functions", action="store_true", help="library function nodes instead of graph nodes")
    a = p.parse_args(argv)
    path = FUNCTION_PATH if a.functions else NODE_PATH
    name_op = frozenset({"name", "op"})
    out = sys.stdout
    try:
        with open(a.file, "rb") as raw:
            f: BinaryIO = raw
            if raw.peek(2)[:2] == b"\x1f\x8b":
                import gzip

                f = gzip.GzipFile(fileobj=raw)  # type: ignore[assignment]
            info: Dict[str, Any] = {}
            if a.backward:
                ix = build_index(f, path)
                info = ix.info._asdict()
                blocks = iter_wire_blocks_reversed(f, ix, name_op)
            else:
                blocks = iter_wire_blocks(f, [path], name_op, info=info)
            for b in blocks:
                out.write("%d\t%s\t%s\n" % (b.start, b.name, b.op))
    except PbtxtError as e:
        e.with_path(a.file)
        sys.stderr.write("%s:offset %s: %s\n" % (a.file, e.offset, e.msg))
        return 2
    except BrokenPipeError:
        return 0
    sys.stderr.write("%s\n" % ", ".join("%s=%s" % kv for kv in info.items() if kv[1] not in (None, (), "")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
