"""bp_point: the last op of backward propagation, read backward from the end of the file."""
from __future__ import annotations

import collections
import functools
import itertools
import re
from typing import Callable, Deque, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Set, Tuple

from ._answers import _at, _in_units, Alternative, Answer, Options, Point, Step, Trail, _op, _point, _producer
from ._body import CALLS_CAP, FunctionBody, Library, call_of, called_function, function_body, last_step, step_body, training_function
from ._catalog import CALLS, METADATA, in_gradients_scope
from ..graph._dialect import operator_layout
from ..graph._input import GraphFile, Source, opened
from .._model import Block
from ..graph._reverse import reverse_blocks


class _Backward:
    """Blocks in reverse order, with look-up of names not yet reached (read ahead, bounded).

    Producers come before their consumers in a GraphDef, so a look-up reads ahead; the blocks
    already handed out are forgotten after ``recent`` more, keeping memory flat on long tails.
    """

    __slots__ = ("_it", "inputs", "_ahead", "_recent", "seen", "_window", "_keep", "_recent_heads")

    def __init__(
        self,
        it: Iterator[Block],
        *,
        window: int = 20000,
        recent: int = 4096,
        inputs_of: Optional[Callable[[Block], List[str]]] = None,
    ) -> None:
        self._it = it
        self.inputs = inputs_of or (lambda b: b.inputs)
        self._ahead: Deque[Block] = collections.deque()  # read but not yet handed out
        self._recent: Deque[Block] = collections.deque()
        self.seen: Dict[str, Block] = {}
        self._window = window
        self._keep = recent
        self._recent_heads = 0

    def __iter__(self) -> "_Backward":
        return self

    def __next__(self) -> Block:
        if self._ahead:
            b = self._ahead.popleft()
        else:
            b = next(self._it)
            self.seen[b.name or ""] = b
        self._recent.append(b)
        self._recent_heads += len(b.heads)
        # Forget by count and by size: a NoOp like `init` can carry 100,000 control inputs.
        while len(self._recent) > self._keep or (self._recent_heads > 20000 and len(self._recent) > 1):
            old = self._recent.popleft()
            self._recent_heads -= len(old.heads)
            if self.seen.get(old.name or "") is old:
                del self.seen[old.name or ""]
        return b

    def lookup(self, name: str, window: Optional[int] = None) -> Optional[Block]:
        n = 0
        limit = self._window if window is None else window
        while name not in self.seen and n < limit and len(self._ahead) < self._window:
            try:
                b = next(self._it)
            except StopIteration:
                break
            self.seen[b.name or ""] = b
            self._ahead.append(b)
            n += 1
        return self.seen.get(name)


def _shape_only(name: str, back: _Backward, memo: Dict[str, bool], depth: int = 0) -> bool:
    """True if the node computes only from constants and shapes (no tensor data flows into it)."""
    if name in memo:
        return memo[name]
    b = back.lookup(name)
    if b is None or depth > 64:
        return False
    op = _op(b)
    if op in ("Const", "HostConst", "Constant") or op in METADATA:
        res = True
    else:
        prods = [p for p in map(_producer, back.inputs(b)) if p is not None]
        memo[name] = False  # cycles (while loops) are data
        # Producers come earlier in the file, so later in a backward read: look for the near ones
        # first, so that one data input settles it before a long read-ahead for a far one.
        for p in prods:
            near = back.lookup(p, window=256)
            if near is not None and not _shape_only(p, back, memo, depth + 1):
                res = False
                break
        else:
            res = bool(prods) and all(_shape_only(p, back, memo, depth + 1) for p in prods)
    memo[name] = res
    return res


# Ops whose consumer comes before them in the file: a while loop's back edge (NextIteration ->
# Merge). A backward read meets their consumer after them, so they are taken as live.
_BACK_EDGES = frozenset(("NextIteration", "RefNextIteration"))
_DEAD = "nothing that runs uses its result (TensorFlow prunes it)"
_NET = "last op in a gradients scope that computes (nothing that runs uses any: the answer reading gradients scopes alone)"


