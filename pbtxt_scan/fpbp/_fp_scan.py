"""fp's forward scan and its state (:class:`_Scan`): each node judged as it is read (what data
reaches it, whether it meets a trained variable, the doc rule's candidate, the nodes waiting on an
input not yet read), with the bounds of what it reads and keeps; when the answer is settled is
``_fp_settle``'s, what it knows of the data (flows, candidates) ``_fp_flow``'s. What it keeps is
bounded by the distance to the answer (``_rules``' docstring)."""
from __future__ import annotations

import re
from typing import Callable, Dict, List, Optional, Set

from ._answers import _at, _PROPAGATING, Options, Step, Trail, _op, _producer
from ._catalog import CALLS, DATA_SOURCES, ENQUEUES, LOOKUPS, METADATA, PASS_THROUGH, PLACEHOLDERS, PREPROCESSING, RESOURCE_FIRST, STAGES, VARIABLE_PASS, VARIABLES, in_gradients_scope
from ._fp_flow import _KLASS, _Candidate, _Flow, _Input, _Start
from ._fp_inputs import NO_ROLE, RESOURCE_HANDLE, Role
from .._model import Block


# The bounds of the scan (what it reads: ``_fp_settle``; what it keeps: here).
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
        c = self.cat.category(op)
        doc_why = self._doc(b, name, op, c)
        if self.opts.rule == "doc":
            if doc_why is not None:
                self.trail.append(Step(_at(b), name, op, "skip", doc_why))
            return
        had = name in self.flows, name in self.variables
        self._judge(b, name, op, c, again=False)
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
                op = _op(later)
                self._judge(later, n, op, self.cat.category(op), again=True)
                if (n in self.flows, n in self.variables) != had:
                    work.append(n)

    def _judge(self, b: Block, name: str, op: Optional[str], c: Optional[str], *, again: bool) -> None:
        """The dataflow rule's judgement of a compute node (``c``: its catalog category; ``again``: woken,
        its inputs read since): what data reaches it, and whether it meets a trained variable there."""
        opts, trail = self.opts, self.trail
        kept = op in opts.keep_ops
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
            self._variable_passed(name, prods)  # (a kernel read through a cast or an ExpandDims is still the kernel)
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
            flow = _merged(flow, flows)
        if op in METADATA:
            trail.append(Step(_at(b), name, op, "skip", "reads only the shape (or presence) of the data"))
            return
        if op in ENQUEUES or op in STAGES:
            self._staged(b, name, op, flow.source)
            return
        compute = c is None or kept
        if op in CALLS and (var_in or len({f.source for f in flows}) > 1):
            # a call that takes variables, or several of a function's arguments (a SavedModel's signature
            # wrapper hands the data and the variables' handles on): the model may be inside (``_fp._into_call``)
            compute = True
        if not compute:
            if c in _PROPAGATING or c == "added by --skip-op":
                self.flows[name] = flow
                trail.append(Step(_at(b), name, op, "pass", "passes the data on (%s)" % c))
            else:
                trail.append(Step(_at(b), name, op, "skip", "catalog: %s" % c))
            return
        if flow.pre is None and flow.head is None:
            self._first_op(b, flow, var_in)
        if var_in:
            var = next((p for i, p in enumerate(prods) if p in self.variables or (first_is_var and i == 0)), "")
            self._meets(b, name, flow, self.roots.get(var, var))
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

    # --- the rarer turns of a judgement (a variable passed on, a queue, a data path's start, a
    # variable met), each its own method; the common ones (no data, plumbing) stay in _judge --------

    def _variable_passed(self, name: str, prods: List[str]) -> None:
        """A variable's value passed on: its node carries the variable (its root noted)."""
        self.variables.add(name)
        v = next((p for p in prods if p in self.variables), "")
        self.roots[name] = self.roots.get(v, v)

    def _staged(self, b: Block, name: str, op: Optional[str], source: str) -> None:
        """Data that goes into a queue or a staging area: a later step's batch."""
        self.pipeline.add(source)
        if self.fallback is not None and self.fallback.flow.source == source:
            self.fallback = None  # a pipeline stage's first op is no answer, even without a variable
        self.trail.append(Step(_at(b), name, op, "skip", "data from %s goes into a queue or staging area: a later step's batch" % source))

    def _first_op(self, b: Block, flow: _Flow, var_in: bool) -> None:
        """The first compute op on a data path (nothing but plumbing before it): a starter if it
        reads a variable, and the fallback if its data is the best met yet."""
        if var_in:
            self._start(b, flow._replace(head=b))
        fb = self.fallback
        if flow.source not in self.pipeline and (fb is None or (flow.klass, b.start) < (fb.flow.klass, fb.block.start)):
            self.first_flow_at = self.seen
            self.fallback = _Start(b, flow)

    def _meets(self, b: Block, name: str, flow: _Flow, variable: str) -> None:
        """The data meets trained variable ``variable`` at ``b``: its input's candidate, the first
        op of the model on that data (or ``b`` itself); the input is done unless a path of it
        begins before and has not met a variable yet."""
        answer = flow.head or b
        self.met_heads.add(answer.start)
        self.met_heads.update(flow.heads)
        self._candidate(_Candidate(answer, b, flow, self.seen, variable))
        if not self.unresolved(flow.source, self._best.block.start if self._best is not None else answer.start):
            self.done.add(flow.source)
            if len(self.model) < _MAX_WAITING:
                self.model[name] = flow.source
        else:
            self.flows[name] = flow if flow.head is not None else flow._replace(head=b, heads=flow.heads | {b.start})
        why = "first op of the model on %s %s: its data meets trained variable %s at %s" % (_KLASS[flow.klass], flow.source, variable, name)
        self.trail.append(Step(_at(answer), answer.name or "", answer.op, "pass", why))


def _merged(flow: _Flow, flows: List[_Flow]) -> _Flow:
    """``flow`` with the first ops of every path of its input and class merged into it."""
    hs = frozenset().union(*(f.heads for f in flows if f.klass == flow.klass and f.source == flow.source))
    return flow._replace(heads=hs) if hs != flow.heads else flow
