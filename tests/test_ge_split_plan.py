"""Where ``--jobs`` cuts a GE dump (issue 21): by walk cost, not bytes. The ge benchmark's dump
has its weights in 24 layers and, in its last 0.5 MB, 181 small gradient and optimizer ops (more
than half its lines). Cut by bytes, that tail was one chunk, walked alone at the end (--jobs 2 was
slower than one process)."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.generate import generate
from pbtxt_scan.ge import FULL_PARSE_MAX, _split, load_build
from pbtxt_scan.graph._input import GraphFile
from pbtxt_scan.parallel._pool import can_fork


@pytest.mark.slow  # (over a second: the slow step runs it)
@pytest.mark.skipif(not can_fork(), reason="no fork: one process")
def test_an_op_dense_tail_is_shared_out(tmp_path: Path) -> None:
    p = tmp_path / "ge_proto_00000001_graph_1_Build.txt"
    generate("ge", str(p), 40 << 20, seed=0)
    data = p.read_bytes()
    lines = data.count(b"\n")
    tail = data.rfind(b"\n  op {\n", 0, data.rfind(b"gradients/"))  # (within the dense tail)
    with GraphFile.open(p) as g:
        bounds = _split.plan(g, g.dialect.path, 2)
    assert bounds is not None and bounds[0] == 0 and bounds[-1] == len(data)
    assert all(data[b - 1 : b + 7] == b"\n  op {\n" for b in bounds[1:-1])
    per_chunk = [data.count(b"\n", s, e) for s, e in zip(bounds, bounds[1:])]
    assert max(per_chunk) <= 0.3 * lines, per_chunk
    assert sum(1 for b in bounds[1:-1] if b > tail - (1 << 20)) >= 2  # (cuts inside the tail)
    with GraphFile.open(p) as g:
        ops = _split.load(g, g.dialect, 2, FULL_PARSE_MAX)
    assert ops == load_build(p, jobs=1).ops  # (the records of one process)
