"""The public API's rules: fp_point and bp_point (loaded on first use by ``pbtxt_scan.__getattr__``).

A training script has the graph in hand, not a file: :func:`find_fp`, :func:`find_bp` and
:func:`points` take a path, the bytes of a serialized GraphDef or MetaGraphDef
(``tf.compat.v1.get_default_graph().as_graph_def().SerializeToString()``, or
``tf.compat.v1.train.export_meta_graph().SerializeToString()``), a binary file object, or an open
:class:`~pbtxt_scan.GraphFile`. Bytes and file objects are copied to an unlinked temporary file
first: the rules read forward, backward and some blocks twice, and a regular file is what lets
them (and the byte search that keeps fp fast) do so in bounded memory. Answers name the input
``<bytes>`` (or the file object's ``name``).

Example (before the session or the NPU adapter starts, which reads the variables once)::

    import json, os
    import pbtxt_scan

    found = pbtxt_scan.points(graph_def.SerializeToString())
    os.environ["PROFILING_MODE"] = "true"
    os.environ["PROFILING_OPTIONS"] = json.dumps(
        pbtxt_scan.profiling_options(found.fp_name, found.bp_name, output="/tmp/profiling"))
"""
from __future__ import annotations

import contextlib
import io
from typing import TYPE_CHECKING, Any, Iterator, List, Optional, Sequence, Tuple

from ._kit import NamedTuple
from .graph._input import GraphFile
from ._api_ge import ge_answers, is_ge_dump
from ._model import Hood
from .fpbp._answers import RULES, Answer, Options, Point, format_trail
from .fpbp._fp import find_fp as _find_fp

if TYPE_CHECKING:
    from .fpbp._profiling import AIC_METRICS, TASK_TRACE, profiling_options

# bp's modules (its backward reader, the index cache) and the neighbourhood's load when they run:
# `pbtxt-scan fp` does not pay for them (tests/test_startup.py).

def explain(answer: Answer) -> List[str]:
    """The answer's trail as lines: each node considered, where, and why it was taken or skipped
    (what ``--explain`` prints)."""
    return format_trail(answer.trail, answer.unit)


class Points(NamedTuple):
    """Both answers for one graph (:func:`points`): ``fp`` and ``bp`` are :class:`Answer` objects
    (``answer.point`` is ``None`` when there is none, and ``answer.reason`` says why)."""

    fp: Answer
    bp: Answer

    @property
    def fp_name(self) -> Optional[str]:
        """fp_point's node name, or ``None`` (``profiling_options`` then leaves it ``""``: GE picks its own)."""
        return self.fp.point.name if self.fp.point is not None else None

    @property
    def bp_name(self) -> Optional[str]:
        """bp_point's node name, or ``None``."""
        return self.bp.point.name if self.bp.point is not None else None


def find_fp(src: Any, opts: Options = Options(), *, search: bool = True) -> Answer:
    """fp_point of a graph: the first compute op of forward propagation, as an :class:`Answer`.

    ``src``: a path (``-`` for stdin, ``.gz`` unpacked), the bytes of a serialized GraphDef,
    MetaGraphDef or SavedModel (or of a text graph.pbtxt), a binary file object, or a
    :class:`GraphFile`. ``search``: read ahead with a byte search where the input allows one.
    Raises :class:`PbtxtError` for input that is not a graph.

    A GE dump (``ge_proto_*_Build.txt``, ``ge_onnx_*.pbtxt``) is answered by GE's own rule (rule
    ``ge``: the fp GE picks with ``"fp_point":""``, as ``pbtxt-scan ge-auto`` computes it; ``opts``
    do not apply), never by TensorFlow's."""
    with _graph(src) as g:
        if is_ge_dump(g):
            return ge_answers(g)[0]
        return _find_fp(g, opts, search=search)


def find_bp(src: Any, opts: Options = Options()) -> Answer:
    """bp_point of a graph: the last op of backward propagation, as an :class:`Answer` (``src``
    as for :func:`find_fp`; a GE dump: GE's own bp, rule ``ge``)."""
    with _graph(src) as g:
        if is_ge_dump(g):
            return ge_answers(g)[1]
        from .fpbp._bp import find_bp as _find_bp

        return _find_bp(g, opts)


def neighbourhood(
    src: Any, name: str, up: int = 2, down: int = 2, *, function: Optional[str] = None, max_nodes: int = 64
) -> Hood:
    """The node ``name``'s neighbourhood: its producers ``up`` hops above and consumers ``down``
    hops below, with the edges among them, as a :class:`~pbtxt_scan.Hood` (``src`` as for
    :func:`find_fp`; the node found as :func:`find_node` finds it, ``function`` in that library
    function only). At most ``max_nodes`` nodes (``truncated`` then says so). Read hop by hop with
    a byte search where the input allows, never with the graph in memory. Raises
    :class:`LookupError` if no node has that name."""
    from .fpbp._hood import neighbourhood as _neighbourhood

    with _graph(src) as g:
        return _neighbourhood(g, name, up, down, function=function, max_nodes=max_nodes)


def neighbourhoods(src: Any, centres: Sequence[Tuple[Any, int, int]], *, max_nodes: int = 64) -> List[Hood]:
    """Several neighbourhoods of one graph at once, each centre ``(what, up, down)``: ``what`` a
    node's name (as :func:`neighbourhood` finds it) or an answer's :class:`Point` (read where it
    says, in its function), e.g. ``neighbourhoods(path, [(p.fp.point, 4, 2), (p.bp.point, 2, 2)])``.
    Where the input allows, they are read near their centres and share one byte search (what the
    report draws costs one pass over the file, not one a hop)."""
    from .fpbp._hood import neighbourhoods as _neighbourhoods

    with _graph(src) as g:
        return _neighbourhoods(g, [(w, up, down, None) for w, up, down in centres], max_nodes=max_nodes)


def points(src: Any, opts: Options = Options()) -> Points:
    """fp_point and bp_point of one graph, read through one opened input (``src`` as for
    :func:`find_fp`): ``points(src).fp_name``, ``.bp_name``, and the two :class:`Answer` objects
    (a GE dump: GE's own, from one reading of it)."""
    with _graph(src) as g:
        if is_ge_dump(g):
            return Points(*ge_answers(g))
        from .fpbp._bp import find_bp as _find_bp

        return Points(_find_fp(g, opts), _find_bp(g, opts))


@contextlib.contextmanager
def _graph(src: Any) -> Iterator[GraphFile]:
    """``src`` as an open GraphFile: itself, a path opened, or bytes / a binary file object read
    as a stream is (``GraphFile.of_stream``: a regular file in place, else through a spool)."""
    if isinstance(src, GraphFile):
        yield src
        return
    if isinstance(src, (bytes, bytearray, memoryview)):
        stream: Any = io.BytesIO(bytes(src))
        name = "<bytes>"
    elif hasattr(src, "read"):
        stream, name = src, str(getattr(src, "name", None) or "<stream>")
    else:
        with GraphFile.open(src) as g:
            yield g
        return
    with GraphFile.of_stream(stream, name) as g:  # (its errors and answers name ``name``)
        yield g


def __getattr__(name: str) -> Any:
    """Ascend's profiling options (``fpbp._profiling``), loaded with the first of them: fp builds none."""
    if name in ("AIC_METRICS", "TASK_TRACE", "profiling_options"):
        from .fpbp import _profiling

        return getattr(_profiling, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


__all__ = [
    "AIC_METRICS", "RULES", "TASK_TRACE", "Answer", "Options", "Point", "Points", "explain", "find_bp",
    "find_fp", "neighbourhood", "neighbourhoods", "points", "profiling_options",
]