class _Reach:
    """What the nodes read backward feed (consumers come after their producers in a GraphDef),
    in one map ``reach``: name -> the optimizers whose state updates its data reaches (the
    consumers met so far tell), or ``RUNS`` (empty) for a gradients-scope node that something
    that runs uses but no optimizer applies. A name is dropped once its node is passed.

    - Which optimizers: a state update (``Apply*``, ``Assign*``, ``Scatter*``; not a Saver's
      restore) reaches its own (:func:`optimizer_of`); data that leaves the body (a call, a loop, a
      result) or a loop's back edge reaches ``ANY``; a node in ``reach`` reaches what its name
      maps to. Such a node passes that to its *data* inputs (all of them, but an update's first,
      the state it writes): a gradient a train op only waits for is computed, not applied.
    - Which run: a node outside every gradients scope runs (the optimizer, summaries,
      clipping...); a gradients-scope node runs iff its name is in ``reach`` (or it is a loop's
      back edge). One that runs marks the gradients-scope nodes among its inputs (data and
      control alike) as run, reading only those (``gradient_inputs``: cheap, most of a long tail
      names none), unless it reaches an optimizer (``data_inputs``: all of them)."""

    __slots__ = ("reach", "_data", "_grads", "optimizers")

    def __init__(self, data_inputs: Callable[[Block], List[str]], gradient_inputs: Optional[Callable[[Block], List[str]]] = None) -> None:
        self.reach: Dict[str, FrozenSet[str]] = {}
        self.optimizers: Set[str] = set()  # every optimizer an update met names
        self._data = data_inputs
        self._grads = gradient_inputs or data_inputs

    @property
    def used(self) -> Set[str]:
        """The gradients-scope names a node that runs uses, not yet passed."""
        return {n for n in self.reach if in_gradients_scope(n)}

    def visit(self, b: Block, grad: bool, name: Optional[str] = None, op: Optional[str] = None) -> "Tuple[bool, Optional[FrozenSet[str]]]":
        """Whether ``b`` runs (``grad``: it is in a gradients scope), and which optimizers its data
        reaches (``None``: none); noting what it reads. ``name`` and ``op``: ``b``'s, when the
        caller has them (bp's loop: no second look at the block's heads)."""
        if name is None:
            name, op = b.name or "", _op(b)
        got = self.reach.pop(name, None)
        back_edge = op in _BACK_EDGES
        if grad and got is None and not back_edge:
            return False, None
        update = is_update(op) and not _RESTORE.match(name)
        if update:
            own = _labels_of(optimizer_of(name))
            self.optimizers.update(own)
            got = own if not got or got is own else got | own
        elif back_edge or op in _LEAVES:
            got = _ANY if not got else got | _ANY
        reach = self.reach
        if got:
            for k, inp in enumerate(self._data(b)):
                if inp[:1] == "^":
                    p = inp[1:].split(":", 1)[0]
                    if p not in reach and in_gradients_scope(p):
                        reach[p] = RUNS
                    continue
                if update and k == 0:
                    continue
                p = inp.split(":", 1)[0] if ":" in inp else inp
                cur = reach.get(p)
                if not cur:
                    reach[p] = got
                elif cur is not got and not got <= cur:
                    reach[p] = cur | got
            return True, got
        for inp in self._grads(b):
            p = _producer(inp.lstrip("^")) or ""  # (data and control inputs alike)
            if p not in reach and in_gradients_scope(p):
                reach[p] = RUNS
        return True, None


# A state update: an optimizer's kernel (Apply*, ResourceApply*, ResourceSparseApply*,
# SparseApply*), an assignment (Assign*, ...VariableOp) or a scatter into a variable. Its first
# input is the state it updates, not data it reads.
_UPDATE = re.compile(r"(?:Resource)?(?:Sparse)?Apply[A-Z]|Assign|(?:Resource)?Scatter[A-Z]|(?:Resource)?StridedSliceAssign")
# Data that leaves the body it is read in, to whatever updates state there: a call, a functional
# loop or branch (their functions may update state), a function's result, a send to another
# device. Which optimizer is then unknown: ``ANY``.
_LEAVES = frozenset("PartitionedCall StatefulPartitionedCall While StatelessWhile If StatelessIf Case StatelessCase _Retval _DeviceRetval _Send _HostSend GeOp".split())
ANY = "*"
_ANY = frozenset((ANY,))
RUNS: FrozenSet[str] = frozenset()  # (a gradients-scope node that runs, but reaches no optimizer)
_REPLICA = re.compile(r"(?:replica|tower)_\d+$")
# A Saver's restore (``save/AssignVariableOp_3``, ``save_1/Assign``): it writes a checkpoint's
# values, never a gradient; left out, so its restore chain is not followed.
_RESTORE = re.compile(r"save(?:_\d+)?/(?:Assign|restore)")


