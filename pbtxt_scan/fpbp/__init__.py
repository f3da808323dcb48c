"""The profiler's points: fp read forward (``_fp``, ``_fp_scan``, ``_fp_flow``, ``_fp_settle``,
``_fp_inputs``, ``_fp_pick``, with the byte search ahead in ``_ahead``, ``_needles`` (what it asks the
lane's search for); several optimizers' steps: ``_fp_steps``), bp read backward (``_bp``, ``_bp_scan``,
``_bp_reach``, ``_bp_back``), the training step's function (``_body``), answers and trails
(``_answers``), the non-compute catalog (``_catalog``), the profiling options (``_profiling``) and a
node's neighbourhood (``_hood``, ``_hood_find``, ``_hood_near``). The rules' design: ``_rules``.
"""
