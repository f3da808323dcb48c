"""The Python API: blocks and nodes of a file, on-demand parsing, validation, statistics.

The pipeline: bytes (``_source``) -> tokens (``_lexer``) -> blocks with lines and heads
(``_canonical`` fast path, else ``_scan``) -> parsed messages on demand (``_grammar``, Lark).
"""
from __future__ import annotations

import collections
import io
import os
import re
import stat
import time
from typing import Any, Callable, Dict, FrozenSet, Iterator, NamedTuple, Optional, Sequence, Tuple, Union

from ._errors import PbtxtError
from ._grammar import parse_text
from ._model import Block, Message
from ._source import DEFAULT_CHUNK, PathLike, display_name, looks_binary, open_binary

_TF_HEADS = frozenset({"name", "op", "input", "device"})


class Dialect(NamedTuple):
    """Where the operator blocks of a kind of file are, and which of their fields are heads."""

    name: str
    path: Tuple[str, ...]
    heads: FrozenSet[str]
    what: str


DIALECTS: Dict[str, Dialect] = {
    d.name: d
    for d in (
        Dialect("graphdef", ("node",), _TF_HEADS, "TensorFlow GraphDef: top-level node blocks"),
        Dialect(
            "function",
            ("library", "function", "node_def"),
            _TF_HEADS,
            "TensorFlow GraphDef: the node_def blocks of library functions (tf.function bodies)",
        ),
        Dialect(
            "ge_proto",
            ("graph", "op"),
            frozenset({"name", "type", "input", "id", "stream_id", "subgraph_name"}),
            "GE ge_proto dump: op blocks of every graph block",
        ),
        Dialect(
            "ge_onnx",
            ("graph", "node"),
            frozenset({"name", "op_type", "input", "output"}),
            "GE ge_onnx dump: node blocks of the graph",
        ),
    )
}

_FIRST_FIELD = re.compile(rb"\A(?:\s|#[^\n]*)*([A-Za-z_][A-Za-z0-9_]*)")
_HEAD_BYTES = 1 << 16


def detect_dialect(path: PathLike) -> Dialect:
    """Tell a TF GraphDef from a GE ge_proto or ge_onnx dump by its first fields."""
    f, name = open_binary(path)
    try:
        # stdin is read once: look at its first bytes without taking them
        head = f.read(_HEAD_BYTES) if str(path) != "-" else f.peek(_HEAD_BYTES)[:_HEAD_BYTES]  # type: ignore[attr-defined]
    except OSError as e:
        raise PbtxtError("read error: %s" % (e.strerror or e), path=name) from None
    finally:
        if str(path) != "-":
            f.close()
    return dialect_of_head(head)


def dialect_of_head(head: bytes) -> Dialect:
    m = _FIRST_FIELD.match(head.lstrip(b"\xef\xbb\xbf"))
    first = m.group(1) if m else b""
    if first in (b"ir_version", b"producer_name", b"producer_version", b"opset_import", b"model_version"):
        return DIALECTS["ge_onnx"]
    if first == b"graph":
        if re.search(rb"\n\s*op\s*[{<]", head):
            return DIALECTS["ge_proto"]
        if re.search(rb"\bop_type\s*:", head) or re.search(rb"\n\s*node\s*[{<]", head):
            return DIALECTS["ge_onnx"]
        return DIALECTS["ge_proto"]
    return DIALECTS["graphdef"]


def resolve_dialect(path: PathLike, dialect: Union[None, str, Dialect]) -> Dialect:
    if isinstance(dialect, Dialect):
        return dialect
    if dialect is None or dialect == "auto":
        return detect_dialect(path)
    try:
        return DIALECTS[dialect]
    except KeyError:
        raise ValueError("unknown format %r (choose from %s)" % (dialect, ", ".join(DIALECTS))) from None


def iter_blocks(
    path: PathLike,
    block_path: Sequence[str],
    heads: FrozenSet[str] = _TF_HEADS,
    chunk_size: int = DEFAULT_CHUNK,
    on_progress: Optional[Callable[[int], None]] = None,
) -> Iterator[Block]:
    """Every message at ``block_path`` (e.g. ``("graph", "op")``) in file order, in constant memory.

    The whole stream is validated as it is read; a syntax error met on the way raises
    :class:`PbtxtError` with the file, line and column.
    """
    return _scan_file(path, tuple(block_path), heads, chunk_size, on_progress, None)


def _scan_file(
    path: PathLike,
    block_path: Tuple[str, ...],
    heads: FrozenSet[str],
    chunk_size: int,
    on_progress: Optional[Callable[[int], None]],
    end_state: Optional[Dict[str, int]],
) -> Iterator[Block]:
    from ._canonical import scan_canonical

    f, name = open_binary(path)
    before = _stat(f)
    try:
        _refuse_binary(f, name)
        for b in scan_canonical(f, block_path, heads, chunk_size, name, end_state):
            yield b
            if on_progress is not None:
                on_progress(b.end)
        after = _stat(f)
        if before != after:
            raise PbtxtError(_CHANGED % (before[0], after[0]), path=name)
    except PbtxtError as e:
        # A file cut short while we read it looks like a truncated file: say what really happened.
        after = _stat(f)
        if before != after:
            raise PbtxtError(_CHANGED % (before[0], after[0]), path=name) from None
        raise e.with_path(name) from None
    finally:
        if str(path) != "-":
            f.close()


