"""Kind ``const``: a frozen, const-heavy graph: the ``input`` / ``labels`` placeholders, then per
layer a ``Const`` kernel whose ``tensor_content`` is one line of CEscape'd float32 bytes (and a
small bias), then a short forward part, the loss and the backward part.

Two shapes (``--const-shape``):

* ``lines`` (the default): few kernels, each one line of tens of MB (``line_bytes``), stamped from
  8 pre-escaped blocks (``BlockPool``).
* ``nodes``: many kernels of 256 x 1024 float32 (about 2.4 MB of text each), as a real
  ``tf.io.write_graph`` of a frozen graph has them, each with its own random content
  (``NodesGraph``).

fp (``layer_0/MatMul``) comes right after the last big line, so an fp search skims the whole file.
"""

from __future__ import annotations

import math
import random
from array import array
from typing import Any, Dict, List, Tuple

from ._stamp import ROWS, BlockPool, Tmpl, Writer, float_bytes, slot_values, split_tokens
from ._text import ESC_LIST, Fields, av_shape, av_tensor, av_type, cescape, render, tf_node
from ._tf import GL, LP, L, bwd_unit, fwd_compute, layer_vals, loss_and_grad_head, versions_text

DEFAULT_CONST_LINE = 50 * 1000 * 1000  # escaped characters per big Const line


