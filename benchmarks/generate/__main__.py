"""``python -m benchmarks.generate KIND --size SIZE -o FILE``: write one generated input."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Optional, Sequence

from . import GENERATORS, generate, parse_size


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.generate",
                                description="Generate large deterministic graph.pbtxt / GE dump files.")
    p.add_argument("kind", choices=GENERATORS)
    p.add_argument("--size", default="100MB", help="target size, e.g. 5MB, 1GB, 1.5GiB (powers of 1024)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", default=None,
                   help="output file (default: $PBTXT_SCAN_BENCH_DIR or /tmp/pbtxt-scan-bench/)")
    p.add_argument("--const-line", default="50000000",
                   help="const kind: escaped characters per big tensor_content line (default 50e6)")
    p.add_argument("--const-shape", choices=("lines", "nodes"), default="lines", metavar="SHAPE",
                   help="const kind: 'lines' (few lines of --const-line each) or 'nodes' (many 256x1024 "
                        "float32 Consts, ~2.4 MB each, each with its own content)")
    p.add_argument("--shape", default="dense", metavar="SHAPE",
                   help="binary kind: dense (default), the dense graph's nodes, or copies, a real transformer training graph followed by "
                        "renamed copies of its nodes (concatenated GraphDef messages)")
    p.add_argument("--twin", default=None, help="binary --shape copies: also write the text twin (the same nodes) here")
    p.add_argument("--graph-size", default="20MB", help="events kind: the size of the graph in it (default 20MB)")
    p.add_argument("--json", action="store_true", help="print metadata as JSON on stdout")
    a = p.parse_args(argv)
    if a.kind != "binary" and (a.shape != "dense" or a.twin):
        p.error("--shape and --twin are options of the binary kind")
    if a.shape not in ("dense", "copies"):
        p.error("--shape: dense or copies, not %r" % a.shape)
    meta = generate(a.kind, a.output, a.size, a.seed, parse_size(a.const_line), a.const_shape, shape=a.shape, twin=a.twin, graph_size=a.graph_size)
    if a.json:
        json.dump(meta, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        e = meta["expected"]
        print("%s: %s bytes, %d lines, %d nodes in %.2fs (%.0f MB/s) -> %s" % (
            meta["kind"], meta["bytes"], meta["lines"], meta["nodes"], meta["seconds"], meta["mb_per_s"] or 0,
            meta["path"]))
        if "fp" in e:
            print("  fp %s (line %d), bp %s (line %d)" % (e["fp"], e["fp_line"], e["bp"], e["bp_line"]))
        else:
            print("  auto fp %s, auto bp %s" % (e["auto_fp"], e["auto_bp"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
