"""fp when several optimizers train the graph in separate train ops (an actor's and a critic's, each
run by its own ``Session.run``): each step begins at the first op of *its* model on the batch, so
fp has one answer per optimizer (:func:`other_optimizers`).

1. The gate, at a byte search's cost, over a bounded stretch past the answer (as far again as the
   answer lies, at least ``_WINDOW`` bytes, the window fp already gives copies of the model): does
   another op on the answer's data read a trained variable (a second model on the same batch)?
   Most graphs have none, and fp's answer stands as it was, for the price of that search.
2. Only then, bp's backward read says whether several optimizers apply gradients in separate train
   ops (bp ``ambiguous``, its other optimizers' points), and which: each optimizer's point is the
   gradient of the op where its model first meets its variables (``<scope>/gradients/<op>_grad/...``,
   the last gradient op an optimizer applies), so the op it names is that optimizer's fp.
3. The answer's optimizer and another op's optimizer differ: fp is ``ambiguous``, that op an
   alternative (``other_optimizer``).

``--train-op NAME`` (:func:`step_fp`) answers for the step NAME runs: the first op in the file,
of all those the step runs, that reads a trained variable. Which ops a step runs is known only
from its end, so this one reads the whole file (back, then forward to the answer).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Iterable, List, Optional, Set, Tuple

from .._kit import regex
from ._answers import Alternative, Answer, Options, Point, Step, _at, _point, _producer
from ._catalog import VARIABLE_PASS, VARIABLES, in_gradients_scope
from ._fp_flow import _Candidate
from ..parallel._grep import _SearchFailed
from ._hood_find import Fallback, Finder, Rec, grep_finder, pass_finder, stopping
from .._errors import PbtxtError
from ..graph._dialect import operator_layout

# bp's modules (its backward reading, the index cache) load in steps 2 and 3 only, and for --train-op:
# most fp answers end at the gate (tests/test_startup.py).
if TYPE_CHECKING:
    from ._body import FunctionBody
    from .._model import Block
    from ..graph._input import GraphFile

_WINDOW = 4 << 20  # bytes past the answer searched at least (fp's window for copies)
_CONSUMERS = 64  # other ops on the data looked at, at most
_STEP_NAMES = 1 << 21  # names of the ops one --train-op step runs, at most
_GRAD = regex(r"(?:^|/)(?:gradients(?:_\d+)?|gradient_tape)/")


def forward_of(gradient: str) -> Optional[str]:
    """The forward op a gradient op is the gradient of: ``actor/gradients/actor/l1/MatMul_grad/
    MatMul_1`` -> ``actor/l1/MatMul`` (``None``: not a ``<op>_grad/`` name)."""
    m = None
    for m in _GRAD.finditer(gradient):
        pass
    if m is None:
        return None
    rest = gradient[m.end():]
    k = rest.find("_grad/")
    return rest[:k] if k > 0 else None


def other_optimizers(g: "GraphFile", opts: Options, ans: Answer, best: Optional[_Candidate]) -> Answer:
    """``ans`` (a certain top-level fp) as one of several optimizers' fp when it is one (see the
    module's docstring); with ``opts.train_op``, that optimizer's."""
    p = ans.point
    if p is None or p.function is not None or opts.rule == "doc":
        return ans
    if opts.train_op is not None:
        return step_fp(g, opts, ans)
    if best is None or ans.confidence != "certain":
        return ans
    try:
        others = _other_meets(g, best, opts)
        if not others:
            return ans
        points = optimizer_points(g, opts._replace(train_op=None))
    except PbtxtError:  # (damage past the answer, a file still being written: the answer stands, as fp's pass has it)
        return ans
    if len(points) < 2:
        return ans
    by_op: Dict[str, str] = {}
    for optimizer, point in points:
        fwd = forward_of(point.name)
        if fwd is not None:
            by_op.setdefault(fwd, optimizer)
    mine = by_op.get(best.meets.name or "")
    theirs = [(r, by_op[r.name]) for r in others if by_op.get(r.name, mine) != mine]
    if mine is None or not theirs:
        return ans
    lines = g.lane.lines_of([r.offset for r, _o in theirs])
    alts = []
    for r, optimizer in theirs:
        line = lines.get(r.offset)
        q = Point("fp", r.name, r.op, line, None if line is None else line + 1, r.offset, p.rule, p.file, None)
        alts.append((optimizer, Alternative(q, "the first op of the model that optimizer %s trains, on the same data: its own step's fp (--train-op %s)" % (optimizer, optimizer), "other_optimizer")))
    names = [mine] + list(dict.fromkeys(o for o, _a in alts))
    shown = ", ".join(names[:5]) + (", and %d more" % (len(names) - 5) if len(names) > 5 else "")
    doubt = "%d optimizers (%s) train models on this data in separate train ops: this is %s's fp, the first in the file; choose one with --train-op" % (
        len(names), shown, mine)
    return ans._replace(confidence="ambiguous", doubt=doubt, alternatives=ans.alternatives + tuple(a for _o, a in alts))


def optimizer_points(g: "GraphFile", opts: Options) -> List[Tuple[str, Point]]:
    """bp's point for each optimizer (step 2), its modules loaded when it is asked."""
    from ._bp import optimizer_points as points

    return points(g, opts)


