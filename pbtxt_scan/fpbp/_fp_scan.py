"""fp's forward scan and its state (:class:`_Scan`): each node judged as it is read (what data
reaches it, whether it meets a trained variable, the doc rule's candidate, the nodes waiting on an
input not yet read), and when the answer is settled (:meth:`_Scan.settled`, :meth:`_Scan.wanted`).
What it keeps is bounded by the distance to the answer (``_rules``' docstring)."""
from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Set

from ._ahead import _Ahead
from ._answers import _at, _PROPAGATING, Options, Step, Trail, _op, _producer
from ._catalog import CALLS, DATA_SOURCES, ENQUEUES, LOOKUPS, METADATA, PASS_THROUGH, PLACEHOLDERS, PREPROCESSING, RESOURCE_FIRST, STAGES, VARIABLE_PASS, VARIABLES, in_gradients_scope
from ._fp_inputs import NO_ROLE, RESOURCE_HANDLE, Role
from .._model import Block


class _Flow(NamedTuple):
    """What reaches a node from one of the step's inputs: the input, its class (0 a data source,
    1 a data placeholder, 2 a constant big enough to be data), and the first ops on the way: the
    first input preprocessing (``pre``) and the first op of the model (``head``), each ``None``
    while only plumbing lay between."""

    source: str
    klass: int
    pre: Optional[Block]
    head: Optional[Block]
    heads: FrozenSet[int] = frozenset()  # where the first ops of the paths merged into it start


class _Start(NamedTuple):
    """The first compute op of a data path (``block``), and the data that reaches it."""

    block: Block
    flow: _Flow


class _Input(NamedTuple):
    """One of the step's inputs met: its class (as :class:`_Flow`'s), the blocks read then and
    where its block starts."""

    klass: int
    at: int
    off: int


class _Candidate(NamedTuple):
    """An fp candidate: the first op of the model on the data of ``flow.source``, found where that
    data meets a trained variable (``meets``, reading ``variable``)."""

    block: Block
    meets: Block
    flow: _Flow
    seen: int  # blocks read when it was found
    variable: str = ""


_KLASS = ("the data source", "a data placeholder", "a constant big enough to be data")
# After the first candidate, how many more blocks fp reads for another input's copy of the model
# (at least this many, else as many as it read to the first): copies are built side by side.
_COPY_BUDGET = 2000
_COPY_BYTES = 4 << 20
# Without a trained variable met this far past the data's first compute op (a frozen or GE graph
# whose weights are constants), that first op is the answer, as it was before variables counted.
_MEET_BUDGET = 2000
_FEATURE_BUDGET = 16384
_MAX_STARTERS = 64
_MAX_HEADS = 64  # the first ops a merged path remembers
# Ops that make values from a shape alone: data (an initial value, noise), not shape arithmetic.
_RANDOM = re.compile(r"(Stateless|Stateful)?(Random|TruncatedNormal|Multinomial)")
_MAX_WAITING = 1 << 16


def _all_data(b: Block) -> Role:
    return Role(True, "")