def optimizer_of(name: str) -> str:
    """The optimizer (its name scope, which is also its train op's name) a state update belongs
    to: ``d_adam/update_discriminator/d1/kernel/ResourceApplyAdam`` -> ``d_adam``,
    ``Adam/Adam/update_dense/kernel/ResourceApplyAdam`` -> ``Adam/Adam``, ``Adam/AssignVariableOp``
    -> ``Adam``; a replica's scope (``replica_1/``, ``tower_0/``) is left out: replicas are copies
    of one model, trained by one optimizer."""
    if "replica_" in name or "tower_" in name:
        name = "/".join(p for p in name.split("/") if not _REPLICA.match(p))
    k = name.find("/update")
    if k > 0:
        return name[:k]
    k = name.rfind("/")
    return name[:k] if k > 0 else name


@functools.lru_cache(maxsize=4096)  # (one set an optimizer, shared by the names it reaches)
def _labels_of(optimizer: str) -> FrozenSet[str]:
    return frozenset((optimizer,))


@functools.lru_cache(maxsize=1024)  # (by op type: a graph has a few dozen)
def is_update(op: Optional[str]) -> bool:
    return op is not None and _UPDATE.match(op) is not None


class _Inside(NamedTuple):
    """bp inside a called function: its block, the function, and the trail read there."""

    block: Block
    function: str
    trail: List[Step]


class _Found(NamedTuple):
    """What one backward read found: bp's block (or ``None``), the trail, whether any node was in
    a gradients scope, why the block is bp, and the other optimizers' points (``others``:
    (block, optimizer) in reading order) with whether one step runs them all (``joined``)."""

    block: Optional[Block]
    trail: List[Step]
    any_grad: bool
    why: str
    optimizer: str = ""
    others: Tuple[Tuple[Block, str], ...] = ()
    joined: bool = True
    passed: Tuple[Tuple[Block, str, bool], ...] = ()  # later gradient ops passed over: (block, why, read before a call was entered)


_RUNS_ALT = "it runs, but no optimizer applies what it computes (a gradient fetched or summarised, not applied)"
_APPLIED = "last op in a gradients scope that computes a gradient an optimizer applies"
_RUNS = "last op in a gradients scope that computes and runs (no gradient read reaches a state update)"


class _Pick:
    """The candidates of one backward read: per optimizer its first (the last in the file) op
    whose data reaches its updates, the first that runs without reaching one, the first dead one."""

    __slots__ = ("by_opt", "order", "runs", "net", "since", "scope_hint", "groups", "pending", "pending_at")

    def __init__(self) -> None:
        self.by_opt: Dict[str, Block] = {}
        self.order: List[str] = []  # optimizers in the order their point was found
        self.runs: Optional[Block] = None
        self.net: Optional[Block] = None
        self.since = 0  # blocks read when the first candidate of any tier was found
        self.scope_hint = False  # the first point's scope says another optimizer may train
        self.groups: Dict[str, List[str]] = {}  # small NoOps read: their inputs (a tf.group, a train op)
        self.pending = False  # an optimizer not yet pointed reads a gradient not yet passed
        self.pending_at = 0  # when to ask that again (blocks read)

    def applied(self, b: Block, labels: FrozenSet[str]) -> bool:
        """Note ``b`` as the point of the optimizers in ``labels`` not yet pointed; whether any
        was new. A point reached only through data that leaves the body or a loop's back edge
        (``ANY``: a while loop's accumulator, read before what it feeds) is the point of the
        first optimizer known after it."""
        new = [o for o in sorted(labels) if o not in self.by_opt and (o != ANY or not self.by_opt)]
        known = [o for o in new if o != ANY]
        if ANY in self.by_opt and known:
            self.by_opt[known[0]] = self.by_opt.pop(ANY)
            self.order[self.order.index(ANY)] = known[0]
            new.remove(known[0])
        for o in new:
            self.by_opt[o] = b
            self.order.append(o)
        return bool(known) or bool(new)

    def first(self) -> Optional[Block]:
        return self.by_opt[self.order[0]] if self.order else None


