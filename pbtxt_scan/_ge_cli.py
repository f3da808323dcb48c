"""GE commands (resolve, ge-auto), registered on the main app."""
from __future__ import annotations

from .cli import app  # noqa: F401  (commands are added here by @app.command)
