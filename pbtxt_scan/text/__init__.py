"""Protocol buffers text format, streamed: bytes -> blocks with lines and heads, validated against
the grammar. The general pushdown scanner (``_scan`` over ``_lexer``, ``_window``, ``_frames``), the
writer-layout fast path (``_canonical`` with ``_layout``, ``_batch``, ``_strings``, ``_handover``, ``_skim_pool``),
reading backward (``_backward``) and the text lane (``_lane``; ``_nested`` for a graph inside a
text SavedModel or MetaGraphDef). Never imports ``graph``, ``fpbp``,
``ge`` or ``cli``.

``HandOver`` and ``Walker`` are the fast path's hand-over signal and walker (``ge._fast`` reads GE dumps on them), ``layout_warm`` whether its batch patterns are built.
"""
from __future__ import annotations

from typing import Any


# The face (PEP 562: each name loads its module on first use, so importing the package costs nothing):
# what other layers use, and the module that holds it. Nothing outside this package imports one of
# its private modules (``tests/test_imports.py``).
_FACE = {
    "ANCESTOR": ("._frames", "ANCESTOR"),
    "Frame": ("._frames", "Frame"),
    "HandOver": ("._handover", "_HandOver"),
    "Lexer": ("._lexer", "Lexer"),
    "METAGRAPH_PREFIX": ("._nested", "METAGRAPH_PREFIX"),
    "NestedTextLane": ("._nested", "NestedTextLane"),
    "OPENER": ("._backward", "OPENER"),
    "SAVEDMODEL_PREFIX": ("._nested", "SAVEDMODEL_PREFIX"),
    "TextLane": ("._lane", "TextLane"),
    "Walker": ("._canonical", "_Walker"),
    "layout_warm": ("._layout", "warm"),
    "needle_pattern": ("._needles", "_pattern"),
    "scalar_value": ("._layout", "scalar_value"),
    "scan_canonical": ("._canonical", "scan_canonical"),
    "top_fields": ("._strict", "top_fields"),
}


def __getattr__(name: str) -> Any:
    where = _FACE.get(name)
    if where is None:
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    import importlib

    mod = importlib.import_module(where[0], __name__)
    return mod if where[1] is None else getattr(mod, where[1])


def __dir__() -> Any:
    return sorted(set(globals()) | set(_FACE))


__all__ = sorted(_FACE)