def _scope_hint(name: str) -> bool:
    """A point in ``gradients_N/`` (N > 0), or in a gradients scope inside another scope
    (``critic/gradients/``, ``worker_1/gradients/``): a graph where several ``minimize`` calls
    each made a gradients scope of its own (the last one, read first, is not alone)."""
    parts = name.split("/")
    for i, p in enumerate(parts[:-1]):
        if _GRAD_SCOPE_PART.match(p):
            return i > 0 or p != "gradients"
    return False


_PENDING_EVERY = 256
_GROUP_BYTES = 16 << 10  # a NoOp read for its inputs: smaller than this (``init`` can hold 100,000)
_GROUPS = 4096
_GRAD_SCOPE_PART = re.compile(r"^(?:gradients(?:_\d+)?|gradient_tape)$")


def _bp_scan(
    blocks: Iterator[Block],
    opts: Options,
    rule: str,
    *,
    inputs_of: Optional[Callable[[Block], List[str]]] = None,
    gradient_inputs: Optional[Callable[[Block], List[str]]] = None,
    data_inputs: Optional[Callable[[Block], List[str]]] = None,
    descend: Optional[Callable[[Block], Optional[_Inside]]] = None,
    one_step: bool = False,
    returns: bool = False,
) -> _Found:
    """bp read backward: the first gradients-scope node that computes and whose data reaches a
    state update (an optimizer applies it), else the first that runs, else the first that
    computes. ``descend``: a call that takes a gradient (the backward function of a
    ``tf.function`` called in the step) is answered inside the function it calls (or ``None``).

    Several optimizers (their updates in different name scopes: ``d_adam/``, ``g_adam/``) each
    have a point, the last gradient op whose data its updates read; ``opts.train_op`` picks one,
    else the first found (the last in the file) is the answer and the others are alternatives.
    ``one_step``: every node read runs in one step (a function body), so several optimizers are
    one step's. ``returns``: a called backward function, whose gradients leave by its results
    (which no node shows): what runs there is applied by the caller."""
    cat = opts.catalog
    back = _Backward(blocks, inputs_of=inputs_of)
    reach = None if rule == "doc" else _Reach(data_inputs or back.inputs, gradient_inputs)
    want = None if opts.train_op is None else _TrainOp(opts.train_op)
    memo: Dict[str, bool] = {}
    trail = Trail()
    any_grad = False
    pick = _Pick()
    read = 0
    end = 0  # where the read began (the first block's end)
    at = 0  # where the first candidate is (its start)
    for b in back:
        name = b.name or ""
        op = _op(b)
        read += 1
        end = end or b.end
        if pick.since and _done(pick, want, reach, read, at - b.end, end - at):
            trail.append(Step(_at(b), name, b.op, "pass", "no other point within %d blocks before it: the search stops" % (read - pick.since)))
            break
        grad = in_gradients_scope(name)
        runs, labels = (True, None) if reach is None else reach.visit(b, grad, name, op)
        if returns and labels is None and runs:
            labels = _ANY
        if want is not None:
            want.visit(b, labels, back.inputs if op == "NoOp" or want.named(name) else None)
        elif op == "NoOp" and not grad and b.end - b.start < _GROUP_BYTES and len(pick.groups) < _GROUPS:
            pick.groups[name] = back.inputs(b)
        if not grad:
            if descend is not None and runs and op in CALLS:
                inside = descend(b)
                if inside is not None:
                    ib, fname, itrail = inside.block, inside.function, inside.trail
                    why = "the call %s takes a gradient: the backward pass of function %s runs in it" % (name, fname)
                    trail.append(Step(_at(b), name, b.op, "pass", why))
                    trail.extend(itrail)
                    return _Found(ib, trail, True, "%s; in it, the last op in a gradients scope that computes" % why, passed=_passed(pick, None, True))
            trail.append(Step(_at(b), name, b.op, "skip", "not in a gradients scope"))
            continue
        any_grad = True
        c = cat.category(op)
        if c is not None:
            trail.append(Step(_at(b), name, b.op, "skip", "catalog: %s" % c))
            continue
        if labels is None and not runs and pick.net is not None:
            trail.append(Step(_at(b), name, b.op, "skip", _DEAD))
            continue
        if rule != "doc" and _shape_only(name, back, memo):
            trail.append(Step(_at(b), name, b.op, "skip", "computes only from constants and shapes"))
            continue
        if rule == "doc":
            trail.append(Step(_at(b), name, b.op, "chosen", "last op in a gradients scope that computes"))
            return _Found(b, trail, True, "last op in a gradients scope that computes")
        if labels is not None:
            first = not pick.order
            if pick.applied(b, labels):
                if first:
                    pick.since, at = pick.since or read, at or b.start
                    pick.scope_hint = _scope_hint(name)
                trail.append(Step(_at(b), name, b.op, "pass", "the last gradient op that %s applies" % _optimizers(labels)))
                if want is None and first and not pick.scope_hint and not _pending(reach, pick):
                    break  # (the common case: one optimizer, nothing more to look for)
            else:
                trail.append(Step(_at(b), name, b.op, "skip", "computes a gradient that %s applies after a later op" % _optimizers(labels)))
            continue
        if runs:
            if pick.runs is None:
                pick.runs = b
                pick.since, at = pick.since or read, at or b.start
            trail.append(Step(_at(b), name, b.op, "skip", "runs, but no optimizer applies what it computes"))
            continue
        pick.net = b
        pick.since, at = pick.since or read, at or b.start
        trail.append(Step(_at(b), name, b.op, "skip", _DEAD))
    return _decide(pick, want, trail, any_grad, one_step)


