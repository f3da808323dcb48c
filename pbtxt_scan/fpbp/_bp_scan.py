"""bp's backward loop (:func:`_bp_scan`) and its choice: per optimizer the last gradient op its
updates apply (:class:`_Pick`), ``--train-op``'s optimizers (:class:`_TrainOp`), when the read
can stop (:func:`_done`), and what it found (:class:`_Found`)."""
from __future__ import annotations

import re
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Set, Tuple

from .._kit import NamedTuple
from ._answers import _at, Options, Step, Trail, _op, _producer
from ._bp_back import _Backward, _shape_only
from ._bp_reach import ANY, _Reach, is_update, optimizer_of
from ._catalog import CALLS, in_gradients_scope
from .._model import Block

_DEAD = "nothing that runs uses its result (TensorFlow prunes it)"
_NET = "last op in a gradients scope that computes (nothing that runs uses any: the answer reading gradients scopes alone)"
# How far bp reads back past a candidate that does not run, for one that does (at least; or as
# far again as the read so far): blocks, bytes.
_NET_BLOCKS = 1 << 16
_NET_BYTES = 64 << 20


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


Inputs = Callable[[Block], List[str]]  # a block's inputs, as a read gives them


def _bp_scan(
    blocks: Iterator[Block], opts: Options, rule: str, *, inputs_of: Optional[Inputs] = None,
    gradient_inputs: Optional[Inputs] = None, data_inputs: Optional[Inputs] = None,
    descend: Optional[Callable[[Block], Optional[_Inside]]] = None, one_step: bool = False, returns: bool = False,
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
    reach = None if rule == "doc" else _Reach(data_inputs or back.inputs, gradient_inputs, returns=returns)
    want = None if opts.train_op is None else _TrainOp(opts.train_op)
    memo: Dict[str, bool] = {}
    trail, pick, any_grad = Trail(), _Pick(), False
    read = end = at = 0  # blocks read; where the read began (the first block's end), the first candidate is (its start)
    for b in back:
        name, op = b.name or "", _op(b)
        read += 1
        end = end or b.end
        if pick.since and _done(pick, want, reach, read, at - b.end, end - at):
            trail.append(Step(_at(b), name, b.op, "pass", "no other point within %d blocks before it: the search stops" % (read - pick.since)))
            break
        grad = in_gradients_scope(name)
        runs, labels = (True, None) if reach is None else reach.visit(b, grad, name, op)
        if want is not None:
            want.visit(b, labels, back.inputs if op == "NoOp" or want.named(name) else None)
        elif op == "NoOp" and not grad and b.end - b.start < _GROUP_BYTES and len(pick.groups) < _GROUPS:
            pick.groups[name] = back.inputs(b)
        if not grad:
            if descend is not None and runs and op in CALLS:
                inside = descend(b)
                if inside is not None:
                    return _entered(b, inside, trail, pick)
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


def _entered(call: Block, inside: _Inside, trail: List[Step], pick: _Pick) -> _Found:
    """bp answered inside the function a call that takes a gradient runs (its backward pass)."""
    why = "the call %s takes a gradient: the backward pass of function %s runs in it" % (call.name or "", inside.function)
    trail.append(Step(_at(call), call.name or "", call.op, "pass", why))
    trail.extend(inside.trail)
    return _Found(inside.block, trail, True, "%s; in it, the last op in a gradients scope that computes" % why, passed=_passed(pick, None, True))


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
    for last, why in ((pick.runs, _RUNS), (pick.net, _NET)):
        if last is not None:
            trail.append(Step(_at(last), last.name or "", last.op, "chosen", why))
            return _Found(last, trail, True, why)
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
        seen, work = {root}, [root]
        got: Set[str] = set()
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
