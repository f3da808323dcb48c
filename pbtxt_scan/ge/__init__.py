"""Ascend Graph Engine (GE) dumps: TF name -> GE op resolution and GE's automatic fp/bp choice.

Multi-GB ``ge_proto_*_Build.txt`` dumps are read in one streaming pass; what is kept is one small
record per op (:class:`GeOp`, about 0.5 KB: GE's own fp/bp search walks the whole graph, so it
needs them all), never block text or weights: memory follows the op count, not the file size
(a 1 GB dump with weights: 7,265 ops, 52 MB peak). By concern:

- ``_load``: the dump model (:class:`GeBuild`) and loading it from one
  :class:`~pbtxt_scan.graph._input.GraphFile`; ``_ops``: one op block -> one :class:`GeOp` record;
  ``_attrs``: the few attributes GE logic reads; ``_fast``: reading those off the lines of
  blocks in the writer layout (one regex, at scanner speed); ``_skim``: reading them from blocks
  out of it that are too big to parse (weights); ``_split``: loading on several processes.
- ``_resolve``: :func:`resolve` ranks the GE ops a TF name became; :func:`name_match`, its rules
  on names alone (a profiler timeline's GE names without the dump).
- ``_auto``: :func:`ge_auto` replays GE's automatic fp/bp search (:func:`ge_choices`: the same, as op
  records, for the ``fp``/``bp``/``points`` commands on a dump).
- ``_dumps``: dump folders: :func:`find_build_files` lists the final-stage dumps,
  :func:`pick_training_graph` chooses the training graph (files scanned in parallel),
  :func:`open_ge` and :func:`map_points` for the ``points --ge`` command.
"""
from __future__ import annotations

from ._auto import GeChoice, ge_auto, ge_choices
from ._dumps import dump_files, find_build_files, map_points, open_ge, pick_training_graph
from ._load import FULL_PARSE_MAX, GeBuild, GeOp, load_build
from ._resolve import KINDS, best_match, name_match, resolve

__all__ = [
    "FULL_PARSE_MAX",
    "GeChoice",
    "KINDS",
    "GeBuild",
    "GeOp",
    "best_match",
    "dump_files",
    "find_build_files",
    "ge_auto",
    "ge_choices",
    "load_build",
    "map_points",
    "name_match",
    "open_ge",
    "pick_training_graph",
    "resolve",
]
