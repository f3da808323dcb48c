"""Where the test fixtures are (tests/data, described in tests/data/README.md)."""
from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
GRAPHS = DATA / "graphs"
