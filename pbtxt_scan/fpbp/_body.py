"""Where the training step is: the one rule fp and bp share (:func:`step_body`), the library
function that holds the most gradients-scope nodes (:func:`training_function`), read in bounded
memory, and, when one caller runs several such functions in one step, the one that runs last
(:func:`last_step`: bp's)."""
from __future__ import annotations

import array
from typing import Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Set, Tuple

from .._kit import NamedTuple
from ._catalog import CALLS, in_gradients_scope
from .._errors import PbtxtError
from ..graph._input import GraphFile
from .._model import FUNCTION_NODES, TF_HEADS, Block

# Names a function's pass keeps to tell its arguments from its nodes (see `_Args`).
_NAMES_CAP = 1 << 16
# Call nodes kept to order the step functions one caller runs (see `last_step`).
CALLS_CAP = 4096


class FunctionBody:
    """A library function chosen as the step body: its name, its arguments, and where its node
    blocks are. Only their offsets are kept (32 bytes a node, like bp's reverse index), and each
    block is read again from the file when it is handed out, forward or backward, so a function
    of millions of nodes costs no more memory than its index."""

    __slots__ = ("g", "name", "args", "_index")

    def __init__(self, g: GraphFile, name: str, index: "array.array[int]", args: FrozenSet[str]) -> None:
        self.g = g
        self.name = name
        self.args = args
        self._index = index

    def __len__(self) -> int:
        return len(self._index) // 4

    def blocks(self, heads: FrozenSet[str] = TF_HEADS) -> Iterator[Block]:
        return (self._block(i, heads) for i in range(len(self)))

    def reversed_blocks(self, heads: FrozenSet[str] = TF_HEADS) -> Iterator[Block]:
        return (self._block(i, heads) for i in range(len(self) - 1, -1, -1))

    def _block(self, i: int, heads: FrozenSet[str]) -> Block:
        start, end, line, col = self._index[4 * i : 4 * i + 4]
        got = self.g.rescan(Block(FUNCTION_NODES, start, end, line, col, ()), heads)
        if len(got) != 1:  # (it scanned once already: the file changed under us)
            raise self.g.changed() or PbtxtError("the file changed while it was being read", line, col, self.g.name)
        return got[0]._replace(parents=(None, self.name))


def step_body(top_has_gradients: bool, functions: Callable[[], Optional[FunctionBody]]) -> Optional[FunctionBody]:
    """The one rule for where the training step is, shared by fp and bp: the top level when one of
    its nodes is in a gradients scope; else the library function holding the most gradients-scope
    nodes (a ``tf.function`` step, however deep the call chain: Keras ``model.fit`` calls
    ``one_step_on_data`` from ``train_function``); else the top level (an inference graph)."""
    if top_has_gradients:
        return None
    return functions()


class _Args:
    """A function's arguments, from its nodes' inputs: FunctionDef names another node's output
    ``node:output:index`` and an argument bare (``x``), so a bare input (not ``^control``) is an
    argument unless a node of the function bears that name (a body written graph-style).

    Bounded: the bare inputs (a function has few arguments), the names that are also bare inputs,
    and the first ``cap`` node names (a bare input that names one of them is no argument). Past
    that many nodes, a node is told from an argument only when its bare reference came first;
    TensorFlow writes no bare node references at all."""

    __slots__ = ("cap", "bare", "named", "early", "graph_style")

    def __init__(self, *, cap: int = _NAMES_CAP) -> None:
        self.cap = cap
        self.bare: Set[str] = set()
        self.named: Set[str] = set()
        self.early: Set[str] = set()
        self.graph_style = False

    def add(self, b: Block) -> None:
        name = b.name or ""
        if name in self.bare:
            self.named.add(name)
        if len(self.early) < self.cap:
            self.early.add(name)
        if self.graph_style:
            return
        for inp in b.inputs:
            if not inp.startswith("^") and ":" not in inp:
                self.bare.add(inp)
        if len(self.bare) > self.cap:  # graph-style: its inputs come in through `_Arg` nodes
            self.graph_style = True
            self.bare.clear()
            self.named.clear()

    def result(self) -> FrozenSet[str]:
        return frozenset() if self.graph_style else frozenset(self.bare - self.named - self.early)


class Call(NamedTuple):
    """A call node: where it is (``caller``, ``None`` for the top level), its name, the function
    it calls, and the nodes it waits for (its inputs' producers, control inputs included)."""

    caller: Optional[str]
    name: str
    callee: str
    after: FrozenSet[str]


