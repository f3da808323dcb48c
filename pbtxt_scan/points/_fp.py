"""fp_point: the first compute op of forward propagation, read forward in bounded memory (the
design and why it is right: ``_rules``' docstring)."""
from __future__ import annotations

import contextlib
import re
from typing import Any, Callable, Dict, FrozenSet, Iterable, Iterator, List, NamedTuple, Optional, Set, Tuple

from ._ahead import _Ahead, ahead_of, graph_producer
from ._answers import _at, _in_units, _PROPAGATING, Alternative, Answer, Options, Step, Trail, _op, _point, _producer
from ._body import called_function, function_body, step_body, training_function
from ._catalog import CALLS, DATA_SOURCES, ENQUEUES, METADATA, PLACEHOLDERS, PREPROCESSING, RESOURCE_FIRST, STAGES, VARIABLE_PASS, VARIABLES, in_gradients_scope
from ..graph._dialect import operator_layout
from ..graph._input import GraphFile, Source, opened
from .._errors import PbtxtError
from .._model import Block, Message


class _Flow(NamedTuple):
    """What reaches a node from one of the step's inputs: the input, its class (0 a data source,
    1 a data placeholder, 2 a constant big enough to be data), and the first ops on the way: the
    first input preprocessing (``pre``) and the first op of the model (``head``), each ``None``
    while only plumbing lay between."""

    source: str
    klass: int
    pre: Optional[Block]
    head: Optional[Block]


class _Candidate(NamedTuple):
    """An fp candidate: the first op of the model on the data of ``flow.source``, found where that
    data meets a trained variable (``meets``)."""

    block: Block
    meets: Block
    flow: _Flow
    seen: int  # blocks read when it was found


_KLASS = ("the data source", "a data placeholder", "a constant big enough to be data")
_CONST_DATA_BYTES = 4096  # a Const block this big holds data (shapes and permutations are tiny)
_FLOATS = frozenset("DT_FLOAT DT_DOUBLE DT_HALF DT_BFLOAT16".split())
# After the first candidate, how many more blocks fp reads for another input's copy of the model
# (at least this many, else as many as it read to the first): copies are built side by side.
_COPY_BUDGET = 2000
_COPY_BYTES = 4 << 20
# Without a trained variable met this far past the data's first compute op (a frozen or GE graph
# whose weights are constants), that first op is the answer, as it was before variables counted.
_MEET_BUDGET = 2000
_MAX_STARTERS = 16
# Ops that make values from a shape alone: data (an initial value, noise), not shape arithmetic.
_RANDOM = re.compile(r"(Stateless|Stateful)?(Random|TruncatedNormal|Multinomial)")
_MAX_WAITING = 1 << 16