def _optimizers(labels: FrozenSet[str]) -> str:
    named = sorted(o for o in labels if o != ANY)
    return ", ".join(named) if named else "what the body returns or calls"


def _pending(reach: Optional[_Reach], pick: _Pick) -> bool:
    """Whether an optimizer not yet pointed reads a gradient not yet passed (its point is ahead)."""
    if reach is None or not any(o not in pick.by_opt for o in reach.optimizers):
        return False  # (every optimizer met has its point: the common case, without a walk)
    for n, labels in reach.reach.items():
        if in_gradients_scope(n) and any(o not in pick.by_opt and o != ANY for o in labels):
            return True
    return False


def _done(pick: _Pick, want: "Optional[_TrainOp]", reach: Optional[_Reach], read: int, before: int, tail: int) -> bool:
    """Whether the read can stop once a candidate is found (``read`` blocks read, ``before``
    bytes before the first candidate, ``tail`` bytes after it).

    - ``--train-op``: once its optimizer's point is found (none: on to the budget below);
    - an optimizer that reads a gradient not yet passed: read on to its point;
    - the first point's scope hints at another optimizer (``gradients_1/``): the budget;
    - no point yet, only ops that run but apply nothing, or dead ones: the budget, a live
      candidate this far before is unlikely (optimizers apply the gradients next to them).
    The budget: as many blocks again as read to the first candidate (at least ``_NET_BLOCKS``),
    or as many bytes again as the tail after it (at least ``_NET_BYTES``)."""
    over = read - pick.since > max(_NET_BLOCKS, pick.since) or before > max(_NET_BYTES, tail)
    if want is not None:
        return any(o in pick.by_opt for o in want.opts) or over
    if read >= pick.pending_at:  # (asked again every _PENDING_EVERY blocks: it walks ``reach``)
        pick.pending, pick.pending_at = _pending(reach, pick), read + _PENDING_EVERY
    if pick.pending:
        return over
    if pick.order and not pick.scope_hint:
        return True
    if pick.order and len([o for o in pick.order if o != ANY]) > 1:
        return True
    return over


class _TrainOp:
    """``--train-op NAME`` read backward: the optimizers NAME runs. NAME is an update op (its
    optimizer), an optimizer's scope (``d_adam``), or a train op or ``tf.group`` (the optimizers
    of the updates and train ops it waits for, through control inputs)."""

    __slots__ = ("name", "closure", "opts")

    def __init__(self, name: str) -> None:
        self.name = name
        self.closure: Set[str] = set()  # names NAME waits for, not yet passed
        self.opts: Set[str] = {name}  # the optimizers it runs (its name may be one's scope)

    def named(self, name: str) -> bool:
        return name == self.name or name in self.closure

    def visit(self, b: Block, labels: Optional[FrozenSet[str]], inputs_of: Optional[Callable[[Block], List[str]]]) -> None:
        name = b.name or ""
        if not self.named(name):
            return
        self.closure.discard(name)
        found: Set[str] = set()
        if is_update(_op(b)):
            found.add(optimizer_of(name))
        elif inputs_of is not None:
            for inp in inputs_of(b):
                self.closure.add(_producer(inp.lstrip("^")) or "")
        self.opts |= found


