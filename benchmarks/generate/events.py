"""Kind ``events``: a TensorBoard event file of summary records around one training graph, as
TensorFlow 2's summary writer lays it out.

Usage::

    python -m benchmarks.generate events --size 1GB --graph-size 20MB -o /tmp/bench/events.out.tfevents.1.v2

The graph is the ``binary`` kind's ``copies`` shape (a real transformer training graph and renamed
copies of its nodes), written beside the event file as ``FILE.graph.pb`` (what fp and bp on the
event file are compared with) and stored in one ``Event.graph_def`` record after the first tenth
of the summaries (the Keras callback writes it after the first batch; a ``FileWriter`` at its
start). Every step writes, one Event each, as ``tf.summary`` does:

- 3 scalars (a float tensor, ``float_val``; the ``scalars`` plugin's metadata on every write, as TF 2 writes it),
- a histogram of each of 48 variables (TF 2's 30 buckets: a ``[30, 3]`` float64 tensor of
  left edge, right edge and count, random per step),
- every 25 steps, 3 images (``string_val``: width, height and an encoded image of random bytes,
  20-60 KB, what a PNG of noise weighs).

Each record is framed as TFRecord with its CRC-32C (``pbtxt_scan.source._crc32c``: generating 1 GB
takes about 35 s with google-crc32c, a few minutes with pure Python's). Same size + graph size + seed => byte-identical output.
"""
from __future__ import annotations

import os
import random
import struct
import time
from typing import Any, Dict, List

from pbtxt_scan.source._crc32c import masked_crc32c

from . import binary
from .binary import varint as _varint

VARIABLES = 48
IMAGE_EVERY = 25


def _ld(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _event(wall: float, step: int, body: bytes) -> bytes:
    return b"\x09" + struct.pack("<d", wall) + (b"\x10" + _varint(step) if step else b"") + body


def _value(tag: bytes, tensor: bytes, plugin: bytes) -> bytes:
    meta = _ld(9, _ld(1, _ld(1, plugin))) if plugin else b""
    return _ld(5, _ld(1, _ld(1, tag) + _ld(8, tensor) + meta))


def _shape(*dims: int) -> bytes:
    return _ld(2, b"".join(_ld(2, b"\x08" + _varint(d)) for d in dims))


def _frame(data: bytes) -> bytes:
    head = struct.pack("<Q", len(data))
    return head + struct.pack("<I", masked_crc32c(head)) + data + struct.pack("<I", masked_crc32c(data))


class _Run:
    """The summaries of one step after another, each with its plugin's metadata (TF 2 writes it
    on every write: tests/data/events/tf_keras_callback's MANIFEST.json)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.step = 0
        self.wall = 1796151832.0

    def step_records(self) -> List[bytes]:
        rng, s = self.rng, self.step
        self.step += 1
        self.wall += 0.25
        out = []
        for tag in (b"epoch_loss", b"epoch_accuracy", b"learning_rate"):
            tensor = b"\x08\x01" + _shape() + _ld(5, struct.pack("<f", rng.random()))
            out.append(_event(self.wall, s, _value(tag, tensor, b"scalars")))
        for v in range(VARIABLES):
            tag = b"layer_%d/kernel_0" % v
            lo = rng.uniform(-1, 0)
            width = rng.uniform(0.001, 0.1)
            cells = []
            for k in range(30):
                cells += [lo + k * width, lo + (k + 1) * width, float(rng.randrange(5000))]
            tensor = b"\x08\x02" + _shape(30, 3) + _ld(4, struct.pack("<90d", *cells))
            out.append(_event(self.wall, s, _value(tag, tensor, b"histograms")))
        if s % IMAGE_EVERY == 0:
            for k in range(3):
                png = b"\x89PNG\r\n\x1a\n" + rng.getrandbits(8 * rng.randrange(20000, 60000)).to_bytes(60000, "little")[: rng.randrange(20000, 60000)]
                tensor = b"\x08\x07" + _shape(3) + _ld(8, b"224") + _ld(8, b"224") + _ld(8, png)
                out.append(_event(self.wall, s, _value(b"input_image/%d" % k, tensor, b"images")))
        return out


def generate(path: str, size: int, seed: int = 0, *, graph_size: int = 20 << 20) -> Dict[str, Any]:
    """Write an event file of about ``size`` bytes holding a training graph of about ``graph_size``."""
    t0 = time.perf_counter()
    graph_path = path + ".graph.pb"
    meta = binary.generate(graph_path, graph_size, seed, shape="copies")
    with open(graph_path, "rb") as f:
        graph = f.read()
    run = _Run(seed)
    tmp = path + ".tmp-gen"
    written = records = 0
    graph_record = -1
    with open(tmp, "wb") as out:
        def put(data: bytes) -> None:
            nonlocal written, records
            framed = _frame(data)
            out.write(framed)
            written += len(framed)
            records += 1

        put(_event(run.wall, 0, _ld(3, b"brain.Event:2")))
        while written < size:
            if graph_record < 0 and written >= (size - len(graph)) // 10:
                graph_record = records
                put(_event(run.wall, run.step, _ld(4, graph)))
                continue
            for r in run.step_records():
                put(r)
    os.replace(tmp, path)
    dt = time.perf_counter() - t0
    return {"kind": "events", "path": os.path.abspath(path), "target_bytes": size, "bytes": written, "lines": 0,
            "nodes": meta["nodes"], "records": records, "graph_record": graph_record, "graph": graph_path,
            "graph_bytes": len(graph), "steps": run.step, "seed": seed, "expected": meta["expected"],
            "seconds": round(dt, 3), "mb_per_s": round(written / (1 << 20) / dt, 1) if dt > 0 else None}