class _Scan:
    """The state of one forward pass (:func:`_fp_scan`): every rule's candidate so far, in small
    objects, bounded by the distance to the answer (flows and variables are kept only until then)."""

    __slots__ = (
        "opts", "cat", "trail", "role", "flows", "variables", "done", "candidates", "starters",
        "pipeline", "doc", "grad", "pos", "gap", "seen", "first_flow_at", "fallback",
        "waiting", "waiting_names", "n_waiting", "met", "shape_only", "chosen", "const_role", "inputs", "queues",
    )

    def __init__(self, opts: Options, role: Callable[[Block], Tuple[bool, str]]) -> None:
        self.opts = opts
        self.cat = opts.catalog
        self.trail = Trail()
        self.role = role
        self.flows: Dict[str, _Flow] = {}  # node -> what data reaches it
        self.variables: Set[str] = set()  # nodes whose output is a variable's value or handle
        self.done: Set[str] = set()  # inputs whose candidate is known (their data is no longer followed)
        self.candidates: List[_Candidate] = []  # the first per input, in file order
        self.starters: List[Tuple[Block, _Flow]] = []  # the first compute op of each data path (bounded)
        self.pipeline: Set[str] = set()  # inputs whose data goes into a queue or a staging area
        self.doc: Optional[Block] = None
        self.grad = False  # a node in a gradients scope met
        self.pos = 0
        self.gap = False  # something other than nodes between two node blocks (a library?)
        self.seen = 0
        self.first_flow_at = -1
        self.fallback: Optional[Tuple[Block, _Flow]] = None  # the first compute op on the best data, without a variable
        # The nodes judged before one of their inputs was read, by that input (and the nodes
        # that read a waiting node, in turn): TF1 while loops write an `Enter` after the op that
        # reads it, so what it carries reaches the op, and the ops after it, only later. Kept
        # only until the answer, and capped.
        self.waiting: Dict[str, List[Block]] = {}
        self.n_waiting = 0
        self.waiting_names: Set[str] = set()  # the nodes in ``waiting``
        self.met: Set[str] = set()  # the names read so far (until the answer)
        self.shape_only: Set[str] = set()  # nodes computed only from constants and shapes (until the doc answer)
        self.chosen: Optional[Block] = None  # the answer's block (set by _fp_pick)
        self.const_role: Tuple[int, Tuple[bool, str]] = (-1, (False, ""))  # the last Const judged (read once)
        self.inputs: Dict[str, Tuple[int, int]] = {}  # input -> (class, blocks read when met)
        self.queues: Set[str] = set()  # inputs that are queue dequeues (a pipeline may feed on)

    def best(self) -> Optional[_Candidate]:
        return min(self.candidates, key=lambda c: (c.flow.klass, c.block.start)) if self.candidates else None

    # --- one node ---------------------------------------------------------------------------

    def node(self, b: Block) -> None:
        name = b.name or ""
        op = _op(b)
        if b.start - self.pos > 256:
            self.gap = True
        self.pos = b.end
        self.seen += 1
        self.met.add(name)
        if in_gradients_scope(name):  # the backward pass: never fp, and data flows no further
            self.grad = True
            self._doc(b, name, op, self.cat.category(op))
            self.trail.append(Step(_at(b), name, op, "skip", "in a gradients scope (backward pass)"))
            return
        opts = self.opts
        kept = op in opts.keep_ops
        if op in VARIABLES and not kept:
            self.variables.add(name)
            self._doc(b, name, op, self.cat.category(op))
            return
        if opts.sources:
            if name in opts.sources:
                self._source(b, name, op, 0, "named by --source")
                return
            if (op in DATA_SOURCES or op in PLACEHOLDERS) and not kept:
                self._placeholder_kind(b, name, op, data=False)
                return
        elif op in DATA_SOURCES and not kept:
            self._source(b, name, op, 0, "data source")
            return
        elif op in PLACEHOLDERS and not kept:
            self._placeholder_kind(b, name, op, data=True)
            return
        self._compute(b, name, op)

    def _source(self, b: Block, name: str, op: Optional[str], klass: int, why: str) -> None:
        self.flows[name] = _Flow(name, klass, None, None)
        if len(self.inputs) < 4096:
            self.inputs[name] = (klass, self.seen)
        if op is not None and op.startswith("QueueDequeue"):
            self.queues.add(name)
        self.trail.append(Step(_at(b), name, op, "pass", why))

    def _placeholder_kind(self, b: Block, name: str, op: Optional[str], data: bool) -> None:
        if self.opts.rule == "doc":
            self.trail.append(Step(_at(b), name, op, "skip", "catalog: inputs"))
            return
        holds, why = self.role(b)
        if why.startswith(RESOURCE_HANDLE):
            self.variables.add(name)  # a tf.function's captured variable
        if holds and data:
            self._source(b, name, op, 1, why or "a placeholder that feeds data")
        elif holds:
            self.trail.append(Step(_at(b), name, op, "skip", "not named by --source"))
        else:
            self.trail.append(Step(_at(b), name, op, "skip", why))

    def _const(self, b: Block) -> Tuple[bool, str]:
        """Whether a Const may hold data (``role``), read once for the doc rule and the sources."""
        if self.const_role[0] != b.start:
            self.const_role = (b.start, self.role(b))
        return self.const_role[1]

    def _doc(self, b: Block, name: str, op: Optional[str], c: Optional[str]) -> Optional[str]:
        """The doc rule's judgement of a node (why it is no doc candidate, or ``None``); the first
        candidate is kept. Shape arithmetic (computed only from constants and shapes: the
        ``range`` and ``concat`` that build a transpose's permutation) is no candidate, as in bp."""
        if self.doc is not None:
            return "after the doc rule's answer"
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        if op in METADATA or (op == "Const" and not self._const(b)[0]) or (
            prods and all(p in self.shape_only for p in prods) and not _RANDOM.match(op or "")
        ):
            self.shape_only.add(name)
            if c is None:
                return "computes only from constants and shapes"
        if c is not None:
            why: Optional[str] = "catalog: %s" % c
        else:
            hit = next((f for f in self.opts.name_filters if f in name), None)
            if hit:
                why = "name holds %r" % hit
            elif "/Initializer/" in name or name.startswith("Initializer/"):
                why = "inside a variable initializer"
            else:
                why = None
        if why is None and self.doc is None:
            self.doc = b
        return why

    def _compute(self, b: Block, name: str, op: Optional[str]) -> None:
        had = name in self.flows, name in self.variables
        self._judge(b, name, op, False)
        if self.waiting and (name in self.flows, name in self.variables) != had:
            self._wake(name)

    def _wake(self, first: str) -> None:
        """Judge again the nodes that were waiting on ``first`` (and, in turn, on them)."""
        work = [first]
        while work:
            p = work.pop()
            for later in self.waiting.pop(p, ()):
                n = later.name or ""
                had = n in self.flows, n in self.variables
                if had[0] and p not in self.variables:
                    continue  # data reaches it already; only a variable could change it
                self._judge(later, n, _op(later), True)
                if (n in self.flows, n in self.variables) != had:
                    work.append(n)

    def _judge(self, b: Block, name: str, op: Optional[str], again: bool) -> None:
        opts, trail = self.opts, self.trail
        c = self.cat.category(op)
        kept = op in opts.keep_ops
        doc_why = self._doc(b, name, op, c) if not again else None
        if opts.rule == "doc":
            if doc_why is not None:
                trail.append(Step(_at(b), name, op, "skip", doc_why))
            return
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        if not again and self.n_waiting < _MAX_WAITING:
            for p in prods:
                if p not in self.met or (p in self.waiting_names and p not in self.flows):
                    self.waiting.setdefault(p, []).append(b)
                    self.waiting_names.add(name)
                    self.n_waiting += 1
        first_is_var = op in RESOURCE_FIRST
        var_in = any(p in self.variables for p in prods) or (first_is_var and bool(prods))
        flows = [self.flows[p] for i, p in enumerate(prods) if p in self.flows and not (first_is_var and i == 0)]
        flows = [f for f in flows if f.source not in self.done]
        if op is not None and op in VARIABLE_PASS and var_in and not flows:
            self.variables.add(name)
        if op == "ReadVariableOp":
            self.variables.add(name)
            return
        if not flows:
            if op == "Const" and c is not None and not opts.sources and not any(k < 2 for k, _at in self.inputs.values()):
                holds, why = self._const(b)  # (only while no better input is known: most Consts are never read)
                if holds:
                    self._source(b, name, op, 2, why + ": data, if nothing else feeds the model")
                    return
            trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c if c else "not fed by the data"))
            return
        flow = min(flows, key=lambda f: (f.klass, f.head is None, f.pre is None))
        if op in METADATA:
            trail.append(Step(_at(b), name, op, "skip", "reads only the shape (or presence) of the data"))
            return
        if op in ENQUEUES or op in STAGES:
            self.pipeline.add(flow.source)
            if self.fallback is not None and self.fallback[1].source == flow.source:
                self.fallback = None  # a pipeline stage's first op is no answer, even without a variable
            trail.append(Step(_at(b), name, op, "skip", "data from %s goes into a queue or staging area: a later step's batch" % flow.source))
            return
        compute = c is None or kept
        if op in CALLS and var_in:
            compute = True  # a call that takes variables: the model may be inside (see _find_fp)
        if not compute:
            if c in _PROPAGATING or c == "added by --skip-op":
                self.flows[name] = flow
                trail.append(Step(_at(b), name, op, "pass", "passes the data on (%s)" % c))
            else:
                trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c))
            return
        if flow.pre is None and flow.head is None:
            if len(self.starters) < _MAX_STARTERS and all(sb.start != b.start for sb, _f in self.starters):
                self.starters.append((b, flow))
            fb = self.fallback
            if flow.source not in self.pipeline and (fb is None or (flow.klass, b.start) < (fb[1].klass, fb[0].start)):
                self.first_flow_at = self.seen
                self.fallback = (b, flow)
        if var_in:
            answer = flow.head or b
            self.candidates.append(_Candidate(answer, b, flow, self.seen))
            self.done.add(flow.source)
            why = "first op of the model on %s %s: its data meets a trained variable at %s" % (_KLASS[flow.klass], flow.source, name)
            trail.append(Step(_at(answer), answer.name or "", answer.op, "pass", why))
            return
        others = [p for p in prods if p not in self.flows]
        if flow.head is None and op in PREPROCESSING and not kept and len(flows) == 1 and not any(p in self.variables for p in others):
            nf = flow._replace(pre=flow.pre or b)
            why = "input preprocessing of the data (a conversion, or arithmetic with constants)"
        else:
            nf = flow if flow.head is not None else flow._replace(head=b)
            why = "computes on the data from %s" % flow.source
        self.flows[name] = nf
        trail.append(Step(_at(b), name, op, "pass", why))

    # --- when to stop -----------------------------------------------------------------------

    def settled(self, ahead: Optional[_Ahead], here: int) -> Optional[int]:
        """Whether the answer can change only through a node the byte search can find: ``None``
        when it can (ask :meth:`wanted`), else the offset to read on to (``here``: read the next
        block).

        - No candidate yet: read on, up to ``_MEET_BUDGET`` blocks past the data's first compute
          op (then that op stands in: a graph whose weights are constants).
        - A candidate: another input's copy of the model may follow close by (built side by
          side): as far again as the candidate lies in the file (at least ``_COPY_BYTES``), found
          with one bounded byte search for an input, or, without one, ``_COPY_BUDGET`` blocks.
        - An input met since whose data has not yet met a variable: read on to its candidate.
        """
        best = self.best()
        if best is None:
            if self.fallback is not None and self.seen - self.first_flow_at > max(_MEET_BUDGET, self.first_flow_at):
                return None
            return here
        since = min(c.seen for c in self.candidates)
        if any(n not in self.done and self.seen - at <= max(_MEET_BUDGET, at) and k <= best.flow.klass
               for n, (k, at) in self.inputs.items() if at > since or k < best.flow.klass):
            return here
        first = min(self.candidates, key=lambda c: c.seen)
        if ahead is None:
            return here if self.seen - first.seen <= max(_COPY_BUDGET, first.seen) else None
        limit = first.block.end + max(_COPY_BYTES, first.block.end)
        kept = self.opts.keep_ops
        if best.flow.klass == 0:
            wanted: Callable[[str], bool] = lambda op: op in DATA_SOURCES and op not in kept
        else:  # (a PlaceholderWithDefault is a hyper-parameter or a file name, not a copy's batch)
            wanted = lambda op: op not in kept and (op in DATA_SOURCES or op in ("Placeholder", "PlaceholderV2", "Data", "_Arg"))
        return ahead.input_within(here, limit, wanted)

    def wanted(self) -> Optional[Callable[[str], bool]]:
        """Which later op could still change fp (else ``None``: settled, or read on)."""
        if self.opts.rule == "doc" or self.opts.sources:
            return None
        kept = self.opts.keep_ops
        best = self.best()
        if best is None and self.fallback is not None and self.fallback[1].source in self.queues:
            # The first op on a queue's data, no variable met yet: an enqueue later would make the
            # queue a stage of the input pipeline (and a non-queue source would win).
            return lambda op: op not in kept and (op in ENQUEUES or op in STAGES or (op in DATA_SOURCES and not op.startswith("QueueDequeue")))
        klass = best.flow.klass if best is not None else (self.fallback[1].klass if self.fallback else 3)
        if klass == 0:
            return None
        if klass == 1:
            return lambda op: op in DATA_SOURCES and op not in kept
        if klass == 2 or (self.opts.rule == "auto" and self.doc is not None and not self.flows):
            return lambda op: (op in DATA_SOURCES or op in PLACEHOLDERS) and op not in kept
        return None