class _Scan:
    """The state of one forward pass (``_fp.fp_pass``): every rule's candidate so far, in small
    objects, bounded by the distance to the answer (flows and variables are kept only until then)."""

    __slots__ = (
        "opts", "cat", "trail", "role", "flows", "variables", "done", "candidates", "starters",
        "pipeline", "doc", "grad", "pos", "gap", "seen", "first_flow_at", "fallback",
        "waiting", "waiting_names", "n_waiting", "met", "shape_only", "chosen", "const_at", "const_role",
        "inputs", "queues", "_best", "met_heads", "fed", "roots", "joins", "model", "starter_names", "used",
    )

    def __init__(self, opts: Options, *, role: Callable[[Block], Role] = _all_data) -> None:
        self.opts = opts
        self.cat = opts.catalog
        self.trail = Trail()
        self.role = role
        self.flows: Dict[str, _Flow] = {}  # node -> what data reaches it
        self.variables: Set[str] = set()  # nodes whose output is a variable's value or handle
        self.done: Set[str] = set()  # inputs whose candidate is known (their data is no longer followed)
        self.candidates: List[_Candidate] = []  # the first per input, in file order
        self.starters: List[_Start] = []  # the first compute op of each data path (bounded)
        self.pipeline: Set[str] = set()  # inputs whose data goes into a queue or a staging area
        self.doc: Optional[Block] = None
        self.grad = False  # a node in a gradients scope met
        self.pos = 0
        self.gap = False  # something other than nodes between two node blocks (a library?)
        self.seen = 0
        self.first_flow_at = -1
        self.fallback: Optional[_Start] = None  # the first compute op on the best data, without a variable
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
        self.const_at = -1  # the last Const judged (its role is read once)
        self.const_role = NO_ROLE
        self.inputs: Dict[str, _Input] = {}  # the inputs met (capped)
        self.queues: Set[str] = set()  # inputs that are queue dequeues (a pipeline may feed on)
        self._best: Optional[_Candidate] = None  # (kept as candidates come: asked after every block)
        self.met_heads: Set[int] = set()  # first ops of data paths that met a trained variable (their starts)
        self.fed: Set[str] = set()  # hyper-parameters fed at run time (keep_prob), and what is computed from them
        self.joins: Set[str] = set()  # inputs whose data one node computes on with another input's (a mask, a length)
        self.starter_names: Set[str] = set()  # the starters' names, and those a later node reads (``used``)
        self.used: Set[str] = set()
        self.model: Dict[str, str] = {}  # nodes computed on an input's data after its candidate -> the input
        self.roots: Dict[str, str] = {}  # a variable's value passed on (a cast, a reshaped kernel) -> the variable

    def best(self) -> Optional[_Candidate]:
        """The candidate of the best input class, the first in the file among those."""
        return self._best

    def _candidate(self, c: _Candidate) -> None:
        """Note a candidate: of one input, the first in the file is kept (in the place of the
        input's first found: the candidates stay in reading order, one an input)."""
        for i, old in enumerate(self.candidates):
            if old.flow.source == c.flow.source:
                if c.block.start >= old.block.start:
                    return
                self.candidates[i] = c._replace(seen=old.seen)
                break
        else:
            self.candidates.append(c)
        b = self._best
        if b is None or (c.flow.klass, c.block.start) < (b.flow.klass, b.block.start):
            self._best = c

    def _start(self, b: Block, flow: _Flow) -> None:
        """Note the first compute op of a data path (a cast, or the model's first op on it)."""
        if len(self.starters) < _MAX_STARTERS and all(s.block.start != b.start for s in self.starters):
            self.starters.append(_Start(b, flow))
            self.starter_names.add(b.name or "")

    def unresolved(self, source: str, before: int) -> bool:
        """Whether a data path of ``source`` begins before ``before`` whose data has not met a
        trained variable yet (the feature side is every path that meets one on its way to the
        loss: a numeric column meets the first layer's kernel only after the input layer's concat;
        a path that begins with a cast is read on too, to tell a feature's cast from a label's)."""
        return any(
            s.flow.source == source and s.block.start < before and s.block.start not in self.met_heads
            for s in self.starters
        )

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
                self._placeholder(b, name, op, data=False)
                return
        elif op in DATA_SOURCES and not kept:
            self._source(b, name, op, 0, "data source")
            return
        elif op in PLACEHOLDERS and not kept:
            self._placeholder(b, name, op, data=True)
            return
        self._compute(b, name, op)

    def _source(self, b: Block, name: str, op: Optional[str], klass: int, why: str) -> None:
        self.flows[name] = _Flow(name, klass, None, None)
        if len(self.inputs) < 4096:
            self.inputs[name] = _Input(klass, self.seen, b.start)
        if op is not None and op.startswith("QueueDequeue"):
            self.queues.add(name)
        self.trail.append(Step(_at(b), name, op, "pass", why))

    def _placeholder(self, b: Block, name: str, op: Optional[str], *, data: bool) -> None:
        """A placeholder (or, with --source, a data source it does not name): an input of class 1
        when it holds data and ``data`` (no --source), else skipped, saying what it is. A resource
        handle carries a variable (a tf.function's captured one)."""
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
            self.fed.add(name)  # (a hyper-parameter: arithmetic with it is the model's, not preprocessing)
            self.trail.append(Step(_at(b), name, op, "skip", why))

    def _const(self, b: Block) -> Role:
        """Whether a Const may hold data (``role``), read once for the doc rule and the sources."""
        if self.const_at != b.start:
            self.const_at, self.const_role = b.start, self.role(b)
        return self.const_role

    def _doc(self, b: Block, name: str, op: Optional[str], c: Optional[str]) -> Optional[str]:
        """The doc rule's judgement of a node (why it is no doc candidate, or ``None``); the first
        candidate is kept. Shape arithmetic (computed only from constants and shapes: the
        ``range`` and ``concat`` that build a transpose's permutation) is no candidate, as in bp."""
        if self.doc is not None:
            return "after the doc rule's answer"
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        if op in METADATA or (op == "Const" and not self._const(b).holds) or (
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
        self._judge(b, name, op, again=False)
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
                self._judge(later, n, _op(later), again=True)
                if (n in self.flows, n in self.variables) != had:
                    work.append(n)

    def _judge(self, b: Block, name: str, op: Optional[str], *, again: bool) -> None:
        opts, trail = self.opts, self.trail
        c = self.cat.category(op)
        kept = op in opts.keep_ops
        doc_why = self._doc(b, name, op, c) if not again else None
        if opts.rule == "doc":
            if doc_why is not None:
                trail.append(Step(_at(b), name, op, "skip", doc_why))
            return
        prods = [p for p in map(_producer, b.inputs) if p is not None]
        if self.starter_names:
            self.used.update(p for p in prods if p in self.starter_names)
        if not again and self.n_waiting < _MAX_WAITING:
            for p in prods:
                if p not in self.met or (p in self.waiting_names and p not in self.flows):
                    self.waiting.setdefault(p, []).append(b)
                    self.waiting_names.add(name)
                    self.n_waiting += 1
        first_is_var = op in RESOURCE_FIRST
        if op in LOOKUPS:  # (the table's handle, a captured resource, is no trained variable)
            prods = prods[1:]
        var_in = any(p in self.variables for p in prods) or (first_is_var and bool(prods))
        flows = [self.flows[p] for i, p in enumerate(prods) if p in self.flows and not (first_is_var and i == 0)]
        model = [f.source for f in flows if f.source in self.done] + [self.model[p] for p in prods if p in self.model]
        flows = [f for f in flows if f.source not in self.done]
        if model and len(self.model) < _MAX_WAITING:
            if flows:  # another input's data meets the model's (a mask, a length): no copy
                self.joins.update([f.source for f in flows] + model)
            else:
                self.model[name] = model[0]
        if op is not None and (op in VARIABLE_PASS or op in PASS_THROUGH) and var_in and not flows:
            self.variables.add(name)  # (a kernel read through a cast or an ExpandDims is still the kernel)
            v = next((p for p in prods if p in self.variables), "")
            self.roots[name] = self.roots.get(v, v)
        if op == "ReadVariableOp":
            self.variables.add(name)
            return
        if not flows:
            if any(p in self.fed for p in prods):
                self.fed.add(name)  # (dropout's 1 - rate)
            if op == "Const" and c is not None and not opts.sources and not any(i.klass < 2 for i in self.inputs.values()):
                holds, why = self._const(b)  # (only while no better input is known: most Consts are never read)
                if holds:
                    self._source(b, name, op, 2, why + ": data, if nothing else feeds the model")
                    return
            trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c if c else "not fed by the data"))
            return
        flow = min(flows, key=lambda f: (f.klass, f.head is None, f.head.start if f.head is not None else 0, f.pre is None))
        if len(flows) > 1 and len(flow.heads) < _MAX_HEADS:
            hs = frozenset().union(*(f.heads for f in flows if f.klass == flow.klass and f.source == flow.source))
            if hs != flow.heads:
                flow = flow._replace(heads=hs)
        if op in METADATA:
            trail.append(Step(_at(b), name, op, "skip", "reads only the shape (or presence) of the data"))
            return
        if op in ENQUEUES or op in STAGES:
            self.pipeline.add(flow.source)
            if self.fallback is not None and self.fallback.flow.source == flow.source:
                self.fallback = None  # a pipeline stage's first op is no answer, even without a variable
            trail.append(Step(_at(b), name, op, "skip", "data from %s goes into a queue or staging area: a later step's batch" % flow.source))
            return
        compute = c is None or kept
        if op in CALLS and (var_in or len({f.source for f in flows}) > 1):
            # a call that takes variables, or several of a function's arguments (a SavedModel's
            # signature wrapper hands the data and the variables' handles on): the model may be
            # inside (see ``_fp._into_call``)
            compute = True
        if not compute:
            if c in _PROPAGATING or c == "added by --skip-op":
                self.flows[name] = flow
                trail.append(Step(_at(b), name, op, "pass", "passes the data on (%s)" % c))
            else:
                trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c))
            return
        if flow.pre is None and flow.head is None:
            if var_in:
                self._start(b, flow._replace(head=b))
            fb = self.fallback
            if flow.source not in self.pipeline and (fb is None or (flow.klass, b.start) < (fb.flow.klass, fb.block.start)):
                self.first_flow_at = self.seen
                self.fallback = _Start(b, flow)
        if var_in:
            answer = flow.head or b
            self.met_heads.add(answer.start)
            self.met_heads.update(flow.heads)
            var = next((p for i, p in enumerate(prods) if p in self.variables or (first_is_var and i == 0)), "")
            self._candidate(_Candidate(answer, b, flow, self.seen, self.roots.get(var, var)))
            if not self.unresolved(flow.source, self._best.block.start if self._best is not None else answer.start):
                self.done.add(flow.source)
                if len(self.model) < _MAX_WAITING:
                    self.model[name] = flow.source
            else:
                self.flows[name] = flow if flow.head is not None else flow._replace(head=b, heads=flow.heads | {b.start})
            why = "first op of the model on %s %s: its data meets trained variable %s at %s" % (_KLASS[flow.klass], flow.source, self.roots.get(var, var), name)
            trail.append(Step(_at(answer), answer.name or "", answer.op, "pass", why))
            return
        others = [p for p in prods if p not in self.flows]
        if flow.head is None and op in PREPROCESSING and not kept and len(flows) == 1 and not any(p in self.variables or p in self.fed for p in others):
            nf = flow._replace(pre=flow.pre or b, heads=flow.heads | {b.start})
            why = "input preprocessing of the data (a conversion, or arithmetic with constants)"
        elif flow.head is not None:
            nf, why = flow, "computes on the data from %s" % flow.source
        else:
            nf, why = flow._replace(head=b, heads=flow.heads | {b.start}), "computes on the data from %s" % flow.source
        if nf.head is b or (flow.pre is None and flow.head is None):
            self._start(b, nf)
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
        - An input met since whose data has not yet met a variable: read on to its candidate, if
          it is of a better class, or of the best class and met inside that window (a copy of
          the model), and its data has gone into no queue or staging area (a pipeline stage:
          the step reads the pipeline's last dequeue, not it). One met past the window is no
          copy close by: were it followed, every copy of an input pipeline would hold the pass
          to the next one, to the end of the file, with every name it met kept.
        """
        best = self.best()
        if best is None:
            if self.fallback is not None and self.seen - self.first_flow_at > max(_MEET_BUDGET, self.first_flow_at):
                return None
            return here
        first = self.candidates[0]  # (found in reading order: the fewest blocks read)
        if best.flow.source not in self.done:
            # A path of the batch that begins before the answer has not met a trained variable
            # yet: read on while it may (as many blocks again as read to the first candidate, at
            # least _FEATURE_BUDGET: a wide model's columns, each a few dozen ops, come between
            # its first lookup and the input layer's concat); what has not met one by then is
            # label side, a mask or unused.
            if self.seen - first.seen <= max(_FEATURE_BUDGET, first.seen) and self.unresolved(best.flow.source, best.block.start):
                return here
            self.done.add(best.flow.source)
        blocks = first.seen + max(_COPY_BUDGET, first.seen)  # the window for copies, without a search
        limit = first.block.end + max(_COPY_BYTES, first.block.end)  # and with one
        klass = best.flow.klass
        for n, i in self.inputs.items():
            if i.klass > klass or n in self.done or n in self.pipeline or self.seen - i.at > max(_MEET_BUDGET, i.at):
                continue
            if i.klass < klass or (i.at > first.seen and (i.at <= blocks if ahead is None else i.off < limit)):
                return here
        if ahead is None:
            return here if self.seen <= blocks else None
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
        if best is None and self.fallback is not None and self.fallback.flow.source in self.queues:
            # The first op on a queue's data, no variable met yet: an enqueue later would make the
            # queue a stage of the input pipeline (and a non-queue source would win).
            return lambda op: op not in kept and (op in ENQUEUES or op in STAGES or (op in DATA_SOURCES and not op.startswith("QueueDequeue")))
        klass = best.flow.klass if best is not None else (self.fallback.flow.klass if self.fallback else 3)
        if klass == 0:
            return None
        if klass == 1:
            return lambda op: op in DATA_SOURCES and op not in kept
        if klass == 2 or (self.opts.rule == "auto" and self.doc is not None and not self.flows):
            return lambda op: (op in DATA_SOURCES or op in PLACEHOLDERS) and op not in kept
        return None
