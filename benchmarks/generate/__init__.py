"""Deterministic, streaming generator of large GraphDef / GE-dump files: the registry of kinds.

Usage::

    python -m benchmarks.generate dense --size 1GB --seed 0 -o /tmp/pbtxt-scan-bench/dense.pbtxt
    python -m benchmarks.generate const --size 200MB --json
    python -m benchmarks.generate ge    --size 1GB
    python -m benchmarks.generate binary --shape copies --size 1GB -o copies.pb --twin copies.pbtxt

or from Python::

    from benchmarks.generate import generate
    meta = generate("dense", "/tmp/x.pbtxt", 50 << 20, seed=0)

One module per kind (``dense``, ``const``, ``ge``, ``feed``, ``queue``, ``queues`` (many pipelines, renamed copies of a real graph): text; ``binary``: wire
format; ``events``: a TensorBoard event file around a binary graph), each with its ``write``; the pieces they share live in ``_text`` (protobuf text printing),
``_stamp`` (templates, writer, payloads, sizes) and ``_tf`` (TF training-graph units), which import
no kind module. Layout follows the protobuf text printers exactly (2-space indent, ``}`` alone on a
line, map entries sorted by key, CEscape octal escaping, float32 values printed as the repr of the
double, e.g. ``0.10000000149011612``).

Same kind + size + seed => byte-identical output. Standard library only.
"""

from __future__ import annotations

import os
import time
from typing import Any, Callable, Dict, Optional

from . import binary, const, dense, events, feed, ge, queue, queues
from ._stamp import Writer, default_bench_dir, default_output_path, parse_size
from .const import DEFAULT_CONST_LINE

__all__ = ["KINDS", "GENERATORS", "DEFAULT_CONST_LINE", "generate", "parse_size", "default_bench_dir",
           "default_output_path"]

# the text kinds: ``write(w, size, seed)`` of each module
_TEXT: Dict[str, Callable[..., Dict[str, Any]]] = {
    "dense": dense.write, "const": const.write, "ge": ge.write, "feed": feed.write, "queue": queue.write,
    "queues": queues.write}
KINDS = tuple(_TEXT)  # what benchmarks.run measures by default
GENERATORS = KINDS + ("binary", "events")


def generate(kind: str, path: Optional[str], size_bytes: "int | str", seed: int = 0,
             const_line_bytes: int = DEFAULT_CONST_LINE, const_shape: str = "lines", *, shape: str = "dense",
             twin: Optional[str] = None, graph_size: "int | str" = 20 << 20) -> Dict[str, Any]:
    """Write a ``kind`` file of about ``size_bytes`` to ``path``; return its metadata. ``const_shape``:
    the const kind's; ``shape`` and ``twin``: the binary kind's (``binary.generate``)."""
    if kind not in GENERATORS:
        raise ValueError("kind must be one of %s" % (GENERATORS,))
    size = parse_size(size_bytes)
    if path is None:
        path = default_output_path(kind, size, seed)
    if kind == "binary":
        return binary.generate(path, size, seed, shape=shape, twin=twin)
    if kind == "events":
        return events.generate(path, size, seed, graph_size=parse_size(graph_size))
    t0 = time.perf_counter()
    tmp = path + ".tmp-gen"
    w = Writer(tmp)
    options: Dict[str, Any] = {"line_bytes": const_line_bytes, "shape": const_shape} if kind == "const" else {}
    try:
        info = _TEXT[kind](w, size, seed, **options)
    finally:
        w.close()
    os.replace(tmp, path)
    dt = time.perf_counter() - t0
    meta = {"kind": kind, "path": os.path.abspath(path), "target_bytes": size, "bytes": w.bytes,
            "lines": w.lines, "nodes": w.nodes, "seed": seed}
    meta.update(info)
    meta["seconds"] = round(dt, 3)
    meta["mb_per_s"] = round(w.bytes / (1 << 20) / dt, 1) if dt > 0 else None
    return meta