def _fp_scan(
    blocks: Iterable[Block],
    opts: Options,
    sources: FrozenSet[str] = frozenset(),
    role: Callable[[Block], Tuple[bool, str]] = lambda b: (True, ""),
    ahead: Optional[_Ahead] = None,
) -> _Scan:
    """One forward pass computing every rule's fp candidate, stopping once its answer is settled.

    ``sources``: names that count as data sources up front (a function's arguments).
    ``role``: whether a placeholder feeds data (a batch) and, if not, what it is.
    ``ahead``: the byte search over the rest of the file; without it the pass reads on.

    The data is followed from each input through every op (not only plumbing) until it meets a
    trained variable: that op, or the first op of the model before it on the same data, is the
    input's candidate; ops on data that meets no variable (labels, metrics, a feature nothing
    uses, the next batch going into a queue) are not. Once the best input has a candidate, the pass
    reads as many blocks again (at least ``_COPY_BUDGET``) for another input's copy of the model;
    after that, the answer changes only if a better input comes later, which the byte search
    finds (or the pass reads on to the end).
    """
    st = _Scan(opts, role)
    # A function's arguments carry what its caller hands in; with --source, the named ones if any.
    named = sources & opts.sources
    for n in named or sources:
        st.flows[n] = _Flow(n, 0, None, None)
        st.inputs[n] = (0, 0)
        st.met.add(n)
    wait_until = -1
    it = iter(blocks)
    while True:
        try:
            b = next(it)
        except StopIteration:
            break
        except PbtxtError as e:
            if not st.candidates:
                raise
            # Damage after the answer (a file still being written): the answer stands; only the
            # look for another copy of the model stops here.
            st.trail.append(Step(e.line or 0, "", None, "pass", "the file cannot be read on (%s): the answer before it stands" % e.msg))
            break
        st.node(b)
        if opts.rule == "doc":
            if st.doc is not None:
                break
            continue
        if b.end <= wait_until:
            continue
        until = st.settled(ahead, b.end)
        if until is not None:
            wait_until = until
            continue
        wanted = st.wanted()
        if wanted is None:
            break
        if ahead is None:
            continue
        nxt = ahead.next_op(b.end, wanted)
        if nxt is None:
            st.trail.append(Step(_at(b), b.name or "", b.op, "pass", "a byte search of the rest of the file finds no node that could change the answer"))
            break
        wait_until = nxt
    return st


