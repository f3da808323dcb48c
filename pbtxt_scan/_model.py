"""Plain data the scanner and the parser hand out."""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from ._kit import NamedTuple

Scalar = Union[str, int, float]

# A TensorFlow GraphDef's shape, named by every layer that reads one (text, wire, rules): the head
# fields of a node that the rules read, and where a function library's nodes are.
TF_HEADS = frozenset({"name", "op", "input", "device"})
# A GraphDef's own fields, as TensorFlow's schema table has them (test_schema_table checks they are the
# table's): what the top-level check of every text graph asks, without loading the schema.
GRAPH_FIELDS = frozenset({"node", "versions", "version", "library", "debug_info"})
FUNCTION_NODES = ("library", "function", "node_def")
# Where a graph sits in a text SavedModel and in a text MetaGraphDef (what holds its GraphDef).
SAVEDMODEL_PREFIX = ("meta_graphs", "graph_def")
METAGRAPH_PREFIX = ("graph_def",)


class Field(NamedTuple):
    """One field of a parsed message. ``line``/``column`` are those of the field name (1-based)."""

    name: str
    value: Any  # Scalar or Message
    line: int
    column: int


class Message(List[Field]):
    """A parsed message: its fields in file order. A list ``[a, b]`` becomes two fields of one name.

    Strings are unescaped and decoded as UTF-8 (undecodable bytes kept as surrogate escapes);
    integers (decimal, octal, hex) are ``int`` (a decimal one past Python's 4,300-digit conversion limit
    stays ``str``: no protobuf integer is that long), floats ``float``; identifiers such as enum names,
    ``true`` or ``inf`` stay ``str`` because only a schema could say what they mean.
    """

    def get(self, name: str, default: Any = None) -> Any:
        for f in self:
            if f.name == name:
                return f.value
        return default

    def all(self, name: str) -> List[Any]:
        return [f.value for f in self if f.name == name]

    def field(self, name: str) -> Optional[Field]:
        for f in self:
            if f.name == name:
                return f
        return None

    def depth(self, stop: int) -> int:
        """How deeply messages nest in this one (1: no message field), counted without recursion,
        up to ``stop`` (a bound: the count stops there)."""
        deepest, todo = 1, [(self, 1)]
        while todo and deepest < stop:
            msg, d = todo.pop()
            deepest = max(deepest, d)
            todo.extend((f.value, d + 1) for f in msg if isinstance(f.value, Message))
        return deepest

    def to_data(self, lines: bool = False) -> Dict[str, List[Any]]:
        """JSON-ready: ``{name: [values...]}`` (every field is a list: the text has no schema)."""
        out: Dict[str, List[Any]] = {}
        for f in self:
            v = f.value.to_data(lines) if isinstance(f.value, Message) else f.value
            if lines:
                v = {"value": v, "line": f.line, "column": f.column}
            out.setdefault(f.name, []).append(v)
        return out


class Bare(str):
    """A head's value written as no string literal (``name: 5``, ``op: Const``): a number or an
    identifier, where a ``string`` field is refused (readers that take heads say so by this type)."""

    __slots__ = ()


class Head(NamedTuple):
    """A head field found without a full parse: a depth-1 scalar of a block (``name``, ``op`` ...)."""

    name: str
    value: str
    line: int


class Block(NamedTuple):
    """A message value at the scanned path (one ``node { ... }``), located in the file.

    ``start``/``end`` are byte offsets (``end`` just past the closing delimiter); ``line``/``column``
    are where the block begins: its field name, or its ``{`` when it is an item of a ``[...]`` list.
    ``heads`` are its direct scalar fields of interest in file order, values unescaped.
    ``parents`` holds the ``name`` head of each enclosing block on the path (e.g. the function name
    for ``library.function.node_def``, the graph name for ``graph.op``); ``None`` where it has none.
    A block of a binary graph (wire format) has no lines: ``line`` and ``column`` are ``0`` and its
    position is ``start``, the byte offset of its serialized NodeDef (see :attr:`where`).
    """

    path: Tuple[str, ...]
    start: int
    end: int
    line: int
    column: int
    heads: Tuple[Head, ...]
    parents: Tuple[Optional[str], ...] = ()

    def head(self, name: str, default: Optional[str] = None) -> Optional[str]:
        for h in self.heads:
            if h.name == name:
                return h.value
        return default

    def head_line(self, name: str) -> Optional[int]:
        for h in self.heads:
            if h.name == name:
                return h.line
        return None

    def heads_named(self, name: str) -> Iterator[Head]:
        return (h for h in self.heads if h.name == name)

    @property
    def name(self) -> Optional[str]:
        return self.head("name")

    @property
    def op(self) -> Optional[str]:
        """The operator type: ``op`` (TensorFlow), ``type`` (GE) or ``op_type`` (GE ONNX view)."""
        for h in self.heads:
            if h.name in ("op", "type", "op_type"):
                return h.value
        return None

    @property
    def inputs(self) -> List[str]:
        return [h.value for h in self.heads if h.name == "input"]

    @property
    def binary(self) -> bool:
        """Whether the block is from a binary graph (text lines start at 1)."""
        return self.line == 0

    @property
    def where(self) -> str:
        """``line N`` (text) or ``offset N`` (binary): how answers and listings say where it is."""
        return "offset %d" % self.start if self.line == 0 else "line %d" % self.line

    def to_json(self) -> Dict[str, Any]:
        """The same keys for text and binary; a binary block's ``line``, ``column`` and
        ``name_line`` are ``null`` (its position is ``offset``)."""
        if self.line == 0:
            out: Dict[str, Any] = {"name": self.name, "op": self.op, "line": None, "column": None, "name_line": None}
        else:
            out = {"name": self.name, "op": self.op, "line": self.line, "column": self.column}
            out["name_line"] = self.head_line("name")
        out["offset"] = self.start
        out["end"] = self.end
        out["inputs"] = self.inputs
        dev = self.head("device")
        if dev is not None:
            out["device"] = dev
        if any(p is not None for p in self.parents):
            out["parents"] = list(self.parents)
        return out


class HoodNode(NamedTuple):
    """One node of a neighbourhood (``show --context``, the report's drawing).

    ``hops`` is the distance from the centre: negative for producers (-1 feeds the centre), positive
    for consumers, 0 for the centre itself. ``line`` is the node's opener line in a text graph,
    ``offset`` its byte offset (in a binary graph, where lines mean nothing); ``function`` names the
    library function that holds it, or None for the graph's own nodes.
    """

    name: str
    op: str
    hops: int
    line: Optional[int]
    offset: Optional[int]
    function: Optional[str] = None


class HoodEdge(NamedTuple):
    """A dataflow edge ``src`` -> ``dst`` (``dst`` lists ``src`` as an input; ``control`` for ``^src``)."""

    src: str
    dst: str
    control: bool = False


class Hood(NamedTuple):
    """The nodes within ``up`` hops upstream and ``down`` hops downstream of ``centre``, and the edges
    among them. ``truncated`` says a hop was cut at the node cap, so the picture is not the whole of it.
    """

    centre: str
    up: int
    down: int
    nodes: Tuple[HoodNode, ...]
    edges: Tuple[HoodEdge, ...]
    truncated: bool = False