def _decide(pick: _Pick, want: "Optional[_TrainOp]", trail: List[Step], any_grad: bool, one_step: bool) -> _Found:
    if want is not None and pick.order:
        chosen = next((o for o in pick.order if o in want.opts), None)
        if chosen is None:
            return _Found(None, trail, any_grad, "no gradient op that %s applies (--train-op)" % want.name)
        b = pick.by_opt[chosen]
        trail.append(Step(_at(b), b.name or "", b.op, "chosen", "%s (--train-op %s: optimizer %s)" % (_APPLIED, want.name, chosen)))
        return _Found(b, trail, True, "%s: %s, chosen by --train-op %s" % (_APPLIED, chosen, want.name), chosen)
    if pick.order:
        named = [o for o in pick.order if o != ANY] or pick.order
        b = pick.by_opt[named[0]]
        others = tuple((pick.by_opt[o], o) for o in named[1:])
        joined = one_step or not others or _joined(pick.groups, set(named))
        trail.append(Step(_at(b), b.name or "", b.op, "chosen", _APPLIED))
        return _Found(b, trail, True, _APPLIED, named[0] if named[0] != ANY else "", others, joined, _passed(pick, b, False))
    for b, why in ((pick.runs, _RUNS), (pick.net, _NET)):
        if b is not None:
            trail.append(Step(_at(b), b.name or "", b.op, "chosen", why))
            return _Found(b, trail, True, why)
    return _Found(None, trail, any_grad, "")


def _passed(pick: _Pick, b: Optional[Block], outer: bool) -> Tuple[Tuple[Block, str, bool], ...]:
    """The gradient ops passed over after ``b`` (read before it): one that runs but is applied by
    no optimizer, and one nothing uses (``outer``: read before the read entered a call)."""
    return tuple(
        (x, w, outer) for x, w in ((pick.runs, _RUNS_ALT), (pick.net, _DEAD)) if x is not None and (b is None or x.start > b.start)
    )


def _joined(groups: Dict[str, List[str]], opts: Set[str]) -> bool:
    """Whether one NoOp read (a ``tf.group``, a train op) waits, through control inputs and the
    NoOps it waits for, for every optimizer in ``opts`` (by its name or its updates' scope)."""
    for root in groups:
        seen, work, got = {root}, [root], set()
        while work and got != opts:
            n = work.pop()
            if n in opts:
                got.add(n)
            o = optimizer_of(n)
            if o in opts:
                got.add(o)
            for inp in groups.get(n, ()):
                p = _producer(inp.lstrip("^")) or ""
                if p not in seen:
                    seen.add(p)
                    work.append(p)
        if got == opts:
            return True
    return False


def find_bp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_bp(g, opts))


def optimizer_points(g: GraphFile, opts: Options) -> List[Tuple[str, Point]]:
    """Each optimizer's bp, by optimizer, when several apply gradients in separate train ops; else
    ``[]`` (one optimizer, or one step runs them all)."""
    out: List[Tuple[str, Point]] = []
    _find_bp(g, opts, optimizers=out)
    return out