_PREPROCESSING_WHY = "input preprocessing of the batch (a dtype conversion or scaling) before the model's first op"


def _fp_pick(st: _Scan, opts: Options, g: GraphFile, fn: Optional[str]) -> Answer:
    file = g.name
    trail = st.trail
    rule = opts.rule
    if opts.sources and not st.inputs:
        return Answer("fp", None, "dataflow", "no node named %s (--source)" % ", ".join(sorted(opts.sources)), trail)
    if rule == "doc" or (rule == "auto" and not st.candidates and st.fallback is None):
        b = st.doc
        if b is None:
            return Answer("fp", None, "doc", "no compute op found", trail)
        reason = "first node not in the catalog and not filtered by name"
        if rule == "auto":
            reason = "no data source: " + reason
        trail.append(Step(_at(b), b.name or "", b.op, "chosen", reason))
        st.chosen = b
        return Answer("fp", _point("fp", b, "doc", file, fn), "doc", reason, trail)
    if not st.candidates and st.fallback is None:
        if opts.sources:
            return Answer("fp", None, "dataflow", "no compute op on the data of --source %s" % ", ".join(sorted(opts.sources)), trail)
        return Answer("fp", None, "dataflow", "no data source or placeholder feeds a compute op", trail)
    best = st.best()
    alts: List[Alternative] = []
    confidence, doubt = "certain", ""
    if best is None:
        assert st.fallback is not None
        b, flow = st.fallback
        reason = "first compute op on the data from %s (it meets no trained variable within %d nodes)" % (flow.source, _MEET_BUDGET)
        chosen = _Candidate(b, b, flow, 0)
    else:
        chosen = best
        same = [c for c in st.candidates if c.flow.klass == best.flow.klass]
        if len(same) > 1:
            chosen, confidence, doubt, more = _copies(g, same)
            alts.extend(more)
        flow = chosen.flow
        reason = "first op of the model on %s %s (its data meets a trained variable at %s)" % (_KLASS[flow.klass], flow.source, chosen.meets.name)
        if flow.klass == 1 and not opts.sources:
            reason = "no data source: " + reason
    b = chosen.block
    if chosen.flow.pre is not None and chosen.flow.pre is not b:
        alts.append(Alternative(_point("fp", chosen.flow.pre, "dataflow", file, fn), _PREPROCESSING_WHY))
    named = {a.point.name for a in alts} | {b.name}
    for sb, sf in st.starters:
        if sb.start >= b.start or sb.name in named:
            continue
        if sf.source in st.pipeline:
            why = "its data goes into a queue or staging area (%s): it prepares a later step's batch" % sf.source
        elif sf.source == chosen.flow.source:
            why = "on another part of the batch from %s, which meets no trained variable before the model's first op (labels, a metric input, or unused)" % sf.source
        else:
            why = "on the data of %s, which meets no trained variable before the model's first op" % sf.source
        alts.append(Alternative(_point("fp", sb, "dataflow", file, fn), why))
        named.add(sb.name)
    trail.append(Step(_at(b), b.name or "", b.op, "chosen", reason))
    st.chosen = b
    return Answer("fp", _point("fp", b, "dataflow", file, fn), "dataflow", reason, trail,
                  confidence=confidence, doubt=doubt, alternatives=tuple(alts))


