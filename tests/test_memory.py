"""Opt-in: peak memory stays flat on big generated files (run with `python -m pytest -m memory`).

Not in the default run: it writes about 1 GB to a temporary folder and takes a few minutes.
"""
from __future__ import annotations

import json

import pytest

from benchmarks.generate import generate
from support.hostile import run_measured

BOUND_MB = 100  # the project's goal for every command at every size
SIZE = 512 << 20


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    d = tmp_path_factory.mktemp("big")
    kinds = ("dense", "const", "feed", "queue", "queues")
    return {kind: (d / ("%s.pbtxt" % kind), generate(kind, str(d / ("%s.pbtxt" % kind)), SIZE, seed=0)) for kind in kinds}


@pytest.mark.memory
@pytest.mark.parametrize("kind", ["dense", "const", "feed", "queue", "queues"])
@pytest.mark.parametrize("command", ["stats", "fp", "bp"])
def test_peak_rss_is_bounded(big, tmp_path, kind, command):
    path, meta = big[kind]
    args = [command, "--json", str(path)]
    p, seconds, rss_mb = run_measured(tmp_path, *args, timeout=1800)
    assert p.returncode == 0, p.stderr
    if command in ("fp", "bp"):
        assert json.loads(p.stdout)["name"] == meta["expected"][command]
    else:
        assert json.loads(p.stdout)["nodes"] == meta["nodes"]
    assert rss_mb <= BOUND_MB, "%s %s: peak %d MB in %.1f s" % (command, kind, rss_mb, seconds)


@pytest.mark.memory
@pytest.mark.parametrize("kind", ["feed", "queue"])
def test_fp_time_follows_the_answer_not_the_file(big, tmp_path, kind):
    # fp's answer is near the top of these files: on 512 MB it may take no more than one grep pass
    # over the file on top of what it takes on a small file with the same head (issue 10).
    import subprocess
    import time

    path, meta = big[kind]
    small = tmp_path / "small.pbtxt"
    generate(kind, str(small), 3 << 20, seed=0)
    _, small_s, _ = run_measured(tmp_path, "fp", str(small), timeout=600)
    p, big_s, rss_mb = run_measured(tmp_path, "fp", "--json", str(path), timeout=600)
    assert json.loads(p.stdout)["name"] == meta["expected"]["fp"]
    t0 = time.perf_counter()
    # (into a pipe: GNU grep stops at the first match when its output is /dev/null)
    subprocess.run(["grep", "-c", "^node {", str(path)], stdout=subprocess.PIPE, check=True)
    grep_s = time.perf_counter() - t0
    assert big_s <= 1.5 * (small_s + grep_s), (big_s, small_s, grep_s)
    assert rss_mb <= BOUND_MB