def _find_bp(g: GraphFile, opts: Options, *, optimizers: Optional[List[Tuple[str, Point]]] = None) -> Answer:
    rule = "doc" if opts.rule == "doc" else "dataflow"
    block_path, heads = operator_layout(g.dialect)
    # Backward, read names and ops only: most of a long tail is never a candidate, and a NoOp
    # like `init` has 100,000+ inputs. The few blocks whose inputs matter are read again.
    light = frozenset(h for h in heads if h in ("name", "op", "type", "op_type"))
    into: List[str] = []  # the function a call's backward pass was answered in
    tail = _BackBytes(g)

    def descend(call: Block) -> Optional[_Inside]:
        if rule == "doc" or block_path != ("node",):
            return None
        if not any(in_gradients_scope(_producer(i) or "") for i in _gradient_inputs(g, call, heads)):
            return None
        fname = called_function(g, call)
        body = function_body(g, fname) if fname else None
        if body is None:
            return None
        inside = _bp_scan(body.reversed_blocks(), opts, rule, one_step=True, returns=True)
        if inside.block is None:
            return None
        into.append(fname)
        return _Inside(inside.block, fname, inside.trail)

    found = _bp_scan(
        reverse_blocks(g, block_path, light), opts, rule, inputs_of=lambda blk: _inputs_again(g, blk, heads),
        gradient_inputs=lambda blk: _gradient_inputs(g, blk, heads, tail),
        data_inputs=lambda blk: _gradient_inputs(g, blk, heads, tail, every=True), descend=descend,
    )
    if found.block is not None:
        return _answer(g, found, rule, found.why, into[0] if into else None, optimizers=optimizers)
    if found.why and opts.train_op is not None:
        return Answer("bp", None, rule, found.why, found.trail)
    library = Library()
    body = step_body(found.any_grad, lambda: training_function(g, library)) if block_path == ("node",) else None
    if body is not None:
        # (the top level's call nodes, read again: a step in functions has a small top level, and
        # bp's common read, a TF1 graph's, pays nothing for them)
        top_calls = itertools.islice((b for b in g.blocks(block_path, light) if b.op in CALLS), CALLS_CAP)
        calls = [c for c in (call_of(g, b, None, _inputs_again(g, b, heads)) for b in top_calls) if c is not None]
        last, earlier, ordered = last_step(body.name, calls + library.calls, library.gradients)
        chosen = opts.train_op is not None and opts.train_op in library.gradients
        if chosen:  # (--train-op names a step function: its own bp, whatever runs after it)
            last, earlier, ordered = opts.train_op or "", (), True
        if last != body.name:
            body = function_body(g, last) or body
        fname = body.name
        inside = _bp_scan(body.reversed_blocks(), opts._replace(train_op=None) if chosen else opts, rule, one_step=True)
        if inside.block is not None and chosen:
            reason = "the step function --train-op %s names; %s" % (fname, inside.why)
            return _answer(g, inside._replace(trail=found.trail + inside.trail), rule, reason, fname)
        if inside.block is not None:
            reason = "the training step runs in function %s (it holds the gradients); %s" % (fname, inside.why)
            if earlier and ordered:
                reason = "the training step's last function is %s (its caller runs %s before it); %s" % (fname, ", ".join(earlier), inside.why)
            steps = _other_steps(g, earlier, ordered, fname, opts, rule)
            return _answer(g, inside._replace(trail=found.trail + inside.trail), rule, reason, fname, steps=steps, ordered=ordered)
    why = (
        "no compute op in a gradients scope"
        if found.any_grad
        else "no node in a gradients scope: this looks like an inference graph"
    )
    return Answer("bp", None, rule, why, found.trail)


def _other_steps(g: GraphFile, fnames: Tuple[str, ...], ordered: bool, last: str, opts: Options, rule: str) -> Tuple[Alternative, ...]:
    """The bp of each other step function the caller runs (``fnames``), as alternatives: each
    one's last applied gradient op, which runs before ``last``'s (``ordered``) or in an order
    the caller does not fix."""
    alts = []
    for fname in fnames:
        body: Optional[FunctionBody] = function_body(g, fname)
        got = None if body is None else _bp_scan(body.reversed_blocks(), opts, rule, one_step=True)
        if got is None or got.block is None:
            continue
        why = (
            "the last gradient op that function %s applies: it runs before %s in the same step" % (fname, last)
            if ordered
            else "the last gradient op that function %s applies: the caller does not order it against %s" % (fname, last)
        )
        alts.append(Alternative(_point("bp", got.block, rule, g.name, fname), why, "other_optimizer"))
    return tuple(alts)


