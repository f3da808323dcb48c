"""Ascend Graph Engine (GE) dumps: TF name -> GE op resolution and GE's automatic fp/bp choice.

The pipeline, in constant memory on multi-GB ``ge_proto_*_Build.txt`` dumps:

1. ``iter_nodes(path, "ge_proto")`` streams the op blocks with their heads (name, type, input,
   id, stream_id, subgraph_name) and the enclosing graph's name.
2. For each op we need a handful of attributes (:data:`_WANTED`). A block under
   ``full_parse_max`` bytes is parsed with the Lark grammar (``parse_block``); a bigger one (a
   ``Const`` carrying tens of MB of weights) is *skimmed*: its bytes are read in chunks, string
   bodies are cut short on the way (``_Squash``: closing quotes found with ``bytes.find``), the
   streaming lexer tokenizes what is left and a small recursive reader keeps only the
   attr/output_desc fields that matter, so a 20 MB ``data: "..."`` string is never held.
   (Measured on a 1 GB dump: skimming every block loads in 29 s against 43 s with Lark for the
   small ones; ``full_parse_max=0`` selects that.) Both roads produce the same :class:`Message` shape
   and go through one extractor (``_attrs_of``); a test checks they agree on every fixture op.
3. Each op becomes a small :class:`GeOp` record (no block text is kept). :class:`GeBuild` holds the
   records of every graph block (root first, then subgraphs).
4. :func:`resolve` ranks the GE ops a TF name became; :func:`ge_auto` replays GE's
   ``ProfilingTaskUtils`` automatic fp/bp search (shared/reference/ge.md §1.3, §1.4, §1.8 and the
   decisions in tests/data/README.md "## ge/").

Directories: :func:`find_build_files` lists the final-stage dumps, :func:`pick_training_graph`
chooses the training graph, scanning files in parallel (2-4 processes).
"""
from __future__ import annotations

