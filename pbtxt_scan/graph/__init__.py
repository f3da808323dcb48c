"""One input per command: :class:`GraphFile` (``_input``: opened once, read through its lane;
its store and lane told at open by ``_sniff``),
the kinds of graph file (``_dialect``), a folder given as input (``_folders``: a SavedModel, a
model_dir), the path-level API (``_paths``, with ``find_node``), whole-file check and stats
(``_stats``, on several cores: ``_parallel``), and bp's backward reading with its index cache
(``_reverse``, ``_cache``).
"""
