"""A pipe fed from a thread: what a shell's process substitution gives (test_input, test_binary_inputs)."""
from __future__ import annotations

import os
import threading


def _feed(fd: int, data: bytes) -> threading.Thread:
    def write() -> None:
        with os.fdopen(fd, "wb") as w:
            try:
                w.write(data)
            except BrokenPipeError:
                pass

    t = threading.Thread(target=write, daemon=True)
    t.start()
    return t
