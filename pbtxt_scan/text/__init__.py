"""Protocol buffers text format, streamed: bytes -> blocks with lines and heads, validated against
the grammar. The general pushdown scanner (``_scan`` over ``_lexer``, ``_window``, ``_frames``), the
writer-layout fast path (``_canonical`` with ``_layout``, ``_batch``, ``_handover``, ``_skim_pool``),
reading backward (``_backward``) and the text lane (``_lane``; ``_nested`` for a graph inside a
text SavedModel or MetaGraphDef). Never imports ``graph``, ``fpbp``,
``ge`` or ``cli``.
"""
