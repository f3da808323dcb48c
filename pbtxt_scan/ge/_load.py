"""GE dump model and loading: op records (:class:`GeOp`) of every graph block of a Build dump.

1. The dump's :class:`~pbtxt_scan.graph._input.GraphFile` streams its op blocks with their heads (name,
   type, input, id, stream_id, subgraph_name) and the enclosing graph's name.
2. For each op we need a handful of attributes (:data:`_WANTED`). A block under
   ``full_parse_max`` bytes is parsed with the Lark grammar (``GraphFile.parse``); a bigger one (a
   ``Const`` carrying tens of MB of weights) is *skimmed* (``_skim``), so a 20 MB ``data: "..."``
   string is never held. (Measured on a 1 GB dump: skimming every block loads in 29 s against
   43 s with Lark for the small ones; ``full_parse_max=0`` selects that.) Both roads produce the
   same :class:`Message` shape and go through one extractor (``_attrs_of``); a test checks they
   agree on every fixture op.
   Both roads are for blocks out of the writer layout only: a block the scanner's fast path
   yielded (the writer layout, validated) has its attributes read off its lines by one regex
   (``_fast``, at scanner speed; ``fast=False`` turns it off), into the same :class:`Message`.
3. Each op becomes a small :class:`GeOp` record (no block text is kept). :class:`GeBuild` holds the
   records of every graph block (root first, then subgraphs).
4. ``jobs`` > 1: the dump is cut at its ``op`` openers and loaded on that many processes
   (``_split``), with the same records, and the same first error.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from .._errors import PbtxtError
from ..graph._input import Source, opened
from ..parallel._cores import usable_cores
from ._ops import FULL_PARSE_MAX, GeOp, ops_from

# GE's own type strings (hicann/ge base/common/types.cc, op_type_utils.cc kDataOpSet).
DATA_TYPES = frozenset({"Data", "RefData", "AippData", "AnnData", "GetNext", "IteratorV2"})
ALLREDUCE_TYPES = frozenset({"HcomAllReduce", "HorovodAllreduce"})
GLOBAL_STEP = "ge_global_step"

_GRADIENT_MARKS = ("gradients", "gradient_tape")


class GeBuild:
    """The op records of one dump: every graph block, root first."""

    def __init__(self, path: str, dialect: str, ops: List[GeOp], notes: Tuple[str, ...] = ()) -> None:
        self._build(path, dialect, ops, notes)

    def _build(self, path: str, dialect: str, ops: List[GeOp], notes: Tuple[str, ...] = ()) -> None:
        """The records, and the indexes over them (a pickled build is made again from its records).
        ``notes``: what its reading said (``--lenient``: the op blocks skipped; a field not seen), for stderr."""
        self.path = path
        self.notes = notes
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
        return {"path": self.path, "dialect": self.dialect, "ops": self.ops, "notes": self.notes}

    def __setstate__(self, st: Dict[str, Any]) -> None:
        self._build(st["path"], st["dialect"], st["ops"], st.get("notes", ()))

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


def load_build(
    src: Source, full_parse_max: int = FULL_PARSE_MAX, jobs: Optional[int] = 1, fast: bool = True, *, lenient: bool = False,
) -> GeBuild:
    """Read a ``ge_proto`` or ``ge_onnx`` dump into op records, in constant memory.

    ``full_parse_max``: blocks out of the writer layout up to this many bytes are parsed with
    Lark, bigger ones skimmed (0 skims every one). ``jobs``: processes (a regular file only; the
    same records; ``None``: every usable core). ``fast=False`` reads every block the exact way (Lark or skim).
    ``lenient``: an op block that is no valid node (no name or no type) is skipped, and the build's
    ``notes`` say so, rather than refused (a path opened here; an open ``GraphFile`` keeps its own).
    Raises :class:`PbtxtError` for unreadable input or a TF GraphDef.
    """
    jobs = usable_cores() if jobs is None else jobs
    with opened(src, lenient=lenient) as g:
        d = g.dialect
        if d.name not in ("ge_proto", "ge_onnx"):
            raise PbtxtError("not a GE dump (it looks like a TensorFlow GraphDef; expected ge_proto_*.txt)", path=g.name)
        try:
            got = None
            if jobs > 1 and fast:
                from . import _split

                got = _split.load(g, d, jobs, full_parse_max)
            ops = got if got is not None else list(ops_from(g, d, full_parse_max, fast=fast))
        except PbtxtError as e:
            raise e.with_path(g.name) from None
        return GeBuild(g.name, d.name, ops, g.notes)  # (its notes: --lenient's ops skipped, a ge_proto graph's field not seen)


__all__ = ["ALLREDUCE_TYPES", "DATA_TYPES", "FULL_PARSE_MAX", "GLOBAL_STEP", "GeBuild", "GeOp", "load_build"]
