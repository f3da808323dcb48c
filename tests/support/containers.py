"""Inputs built from the fixtures at test time: a text SavedModel or MetaGraphDef around text
GraphDefs (the writer layout TensorFlow's ``as_text=True`` gives: each field two spaces in from
its container), a model_dir, a SavedModel folder, a nested GE dump folder, and files that are no
graph (a TensorBoard event file framed as TFRecord writes it)."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path
from typing import Iterable, Tuple

from .data import DATA


def _indent(text: str, by: int) -> str:
    pad = " " * by
    return "".join(pad + line if line.strip() else line for line in text.splitlines(True))


def text_saved_model(graphs: Iterable[Tuple[str, str]]) -> str:
    """``saved_model.pbtxt``: one MetaGraph per ``(tag, GraphDef text)``, in that order."""
    out = ["saved_model_schema_version: 1\n"]
    for tag, graph in graphs:
        out.append("meta_graphs {\n  meta_info_def {\n    tags: \"%s\"\n    tensorflow_version: \"2.15.1\"\n  }\n" % tag)
        out.append("  graph_def {\n" + _indent(graph, 4) + "  }\n")
        out.append("  saver_def {\n    filename_tensor_name: \"save/Const:0\"\n    version: V2\n  }\n}\n")
    return "".join(out)


def text_meta_graph(graph: str) -> str:
    """A ``.meta`` written as text (``export_meta_graph(as_text=True)``)."""
    return ("meta_info_def {\n  tags: \"train\"\n  tensorflow_version: \"2.15.1\"\n}\n"
            "graph_def {\n" + _indent(graph, 2) + "}\n")


def model_dir(tmp: Path, step: int = 1000) -> Path:
    """An Estimator-style model_dir: graph.pbtxt, two checkpoints (``.meta``, ``.index``,
    ``.data-00000-of-00001``), the ``checkpoint`` file naming the newest, and an event file."""
    d = tmp / "model_dir"
    d.mkdir()
    shutil.copy(DATA / "graphs" / "estimator_queue.pbtxt", d / "graph.pbtxt")
    for s in (step // 2, step):
        shutil.copy(DATA / "binary" / "mlp_sgd.meta", d / ("model.ckpt-%d.meta" % s))
        (d / ("model.ckpt-%d.index" % s)).write_bytes(b"\x00\x01" * 40)
        (d / ("model.ckpt-%d.data-00000-of-00001" % s)).write_bytes(struct.pack("<8f", *range(8)))
    (d / "checkpoint").write_text('model_checkpoint_path: "model.ckpt-%d"\nall_model_checkpoint_paths: "model.ckpt-%d"\n'
                                  'all_model_checkpoint_paths: "model.ckpt-%d"\n' % (step, step // 2, step))
    (d / "events.out.tfevents.1700000000.host").write_bytes(event_file())
    return d


def crc32c_masked(data: bytes) -> int:
    """TFRecord's masked CRC-32C, written out bit by bit here (the code under test uses a table)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(records: Iterable[bytes]) -> bytes:
    out = b""
    for r in records:
        n = struct.pack("<Q", len(r))
        out += n + struct.pack("<I", crc32c_masked(n)) + r + struct.pack("<I", crc32c_masked(r))
    return out


def event_file() -> bytes:
    """What tf.summary writes first: an Event with wall_time (field 1, double) and file_version
    (field 3) "brain.Event:2", then a summary Event (field 5, here a small opaque message)."""
    first = b"\x09" + struct.pack("<d", 1700000000.5) + b"\x1a\x0dbrain.Event:2"
    second = b"\x09" + struct.pack("<d", 1700000001.0) + b"\x10\x01" + b"\x2a\x06\x0a\x04\x0a\x02ab"
    return tfrecord([first, second])