def _answer(
    g: GraphFile, found: _Found, rule: str, reason: str, fn: Optional[str], *, steps: Tuple[Alternative, ...] = (), ordered: bool = True,
    optimizers: Optional[List[Tuple[str, Point]]] = None,
) -> Answer:
    """bp's answer from a read that found its block: with several optimizers not run by one step,
    ``ambiguous``, each other optimizer's point an alternative (``--train-op`` chooses). ``steps``:
    the other step functions' points (:func:`_other_steps`); ``ordered``: the caller runs them
    before this one, so the answer stays certain. ``optimizers``: filled with each optimizer's
    point when several are not run by one step."""
    assert found.block is not None
    point = _point("bp", found.block, rule, g.name, fn)
    if optimizers is not None and found.optimizer and not found.joined:
        optimizers.append((found.optimizer, point))
        optimizers.extend((o, _point("bp", ob, rule, g.name, fn)) for ob, o in found.others)
    dead = tuple(Alternative(_point("bp", x, rule, g.name, None if outer else fn), w, "dead") for x, w, outer in found.passed)
    alts = tuple(
        Alternative(_point("bp", ob, rule, g.name, fn), "the last gradient op that optimizer %s applies: its own step's bp (--train-op %s)" % (o, o), "other_optimizer")
        for ob, o in found.others
    )
    if steps and not ordered:
        doubt = "%d step functions (%s) train in one caller that does not order them: this one holds the most gradients" % (
            len(steps) + 1, _shown([fn or "?"] + [a.point.function or "?" for a in steps]))
        return Answer("bp", point, rule, reason, found.trail, confidence="ambiguous", doubt=doubt, alternatives=dead + alts + steps)
    if found.joined:  # (one step runs every optimizer: its last gradient op is the step's bp)
        return Answer("bp", point, rule, reason, found.trail, alternatives=dead + steps)
    alts = dead + alts + steps
    names = [found.optimizer] + [o for _b, o in found.others]
    doubt = "%d optimizers (%s) apply gradients in separate train ops: this is %s's point, the last in the file; choose one with --train-op" % (
        len(names), _shown(names), found.optimizer)
    return Answer("bp", point, rule, reason, found.trail, confidence="ambiguous", doubt=doubt, alternatives=alts)


def _shown(names: List[str]) -> str:
    return ", ".join(names[:5]) + (", and %d more" % (len(names) - 5) if len(names) > 5 else "")


def _inputs_again(g: GraphFile, b: Block, heads: FrozenSet[str]) -> List[str]:
    """The inputs of a block read without them: its bytes scanned again."""
    if "input" in (h.name for h in b.heads):
        return b.inputs
    again = g.rescan(b, heads)
    return again[0].inputs if len(again) == 1 else []


_READ = 1 << 20
# How far bp reads back past a candidate that does not run, for one that does (at least; or as
# far again as the read so far): blocks, bytes.
_NET_BLOCKS = 1 << 16
_NET_BYTES = 64 << 20


class _BackBytes:
    """Block bytes for a backward read, taken from one window read ending at a block's end (the
    next blocks come before it), so the tail costs a read per window, not per block."""

    __slots__ = ("g", "lo", "buf")

    def __init__(self, g: GraphFile) -> None:
        self.g = g
        self.lo = 0
        self.buf = b""

    def get(self, start: int, end: int) -> bytes:
        if not (self.lo <= start and end <= self.lo + len(self.buf)):
            self.lo = max(0, end - _READ)
            self.buf = self.g.read_at(self.lo, end - self.lo)
        return self.buf[start - self.lo : end - self.lo]


def _gradient_inputs(g: GraphFile, b: Block, heads: FrozenSet[str], back: Optional[_BackBytes] = None, *, every: bool = False) -> List[str]:
    """The inputs of ``b`` that may name a gradients-scope node (the liveness read's question),
    cheaply: none when its bytes cannot name one (most of a long tail: ``init``, save/restore);
    else the ones its lane reads off its bytes (``Lane.inputs_naming``: in the text writer
    layout, its ``input`` lines); else its bytes scanned again. ``every``: all its inputs (the
    same reading, without the gradients test)."""
    size = b.end - b.start
    if size > _READ:
        return _inputs_again(g, b, heads) if every or _may_name_gradients(g, b) else []
    raw = back.get(b.start, b.end) if back is not None else g.read_at(b.start, size)
    got = g.lane.inputs_naming(b, raw, b"gradient", every=every)
    return _inputs_again(g, b, heads) if got is None else got


def _may_name_gradients(g: GraphFile, b: Block) -> bool:
    """Whether a large block may name a gradients-scope node among its inputs, from its bytes
    read through ``g`` in 1 MiB pieces (a Const's tensor_content can be 100 MB), as its lane tells."""
    lane = g.lane
    inp = got_grad = False
    pos, tail = b.start, b""
    while pos < b.end:
        chunk = g.read_at(pos, min(_READ, b.end - pos))
        if not chunk:
            break
        buf = tail + chunk
        inp = inp or lane.may_hold(buf, b"input")
        got_grad = got_grad or lane.may_name(buf, b"gradient")
        if got_grad and inp:
            return True
        pos += len(chunk)
        tail = buf[-16:]
    return False
