"""bp_point: the last op of backward propagation, read backward from the end of the file. The
passes: the top level (``_bp_scan``, over ``_bp_back``'s reading, ``_bp_reach``'s liveness), a
called backward function, the step functions; and bp's answer from what they found."""
from __future__ import annotations

import itertools
from typing import List, Optional, Tuple

from ._answers import _in_units, Alternative, Answer, Options, Point, _point, _producer
from ._body import CALLS_CAP, FunctionBody, Library, call_of, called_function, function_body, last_step, step_body, training_function
from ._bp_back import _BackBytes, _gradient_inputs, _inputs_again
from ._bp_scan import _bp_scan, _Found, _Inside
from ._catalog import CALLS, in_gradients_scope
from ..graph._dialect import operator_layout
from ..graph._input import GraphFile, Source, opened
from .._model import Block
from ..graph._reverse import reverse_blocks


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
        if fname is None or body is None:
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

