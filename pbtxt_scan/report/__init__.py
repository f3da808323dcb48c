"""The HTML report (``pbtxt-scan report``): one self-contained page from plain data.

- ``_layout``: a layered DAG layout, in pure Python, of a few dozen nodes (a :class:`~pbtxt_scan._model.Hood`):
  longest-path layers seeded by the hops, barycentre sweeps to reduce crossings, then coordinates;
- ``_svg``: that layout as inline SVG (skipped nodes greyed with their reason in a ``<title>``, the
  alternatives marked, every graph string escaped);
- ``_page``: the page: the answers, GE names and the options to paste (copy buttons), the drawings,
  the trails as a filterable table, the file's facts, the version and the command line. No network:
  no external script, font or stylesheet; the only references are ``#`` anchors.

It takes plain data only (a Hood, the answers as ``points --json`` writes them, trail rows as tuples,
strings) and returns a ``str``: it imports nothing above ``_model``.
"""
from __future__ import annotations

from ._layout import Layout, layout
from ._page import Drawing, Page, TrailRow, render
from ._svg import svg

__all__ = ["Drawing", "Layout", "Page", "TrailRow", "layout", "render", "svg"]
