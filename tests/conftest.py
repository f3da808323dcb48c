from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
GRAPHS = DATA / "graphs"


@pytest.fixture(scope="session")
def data() -> Path:
    return DATA
