"""Op records: one op block of a GE dump -> one small :class:`GeOp` (``_load`` step 2 and 3)."""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple

from .._kit import NamedTuple
from .._errors import PbtxtError
from ..graph._input import GraphFile
from ..graph._strict import checked, op_head
from .._model import Block
from ..source._source import DEFAULT_CHUNK
from ._attrs import _attrs_of, _int
from ._fast import canonical_attrs, walk
from ._skim import skim_block

#: Blocks out of the writer layout up to this size get a full Lark parse; bigger ones are skimmed.
FULL_PARSE_MAX = 1 << 20


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
    offset: int = 0  # the op block's first byte
    name_line: Optional[int] = None  # the line of its ``name:`` field

    @property
    def has_task(self) -> bool:
        """GE's ``!NoNeedGenTask``: a kernel library and no ``_no_task``."""
        return bool(self.lib) and not self.no_task

    def shifted(self, lines: int, **kw: Any) -> "GeOp":
        """The record with its lines ``lines`` further down (a chunk's, counted from its first line)."""
        name_line = None if self.name_line is None else self.name_line + lines
        return self._replace(line=self.line + lines, name_line=name_line, **kw)

    def brief(self) -> Dict[str, Any]:
        return {"name": self.name, "type": self.type, "id": self.id, "line": self.line}


def _op_attrs(g: GraphFile, block: Block, dialect: str, full_parse_max: int, canonical: bool = False) -> Dict[str, Any]:
    """Attributes of one op: read off its lines when it is in the writer layout (``canonical``),
    else a Lark parse for a small block, a chunked skim for a big one."""
    if canonical:
        msg = canonical_attrs(g.reader(block.start, block.end), block.column, dialect)
        if msg is not None:
            return _attrs_of(msg, dialect)
    size = block.end - block.start
    if size <= full_parse_max:
        msg = g.parse(block)
        return _attrs_of(msg[0].value, dialect)
    return _attrs_of(skim_block(g, block, dialect), dialect)


def ops_from(
    g: GraphFile, d: Any, full_parse_max: int, *, start: int = 0, line: int = 1, outer: Optional[List[Any]] = None,
    fast: bool = True,
) -> Iterator[GeOp]:
    """The op records from offset ``start`` (line ``line``, inside the open messages ``outer``)
    to the end of the dump, in this process."""
    if not fast or not g.lane.text:
        assert start == 0 and outer is None
        for b in g.blocks(d.path, d.heads):
            yield _record(b, _op_attrs(g, b, d.name, full_parse_max), d.name)
        return
    from ..text import top_fields

    w, blocks = walk(g.reader(start), d.path, d.heads, chunk_size=DEFAULT_CHUNK, display=g.name, start_offset=start, start_line=line,
                     outer=outer, top=top_fields(d.path, g, d))  # (a field the graph has not: refused, or warned of)
    try:
        for b in checked(g, blocks, op_head(d.heads)):  # (an op without a name or a type: refused, or skipped)
            yield _record(b, _op_attrs(g, b, d.name, full_parse_max, not w.general), d.name)
    except PbtxtError as e:
        # (as GraphFile.blocks: a file cut short while we read it says so)
        raise (g.changed() or e.with_path(g.name)) from None
    err = g.changed()
    if err is not None:
        raise err


def _record(b: Block, a: Dict[str, Any], dialect: str) -> GeOp:
    inputs = tuple(h.value for h in b.heads if h.name == "input")
    typ = b.op or ""
    if dialect == "ge_onnx":
        typ = typ[3:] if typ.startswith("ge:") else typ
        op_id, stream = a.get("id", 0), a.get("stream_id", 0)
        subgraphs: Tuple[str, ...] = ()
        graph = ""
    else:
        op_id, stream = _int(b.head("id", "0")), _int(b.head("stream_id", "0"))
        subgraphs = tuple(h.value for h in b.heads if h.name == "subgraph_name")
        graph = b.parents[0] if b.parents and b.parents[0] is not None else ""
    return GeOp(
        b.name or "", typ, inputs, op_id, stream, a["lib"], a["no_task"], a["original_type"],
        a["original_names"], a["origin_names"], a["parent_index"], subgraphs, b.line, graph,
        b.start, b.head_line("name"),
    )
