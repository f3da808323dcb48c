"""The profiler's points: fp read forward (``_fp``, ``_fp_scan``, ``_fp_inputs``, ``_fp_pick``, with
the byte search ahead in ``_ahead``, ``_needles``, ``_grep``, and on binary graphs ``_wire_ahead``), bp read backward (``_bp``), the
training step's function (``_body``), answers and trails (``_answers``), the non-compute catalog
(``_catalog``) and the profiling options (``_profiling``). The rules' design: ``_rules``.
"""