def _copies(g: GraphFile, cands: List[_Candidate]) -> Tuple[_Candidate, str, str, List[Alternative]]:
    """Several inputs of one class each feed a copy of the model (global/local, train/eval): the
    copy the gradients differentiate is the step's. One byte search for the gradient ops of each
    copy's variable op (TF1 ``gradients/<op>_grad/``, TF2 ``gradient_tape/<op>/``)."""
    trained = _differentiated(g, [c.meets.name or "" for c in cands], min(c.meets.start for c in cands))
    if trained is None:
        tagged = [(c, None) for c in cands]
    else:
        tagged = [(c, (c.meets.name or "") in trained) for c in cands]
    pick = next((c for c, t in tagged if t), cands[0])
    alts = []
    for c, t in tagged:
        if c is pick:
            continue
        if t is False:
            why = "the first op of another copy of the model, fed by %s: no gradient op differentiates it (not trained in this step)" % c.flow.source
        elif t:
            why = "the first op of the model on %s, which is trained too" % c.flow.source
        else:
            why = "the first op of another copy of the model, fed by %s" % c.flow.source
        alts.append(Alternative(_point("fp", c.block, "dataflow", g.name, None), why))
    if trained is not None and all(t for _c, t in tagged):
        return pick, "certain", "", alts
    srcs = ", ".join(c.flow.source for c in cands)
    if trained is None:
        doubt = "%d inputs (%s) feed copies of the model and no byte search could tell which one is trained: the first in file order; name one with --source" % (len(cands), srcs)
    elif not trained:
        doubt = "%d inputs (%s) feed copies of the model and no gradient op names any of them: the first in file order; name one with --source" % (len(cands), srcs)
    else:
        doubt = "%d inputs (%s) feed copies of the model; %s's copy is the one with gradients; name another with --source" % (len(cands), srcs, pick.flow.source)
    return pick, "ambiguous", doubt, alts