def step_fp(g: "GraphFile", opts: Options, ans: Answer) -> Answer:
    """``--train-op NAME``: fp is the first op of the model that NAME's step runs, wherever its
    data comes from (a GAN's discriminator step runs the generator on noise first). The step's
    ops are known only from its end: one backward reading of the file gathers what NAME waits
    for (its inputs, control inputs included, and theirs: at most ``_STEP_NAMES`` names), then a
    forward reading stops at the first of them that reads a trained variable."""
    from ._bp_back import _inputs_again
    from ..graph._reverse import reverse_blocks

    name = opts.train_op or ""
    block_path, heads = operator_layout(g.dialect)
    light = frozenset(h for h in heads if h in ("name", "op"))
    scope = name.rstrip("/") + "/"
    needed: Set[str] = set()
    for b in reverse_blocks(g, block_path, light):
        n = b.name or ""
        if n == name or (n.startswith(scope) and not needed) or n in needed:
            if len(needed) >= _STEP_NAMES:
                return ans._replace(confidence="ambiguous", doubt="the step of --train-op %s runs over %d ops: fp without it" % (name, _STEP_NAMES))
            needed.add(n)
            needed.update(q for q in (i.lstrip("^").split(":", 1)[0] for i in _inputs_again(g, b, heads)) if q)
    if not needed:
        return Answer("fp", None, ans.rule, "no node named %s or in its scope (--train-op)" % name, ans.trail)
    return _first_reader(g, g.blocks(block_path, heads), needed.__contains__, opts, ans, None)


def step_function_fp(g: "GraphFile", opts: Options, ans: Answer, body: "FunctionBody") -> Answer:
    """``--train-op`` naming a step function (``__inference_gen_step_1623``): the first op in it
    that reads a trained variable, wherever its data comes from (every op of a function runs)."""
    return _first_reader(g, body.blocks(), lambda n: True, opts, ans, body.name)


def _first_reader(
    g: "GraphFile", blocks: Iterable[Block], runs: Callable[[str], bool], opts: Options, ans: Answer, fn: Optional[str],
) -> Answer:
    """The first of ``blocks`` that runs in the step (``runs(name)``), computes, and reads a
    trained variable (a variable, its read, or a view of either), as ``--train-op``'s fp."""
    from ._bp_reach import is_update

    name = opts.train_op or ""
    variables: Set[str] = set()
    for b in blocks:
        n, op = b.name or "", b.op
        prods = [q for q in (i.split(":", 1)[0] for i in b.inputs if not i.startswith("^")) if q]
        if op in VARIABLES or (op in VARIABLE_PASS and any(q in variables for q in prods)):
            variables.add(n)
            continue
        if not runs(n) or in_gradients_scope(n) or "/Initializer/" in n or is_update(op) or opts.catalog.category(op) is not None:
            continue
        v = next((q for q in prods if q in variables), None)
        if v is not None:
            q = _point("fp", b, ans.rule if ans.rule != "doc" else "dataflow", g.name, fn)
            reason = "first op of the model that the step of --train-op %s runs (it reads trained variable %s)" % (name, v)
            if ans.point is not None and (q.name, q.function) == (ans.point.name, ans.point.function):
                return ans._replace(reason=reason, confidence="certain", doubt="", alternatives=tuple(a for a in ans.alternatives if a.why != "other_optimizer"))
            trail = [s._replace(verdict="pass", why="%s; not the first op that --train-op %s runs" % (s.why, name)) if s.verdict == "chosen" else s for s in ans.trail]
            trail.append(Step(_at(b), n, op, "chosen", reason))
            return Answer("fp", q, q.rule, reason, trail)
    return Answer("fp", None, ans.rule, "no op that the step of --train-op %s runs reads a trained variable" % name, ans.trail)


def _other_meets(g: "GraphFile", best: _Candidate, opts: Options) -> List[Rec]:
    """Other compute ops on the answer's data that read a trained variable, within the window
    past it (at most ``_CONSUMERS``), in file order, the backward pass left out; ``[]`` when
    none, or where no search can tell."""
    data = frozenset({best.flow.source} | ({best.flow.pre.name or ""} if best.flow.pre is not None else set()))
    lo = best.meets.end
    hi = lo + max(_WINDOW, lo)
    cands: List[Rec] = []
    try:
        with stopping(_finder(g, best, lo, hi)(frozenset(), data)) as recs:
            for r in recs:
                if r.offset >= hi:
                    break
                if r.offset >= lo and r.name != best.meets.name and not in_gradients_scope(r.name) and opts.catalog.category(r.op) is None:
                    cands.append(r)
                    if len(cands) >= _CONSUMERS:
                        break
        if not cands:
            return []
        reads = {r.name: [q for q in (_producer(i) for i in r.inputs) if q is not None and q not in data] for r in cands}
        want = frozenset(q for qs in reads.values() for q in qs)
        ops: Dict[str, str] = {}
        last = max(r.offset for r in cands)
        with stopping(_finder(g, best, lo, last + 1)(want, frozenset())) as recs:
            for r in recs:
                if r.offset > last:
                    break
                ops[r.name] = r.op
    except (Fallback, _SearchFailed):
        return []
    return [r for r in cands if any(_variable(q, ops.get(q)) for q in reads[r.name])]


def _variable(name: str, op: Optional[str]) -> bool:
    """Whether a node's output is a trained variable's value: the variable, its read."""
    return op in VARIABLES or op == "ReadVariableOp" or (op == "Identity" and name.endswith("/read"))


def _finder(g: "GraphFile", best: _Candidate, lo: int, hi: int) -> Finder:
    """The hood's finder of blocks by name or by input in bytes ``[lo, hi)`` past the answer, a
    byte search of that stretch where the input allows one (else a forward reading, which the
    caller stops at ``hi``): the search costs the window, not the file."""
    return grep_finder(g, ("node",), None, best.meets, within=(lo, hi)) or pass_finder(g, ("node",), None)