class ConstGraph:
    def __init__(self, seed: int, target: int, line_len: int) -> None:
        self.rng = random.Random(seed * 1000003 + 2)
        self.batch = 8
        # escaped chars per raw byte for these weights (measured on a sample)
        sample = cescape(float_bytes(random.Random(seed), 4096))
        expansion = len(sample) / (4096 * 4.0)
        overhead_per_layer = 9000
        n = max(2, int(round(target / float(line_len + overhead_per_layer))))
        per_line = max(1024, target / float(n) - overhead_per_layer - 3000.0 / n)
        width = int(math.sqrt(per_line / (4.0 * expansion)))
        self.width = max(ROWS, (width // ROWS) * ROWS)
        self.layers = n
        self.pool = BlockPool(self.rng, self.width, ROWS)
        self.nblocks = self.width // ROWS
        W = self.width
        head: Fields = []
        head += tf_node("input", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([-1, W])})
        head += tf_node("labels", "Placeholder", (), {"dtype": av_type("DT_INT64"), "shape": av_shape([-1])})
        self.head = Tmpl(render(head))
        kern = tf_node(L + "/kernel", "Const", (), {"dtype": av_type("DT_FLOAT"), "value": av_tensor(
            "DT_FLOAT", [W, W], [("tensor_content", '"@@DATA@@"')])})
        a, b = split_tokens(render(kern), ["@@DATA@@"])
        self.kern_a, self.kern_b = Tmpl(a), Tmpl(b)
        self.bias: List[Tmpl] = []
        for _ in range(4):
            content = cescape(float_bytes(self.rng, W, 0.01, 0.0))
            self.bias.append(Tmpl(render(tf_node(L + "/bias", "Const", (), {
                "dtype": av_type("DT_FLOAT"),
                "value": av_tensor("DT_FLOAT", [W], [("tensor_content", '"' + content + '"')])}))))
        self.tail = _Tail(self.batch)

    def write(self, w: Writer) -> Dict[str, Any]:
        nl = self.layers
        w.put(self.head)
        for k in range(nl):
            v = layer_vals(k)
            w.put(self.kern_a, v)
            self.pool.write(w, k, self.nblocks)
            w.put(self.kern_b, v)
            w.put(self.bias[(k * 7 + 3) % len(self.bias)], v)
        out: Dict[str, Any] = {"layers": nl, "width": self.width}
        out.update(self.tail.write(w, nl))
        return out


class _Tail:
    """What follows the Consts: the forward part, the loss and the backward part (both shapes)."""

    def __init__(self, batch: int) -> None:
        self.fwd_first = Tmpl(render(fwd_compute("input", L + "/kernel", L + "/bias", True)))
        self.fwd_mid = Tmpl(render(fwd_compute(LP + "/Relu", L + "/kernel", L + "/bias", True)))
        self.fwd_last = Tmpl(render(fwd_compute(LP + "/Relu", L + "/kernel", L + "/bias", False)))
        self.fwd_only = Tmpl(render(fwd_compute("input", L + "/kernel", L + "/bias", False)))
        self.loss = Tmpl(loss_and_grad_head(LP + "/BiasAdd", "labels", batch))
        self.bwd: Dict[Tuple[bool, bool], Tmpl] = {}
        for first in (True, False):
            for last in (True, False):
                self.bwd[(first, last)] = Tmpl(bwd_unit(first, last, "input", L + "/kernel"))
        self.versions = Tmpl(versions_text())

    def write(self, w: Writer, nl: int) -> Dict[str, Any]:
        fp_line = 0
        for k in range(nl):
            if nl == 1:
                t = self.fwd_only
            elif k == 0:
                t = self.fwd_first
            elif k == nl - 1:
                t = self.fwd_last
            else:
                t = self.fwd_mid
            start = w.put(t, layer_vals(k))
            if k == 0:
                fp_line = start + t.line_of('  name: "' + L + '/MatMul"\n')
        w.put(self.loss, slot_values(p=nl - 1))
        bp_line = 0
        for k in range(nl - 1, -1, -1):
            t = self.bwd[(k == 0, k == nl - 1)]
            start = w.put(t, layer_vals(k))
            if k == 0:
                bp_line = start + t.line_of('  name: "' + GL + '/MatMul_grad/MatMul_1"\n')
        w.put(self.versions)
        return {"expected": {
            "fp": "layer_0/MatMul", "fp_line": fp_line,
            "bp": "gradients/layer_0/MatMul_grad/MatMul_1", "bp_line": bp_line,
            "input": "input",
        }}


# --- the ``nodes`` shape -----------------------------------------------------------------------

NODE_DIMS = (256, 1024)  # one kernel: 1 MiB of float32, about 2.4 MB once escaped


def uniform_f32(rng: random.Random, n: int) -> bytes:
    """``n`` float32 values uniform in [0, 1), little-endian, made as TensorFlow's random
    generators make them (23 random mantissa bits: ``k * 2**-23``), without a Python step per
    value but one C ``map``: a masked big integer holds the ``k``s."""
    mask = int.from_bytes(b"\xff\xff\x7f\x00" * n, "little")
    ks = memoryview((rng.getrandbits(32 * n) & mask).to_bytes(4 * n, "little")).cast("I")
    return array("f", map((2.0 ** -23).__mul__, ks)).tobytes()


def cescape_bytes(raw: bytes) -> bytes:
    """``cescape`` of ``raw`` as ASCII bytes (one ``str.translate`` through a 256-entry list)."""
    return raw.decode("latin-1").translate(ESC_LIST).encode("ascii")


class NodesGraph:
    """``layers`` kernels of ``NODE_DIMS`` (transposed every other layer, so the forward chain
    multiplies: 256 -> 1024 -> 256 ...), each with its own random content and a small bias."""

    def __init__(self, seed: int, target: int) -> None:
        self.rng = random.Random(seed * 1000003 + 5)
        a, b = NODE_DIMS
        per_node = len(cescape_bytes(uniform_f32(random.Random(seed), 4096))) / 4096.0 * a * b + 3000
        self.layers = max(2, int(round(target / per_node)))
        head: Fields = []
        head += tf_node("input", "Placeholder", (), {"dtype": av_type("DT_FLOAT"), "shape": av_shape([-1, a])})
        head += tf_node("labels", "Placeholder", (), {"dtype": av_type("DT_INT64"), "shape": av_shape([-1])})
        self.head = Tmpl(render(head))
        self.kern: List[Tuple[Tmpl, Tmpl]] = []
        self.bias: List[Tuple[Tmpl, Tmpl]] = []
        for dims in ((a, b), (b, a)):
            for name, shape, out in ((L + "/kernel", list(dims), self.kern), (L + "/bias", [dims[1]], self.bias)):
                node = tf_node(name, "Const", (), {"dtype": av_type("DT_FLOAT"), "value": av_tensor(
                    "DT_FLOAT", shape, [("tensor_content", '"@@DATA@@"')])})
                x, y = split_tokens(render(node), ["@@DATA@@"])
                out.append((Tmpl(x), Tmpl(y)))
        self.tail = _Tail(8)

    def write(self, w: Writer) -> Dict[str, Any]:
        nl = self.layers
        a, b = NODE_DIMS
        w.put(self.head)
        for k in range(nl):
            v = layer_vals(k)
            for (x, y), n in ((self.kern[k % 2], a * b), (self.bias[k % 2], a if k % 2 else b)):
                w.put(x, v)
                w.data(cescape_bytes(uniform_f32(self.rng, n)))
                w.put(y, v)
        out: Dict[str, Any] = {"layers": nl, "width": a, "shape": "nodes"}
        out.update(self.tail.write(w, nl))
        return out


SHAPES = ("lines", "nodes")


def write(w: Writer, size: int, seed: int, *, line_bytes: int = DEFAULT_CONST_LINE,
          shape: str = "lines") -> Dict[str, Any]:
    if shape == "nodes":
        return NodesGraph(seed, size).write(w)
    return ConstGraph(seed, size, line_bytes).write(w)
