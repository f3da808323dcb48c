"""The progress bar of a long scan, drawn by rich on stderr: loaded only when one is drawn (``_app.bar``
decides: a regular file of ``PROGRESS_MIN_BYTES`` or more, stderr a terminal)."""
from __future__ import annotations

import os
from typing import Any, Callable

from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn


class Bar:
    """``with Bar(path, size) as on_progress``: ``on_progress(offset)`` moves the bar (every 4 MB).
    The bar never touches stdout (rich would otherwise redirect it through its live display,
    swallowing the results and the broken pipe that stops ``| head``)."""

    def __init__(self, path: str, size: int) -> None:
        self.p = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self.task = self.p.add_task(os.path.basename(path), total=size)
        self._last = 0

    def __enter__(self) -> Callable[[int], None]:
        self.p.__enter__()
        return self.update

    def __exit__(self, *a: Any) -> None:
        self.p.__exit__(*a)

    def update(self, offset: int) -> None:
        if offset - self._last >= (4 << 20):
            self._last = offset
            self.p.update(self.task, completed=offset)
