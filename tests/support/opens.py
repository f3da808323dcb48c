"""Counting how often a command opens one path: the CLI run under an audit hook, in a process of
its own (audit hooks cannot be removed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Runs the CLI with an audit hook that counts the opens of one path (audit hooks cannot be
# removed, so each run is its own process).
COUNT_OPENS = r"""
import os, sys
target = os.path.realpath(sys.argv[1])
opens = []
def hook(event, args):
    if event == "open" and isinstance(args[0], (str, bytes)):
        p = os.fsdecode(args[0])
        if os.path.realpath(p) == target:
            opens.append(args[1])
sys.addaudithook(hook)
sys.argv = ["pbtxt-scan"] + sys.argv[2:]
from pbtxt_scan.cli import main
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
sys.stderr.write("\nOPENS=%d\n" % len(opens))
sys.exit(code)
"""

needs_audit = pytest.mark.skipif(sys.version_info < (3, 8), reason="sys.addaudithook is new in Python 3.8")


def opens(target: Path, *args: str, tmp_path: Path) -> "tuple[int, subprocess.CompletedProcess[str]]":
    env = dict(os.environ)  # (the cache folder: tmp_path / "cache", conftest.py)
    r = subprocess.run(
        [sys.executable, "-c", COUNT_OPENS, str(target), *args],
        capture_output=True, text=True, env=env, timeout=120,
    )
    tail = r.stderr.rstrip().rsplit("\n", 1)[-1]
    assert tail.startswith("OPENS="), r.stderr
    return int(tail[len("OPENS="):]), r


