"""TensorBoard event files built at test time, as TensorFlow's writers lay them out, without
TensorFlow: TFRecord frames (``containers.tfrecord``, its own bitwise CRC-32C) around Events
encoded with ``wire_encoder`` (field numbers: the table in tests/data/README.md, ``events/``).

A graph goes where each writer puts it: ``Event.graph_def`` (4; ``FileWriter``, the Keras
callback), ``Event.meta_graph_def`` (9; an Estimator), or a ``trace_export`` summary
(``Event.summary`` 5 -> ``value`` 1 with plugin ``graph_run_metadata_graph``, the tensor's
``string_val[0]`` a RunMetadata whose ``function_graphs[i].pre_optimization_graph`` are graphs).
"""
from __future__ import annotations

import random
import struct
from typing import Iterable, List, Sequence, Tuple

from .containers import tfrecord
from .wire_encoder import Fixed64, Packed, encode, varint


def event(body: list, step: int = 0, wall: float = 1700000000.0) -> bytes:
    return encode([(1, Fixed64(struct.pack("<d", wall)))] + ([(2, step)] if step else []) + body)


def file_version() -> bytes:
    return event([(3, "brain.Event:2")])


def graph_def(graph: bytes, step: int = 0) -> bytes:
    return event([(4, graph)], step)


def meta_graph_def(meta: bytes, step: int = 0) -> bytes:
    return event([(9, meta)], step)


def _value(tag: str, payload: list, plugin: str = "") -> list:
    meta = [(9, [(1, [(1, plugin)])])] if plugin else []
    return [(1, tag)] + payload + meta


def scalar(tag: str, x: float, step: int) -> bytes:
    """A TF2 scalar: a float tensor and the ``scalars`` plugin (TF1's ``simple_value`` is field 2)."""
    tensor = [(1, 1), (4, struct.pack("<f", x))]
    return event([(5, [(1, _value(tag, [(8, tensor)], "scalars"))])], step)


def histogram(tag: str, rng: random.Random, step: int, buckets: int = 30) -> bytes:
    """A TF1 histogram (``Summary.Value.histo``, field 5) with random bucket limits and counts."""
    limits = sorted(rng.uniform(-1, 1) for _ in range(buckets))
    counts = [float(rng.randrange(100)) for _ in range(buckets)]
    histo = [(1, Fixed64(struct.pack("<d", limits[0]))), (2, Fixed64(struct.pack("<d", limits[-1]))),
             (3, Fixed64(struct.pack("<d", sum(counts)))), (6, Packed("d", limits)), (7, Packed("d", counts))]
    return event([(5, [(1, _value(tag, [(5, histo)]))])], step)


def image(tag: str, rng: random.Random, step: int, size: int) -> bytes:
    """An image summary (``Summary.Value.image``, field 4) whose PNG bytes are random."""
    img = [(1, 28), (2, 28), (3, 1), (4, rng.getrandbits(8 * size).to_bytes(size, "little"))]
    return event([(5, [(1, _value(tag, [(4, img)]))])], step)


def keras_model(config: str = '{"class_name": "Sequential"}') -> bytes:
    """The tf.keras callback's model config: plugin ``graph_keras_model``, the JSON as a string tensor."""
    tensor = [(1, 7), (8, config)]
    return event([(5, [(1, _value("keras", [(8, tensor)], "graph_keras_model"))])])


def trace_export(graphs: Sequence[bytes], tag: str = "train_step_trace", step: int = 0) -> bytes:
    """``tf.summary.trace_export(graph=True)``: a RunMetadata with one FunctionGraphs per graph."""
    run_metadata = encode([(4, [(2, g)]) for g in graphs])
    tensor = [(1, 7), (8, run_metadata)]
    return event([(5, [(1, _value(tag, [(8, tensor)], "graph_run_metadata_graph"))])], step)


def event_file(records: Iterable[bytes]) -> bytes:
    return tfrecord([file_version()] + list(records))


def around(graph_records: Sequence[bytes], summaries: int = 6, seed: int = 0) -> bytes:
    """An event file: ``summaries`` steps of scalar and histogram summaries before and after the
    given graph records (a training run logs on both sides of ``add_graph``)."""
    rng = random.Random(seed)
    before = [r for s in range(summaries) for r in (scalar("loss", rng.random(), s), histogram("dense/kernel", rng, s))]
    after = [r for s in range(summaries, 2 * summaries) for r in (scalar("loss", rng.random(), s), histogram("w", rng, s))]
    return event_file(before + list(graph_records) + after)


def split_fields(message: bytes) -> List[Tuple[int, bytes]]:
    """A message's top-level fields as ``(field number, the field's whole bytes)`` (tag included)."""
    out, i = [], 0
    while i < len(message):
        start = i
        key, i = _varint(message, i)
        wt = key & 7
        if wt == 0:
            _, i = _varint(message, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n, i = _varint(message, i)
            i += n
        else:
            raise ValueError("wire type %d" % wt)
        out.append((key >> 3, message[start:i]))
    return out


def node_name(field: bytes) -> bytes:
    """The name of a GraphDef ``node`` field (its bytes as :func:`split_fields` gives them)."""
    _, i = _varint(field, 0)
    _, i = _varint(field, i)  # (the NodeDef's length)
    key, i = _varint(field, i)
    assert key == (1 << 3 | 2)
    n, i = _varint(field, i)
    return field[i : i + n]


def forward_only(graph: bytes) -> bytes:
    """The GraphDef without its nodes in a gradients scope (what a forward-only writer leaves)."""
    keep = [f for num, f in split_fields(graph) if num != 1 or b"gradient" not in node_name(f)]
    return b"".join(keep)


def _varint(data: bytes, i: int) -> Tuple[int, int]:
    v = shift = 0
    while True:
        b = data[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7


__all__ = ["varint"]
