"""The node shapes the fast path knows (``text/_batch``: ``_known``, ``_learn``): a node block whose
pieces between strings are those of one the batch's regex verified and the schema found valid is
taken by one split, its heads read off the pieces. Nothing it takes may be refused by the general
scanner's full check, and it yields the same blocks: random node-dense graphs, each with one
random change (in a field name, a value, or only in a string's content), against ``fast=False``."""
from __future__ import annotations

import io
import random
from typing import Any, List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from pbtxt_scan import PbtxtError, SchemaErrors
from pbtxt_scan.text import _batch, _schema
from pbtxt_scan.text._canonical import scan_canonical
from pbtxt_scan.text._schema import Watch

HEADS = frozenset({"name", "op"})
# Node shapes (%s: a string's content): heads first, heads after other lines, nested values.
SHAPES = (
    'node {\n  name: "%s"\n  op: "%s"\n}\n',
    'node {\n  name: "%s"\n  op: "%s"\n  input: "%s"\n  input: "%s"\n  attr {\n    key: "T"\n    value {\n'
    '      type: DT_FLOAT\n    }\n  }\n}\n',
    'node {\n  name: "%s"\n  op: "%s"\n  device: "%s"\n  attr {\n    key: "%s"\n    value {\n      list {\n'
    '        s: "%s"\n        i: 3\n        i: -1\n      }\n    }\n  }\n  attr {\n    key: "%s"\n    value {\n'
    '      b: true\n    }\n  }\n}\n',
    'node {\n  input: "%s"\n  name: "%s"\n  attr {\n    key: "%s"\n    value {\n      f: 1.5\n    }\n  }\n'
    '  op: "%s"\n}\n',
)
# A string's content that is valid anywhere (a quote of the other kind, braces, a colon, UTF-8).
ALPHABET = "ab/_:0@ {}'é"
# One change each: (what is replaced, by what) in the changed node's text, the first one found;
# a None target: a string's content changed (the first string from a random one).
CHANGES: Tuple[Tuple[Any, str], ...] = (
    ("  op: ", "  opp: "),  # an unknown field
    ("  name: ", "  name {\n  }\n  nm: "),  # a string given a message (and a name after it)
    ("DT_FLOAT", "DT_FLAOT"),  # an enum value
    ("DT_FLOAT", "1"),  # (an enum by number: valid)
    ("i: 3", "i: 99999999999999999999"),  # out of int64's range
    ("i: 3", 'i: "3"'),  # a string for an int
    ("b: true", "b: maybe"),  # no bool
    ("f: 1.5", "f: x"),  # no float
    ('  op: "', '  op: "x"\n  op: "'),  # a singular field twice
    (None, "\0"),  # content only: a NUL (no string literal has one)
    (None, "\n"),  # a newline (no one-line literal)
    (None, '"'),  # a quote that ends the string early
    (None, "\\q"),  # an escape that is none
    (None, "\\377"),  # an escape that makes no UTF-8 (refused in a string field)
    (None, "\\303\\251"),  # (an escape that is UTF-8: valid)
    (None, "\xff"),  # a byte that is no UTF-8 (written raw)
    (None, ""),  # (no change)
)


