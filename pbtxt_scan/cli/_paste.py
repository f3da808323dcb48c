"""``points --format``: the profiling options, ready to paste where an Ascend training run reads them.

- ``profiling``: the compact JSON for ``PROFILING_OPTIONS`` / ``profiling_options``;
- ``env``: the two ``export`` lines (PROFILING_MODE, PROFILING_OPTIONS), quoted for sh/bash;
- ``tf1-estimator``: npu_bridge's ``ProfilingConfig(enable_profiling=True, profiling_options=...)``
  passed to ``NPURunConfig(profiling_config=...)``;
- ``tf1-session``: the NpuOptimizer ``custom_op`` of a ``tf.compat.v1.Session`` config,
  ``parameter_map["profiling_mode"].b`` and ``parameter_map["profiling_options"].s``;
- ``tf2``: npu_device's ``npu.global_options().profiling_config`` (``enable_profiling``,
  ``profiling_options``), set before ``npu.open()``.

These are the TF adapter's documented spellings (Ascend's TF1 adapter guide, the npu_device
``NpuProfilingConfig``); the options JSON is written as a Python string literal (``repr`` of the
compact JSON), so any name in it pastes safely.
"""
from __future__ import annotations

import json
import shlex
from typing import Any, Dict


def profiling_json(opts: Dict[str, Any]) -> str:
    """Compact JSON to paste into ``PROFILING_OPTIONS`` / ``profiling_options``."""
    return json.dumps(opts, ensure_ascii=False, separators=(",", ":"))


def paste(fmt: str, opts: Dict[str, Any]) -> str:
    """The text of ``--format fmt`` for these profiling options."""
    text = profiling_json(opts)
    lit = repr(text)
    if fmt == "profiling":
        return text
    if fmt == "env":
        return "export PROFILING_MODE=true\nexport PROFILING_OPTIONS=%s" % shlex.quote(text)
    if fmt == "tf1-estimator":
        return "\n".join((
            "from npu_bridge.npu_init import *",
            "",
            "profiling_config = ProfilingConfig(enable_profiling=True, profiling_options=%s)" % lit,
            "run_config = NPURunConfig(profiling_config=profiling_config)  # (with your other NPURunConfig arguments)",
        ))
    if fmt == "tf1-session":
        return "\n".join((
            "import tensorflow as tf",
            "from npu_bridge.npu_init import *",
            "",
            "config = tf.compat.v1.ConfigProto()  # (or the session config you already build)",
            "custom_op = config.graph_options.rewrite_options.custom_optimizers.add()",
            'custom_op.name = "NpuOptimizer"',
            'custom_op.parameter_map["profiling_mode"].b = True',
            'custom_op.parameter_map["profiling_options"].s = tf.compat.as_bytes(%s)' % lit,
            "sess = tf.compat.v1.Session(config=config)",
        ))
    if fmt == "tf2":
        return "\n".join((
            "import npu_device as npu",
            "",
            "npu.global_options().profiling_config.enable_profiling = True",
            "npu.global_options().profiling_config.profiling_options = %s" % lit,
            "npu.open().as_default()",
        ))
    raise ValueError(fmt)