def call_of(g: GraphFile, b: Block, caller: Optional[str], inputs: Sequence[str]) -> Optional[Call]:
    """The :class:`Call` a call block makes (``None``: no function named)."""
    callee = called_function(g, b)
    if callee is None:
        return None
    return Call(caller, b.name or "", callee, frozenset(i.lstrip("^").split(":", 1)[0] for i in inputs))


class Library:
    """What the library pass learns besides the step body: each function's count of
    gradients-scope nodes (those that hold any) and the call nodes met (at most ``CALLS_CAP``)."""

    __slots__ = ("gradients", "calls")

    def __init__(self) -> None:
        self.gradients: Dict[str, int] = {}
        self.calls: List[Call] = []


def last_step(best: str, calls: Sequence[Call], gradients: Dict[str, int]) -> Tuple[str, Tuple[str, ...], bool]:
    """Of the functions holding gradients that the caller of ``best`` calls (an outer
    ``tf.function`` running a discriminator step and then a generator step), the one that runs
    last, the others in the caller's order, and whether that order is fixed: a call runs after
    the calls it waits for, directly or through other such calls (TensorFlow's automatic control
    dependencies chain a function's stateful calls in program order). ``(best, (), True)`` when
    the caller runs no other such function; when no call waits for all the others, ``best``
    stays and the order is not fixed."""
    callers = [c.caller for c in calls if c.callee == best]
    if not callers:
        return best, (), True
    steps = [c for c in calls if c.caller == callers[0] and gradients.get(c.callee)]
    if len({c.callee for c in steps}) < 2:
        return best, (), True
    names = {c.name for c in steps}
    direct = {c.name: c.after & names for c in steps}

    def before(name: str) -> Set[str]:
        seen: Set[str] = set()
        todo = list(direct[name])
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                todo.extend(direct.get(n, ()))
        return seen

    waits = {c.name: before(c.name) for c in steps}
    order = sorted(steps, key=lambda c: len(waits[c.name]))
    last = [c for c in steps if waits[c.name] >= names - {c.name}]
    if len(last) != 1:
        return best, tuple(dict.fromkeys(c.callee for c in order if c.callee != best)), False
    return last[0].callee, tuple(dict.fromkeys(c.callee for c in order if c.callee != last[0].callee)), True


def training_function(g: GraphFile, library: Optional[Library] = None) -> Optional[FunctionBody]:
    """The library function holding the most gradients-scope nodes (one forward pass over the
    library that keeps, of each function, its count, its arguments and its blocks' offsets; of
    the best one so far, the same). ``library``: also filled with every function's count and the
    call nodes met (bp's :func:`last_step`)."""
    best: Optional[FunctionBody] = None
    best_count = 0
    cur: Optional[str] = None
    index: "array.array[int]" = array.array("q")
    args = _Args()
    count = 0

    def close() -> None:
        nonlocal best, best_count
        if library is not None and cur is not None and count:
            library.gradients[cur] = count
        if cur is not None and count and count > best_count:
            best, best_count = FunctionBody(g, cur or "?", index, args.result()), count

    for b in g.blocks(FUNCTION_NODES, TF_HEADS):
        fname = b.parents[-1] if b.parents else None
        if fname != cur:
            close()
            cur, index, args, count = fname, array.array("q"), _Args(), 0
        index.extend((b.start, b.end, b.line, b.column))
        args.add(b)
        if in_gradients_scope(b.name or ""):
            count += 1
        elif library is not None and b.op in CALLS and len(library.calls) < CALLS_CAP:
            call = call_of(g, b, cur, b.inputs)
            if call is not None:
                library.calls.append(call)
    close()
    return best


def function_body(g: GraphFile, name: str) -> Optional[FunctionBody]:
    """The library function ``name`` (a called model), held as :func:`training_function` holds
    the step: its blocks' offsets and its arguments."""
    index: "array.array[int]" = array.array("q")
    args = _Args()
    met = False
    for b in g.blocks(FUNCTION_NODES, TF_HEADS):
        fname = b.parents[-1] if b.parents else None
        if fname != name:
            if met:
                break
            continue
        met = True
        index.extend((b.start, b.end, b.line, b.column))
        args.add(b)
    return FunctionBody(g, name, index, args.result()) if met else None


def called_function(g: GraphFile, b: Block) -> Optional[str]:
    """The library function a call node (``PartitionedCall``, ``StatefulPartitionedCall``) names in
    its attr ``f``, from the block parsed (``None``: no such attr, or too big to read)."""
    from .._model import Message

    try:
        node = g.parse(b, max_bytes=1 << 20)[0].value
    except PbtxtError:
        return None
    for a in node.all("attr"):
        if a.get("key") == "f":
            func = (a.get("value") or Message()).get("func") or Message()
            name = func.get("name")
            return name if isinstance(name, str) else None
    return None