def _graph(seed: int, change: int) -> Tuple[bytes, Tuple[int, int]]:
    """A node-dense graph of a few shapes, repeated, and the lines of the node changed (its first,
    the one after its last)."""
    rnd = random.Random(seed)
    kinds = rnd.sample(range(len(SHAPES)), rnd.randint(1, len(SHAPES)))
    nodes = []
    for _ in range(rnd.randint(2, 40)):
        shape = SHAPES[rnd.choice(kinds)]
        nodes.append(shape % tuple("".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 6))) for _ in range(shape.count("%s"))))
    k = rnd.randrange(len(nodes))
    target, put = CHANGES[change]
    node = nodes[k]
    if target is None:
        quotes = [i for i, c in enumerate(node) if c == '"']
        j = 2 * rnd.randrange(len(quotes) // 2)
        at = rnd.randint(quotes[j] + 1, quotes[j + 1])  # (anywhere in the string's content)
        nodes[k] = node[:at] + put + node[at:]
    elif target in node:
        nodes[k] = node.replace(target, put, 1)
    head = b"versions {\n  producer: 27\n}\n" if rnd.random() < 0.3 else b""
    text = head + "".join(nodes).encode("utf-8").replace("\xff".encode("utf-8"), b"\xff")  # (the byte itself)
    first = head.count(b"\n") + sum(n.count("\n") for n in nodes[:k]) + 1
    return text, (first, first + nodes[k].count("\n"))


def _read(text: bytes, fast: bool, limit: int = 1000) -> Tuple[List[Any], List[str]]:
    """The blocks (each with its heads) and the problems, read by the fast path or the general scanner."""
    w = Watch("tensorflow.GraphDef", limit=limit, display="g")
    blocks: List[Any] = []
    try:
        for b in scan_canonical(io.BytesIO(text), ("node",), HEADS, watch=w, fast=fast, warm_up=0, chunk_size=1 << 12):
            blocks.append((b.start, b.end, b.line, b.column, sorted(b.heads)))
    except SchemaErrors as e:
        return blocks, [str(x) for x in e.errors]
    except PbtxtError as e:
        return blocks, [str(e)]
    return blocks, []


@settings(deadline=None, max_examples=200)
@given(st.integers(0, 2 ** 32), st.integers(0, len(CHANGES) - 1))
def test_a_known_shape_is_refused_as_the_full_check_refuses_it(seed: int, change: int) -> None:
    text, _ = _graph(seed, change)
    general = _read(text, False)
    assert _read(text, True) == general
    assert _read(text, True, limit=1)[1] == general[1][:1]


def _spy(monkeypatch: Any) -> List[bool]:
    """Whether each node block offered to the lane was taken."""
    taken: List[bool] = []
    known = _batch.Batches._known

    def spy(self: Any, *a: Any) -> Any:
        got = known(self, *a)
        taken.append(got is not None)
        return got

    monkeypatch.setattr(_batch.Batches, "_known", spy)
    return taken


def test_known_shapes_are_taken_by_their_split(monkeypatch: Any) -> None:
    """The lane is taken (the test above would pass without it), and where a node's string content
    alone is wrong, after nodes of its shape were taken, the full check's error is raised, in it."""
    taken = _spy(monkeypatch)
    for seed in range(10):
        for change, (target, put) in enumerate(CHANGES):
            if target is not None:
                continue
            text, (first, after) = _graph(seed, change)
            general = _read(text, False)
            assert _read(text, True) == general, (seed, put)
            if general[1]:
                line = int(general[1][0].split(":")[1])
                assert first <= line < after, (general, first, after)
    assert sum(taken) > 100


def test_a_walk_keeps_a_bounded_room_of_shapes(monkeypatch: Any) -> None:
    """A walk keeps at most PLAN_ROOM bytes of shapes (past that, the regex reads every node), and
    the schema's reader at most MEMO_ROOM (past that, every field is checked line by line)."""
    taken = _spy(monkeypatch)
    text = "".join(SHAPES[i % 2] % (("n%d" % i,) + ("x",) * 3)[: SHAPES[i % 2].count("%s")] for i in range(20)).encode("ascii")
    assert _read(text, True) == _read(text, False)
    assert sum(taken) >= 16  # (all but the first of each shape, and the first node: walked line by line)
    taken.clear()
    monkeypatch.setattr("pbtxt_scan.text._canonical.PLAN_ROOM", 10)
    assert _read(text, True) == _read(text, False)
    assert taken and not any(taken)
    monkeypatch.setattr(_schema, "MEMO_ROOM", 300)
    w = Watch("tensorflow.GraphDef", display="g")
    list(scan_canonical(io.BytesIO(text), ("node",), HEADS, watch=w, warm_up=0))
    assert sum(len(m) for m in w.memo.values()) == 1  # (the first shape: 34 bytes and its entry)
    assert _read(text, True) == _read(text, False)