_CHANGED = "the file changed while it was being read (%s bytes when opened, %s now): run again when it is complete"


def _stat(f: Any) -> Tuple[Optional[int], Optional[int]]:
    """Size and mtime of a regular file (``(None, None)`` for streams)."""
    try:
        st = os.fstat(f.fileno())
    except (OSError, AttributeError, ValueError, io.UnsupportedOperation):
        return None, None
    if not stat.S_ISREG(st.st_mode):
        return None, None
    return st.st_size, st.st_mtime_ns


def _refuse_binary(f: Any, name: str) -> None:
    peek = getattr(f, "peek", None)
    head = peek(4096)[:4096] if peek else b""
    why = looks_binary(head)
    if why:
        raise PbtxtError(why, path=name)


# Enough to name a node and its op: what listings need. A NoOp such as `init` can carry 100,000+
# control inputs; leaving `input` out keeps those commands' memory flat.
NAME_AND_OP = frozenset({"name", "op", "type", "op_type"})


def iter_nodes(
    path: PathLike,
    dialect: Union[None, str, Dialect] = None,
    chunk_size: int = DEFAULT_CHUNK,
    on_progress: Optional[Callable[[int], None]] = None,
    heads: Optional[FrozenSet[str]] = None,
) -> Iterator[Block]:
    """The operator blocks of a graph file: TF ``node``, GE ``graph.op`` or ONNX ``graph.node``.

    ``dialect`` is detected from the file's first fields unless given (see :data:`DIALECTS`);
    ``heads`` narrows the head fields read (default: the dialect's, inputs included).
    """
    d = resolve_dialect(path, dialect)
    return iter_blocks(path, d.path, d.heads if heads is None else heads, chunk_size, on_progress)


def read_block_bytes(path: PathLike, block: Block) -> bytes:
    """The block's own bytes, read again from the file (seekable files) or rescanned (gzip)."""
    if str(path) == "-":  # (the CLI copies stdin to a temporary file before it reads twice)
        raise PbtxtError("cannot read stdin a second time: pass a file", path=display_name(path))
    f, _ = open_binary(path)
    try:
        if f.seekable():
            f.seek(block.start)
            return f.read(block.end - block.start)
        skipped = 0
        while skipped < block.start:  # gzip or a pipe: read up to it
            chunk = f.read(min(DEFAULT_CHUNK, block.start - skipped))
            if not chunk:
                break
            skipped += len(chunk)
        return f.read(block.end - block.start)
    finally:
        f.close()


def parse_block(path: PathLike, block: Block, max_bytes: int = 64 << 20) -> Message:
    """Parse one block with the Lark grammar. Returns a one-field :class:`Message` (the block's
    field, e.g. ``node``) whose positions are those of the file."""
    size = block.end - block.start
    if size > max_bytes:
        raise PbtxtError(
            "block is %d MB, over the %d MB limit for a full parse" % (size >> 20, max_bytes >> 20),
            block.line,
            block.column,
            display_name(path),
        )
    raw = read_block_bytes(path, block)
    text = raw.decode("utf-8", "surrogateescape")
    if text.startswith(("{", "<")):  # an item of a [..] list has no field name of its own
        text = block.path[-1] + " " + text
        pad = ""
    else:
        pad = " " * (block.column - 1)  # keep columns true on the first line
    msg = parse_text(pad + text, first_line=block.line, path=display_name(path))
    return msg


def check(path: PathLike, chunk_size: int = DEFAULT_CHUNK, on_progress: Optional[Callable[[int], None]] = None) -> "Stats":
    """Validate the whole file against the grammar; raise :class:`PbtxtError` at the first error."""
    return stats(path, dialect=None, chunk_size=chunk_size, on_progress=on_progress)


class Stats(NamedTuple):
    path: str
    format: str
    bytes: int
    lines: int
    nodes: int
    ops: Dict[str, int]
    seconds: float

    def to_json(self, top: Optional[int] = None) -> Dict[str, Any]:
        d = self._asdict()
        d["ops"] = dict(collections.Counter(self.ops).most_common(top))
        return d


def stats(
    path: PathLike,
    dialect: Union[None, str, Dialect] = None,
    chunk_size: int = DEFAULT_CHUNK,
    on_progress: Optional[Callable[[int], None]] = None,
) -> Stats:
    """Bytes, lines, node count and op histogram, validating the whole file on the way."""
    t0 = time.perf_counter()
    d = resolve_dialect(path, dialect)
    ops: Dict[str, int] = collections.Counter()
    n = 0
    end_state: Dict[str, int] = {}
    for b in _scan_file(path, d.path, NAME_AND_OP, chunk_size, on_progress, end_state):
        n += 1
        ops[b.op or "?"] += 1
    return Stats(display_name(path), d.name, end_state["bytes"], end_state["lines"], n, dict(ops), time.perf_counter() - t0)