import json
import os
import re
import shlex
from typing import (
    Any,
    Dict,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from ._api import detect_dialect, iter_nodes, parse_block, read_block_bytes
from ._errors import PbtxtError
from ._grammar import _number, string_value
from ._lexer import Lexer
from ._model import Block, Field, Message
from ._source import DEFAULT_CHUNK, PathLike, display_name, open_binary

__all__ = [
    "KINDS",
    "GeBuild",
    "GeOp",
    "dump_files",
    "find_build_files",
    "format_env",
    "format_profiling",
    "ge_auto",
    "load_build",
    "map_points",
    "open_ge",
    "pick_training_graph",
    "profiling_options",
    "resolve",
]

# GE's own type strings (hicann/ge base/common/types.cc, op_type_utils.cc kDataOpSet).
DATA_TYPES = frozenset({"Data", "RefData", "AippData", "AnnData", "GetNext", "IteratorV2"})
ALLREDUCE_TYPES = frozenset({"HcomAllReduce", "HorovodAllreduce"})
GLOBAL_STEP = "ge_global_step"

#: Resolve kinds, most trusted first (tests/data/README.md "## ge/", ge.md §3.3).
KINDS = ("exact", "original_op_names", "origin_name", "suffix", "fused")
_RANK = {k: i for i, k in enumerate(KINDS)}

#: Blocks up to this size get a full Lark parse; bigger ones (weights) are skimmed.
FULL_PARSE_MAX = 1 << 20

_LIB = "_ge_attr_op_kernel_lib_name"
_ORIG_NAMES = "_datadump_original_op_names"
_ORIGIN_NAME = "_datadump_origin_name"
_ONNX_ORIGIN = "output_desc_attr__datadump_origin_name:"
_WANTED = frozenset({_ORIG_NAMES, "_no_task", _LIB, "original_type", "_parent_node_index"})
_ONNX_WANTED = _WANTED | {"id", "stream_id"}

_DUMP_RE = re.compile(r"^ge_proto_([0-9]+)_([A-Za-z0-9_-]+)\.txt$")  # ge.md §2.1
_ONNX_DUMP_RE = re.compile(r"^ge_onnx_([0-9]+)_([A-Za-z0-9_-]+)\.pbtxt$")
_STAGE_RE = re.compile(r"^graph_([0-9]+)_(.+)$")
FINAL_STAGES = frozenset({"Build", "PreRunAfterBuild"})
_GRADIENT_MARKS = ("gradients", "gradient_tape")


class GeOp(NamedTuple):
    """What GE-side logic needs of one op: a few small fields, never the block text."""

    name: str
    type: str
    inputs: Tuple[str, ...]  # "src:k" data edges, "src:-1" control edges, "" unconnected
    id: int  # a missing id: line is 0 (proto3 default)
    stream: int
    lib: str  # _ge_attr_op_kernel_lib_name ("" when missing)
    no_task: bool
    original_type: str
    original_names: Tuple[str, ...]  # _datadump_original_op_names
    origin_names: Tuple[str, ...]  # output_desc _datadump_origin_name
    parent_index: Optional[int]  # _parent_node_index (subgraph Data)
    subgraphs: Tuple[str, ...]
    line: int  # the op's opener line
    graph: str  # the name of the graph block holding it

    @property
    def has_task(self) -> bool:
        """GE's ``!NoNeedGenTask``: a kernel library and no ``_no_task``."""
        return bool(self.lib) and not self.no_task

    def brief(self) -> Dict[str, Any]:
        return {"name": self.name, "type": self.type, "id": self.id, "line": self.line}


class GeBuild:
    """The op records of one dump: every graph block, root first."""

    def __init__(self, path: str, dialect: str, ops: List[GeOp]) -> None:
        self.path = path
        self.dialect = dialect
        self.ops = ops
        self.root = ops[0].graph if ops else ""
        self.by_name: Dict[str, GeOp] = {}
        self.graphs: Dict[str, List[GeOp]] = {}
        for op in ops:
            self.by_name.setdefault(op.name, op)
            self.graphs.setdefault(op.graph, []).append(op)

    def __repr__(self) -> str:
        return "GeBuild(%r, %s, %d ops, %d graphs)" % (self.path, self.dialect, len(self.ops), len(self.graphs))

    def __getstate__(self) -> Dict[str, Any]:  # pickle the records only; indexes are rebuilt
        return {"path": self.path, "dialect": self.dialect, "ops": self.ops}

    def __setstate__(self, st: Dict[str, Any]) -> None:
        self.__init__(st["path"], st["dialect"], st["ops"])  # type: ignore[misc]

    @property
    def has_gradients(self) -> bool:
        return any(m in op.name for op in self.ops for m in _GRADIENT_MARKS)

    @property
    def root_netoutput(self) -> Optional[GeOp]:
        return next((op for op in self.graphs.get(self.root, ()) if op.type == "NetOutput"), None)

    def all_nodes(self) -> List[GeOp]:
        """GE's ``GetAllNodes`` order: root ops in file order, each op's subgraph ops right after it."""
        out: List[GeOp] = []
        seen = set()

        def walk(graph: str) -> None:
            if graph in seen:
                return
            seen.add(graph)
            for op in self.graphs.get(graph, ()):
                out.append(op)
                for sg in op.subgraphs:
                    walk(sg)

        walk(self.root)
        for g in self.graphs:  # graphs no op refers to: still in the dump, keep them (file order)
            walk(g)
        return out


# --- reading a dump ---------------------------------------------------------------------------


def _truthy(v: Any) -> bool:
    return v in ("true", "True", "t", 1)


def _int(v: Any, default: int = 0) -> int:
    if isinstance(v, int):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def _attrs_of(op: Message, dialect: str) -> Dict[str, Any]:
    """The attributes GE logic needs, from a parsed (or skimmed) op message."""
    out: Dict[str, Any] = {"lib": "", "no_task": False, "original_type": "", "original_names": (),
                           "origin_names": (), "parent_index": None}
    origin: List[str] = []
    if dialect == "ge_onnx":
        for a in op.all("attribute"):
            key = a.get("name")
            if not isinstance(key, str):
                continue
            if key.startswith(_ONNX_ORIGIN):
                s = a.get("s")
                if isinstance(s, str) and s not in origin:
                    origin.append(s)
            elif key == _LIB:
                out["lib"] = a.get("s", "") or ""
            elif key == "_no_task":
                out["no_task"] = _truthy(a.get("i", 0)) or _truthy(a.get("b"))
            elif key == "original_type":
                out["original_type"] = a.get("s", "") or ""
            elif key == "_parent_node_index":
                out["parent_index"] = _int(a.get("i", 0))
            elif key == _ORIG_NAMES:
                out["original_names"] = tuple(s for s in a.all("strings") if isinstance(s, str))
            elif key in ("id", "stream_id"):
                out[key] = _int(a.get("i", 0))
        out["origin_names"] = tuple(origin)
        return out
    for a in op.all("attr"):
        key = a.get("key")
        if key not in _WANTED:
            continue
        v = a.get("value")
        if not isinstance(v, Message):
            continue
        if key == _LIB:
            out["lib"] = v.get("s", "") or ""
        elif key == "_no_task":
            out["no_task"] = _truthy(v.get("b"))
        elif key == "original_type":
            out["original_type"] = v.get("s", "") or ""
        elif key == "_parent_node_index":
            out["parent_index"] = _int(v.get("i", 0))
        elif key == _ORIG_NAMES:
            lst = v.get("list")
            out["original_names"] = tuple(s for s in lst.all("s") if isinstance(s, str)) if isinstance(lst, Message) else ()
    for od in op.all("output_desc"):
        if not isinstance(od, Message):
            continue
        for a in od.all("attr"):
            if a.get("key") == _ORIGIN_NAME:
                v = a.get("value")
                s = v.get("s") if isinstance(v, Message) else None
                if isinstance(s, str) and s not in origin:
                    origin.append(s)
    out["origin_names"] = tuple(origin)
    return out


# The skim keeps only these message paths (relative to the op block) and, in them, these scalars.
_KEEP = {
    "ge_proto": {
        (): set(),
        ("attr",): {"key"},
        ("attr", "value"): {"s", "b", "i"},
        ("attr", "value", "list"): {"s"},
        ("output_desc",): set(),
        ("output_desc", "attr"): {"key"},
        ("output_desc", "attr", "value"): {"s"},
    },
    "ge_onnx": {
        (): set(),
        ("attribute",): {"name", "s", "i", "b", "strings"},
    },
}


class _Window:
    """A file read from its current position for at most ``left`` bytes."""

    def __init__(self, f: Any, left: int) -> None:
        self.f = f
        self.left = left

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        n = self.left if n < 0 or n > self.left else n
        data: bytes = self.f.read(n)
        self.left -= len(data)
        return data


def _skim(tokens: Iterator[Any], dialect: str) -> Message:
    """Read an op block's tokens into a :class:`Message` holding only the :data:`_KEEP` fields.

    Everything else (weights, shapes, ``node_def`` blobs) is read past, token by token, never
    held: the lexer hands a long string over as its first 64 KiB only.
    """
    keep = _KEEP[dialect]
    toks = _Peek(tokens)
    toks.next()  # the block's field name ("op"/"node")
    kind = toks.next()[0]
    if kind == ":":
        kind = toks.next()[0]
    if kind not in ("{", "<"):  # pragma: no cover - iter_nodes hands out message blocks only
        raise PbtxtError("not a message block")
    return _skim_msg(toks, (), keep, "}" if kind == "{" else ">", dialect) or Message()


class _Peek:
    __slots__ = ("buf", "it")

    def __init__(self, it: Iterator[Any]) -> None:
        self.it = it
        self.buf: List[Any] = []

    def next(self) -> Any:
        if self.buf:
            return self.buf.pop()
        return next(self.it, ("$END", 0, 0, b""))

    def peek(self) -> Any:
        if not self.buf:
            self.buf.append(next(self.it, ("$END", 0, 0, b"")))
        return self.buf[-1]


def _scalar(toks: _Peek, tok: Any) -> Any:
    kind, text = tok[0], tok[3]
    if kind == "-":
        tok = toks.next()
        v = _scalar(toks, tok)
        return -v if isinstance(v, (int, float)) else "-" + str(v)
    if kind == "STRING":
        parts = [string_value(text.decode("utf-8", "surrogateescape"))]
        while toks.peek()[0] == "STRING":  # adjacent literals concatenate
            parts.append(string_value(toks.next()[3].decode("utf-8", "surrogateescape")))
        return "".join(parts)
    if kind == "NUMBER":
        return _number(text.decode("ascii"))
    return text.decode("utf-8", "surrogateescape")


def _skim_msg(toks: _Peek, path: Tuple[str, ...], keep: Dict[Tuple[str, ...], Any], closer: str, dialect: str) -> Optional[Message]:
    """Read fields up to ``closer``; return the kept ones (``None`` when ``path`` is not kept)."""
    wanted = keep.get(path)
    msg: Optional[Message] = Message() if wanted is not None else None
    while True:
        tok = toks.next()
        kind = tok[0]
        if kind == closer:
            return msg
        if kind in (";", ","):
            continue
        if kind == "$END":
            raise PbtxtError("unexpected end of block")
        if kind == "[":  # [extension.name] / [type.url/Name]
            name = ""
            while kind != "]":
                tok = toks.next()
                kind = tok[0]
                if kind == "$END":
                    raise PbtxtError("unexpected end of block")
            name = "[ext]"
        else:
            name = tok[3].decode("utf-8", "surrogateescape")
        tok = toks.next()
        if tok[0] == ":":
            tok = toks.next()
        items = _skim_value(toks, tok, path + (name,), keep, dialect)
        if msg is not None:
            for v in items:
                if isinstance(v, Message) or (name in wanted and not isinstance(v, _Skipped)):
                    msg.append(Field(name, v, 0, 0))
            if dialect == "ge_proto" and path in (("attr",), ("output_desc", "attr")) and name == "key":
                # Seen the map key: drop the value subtree of attrs nobody needs.
                k = msg.get("key")
                if not (k in _WANTED if path == ("attr",) else k == _ORIGIN_NAME):
                    keep = dict(keep)
                    keep.pop(path + ("value",), None)


class _Skipped:
    pass


_SKIPPED = _Skipped()


def _skim_value(toks: _Peek, tok: Any, path: Tuple[str, ...], keep: Dict[Tuple[str, ...], Any], dialect: str) -> List[Any]:
    kind = tok[0]
    if kind == "{" or kind == "<":
        m = _skim_msg(toks, path, keep, "}" if kind == "{" else ">", dialect)
        return [m] if m is not None else []
    if kind == "[":
        out: List[Any] = []
        while True:
            tok = toks.next()
            if tok[0] == "]":
                return out
            if tok[0] == ",":
                continue
            if tok[0] == "$END":
                raise PbtxtError("unexpected end of block")
            out.extend(_skim_value(toks, tok, path, keep, dialect))
    if path[:-1] in keep:
        return [_scalar(toks, tok)]
    # Not kept: consume without decoding (a weight string is never unescaped).
    if kind == "-":
        toks.next()
    elif kind == "STRING":
        while toks.peek()[0] == "STRING":
            toks.next()
    return [_SKIPPED]


def _op_attrs(path: PathLike, block: Block, dialect: str, fh: Any, full_parse_max: int) -> Dict[str, Any]:
    """Attributes of one op: Lark parse for a small block, a chunked skim for a big one."""
    size = block.end - block.start
    if size <= full_parse_max:
        msg = parse_block(path, block)
        return _attrs_of(msg[0].value, dialect)
    return _attrs_of(_skim_block(path, block, dialect, fh), dialect)


def _skim_block(path: PathLike, block: Block, dialect: str, fh: Any = None) -> Message:
    if fh is not None and fh.seekable():
        fh.seek(block.start)
        src: Any = _Window(fh, block.end - block.start)
    else:  # gzip: read_block_bytes rescans up to the block (slow, but right)
        import io

        src = io.BytesIO(read_block_bytes(path, block))
    lex = Lexer(_Squash(src), DEFAULT_CHUNK, start_offset=block.start, start_line=block.line, path=display_name(path))
    return _skim(lex.tokens(), dialect)


_STRING_KEEP = 1 << 16  # a string body longer than this reaches the lexer cut to this length
_OUT_STOP = re.compile(rb"[\"'#]")


class _Squash:
    """A reader that cuts every string literal's body to :data:`_STRING_KEEP` bytes.

    The lexer tokenizes a 20 MB weight string at regex speed, escape by escape (about 50 MB/s);
    this finds the closing quote with ``bytes.find`` and a backslash-parity check instead (C
    speed), so a weight costs almost nothing. The block was already validated by the scanner, so
    nothing but the string's end needs finding. A cut never leaves an odd run of backslashes
    (that would escape the closing quote). Positions past a cut string are shifted: the skim does
    not use them.
    """

    def __init__(self, src: Any) -> None:
        self.src = src
        self.state = 0  # 0 outside strings, 1 inside a string, 2 inside a comment
        self.quote = 0
        self.kept = 0  # body bytes kept of the current string
        self.bs = 0  # length of the backslash run ending the previous chunk (inside a string)
        self.tail_bs = 0  # length of the backslash run ending the kept part of the string

    def read(self, n: int = -1) -> bytes:
        while True:
            data = self.src.read(n)
            if not data:
                return b""
            out = self._feed(data)
            if out:
                return out

    def _feed(self, buf: bytes) -> bytes:
        out = bytearray()
        pos, end = 0, len(buf)
        while pos < end:
            if self.state == 0:
                m = _OUT_STOP.search(buf, pos)
                if m is None:
                    out += buf[pos:]
                    break
                i = m.start()
                out += buf[pos : i + 1]
                pos = i + 1
                if buf[i] == 0x23:  # '#'
                    self.state = 2
                else:
                    self.state, self.quote, self.kept, self.bs, self.tail_bs = 1, buf[i], 0, 0, 0
            elif self.state == 2:
                nl = buf.find(b"\n", pos)
                if nl < 0:
                    out += buf[pos:]
                    break
                out += buf[pos : nl + 1]
                pos = nl + 1
                self.state = 0
            else:
                j = pos
                while True:
                    q = buf.find(self.quote, j)
                    if q < 0:
                        break
                    k = q
                    while k > pos and buf[k - 1] == 0x5C:
                        k -= 1
                    run = q - k + (self.bs if k == pos else 0)
                    if run % 2 == 0:
                        break
                    j = q + 1
                stop = end if q < 0 else q
                room = _STRING_KEEP - self.kept
                if room > 0:
                    piece = buf[pos : min(stop, pos + room)]
                    out += piece
                    self.kept += len(piece)
                    tail = len(piece) - len(piece.rstrip(b"\\"))
                    self.tail_bs = tail + (self.tail_bs if tail == len(piece) else 0)
                    if stop - pos > room or (q < 0 and self.kept >= _STRING_KEEP):  # cut: leave no odd backslash run before the closing quote
                        self.kept = _STRING_KEEP
                        if self.tail_bs % 2:
                            del out[-1]
                if q < 0:
                    k = end
                    while k > pos and buf[k - 1] == 0x5C:
                        k -= 1
                    self.bs = (end - k) + (self.bs if k == pos else 0)
                    break
                out.append(self.quote)
                pos = q + 1
                self.state = 0
        return bytes(out)


def load_build(path: PathLike, full_parse_max: int = FULL_PARSE_MAX) -> GeBuild:
    """Read a ``ge_proto`` or ``ge_onnx`` dump into op records, in constant memory.

    ``full_parse_max``: blocks up to this many bytes are parsed with Lark, bigger ones skimmed
    (0 skims every block). Raises :class:`PbtxtError` for unreadable input or a TF GraphDef.
    """
    name = display_name(path)
    if str(path) == "-":
        raise PbtxtError("GE commands need a file or a directory, not stdin", path=name)
    d = detect_dialect(path)
    if d.name not in ("ge_proto", "ge_onnx"):
        raise PbtxtError("not a GE dump (it looks like a TensorFlow GraphDef; expected ge_proto_*.txt)", path=name)
    ops: List[GeOp] = []
    fh, _ = open_binary(path)
    try:
        for b in iter_nodes(path, d):
            a = _op_attrs(path, b, d.name, fh, full_parse_max)
            inputs = tuple(h.value for h in b.heads if h.name == "input")
            if d.name == "ge_onnx":
                typ = b.op or ""
                typ = typ[3:] if typ.startswith("ge:") else typ
                op_id, stream = a.get("id", 0), a.get("stream_id", 0)
                subgraphs: Tuple[str, ...] = ()
                graph = ""
            else:
                typ = b.op or ""
                op_id, stream = _int(b.head("id", "0")), _int(b.head("stream_id", "0"))
                subgraphs = tuple(h.value for h in b.heads if h.name == "subgraph_name")
                graph = b.parents[0] if b.parents and b.parents[0] is not None else ""
            ops.append(GeOp(
                b.name or "", typ, inputs, op_id, stream, a["lib"], a["no_task"], a["original_type"],
                a["original_names"], a["origin_names"], a["parent_index"], subgraphs, b.line, graph,
            ))
    except PbtxtError as e:
        raise e.with_path(name) from None
    finally:
        fh.close()
    return GeBuild(name, d.name, ops)


# --- resolve ----------------------------------------------------------------------------------


def _match_kind(op: GeOp, tf: str) -> Optional[str]:
    if op.name == tf:
        return "exact"
    if tf in op.original_names:
        return "original_op_names"
    if tf in op.origin_names:
        return "origin_name"
    n = len(tf)
    if op.name.startswith(tf) and len(op.name) > n + 1 and op.name[n] == "_" and op.name[n + 1:].isdigit():
        return "suffix"
    if _contains_whole(op.name, tf):
        return "fused"
    return None


def _contains_whole(ge: str, tf: str) -> bool:
    """``tf`` is a whole member of the fused name ``ge``: not a scope above or below another op.

    UB fusion glues member names together (``a/Conv2Db/FusedBatchNormV3_Reduce``) and other passes
    add prefixes and suffixes (``PartitionedCall_x_2``, ``_Reduce``); a ``/`` right before or
    after the match would instead make it a different op in a scope (``gradients/x_grad/...``,
    ``x/shape``), which GE did not make from ``tf``.
    """
    i = ge.find(tf)
    while i >= 0:
        j = i + len(tf)
        if (i == 0 or ge[i - 1] != "/") and (j == len(ge) or ge[j] != "/"):
            return True
        i = ge.find(tf, i + 1)
    return False


def resolve(build: Union[GeBuild, PathLike], names: Sequence[str]) -> List[Dict[str, Any]]:
    """For each TF name, the GE ops it became, most trusted first.

    Each result: ``{"tf_name", "matches": [{"ge_name", "kind", "line", "type", "id", "graph",
    "task"}], "accepted_as_is", "accepted_via"}``. Kinds, in trust order: ``exact``,
    ``original_op_names`` (GE's ``IsProfPoint`` accepts the TF name as is), ``origin_name``
    (an ``output_desc`` ``_datadump_origin_name``), ``suffix`` (``<name>_<digits>``), ``fused``
    (the GE name contains the TF name). Each op is listed once, under its best kind; within a kind,
    in file order. ``accepted_as_is``: a task-generating op has the name exactly or in its original
    names, so ``fp_point``/``bp_point`` may be set to the TF name unchanged.
    """
    b = build if isinstance(build, GeBuild) else load_build(build)
    out = []
    for tf in names:
        hits = []
        if tf:
            for op in b.ops:
                k = _match_kind(op, tf)
                if k is not None:
                    hits.append((_RANK[k], op.line, k, op))
        hits.sort(key=lambda h: (h[0], h[1]))
        matches = [
            {"ge_name": op.name, "kind": k, "line": op.line, "type": op.type, "id": op.id, "graph": op.graph,
             "task": op.has_task}
            for _, _, k, op in hits
        ]
        via = next((m for m in matches if m["kind"] in ("exact", "original_op_names") and m["task"]), None)
        out.append({
            "tf_name": tf,
            "matches": matches,
            "accepted_as_is": via is not None,
            "accepted_via": via["ge_name"] if via else None,
            "file": b.path,
        })
    return out


def best_match(result: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The match to configure: the most trusted one that generates a task, else the most trusted."""
    ms = result["matches"]
    if not ms:
        return None
    return next((m for m in ms if m["task"]), ms[0])


# --- GE's automatic fp/bp ---------------------------------------------------------------------


def _why_no_task(op: GeOp) -> str:
    if op.no_task:
        return "_no_task is true"
    return "no kernel lib (_ge_attr_op_kernel_lib_name empty or missing)"


def _data_like(op: GeOp) -> bool:
    return op.type in DATA_TYPES or op.original_type in DATA_TYPES


def _split_edge(edge: str) -> Tuple[str, Optional[int]]:
    src, sep, idx = edge.rpartition(":")
    if not sep:
        return edge, 0
    try:
        return src, int(idx)
    except ValueError:
        return edge, 0


def _consumers(b: GeBuild, order: List[GeOp], src: str, out_idx: int = 0) -> List[Tuple[GeOp, int]]:
    """(consumer, input index) for each data edge from ``src:out_idx``, in GetAllNodes order."""
    want = "%s:%d" % (src, out_idx)
    out = []
    for op in order:
        for i, e in enumerate(op.inputs):
            if e == want:
                out.append((op, i))
    return out


def _label(op: GeOp) -> str:
    return "%s (%s, id %d, stream %d, line %d)" % (op.name, op.type, op.id, op.stream, op.line)


def _note(trail: List[Dict[str, Any]], step: str, op: Optional[GeOp], verdict: str, why: str, name: Optional[str]) -> None:
    """One line of ge-auto's --explain trail."""
    trail.append({"step": step, "name": op.name if op else name, "id": op.id if op else None,
                  "stream": op.stream if op else None, "line": op.line if op else None,
                  "verdict": verdict, "why": why})


def _auto_fp(b: GeBuild, order: List[GeOp], trail: List[Dict[str, Any]]) -> Tuple[Optional[GeOp], Optional[GeOp], str]:
    def note(op: Optional[GeOp], verdict: str, why: str, name: Optional[str] = None) -> None:
        _note(trail, "fp", op, verdict, why, name)

    src = None
    for op in order:
        if not _data_like(op):
            continue
        if not op.has_task:
            note(op, "dropped", "data-like (%s) but not a candidate: %s" % (op.original_type or op.type, _why_no_task(op)))
            continue
        src = op
        how = "type %s" % op.type if op.type in DATA_TYPES else "original_type %s" % op.original_type
        note(op, "source", "first candidate data-like node (%s)" % how)
        break
    if src is None:
        return None, None, ("no candidate (task-generating) node of type or original_type in %s"
                            % "/".join(sorted(DATA_TYPES)))

    cands: List[GeOp] = []
    seen_data = set()

    def visit(producer: GeOp) -> None:
        for c, idx in _consumers(b, order, producer.name, 0):
            if not c.has_task:
                note(c, "dropped", "reads %s:0 but has no task: %s" % (producer.name, _why_no_task(c)))
                continue
            if c.subgraphs:
                note(c, "descend", "has subgraph(s) %s: descend to the Data with _parent_node_index %d"
                     % (", ".join(c.subgraphs), idx))
                for sg in c.subgraphs:
                    data = next((o for o in b.graphs.get(sg, ()) if o.type == "Data" and o.parent_index == idx), None)
                    if data is None:
                        note(None, "dropped", "subgraph %s has no Data with _parent_node_index %d" % (sg, idx), sg)
                    elif data.name not in seen_data:
                        seen_data.add(data.name)
                        visit(data)
                continue
            note(c, "candidate", "reads %s:0 at input %d" % (producer.name, idx))
            cands.append(c)

    visit(src)
    if not cands:
        return src, None, "%s is the source, but no task-generating op reads its output 0" % _label(src)
    fp = cands[0]
    for c in cands[1:]:
        if c.id < fp.id:
            fp = c
    others = ", ".join("%s (%d)" % (c.name, c.id) for c in cands)
    return src, fp, ("source %s; output-0 consumers with a task: %s; minimum id: %s"
                     % (_label(src), others, _label(fp)))


def _is_global_step(b: GeBuild, op: GeOp, depth: int = 0) -> bool:
    if op.name == GLOBAL_STEP:
        return True
    if depth > 32:
        return False
    return any(o.name == GLOBAL_STEP or (o.subgraphs and _is_global_step(b, o, depth + 1))
               for sg in op.subgraphs for o in b.graphs.get(sg, ()))


def _auto_bp(b: GeBuild, order: List[GeOp], trail: List[Dict[str, Any]]) -> Tuple[Optional[GeOp], Optional[GeOp], str]:
    def note(op: Optional[GeOp], verdict: str, why: str, name: Optional[str] = None) -> None:
        _note(trail, "bp", op, verdict, why, name)

    tgt = None
    for op in order:
        if op.type in ALLREDUCE_TYPES:
            if op.has_task:
                tgt = op
            else:
                note(op, "dropped", "AllReduce but not a candidate: %s" % _why_no_task(op))
    if tgt is not None:
        note(tgt, "target", "the last candidate %s" % "/".join(sorted(ALLREDUCE_TYPES)))
        what = "the last candidate AllReduce"
    else:
        for op in order:
            if op.type == "NetOutput" and op.graph == b.root:
                if op.has_task:
                    tgt = op
                    break
                note(op, "dropped", "root NetOutput but not a candidate: %s" % _why_no_task(op))
        if tgt is None:
            return None, None, "no candidate AllReduce and no candidate root NetOutput"
        note(tgt, "target", "no candidate AllReduce: the root NetOutput")
        what = "no AllReduce, so the root NetOutput"

    cands: List[GeOp] = []

    def producers(op: GeOp) -> List[str]:
        names: List[str] = []
        for e in op.inputs:
            if e:
                n = _split_edge(e)[0]
                if n not in names:
                    names.append(n)
        return names

    def visit(names: List[str], via: str, stream: Optional[int], depth: int = 0) -> None:
        for n in names:
            p = b.by_name.get(n)
            if p is None:
                note(None, "dropped", "input of %s, but no op of that name in the dump" % via, n)
                continue
            if _is_global_step(b, p):
                note(p, "dropped", "ge_global_step is skipped")
                continue
            if not p.has_task:
                note(p, "dropped", "no task: %s" % _why_no_task(p))
                continue
            if p.subgraphs:
                if depth > 32:
                    continue
                for sg in p.subgraphs:
                    out = next((o for o in b.graphs.get(sg, ()) if o.type == "NetOutput"), None)
                    if out is None:
                        note(p, "dropped", "subgraph %s has no NetOutput" % sg)
                        continue
                    note(p, "descend", "has subgraph %s: its NetOutput's inputs count, with no stream filter" % sg)
                    visit(producers(out), out.name, None, depth + 1)
                continue
            if stream is not None and p.stream != stream:
                note(p, "dropped", "stream %d, target stream %d" % (p.stream, stream))
                continue
            note(p, "candidate", "producer of %s" % via)
            cands.append(p)

    visit(producers(tgt), tgt.name, tgt.stream)
    if not cands:
        return tgt, None, "target %s (%s) has no producer that qualifies" % (_label(tgt), what)
    bp = cands[0]
    for c in cands[1:]:
        if c.id > bp.id:
            bp = c
    others = ", ".join("%s (%d)" % (c.name, c.id) for c in cands)
    return tgt, bp, "target %s (%s); qualifying producers: %s; maximum id: %s" % (_label(tgt), what, others, _label(bp))


def ge_auto(build: Union[GeBuild, PathLike]) -> Dict[str, Any]:
    """What GE picks with ``"fp_point":""``/``"bp_point":""`` (ge.md §1.3, §1.4, §1.8).

    Returns ``{"fp", "fp_source", "fp_reason", "bp", "bp_target", "bp_reason", "explain", "file"}``
    where ops are ``{"name", "type", "id", "line"}`` (or ``None``) and ``explain`` lists every op
    examined with its verdict (``source``/``target``/``candidate``/``descend``/``dropped``) and why.
    """
    b = build if isinstance(build, GeBuild) else load_build(build)
    order = b.all_nodes()
    trail: List[Dict[str, Any]] = []
    src, fp, fp_reason = _auto_fp(b, order, trail)
    tgt, bp, bp_reason = _auto_bp(b, order, trail)
    brief = lambda op: op.brief() if op is not None else None
    return {
        "fp": brief(fp), "fp_reason": fp_reason, "fp_source": brief(src),
        "bp": brief(bp), "bp_reason": bp_reason, "bp_target": brief(tgt),
        "file": b.path, "explain": trail,
    }


# --- dump directories -------------------------------------------------------------------------


def dump_files(directory: PathLike) -> List[Dict[str, Any]]:
    """Every ``ge_proto_<idx>_<suffix>.txt`` in ``directory`` (ge.md §2.1), by index.

    Each: ``{"file", "path", "index", "graph_id", "stage", "is_build"}``; ``is_build`` for the
    final-graph stages ``Build`` (``ge_proto_<idx>_graph_<gid>_Build.txt``) and
    ``PreRunAfterBuild`` (old naming, no graph id). ``ge_onnx_*.pbtxt`` dumps are listed only when
    there is no ``ge_proto`` one (``DUMP_GRAPH_FORMAT=onnx``).
    """
    try:
        entries = sorted(os.listdir(directory))
    except OSError as e:
        raise PbtxtError("cannot list directory: %s" % (e.strerror or e), path=str(directory)) from None
    out = []
    for regex in (_DUMP_RE, _ONNX_DUMP_RE):
        for fn in entries:
            m = regex.match(fn)
            if not m or not os.path.isfile(os.path.join(directory, fn)):
                continue
            sm = _STAGE_RE.match(m.group(2))
            gid, stage = (int(sm.group(1)), sm.group(2)) if sm else (None, m.group(2))
            out.append({"file": fn, "path": os.path.join(str(directory), fn), "index": int(m.group(1)),
                        "graph_id": gid, "stage": stage, "is_build": stage in FINAL_STAGES})
        if out:
            break
    out.sort(key=lambda d: (d["index"], d["file"]))
    return out


def find_build_files(directory: PathLike) -> List[str]:
    """The final-graph dumps (stage ``Build`` or ``PreRunAfterBuild``) in ``directory``, by index."""
    return [d["path"] for d in dump_files(directory) if d["is_build"]]


def _summarize(path: str, names: Sequence[str], keep_if_training: bool = True) -> Tuple[Dict[str, Any], Optional[GeBuild]]:
    b = load_build(path)
    s: Dict[str, Any] = {"file": os.path.basename(path), "path": path, "ops": len(b.ops),
                         "has_gradients": b.has_gradients, "has_root_netoutput": b.root_netoutput is not None}
    if names:
        rs = resolve(b, names)
        s["names_matched"] = sum(1 for r in rs if r["matches"])
        s["names_accepted"] = sum(1 for r in rs if r["accepted_as_is"])
    keep = keep_if_training and ((s["has_gradients"] and s["has_root_netoutput"]) or s.get("names_matched"))
    return s, (b if keep else None)


def _score(s: Dict[str, Any], index: int) -> Tuple[Any, ...]:
    return (s.get("names_accepted", 0), s.get("names_matched", 0),
            s["has_gradients"] and s["has_root_netoutput"], s["has_root_netoutput"], s["ops"], index)


def _pick(files: Sequence[PathLike], names: Optional[Sequence[str]], workers: Optional[int] = None) -> Tuple[Dict[str, Any], GeBuild]:
    files = [str(f) for f in files]
    if not files:
        raise PbtxtError("no GE Build dumps given")
    names = [n for n in (names or ()) if n]
    results: List[Tuple[Dict[str, Any], Optional[GeBuild]]]
    n = workers if workers is not None else min(4, os.cpu_count() or 1, len(files))
    if n > 1 and len(files) > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=max(2, n)) as pool:
            results = list(pool.map(_summarize, files, [names] * len(files)))
    else:
        results = [_summarize(f, names) for f in files]
    index = {f: i for i, f in enumerate(files)}
    for f, (s, _) in zip(files, results):
        m = _DUMP_RE.match(os.path.basename(f)) or _ONNX_DUMP_RE.match(os.path.basename(f))
        index[f] = int(m.group(1)) if m else index[f]
    best_i = max(range(len(files)), key=lambda i: _score(results[i][0], index[files[i]]))
    s, b = results[best_i]
    if b is None:
        b = load_build(files[best_i])
    s = dict(s)
    why = []
    if names:
        why.append("%d of %d names resolve here (%d as is)" % (s["names_matched"], len(names), s["names_accepted"]))
    if s["has_gradients"] and s["has_root_netoutput"]:
        others = sum(1 for r, _ in results if r["has_gradients"] and r["has_root_netoutput"])
        why.append("it has gradients ops and a root NetOutput (the training graph%s)"
                   % ("" if others == 1 else "; %d files qualify, this one ranks first" % others))
    else:
        why.append("no file has both gradients ops and a root NetOutput; picked the largest graph")
    rest = [r for i, (r, _) in enumerate(results) if i != best_i]
    if rest:
        why.append("others: " + ", ".join(
            "%s (%s)" % (r["file"], "gradients" if r["has_gradients"] else "no gradients") for r in rest))
    pick = {"file": files[best_i], "reason": "; ".join(why), "files": [r for r, _ in results]}
    return pick, b


def pick_training_graph(files: Sequence[PathLike], names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """Choose the training graph among Build dumps: ``{"file", "reason", "files": [summary]}``.

    Ranking: most of ``names`` accepted as is, then resolved at all; then having gradients ops and
    a root NetOutput; then the most ops; then the highest dump index. Files are scanned in
    parallel (2-4 processes) when there are several.
    """
    return _pick(files, names)[0]


def open_ge(build_or_dir: Union[GeBuild, PathLike], names: Optional[Sequence[str]] = None) -> Tuple[GeBuild, Optional[Dict[str, Any]]]:
    """A loaded build from a dump file, a dump directory (the training graph is picked), or a build."""
    if isinstance(build_or_dir, GeBuild):
        return build_or_dir, None
    if str(build_or_dir) != "-" and os.path.isdir(build_or_dir):
        files = find_build_files(build_or_dir)
        if not files:
            raise PbtxtError("no GE Build dumps here (expected ge_proto_<idx>_graph_<gid>_Build.txt or "
                             "ge_proto_<idx>_PreRunAfterBuild.txt)", path=str(build_or_dir))
        pick, b = _pick(files, names)
        return b, pick
    return load_build(build_or_dir), None


def map_points(fp_name: Optional[str], bp_name: Optional[str], ge: Union[GeBuild, PathLike]) -> Dict[str, Any]:
    """Map TF fp/bp names onto a GE dump (file or directory) for the ``points`` command.

    Returns ``{"file", "pick", "fp", "bp", "ge_auto": {"fp", "bp"}}``; ``fp``/``bp`` are ``None``
    when no name was given, else ``{"tf_name", "ge_name", "kind", "line", "task", "accepted_as_is",
    "matches"}`` with ``ge_name``/``kind``/``line`` ``None`` when nothing matched.
    """
    names = [n for n in (fp_name, bp_name) if n]
    b, pick = open_ge(ge, names)
    res = {r["tf_name"]: r for r in resolve(b, names)}
    auto = ge_auto(b)

    def one(tf: Optional[str]) -> Optional[Dict[str, Any]]:
        if not tf:
            return None
        r = res[tf]
        m = best_match(r)
        return {"tf_name": tf, "ge_name": m["ge_name"] if m else None, "kind": m["kind"] if m else None,
                "line": m["line"] if m else None, "task": m["task"] if m else None,
                "accepted_as_is": r["accepted_as_is"], "matches": len(r["matches"])}

    return {"file": b.path, "pick": pick, "fp": one(fp_name), "bp": one(bp_name),
            "ge_auto": {"fp": auto["fp"], "bp": auto["bp"]}}


# --- profiling options ------------------------------------------------------------------------


def profiling_options(
    fp: Optional[str],
    bp: Optional[str],
    output: str = "/tmp/profiling",
    training_trace: str = "on",
    task_trace: str = "on",
    aic_metrics: str = "PipeUtilization",
) -> Dict[str, str]:
    """The ``PROFILING_OPTIONS`` JSON object (ge.md §4.1); ``None`` fp/bp become ``""`` (GE auto)."""
    return {
        "output": output,
        "training_trace": training_trace,
        "task_trace": task_trace,
        "fp_point": fp or "",
        "bp_point": bp or "",
        "aic_metrics": aic_metrics,
    }


def format_profiling(opts: Dict[str, Any]) -> str:
    """Compact JSON to paste into ``PROFILING_OPTIONS`` / ``profiling_options``."""
    return json.dumps(opts, ensure_ascii=False, separators=(",", ":"))


def format_env(opts: Dict[str, Any]) -> str:
    """Shell lines enabling profiling with ``opts``; the JSON is quoted safely for sh/bash."""
    return "export PROFILING_MODE=true\nexport PROFILING_OPTIONS=%s" % shlex.quote(format_profiling(opts))