def _differentiated(g: GraphFile, names: List[str], start: int) -> Optional[Set[str]]:
    """Which of ``names`` have gradient ops (TF1 ``gradients/<name>_grad/``, TF2
    ``gradient_tape/<name>/``) after ``start``: one byte search, or, without one (no grep, a
    stream), the names of the later top-level blocks. ``None`` when it cannot be told."""
    import re

    from ._ahead import needle_hits

    def ere(n: str) -> str:
        return "".join("\\" + ch if ch in ".[]()*+?{}|^$\\" else ch for ch in n)

    rx = re.compile("|".join("gradients(?:_[0-9]+)?/%s_grad/|gradient_tape/%s/" % (re.escape(n), re.escape(n)) for n in names))
    want = set(names)
    found: Set[str] = set()

    def note(text: str) -> None:
        for m in rx.finditer(text):
            t = m.group(0)
            found.update(n for n in want if t.endswith("/%s_grad/" % n) or t == "gradient_tape/%s/" % n)

    hits = needle_hits(g, "|".join("gradients(_[0-9]+)?/%s_grad/|gradient_tape/%s/" % (ere(n), ere(n)) for n in names))
    if hits is None:
        if not g.can_seek:
            return None
        for b in g.blocks(("node",), frozenset({"name"})):
            if b.start >= start:
                note(b.name or "")
                if found == want:
                    break
        return found
    it = hits(start)
    try:
        for _off, text in it:
            note(text.decode("utf-8", "replace"))
            if found == want:
                break
    except Exception:  # the search failed: cannot tell
        return None
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()
    return found


