"""What the nodes bp reads backward feed (:class:`_Reach`): which optimizers' state updates a node's
data reaches, and whether it runs; a state update's optimizer (:func:`optimizer_of`)."""
from __future__ import annotations

import functools
import re
from typing import Callable, Dict, FrozenSet, List, Optional, Set, Tuple

from ._answers import _op, _producer
from ._catalog import in_gradients_scope
from .._model import Block


# Ops whose consumer comes before them in the file: a while loop's back edge (NextIteration ->
# Merge). A backward read meets their consumer after them, so they are taken as live.
_BACK_EDGES = frozenset(("NextIteration", "RefNextIteration"))


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
      names none), unless it reaches an optimizer (``data_inputs``: all of them).
    - ``returns``: a called backward function, whose gradients leave by its results (which no
      node shows): what runs there reaches ``ANY`` (the caller applies it)."""

    __slots__ = ("reach", "_data", "_grads", "optimizers", "_ran")

    def __init__(
        self, data_inputs: Callable[[Block], List[str]], gradient_inputs: Optional[Callable[[Block], List[str]]] = None, *, returns: bool = False,
    ) -> None:
        self.reach: Dict[str, FrozenSet[str]] = {}
        self.optimizers: Set[str] = set()  # every optimizer an update met names
        self._data = data_inputs
        self._grads = gradient_inputs or data_inputs
        self._ran = _ANY if returns else None  # what a node that runs reaches when no update tells

    @property
    def used(self) -> Set[str]:
        """The gradients-scope names a node that runs uses, not yet passed."""
        return {n for n in self.reach if in_gradients_scope(n)}

    def visit(self, b: Block, grad: bool, name: Optional[str] = None, op: Optional[str] = None) -> "Tuple[bool, Optional[FrozenSet[str]]]":
        """Whether ``b`` runs (``grad``: it is in a gradients scope), and which optimizers its data
        reaches (``None``: none; ``ANY`` in a called backward function); noting what it reads.
        ``name`` and ``op``: ``b``'s, when the caller has them (bp's loop: no second look at the
        block's heads)."""
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
        return True, self._ran


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

