"""The step's inputs for fp: whether a placeholder (or a function's ``_Arg``) feeds the training
data and, if not, what it is (:func:`placeholder_role`, by dtype, shape and the GraphDef's
producer, :func:`graph_producer`); whether a Const may hold data (:func:`const_holds_data`); one
:class:`Roles` per graph file reads both from the file."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Optional

from .._kit import NamedTuple
from .._errors import PbtxtError
from .._model import Block, Message

if TYPE_CHECKING:
    from ..graph._input import GraphFile


class Role(NamedTuple):
    """Whether an input node holds the step's data (``holds``), and what it is (``why``)."""

    holds: bool
    why: str


RESOURCE_HANDLE = "a resource handle"
NO_ROLE = Role(False, "")


def placeholder_role(node: Message, producer: Optional[int]) -> Role:
    """Whether a placeholder (or a function's ``_Arg``) feeds the training data, and if not, what
    it is. ``node`` is the parsed node; ``producer`` the GraphDef's ``versions.producer``.

    - DT_RESOURCE: a resource handle (a captured variable, or the iterator a ``tf.function`` takes);
      DT_VARIANT: a dataset, optional or tensor-list handle. Neither is data.
    - ``shape`` with a dimension, or ``unknown_rank``: data (a batch).
    - ``shape {}``: a scalar (a hyper-parameter: learning rate, keep_prob, is_training) from
      producer 22 on. Before, an empty shape meant "unknown": TensorFlow's
      ``core/public/version.h``, GraphDef version 22: "Placeholder now can specify and enforce
      scalar and partial shapes, particularly when restoring a graph from GraphDef produced at
      version 22 or later." There ``_output_shapes`` (written with ``add_shapes``) decides.
    - no ``shape``: ``_output_shapes`` decides; without it, data.
    """
    attrs = {a.get("key"): (a.get("value") or Message()) for a in node.all("attr")}
    dtype = None
    for key in ("dtype", "T"):
        if key in attrs:
            dtype = attrs[key].get("type")
            break
    if dtype == "DT_RESOURCE":
        return Role(False, RESOURCE_HANDLE + " (a captured variable, or the iterator a tf.function takes), not data")
    if dtype == "DT_VARIANT":
        return Role(False, "a variant handle (a dataset, optional or tensor list), not data")
    shape = attrs["shape"].get("shape") if "shape" in attrs else None
    if shape is not None and (shape.all("dim") or _true(shape.get("unknown_rank"))):
        return Role(True, "a placeholder that feeds data (it has a batch dimension)")
    if shape is not None and (producer is None or producer >= 22):
        return Role(False, "a scalar placeholder (a hyper-parameter such as a learning rate, not data)")
    # An old empty shape (unknown), or no shape: what the writer inferred, if it wrote it.
    out = attrs.get("_output_shapes")
    shapes = (out.get("list") or Message()).all("shape") if out is not None else []
    if node.get("op") in ("_Arg", "_DeviceArg"):
        holds = not shapes or bool(shapes[0].all("dim")) or _true(shapes[0].get("unknown_rank"))
        what = "an argument the caller hands in (_Arg)"
        return Role(holds, what + (" that feeds data" if holds else ": a scalar, not data"))
    if shapes:
        s0 = shapes[0]
        if s0.all("dim") or _true(s0.get("unknown_rank")):
            return Role(True, "a placeholder that feeds data (_output_shapes has a dimension)")
        return Role(False, "a scalar placeholder (_output_shapes is a scalar: a hyper-parameter, not data)")
    if shape is not None:
        return Role(True, "a placeholder of unknown shape (an empty shape before GraphDef version 22)")
    return Role(True, "a placeholder of unknown shape")


def _true(v: Any) -> bool:
    return v in ("true", "True", "t", 1)


_CONST_DATA_BYTES = 4096  # a Const block this big holds data (shapes and permutations are tiny)
_FLOATS = frozenset("DT_FLOAT DT_DOUBLE DT_HALF DT_BFLOAT16".split())


def const_holds_data(g: "GraphFile", b: Block) -> Role:
    """Whether a Const may be data embedded in the graph (a batch or a data set): big, of rank 2 or
    more, or a floating-point vector of 16 values or more. Shapes, permutations and axes are small
    integer vectors; scalars are rank 0."""
    size = b.end - b.start
    if size >= _CONST_DATA_BYTES:
        return Role(True, "a constant of %d bytes" % size)
    try:
        node = g.parse(b, max_bytes=_CONST_DATA_BYTES)[0].value
    except PbtxtError:
        return NO_ROLE
    for a in node.all("attr"):
        if a.get("key") == "value":
            tensor = (a.get("value") or Message()).get("tensor") or Message()
            shape = tensor.get("tensor_shape") or Message()
            dims = [d.get("size") for d in shape.all("dim")]
            dtype = tensor.get("dtype")
            n = 1
            for d in dims:
                n *= d if isinstance(d, int) and d > 0 else 0
            if dtype != "DT_STRING" and (len(dims) >= 2 or (dtype in _FLOATS and n >= 16)):
                return Role(True, "a constant of shape %s" % dims)
    return NO_ROLE


def _holds_data(g: "GraphFile", b: Block, producer: Optional[int]) -> Role:
    """:func:`placeholder_role` of a block, parsed from the file."""
    try:
        node = g.parse(b, max_bytes=1 << 20)[0].value
    except PbtxtError:
        return Role(True, "a placeholder (too big to read: kept)")
    return placeholder_role(node, producer)


_TAIL = 1 << 16


def graph_producer(g: "GraphFile") -> Optional[int]:
    """``versions.producer`` of a GraphDef, read from the file's end (``versions`` is printed after
    ``node`` and ``library``); ``None`` when it is not there, or the input is a stream (then an
    empty shape is a scalar)."""
    if not g.regular or not g.size:
        return None
    tail = g.read_at(max(0, g.size - _TAIL), _TAIL)
    m = None
    for m in re.finditer(rb"(?<![A-Za-z0-9_])versions\s*[{<][^{}<>\"']*?(?<![A-Za-z0-9_])producer\s*:\s*(\d+)", tail):
        pass
    return int(m.group(1)) if m is not None else None


class Roles:
    """The role of an input block of one graph file: a Const's (:func:`const_holds_data`), or a
    placeholder's (:func:`placeholder_role`, with the GraphDef's producer read once, when first
    needed; a GE graph has none)."""

    __slots__ = ("g", "graphdef", "_producer", "_read")

    def __init__(self, g: "GraphFile", *, graphdef: bool) -> None:
        self.g = g
        self.graphdef = graphdef
        self._producer: Optional[int] = None
        self._read = False

    def __call__(self, b: Block) -> Role:
        if b.op == "Const":
            return const_holds_data(self.g, b)
        if not self._read:
            self._producer = graph_producer(self.g) if self.graphdef else None
            self._read = True
        return _holds_data(self.g, b, self._producer)