def find_fp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_fp(g, opts))


def _find_fp(g: GraphFile, opts: Options) -> Answer:
    block_path, heads = operator_layout(g.dialect)
    tf = block_path == ("node",)
    producer: List[Optional[int]] = []

    def role(b: Block) -> Tuple[bool, str]:
        if b.op == "Const":
            return _const_holds_data(g, b)
        if not producer:
            producer.append(graph_producer(g) if tf else None)
        return _holds_data(g, b, producer[0])

    blocks = iter(g.blocks(block_path, heads))
    with contextlib.ExitStack() as stack:
        ahead = ahead_of(g)
        if ahead is not None:
            stack.callback(ahead.close)
        st = _fp_scan(blocks, opts, role=role, ahead=ahead)
        # Where the step is (step_body, as bp decides). A file with no library has no function
        # to hold it: the top level, and no need to look for gradients.
        no_library = ahead is not None and ahead.no_library() and not st.gap
        top_grad = _top_gradients(st, ahead, blocks) if tf and not no_library else True
    ans = _fp_pick(st, opts, g, None)
    # The body that holds the training step (the same choice bp makes: step_body).
    body = step_body(top_grad, lambda: training_function(g))
    if body is not None:
        fname = body.name
        st2 = _fp_scan(body.blocks(), opts, body.args, role=role)
        sub = _fp_pick(st2, opts, g, fname)
        if sub.point is not None:
            reason = "the training step runs in function %s (it holds the gradients): %s" % (fname, sub.reason)
            ans, st = sub._replace(reason=reason, trail=ans.trail + sub.trail), st2
    ans = _into_call(g, opts, role, ans, st.chosen)
    if ans.point is None and opts.sources and ans.reason.startswith("no node named"):
        raise PbtxtError(ans.reason + ": name a node of the graph (see 'pbtxt-scan nodes FILE')", path=g.name)
    return ans


