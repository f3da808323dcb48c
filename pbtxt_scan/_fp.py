"""fp_point: the first compute op of forward propagation, read forward in bounded memory (the
design and why it is right: ``_rules``' docstring)."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

from ._ahead import _Ahead, ahead_of, graph_producer
from ._answers import _at, _in_units, _PROPAGATING, Answer, Options, Step, Trail, _op, _point, _producer
from ._body import step_body, training_function
from ._catalog import DATA_SOURCES, ENQUEUES, METADATA, PLACEHOLDERS, in_gradients_scope
from ._dialect import operator_layout
from ._input import GraphFile, Source, opened
from ._model import Block, Message


def _fp_scan(
    blocks: Iterable[Block],
    opts: Options,
    sources: FrozenSet[str] = frozenset(),
    role: Callable[[Block], Tuple[bool, str]] = lambda b: (True, ""),
    ahead: Optional[_Ahead] = None,
) -> Tuple[Dict[str, Any], List[Step]]:
    """One forward pass computing every rule's fp candidate, stopping once dataflow has its answer.

    ``sources``: names that count as data sources up front (a function's arguments).
    ``role``: whether a placeholder feeds data (a batch) and, if not, what it is.
    ``ahead``: the byte search over the rest of the file; without it the pass reads on.
    Queue pipelines (Estimator input queues) chain queues: a dequeue whose data is enqueued into
    another queue is not the training input, so with queue sources the pass reads on and picks the
    first compute op fed by a dequeue whose data reaches no enqueue.

    Bounded state: ``ph`` (names downstream of a data placeholder) grows only until the first op
    fed by one is found, then is dropped; ``data`` holds the names downstream of a data source
    through plumbing, and through compute only for queue data until the pass knows no enqueue
    follows. Once the answer can only change if a given op appears later, the pass asks ``ahead``
    where such a node may be, reads on to there (blocks), and stops when there is none.
    """
    cat = opts.catalog
    trail = Trail()
    data: Dict[str, str] = {n: n for n in sources}  # node -> the data source it is downstream of
    ph: Set[str] = set()  # downstream of a placeholder (until the first op it feeds is found)
    found: Dict[str, Any] = {"doc": None, "placeholder": None, "dataflow": None, "grad": False, "pos": 0, "gap": False}
    queue_first: Dict[str, Block] = {}  # queue dequeue -> first compute op it feeds
    pipeline: Set[str] = set()  # dequeues whose data is enqueued again
    queues: Set[str] = set()  # the data sources that are queue dequeues
    n_sources = 0  # data sources met (function arguments are not in the file)
    wait_until = -1  # the byte search said nothing that matters comes before this offset
    for b in blocks:
        name = b.name or ""
        op = _op(b)
        if b.start - found["pos"] > 256:  # something other than nodes between them (a library?)
            found["gap"] = True
        found["pos"] = b.end
        if not found["grad"] and in_gradients_scope(name):
            found["grad"] = True
        c = cat.category(op)
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        src = next((data[p] for p in prods if p in data), None)
        fed_ph = bool(ph) and any(p in ph for p in prods)
        if op in DATA_SOURCES and op not in opts.keep_ops:
            data[name] = name
            n_sources += 1
            if op.startswith("QueueDequeue"):
                queues.add(name)
            trail.append(Step(_at(b), name, op, "pass", "data source"))
        elif op in PLACEHOLDERS and op not in opts.keep_ops and not _placeholder(b, role, found, ph, trail, opts):
            pass
        else:
            if _fp_node(b, name, op, c, src, fed_ph, opts, found, trail, data, ph, queue_first, pipeline, queues):
                return found, trail
        # Would a later node change the answer? Only one of these ops could: ask the byte search.
        if ahead is None or b.end <= wait_until:
            continue
        wanted = _still_wanted(found, opts, n_sources, ph, queue_first, pipeline, queues)
        if wanted is None:
            continue
        nxt = ahead.next_op(b.end, wanted)
        if nxt is None:
            trail.append(Step(_at(b), name, op, "pass", "a byte search of the rest of the file finds no node that could change the answer"))
            break
        wait_until = nxt
    final = [blk for q, blk in queue_first.items() if q not in pipeline] or list(queue_first.values())
    if final:
        found["dataflow"] = min(final, key=lambda blk: blk.start)
        trail.append(Step(_at(found["dataflow"]), found["dataflow"].name or "", found["dataflow"].op, "chosen",
                          "first compute op fed by the last queue of the input pipeline"))
    return found, trail


def _placeholder(b: Block, role: Callable[[Block], Tuple[bool, str]], found: Dict[str, Any], ph: Set[str], trail: Trail, opts: Options) -> bool:
    """Handle a placeholder; False when it is settled here (skipped), True to go on as a node."""
    if found["placeholder"] is not None or opts.rule == "doc":
        trail.append(Step(_at(b), b.name or "", b.op, "skip", "catalog: inputs"))
        return False
    holds, why = role(b)
    if holds:
        ph.add(b.name or "")
        trail.append(Step(_at(b), b.name or "", b.op, "pass", why or "a placeholder that feeds data"))
    else:
        trail.append(Step(_at(b), b.name or "", b.op, "skip", why))
    return False


def _fp_node(b, name, op, c, src, fed_ph, opts, found, trail, data, ph, queue_first, pipeline, queues) -> bool:  # type: ignore[no-untyped-def]
    """Judge one node that is neither a data source nor a placeholder; True when fp is answered."""
    # doc rule candidate (first only)
    doc_why = None
    if c is not None:
        doc_why = "catalog: %s" % c
    else:
        hit = next((f for f in opts.name_filters if f in name), None)
        if hit:
            doc_why = "name holds %r" % hit
        elif "/Initializer/" in name or name.startswith("Initializer/"):
            doc_why = "inside a variable initializer"
    if doc_why is None and found["doc"] is None:
        found["doc"] = b
        if opts.rule == "doc":  # the recipe stops at its first candidate
            return True
    if opts.rule == "doc":
        trail.append(Step(_at(b), name, op, "skip", doc_why or ""))
        return False
    if src is None and not fed_ph:
        trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c if c else "not fed by the data source"))
        return False
    if op is not None and op in ENQUEUES and src is not None:
        pipeline.add(src)
        trail.append(Step(_at(b), name, op, "skip", "data from %s goes into another queue" % src))
        return False
    if c is None or op in opts.keep_ops:
        if src is not None:
            if src in queues:
                data[name] = src  # to see whether this data goes into another queue
                if src not in queue_first:
                    queue_first[src] = b
                    why = "first compute op fed by queue %s (kept until the pipeline is known)" % src
                    trail.append(Step(_at(b), name, op, "pass", why))
                return False
            found["dataflow"] = b
            trail.append(Step(_at(b), name, op, "chosen", "first compute op fed by the data source %s" % src))
            return True
        found["placeholder"] = b
        ph.clear()  # only the first op fed by a placeholder matters
        trail.append(Step(_at(b), name, op, "pass", "first compute op fed by a placeholder (kept in case no data source exists)"))
        return False
    if op in METADATA:
        trail.append(Step(_at(b), name, op, "skip", "reads only the shape (or presence) of the data"))
        return False
    if c in _PROPAGATING or c == "added by --skip-op":
        if src is not None:
            data[name] = src
        else:
            ph.add(name)
        trail.append(Step(_at(b), name, op, "pass", "passes the data on (%s)" % c))
        return False
    trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c))
    return False


def _still_wanted(found, opts, n_sources, ph, queue_first, pipeline, queues) -> Optional[Callable[[str], bool]]:  # type: ignore[no-untyped-def]
    """Which later op could still change fp, once the answer is settled up to that (else None).

    - a queue candidate whose queue is not known to feed another queue: only a later enqueue (it
      may feed one) or a non-queue data source (it would win) could change it;
    - a placeholder candidate and no data source yet: only a later data source could;
    - (rule auto) only a doc candidate: a later data source or placeholder could.
    """
    if opts.rule == "doc":
        return None
    kept = opts.keep_ops
    if n_sources > len(queues):
        return None  # a non-queue source met: the first op it feeds wins, wherever it is
    if any(q not in pipeline for q in queue_first):
        return lambda op: op not in kept and (op in ENQUEUES or (op in DATA_SOURCES and not op.startswith("QueueDequeue")))
    if n_sources or ph:
        return None  # data met, the first compute op it feeds not yet: read on
    if found["placeholder"] is not None:
        return lambda op: op in DATA_SOURCES and op not in kept
    if opts.rule == "auto" and found["doc"] is not None:
        return lambda op: (op in DATA_SOURCES or op in PLACEHOLDERS) and op not in kept
    return None


def find_fp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_fp(g, opts))


def _find_fp(g: GraphFile, opts: Options) -> Answer:
    block_path, heads = operator_layout(g.dialect)
    tf = block_path == ("node",)
    producer: List[Optional[int]] = []

    def role(b: Block) -> Tuple[bool, str]:
        if not producer:
            producer.append(graph_producer(g) if tf else None)
        return _holds_data(g, b, producer[0])

    blocks = iter(g.blocks(block_path, heads))
    with contextlib.ExitStack() as stack:
        ahead = ahead_of(g)
        if ahead is not None:
            stack.callback(ahead.close)
        found, trail = _fp_scan(blocks, opts, role=role, ahead=ahead)
        # Where the step is (step_body, as bp decides). A file with no library has no function
        # to hold it: the top level, and no need to look for gradients.
        no_library = ahead is not None and ahead.no_library() and not found["gap"]
        top_grad = _top_gradients(found, ahead, blocks) if tf and not no_library else True
    ans = _fp_pick(found, trail, opts, g.name, None)
    # The body that holds the training step (the same choice bp makes: step_body).
    body = step_body(top_grad, lambda: training_function(g))
    if body is None:
        return ans
    fname = body.name
    f2, t2 = _fp_scan(body.blocks(), opts, body.args, role=role)
    sub = _fp_pick(f2, t2, opts, g.name, fname)
    if sub.point is None:
        return ans
    reason = "the training step runs in function %s (it holds the gradients): %s" % (fname, sub.reason)
    return Answer("fp", sub.point, sub.rule, reason, trail + t2)


def _top_gradients(found: Dict[str, Any], ahead: Optional[_Ahead], rest: Iterator[Block]) -> bool:
    """Whether a top-level node sits in a gradients scope: seen by the pass, else told by the byte
    search, else (no byte search, or a line it cannot judge) read from the remaining blocks."""
    if found["grad"]:
        return True
    if ahead is not None:
        told = ahead.top_gradients(found["pos"])
        if told is not None:
            return told
    for b in rest:  # names and ops only are looked at: bounded
        if in_gradients_scope(b.name or ""):
            return True
    return False


def placeholder_role(node: Message, producer: Optional[int]) -> Tuple[bool, str]:
    """Whether a placeholder (or a function's ``_Arg``) feeds the training data, and if not, what
    it is. ``node`` is the parsed node; ``producer`` the GraphDef's ``versions.producer``.

    - DT_RESOURCE: a resource handle (a captured variable, or the iterator a ``tf.function`` takes);
      DT_VARIANT: a dataset, optional or tensor-list handle. Neither is data.
    - ``shape`` with a dimension, or ``unknown_rank``: data (a batch).
    - ``shape {}``: a scalar (a hyper-parameter: learning rate, keep_prob, is_training) from
      producer 22 on. Before, an empty shape meant "unknown": TensorFlow's
      ``core/public/version.h``, GraphDef version 22: "Placeholder now can specify and enforce
      scalar and partial shapes, particularly when restoring a graph from GraphDef produced at
      version 22 or later." There ``_output_shapes`` (written with ``add_shapes``) decides.
    - no ``shape``: ``_output_shapes`` decides; without it, data.
    """
    attrs = {a.get("key"): (a.get("value") or Message()) for a in node.all("attr")}
    dtype = None
    for key in ("dtype", "T"):
        if key in attrs:
            dtype = attrs[key].get("type")
            break
    if dtype == "DT_RESOURCE":
        return False, "a resource handle (a captured variable, or the iterator a tf.function takes), not data"
    if dtype == "DT_VARIANT":
        return False, "a variant handle (a dataset, optional or tensor list), not data"
    shape = attrs["shape"].get("shape") if "shape" in attrs else None
    if shape is not None and (shape.all("dim") or _true(shape.get("unknown_rank"))):
        return True, "a placeholder that feeds data (it has a batch dimension)"
    if shape is not None and (producer is None or producer >= 22):
        return False, "a scalar placeholder (a hyper-parameter such as a learning rate, not data)"
    # An old empty shape (unknown), or no shape: what the writer inferred, if it wrote it.
    out = attrs.get("_output_shapes")
    shapes = (out.get("list") or Message()).all("shape") if out is not None else []
    if node.get("op") in ("_Arg", "_DeviceArg"):
        holds = not shapes or bool(shapes[0].all("dim")) or _true(shapes[0].get("unknown_rank"))
        what = "an argument the caller hands in (_Arg)"
        return holds, what + (" that feeds data" if holds else ": a scalar, not data")
    if shapes:
        s0 = shapes[0]
        if s0.all("dim") or _true(s0.get("unknown_rank")):
            return True, "a placeholder that feeds data (_output_shapes has a dimension)"
        return False, "a scalar placeholder (_output_shapes is a scalar: a hyper-parameter, not data)"
    if shape is not None:
        return True, "a placeholder of unknown shape (an empty shape before GraphDef version 22)"
    return True, "a placeholder of unknown shape"


def _true(v: Any) -> bool:
    return v in ("true", "True", "t", 1)


def _holds_data(g: GraphFile, b: Block, producer: Optional[int]) -> Tuple[bool, str]:
    """:func:`placeholder_role` of a block, parsed from the file."""
    from ._errors import PbtxtError

    try:
        node = g.parse(b, max_bytes=1 << 20)[0].value
    except PbtxtError:
        return True, "a placeholder (too big to read: kept)"
    return placeholder_role(node, producer)


def _fp_pick(found: Dict[str, Any], trail: List[Step], opts: Options, file: str, fn: Optional[str]) -> Answer:
    rule = opts.rule
    b: Optional[Block] = None
    used = rule
    reason = ""
    if rule in ("auto", "dataflow"):
        if found["dataflow"] is not None:
            b, used, reason = found["dataflow"], "dataflow", "first compute op fed by the data source"
        elif found["placeholder"] is not None:
            b, used, reason = found["placeholder"], "dataflow", "no data source: first compute op fed by a placeholder"
        elif rule == "dataflow":
            return Answer("fp", None, "dataflow", "no data source or placeholder feeds a compute op", trail)
    if b is None and rule in ("auto", "doc"):
        b, used = found["doc"], "doc"
        reason = "first node not in the catalog and not filtered by name" if b is not None else ""
        if b is not None and rule == "auto":
            reason = "no data source: " + reason
    if b is None:
        return Answer("fp", None, used, "no compute op found", trail)
    if b is not found["dataflow"]:
        trail.append(Step(_at(b), b.name or "", b.op, "chosen", reason))
    return Answer("fp", _point("fp", b, used, file, fn), used, reason, trail)
