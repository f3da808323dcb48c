"""bp_point: the last op of backward propagation, read backward from the end of the file."""
from __future__ import annotations

import collections
from typing import Callable, Deque, Dict, FrozenSet, Iterator, List, Optional, Tuple

from ._answers import _at, _in_units, Answer, Options, Step, Trail, _op, _point, _producer
from ._body import step_body, training_function
from ._catalog import METADATA, in_gradients_scope
from ._dialect import operator_layout
from ._input import GraphFile, Source, opened
from ._model import Block
from ._reverse import reverse_blocks


class _Backward:
    """Blocks in reverse order, with look-up of names not yet reached (read ahead, bounded).

    Producers come before their consumers in a GraphDef, so a look-up reads ahead; the blocks
    already handed out are forgotten after ``recent`` more, keeping memory flat on long tails.
    """

    def __init__(
        self,
        it: Iterator[Block],
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


def _bp_scan(
    blocks: Iterator[Block], opts: Options, rule: str, inputs_of: Optional[Callable[[Block], List[str]]] = None
) -> Tuple[Optional[Block], List[Step], bool]:
    cat = opts.catalog
    back = _Backward(blocks, inputs_of=inputs_of)
    memo: Dict[str, bool] = {}
    trail = Trail()
    any_grad = False
    for b in back:
        name = b.name or ""
        if not in_gradients_scope(name):
            trail.append(Step(_at(b), name, b.op, "skip", "not in a gradients scope"))
            continue
        any_grad = True
        c = cat.category(_op(b))
        if c is not None:
            trail.append(Step(_at(b), name, b.op, "skip", "catalog: %s" % c))
            continue
        if rule != "doc" and _shape_only(name, back, memo):
            trail.append(Step(_at(b), name, b.op, "skip", "computes only from constants and shapes"))
            continue
        trail.append(Step(_at(b), name, b.op, "chosen", "last op in a gradients scope that computes"))
        return b, trail, True
    return None, trail, any_grad


def find_bp(src: Source, opts: Options = Options()) -> Answer:
    with opened(src) as g:
        return _in_units(g, _find_bp(g, opts))


def _find_bp(g: GraphFile, opts: Options) -> Answer:
    rule = "doc" if opts.rule == "doc" else "dataflow"
    block_path, heads = operator_layout(g.dialect)
    # Backward, read names and ops only: most of a long tail is never a candidate, and a NoOp
    # like `init` has 100,000+ inputs. The few blocks whose inputs matter are read again.
    light = frozenset(h for h in heads if h in ("name", "op", "type", "op_type"))
    b, trail, any_grad = _bp_scan(reverse_blocks(g, block_path, light), opts, rule, lambda blk: _inputs_again(g, blk, heads))
    if b is not None:
        return Answer("bp", _point("bp", b, rule, g.name, None), rule, "last op in a gradients scope that computes", trail)
    body = step_body(any_grad, lambda: training_function(g)) if block_path == ("node",) else None
    if body is not None:
        fname = body.name
        b2, t2, _ = _bp_scan(body.reversed_blocks(), opts, rule)
        if b2 is not None:
            reason = "the training step runs in function %s (it holds the gradients)" % fname
            return Answer("bp", _point("bp", b2, rule, g.name, fname), rule, reason, trail + t2)
    why = (
        "no compute op in a gradients scope"
        if any_grad
        else "no node in a gradients scope: this looks like an inference graph"
    )
    return Answer("bp", None, rule, why, trail)


def _inputs_again(g: GraphFile, b: Block, heads: FrozenSet[str]) -> List[str]:
    """The inputs of a block read without them: its bytes scanned again."""
    if "input" in (h.name for h in b.heads):
        return b.inputs
    again = g.rescan(b, heads)
    return again[0].inputs if len(again) == 1 else []