def _into_call(g: GraphFile, opts: Options, role: Callable[[Block], Tuple[bool, str]], ans: Answer, call: Optional[Block]) -> Answer:
    """An answer that calls a library function with the model's variables (a ``tf.function``
    model called from the step) is answered inside that function, from the arguments that carry
    the data; the op before the call, if any, stays an alternative."""
    p = ans.point
    if p is None or call is None or p.op not in CALLS:
        return ans
    fname = called_function(g, call)
    if fname is None:
        return ans
    body = function_body(g, fname)
    if body is None:
        return ans
    sub = _fp_pick(_fp_scan(body.blocks(), opts, body.args, role=role), opts, g, fname)
    if sub.point is None:
        return ans
    reason = "the model runs in function %s, which %s calls with the data and the variables: %s" % (fname, p.name, sub.reason)
    alts = tuple(a for a in ans.alternatives) + sub.alternatives
    return sub._replace(reason=reason, trail=ans.trail + sub.trail, alternatives=alts)


def _top_gradients(st: _Scan, ahead: Optional[_Ahead], rest: Iterator[Block]) -> bool:
    """Whether a top-level node sits in a gradients scope: seen by the pass, else told by the byte
    search, else (no byte search, or a line it cannot judge) read from the remaining blocks."""
    if st.grad:
        return True
    if ahead is not None:
        told = ahead.top_gradients(st.pos)
        if told is not None:
            return told
    for b in rest:  # names and ops only are looked at: bounded
        if in_gradients_scope(b.name or ""):
            return True
    return False


RESOURCE_HANDLE = "a resource handle"


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
        return False, RESOURCE_HANDLE + " (a captured variable, or the iterator a tf.function takes), not data"
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


def _const_holds_data(g: GraphFile, b: Block) -> Tuple[bool, str]:
    """Whether a Const may be data embedded in the graph (a batch or a data set): big, of rank 2 or
    more, or a floating-point vector of 16 values or more. Shapes, permutations and axes are small
    integer vectors; scalars are rank 0."""
    size = b.end - b.start
    if size >= _CONST_DATA_BYTES:
        return True, "a constant of %d bytes" % size
    try:
        node = g.parse(b, max_bytes=_CONST_DATA_BYTES)[0].value
    except PbtxtError:
        return False, ""
    for a in node.all("attr"):
        if a.get("key") == "value":
            tensor = (a.get("value") or Message()).get("tensor") or Message()
            shape = tensor.get("tensor_shape") or Message()
            dims = [d.get("size") for d in shape.all("dim")]
            dtype = tensor.get("dtype")
            n = 1
            for d in dims:
                n *= d if isinstance(d, int) and d > 0 else 0
            if dtype != "DT_STRING" and (len(dims) >= 2 or (dtype in _FLOATS and n >= 16)):
                return True, "a constant of shape %s" % dims
    return False, ""


def _holds_data(g: GraphFile, b: Block, producer: Optional[int]) -> Tuple[bool, str]:
    """:func:`placeholder_role` of a block, parsed from the file."""

    try:
        node = g.parse(b, max_bytes=1 << 20)[0].value
    except PbtxtError:
        return True, "a placeholder (too big to read: kept)"
    return placeholder_role(node, producer)
