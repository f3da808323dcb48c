"""fp_point: the first compute op of forward propagation, read forward in bounded memory (the
design and why it is right: ``_rules``' docstring). The passes: the top level, then the function
that holds the training step, then a called model's function (:func:`_into_call`); each reads
blocks into a :class:`_fp_scan._Scan` (:func:`fp_pass`) until its answer is settled (``_fp_settle``), and
``_fp_pick`` answers from it."""
from __future__ import annotations

import contextlib
from typing import Callable, FrozenSet, Iterable, Iterator, List, Optional

from ._ahead import _Ahead, ahead_of
from ._answers import _at, _in_units, Answer, Options, Step
from ._body import called_function, function_body, step_body, training_function
from ._catalog import CALLS, in_gradients_scope
from ._fp_inputs import Role, Roles
from ._fp_pick import _fp_pick
from ._fp_steps import other_optimizers, step_function_fp
from ._fp_flow import _Flow, _Input
from ._fp_scan import _Scan, _all_data
from ._fp_settle import settled, wanted
from ..graph._dialect import operator_layout
from ..graph._input import GraphFile, Source, opened
from .._errors import PbtxtError
from .._model import Block

RoleOf = Callable[[Block], Role]  # an input block's role (``_fp_inputs.Roles``)


def find_fp(src: Source, opts: Options = Options(), *, search: bool = True) -> Answer:
    """fp of a graph. ``search``: read ahead with a byte search where the file allows one (False:
    read every block instead; the same answer, at block speed)."""
    with opened(src) as g:
        return _in_units(g, _find_fp(g, opts, search=search))


def _find_fp(g: GraphFile, opts: Options, *, search: bool) -> Answer:
    block_path, heads = operator_layout(g.dialect)
    tf = block_path == ("node",)
    role = Roles(g, graphdef=tf)
    blocks = iter(g.blocks(block_path, heads))
    with contextlib.ExitStack() as stack:
        # The byte search ahead, the lane's (on text lines, or on the wire verified by length prefixes).
        ahead = ahead_of(g) if search else None
        if ahead is not None:
            stack.callback(ahead.close)
        st = fp_pass(blocks, opts, role=role, ahead=ahead)
        # Where the step is (step_body, as bp decides). A file with no library has no function
        # to hold it: the top level, and no need to look for gradients.
        no_library = ahead is not None and ahead.no_library() and not st.gap
        top_grad = _top_gradients(st, ahead, blocks) if tf and not no_library else True
    ans = _fp_pick(st, opts, g, None, search=search)
    if opts.train_op is not None and tf and not no_library and opts.rule != "doc":  # (--train-op naming a step function)
        named = function_body(g, opts.train_op)
        if named is not None:
            return step_function_fp(g, opts, ans, named)
    # The body that holds the training step (the same choice bp makes: step_body).
    body = step_body(top_grad, lambda: training_function(g))
    if body is not None:
        fname = body.name
        st2 = fp_pass(body.blocks(), opts, body.args, role=role)
        sub = _fp_pick(st2, opts, g, fname, search=search)
        if sub.point is not None:
            reason = "the training step runs in function %s (it holds the gradients): %s" % (fname, _inside(sub.reason))
            ans, st = sub._replace(reason=reason, trail=_passed_on(ans.trail, fname) + sub.trail), st2
    ans = _into_call(g, opts, ans, st.chosen, role=role, search=search)
    if body is None and ans.point is not None and ans.point.function is None:
        ans = other_optimizers(g, opts, ans, st.best())
    if ans.point is None and opts.sources and ans.reason.startswith("no node named"):
        raise PbtxtError(ans.reason + ": name a node of the graph (see 'pbtxt-scan nodes FILE')", path=g.name)
    return ans


def fp_pass(
    blocks: Iterable[Block],
    opts: Options,
    sources: FrozenSet[str] = frozenset(),
    *,
    role: RoleOf = _all_data,
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
    st = _Scan(opts, role=role)
    # A function's arguments carry what its caller hands in; with --source, the named ones if any.
    named = sources & opts.sources
    for n in named or sources:
        st.flows[n] = _Flow(n, 0, None, None)
        st.inputs[n] = _Input(0, 0, 0)
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
        until = settled(st, ahead, b.end)
        if until is not None:
            wait_until = until
            continue
        want = wanted(st)
        if want is None:
            break
        if ahead is None:
            continue
        nxt = ahead.next_op(b.end, want)
        if nxt is None:
            st.trail.append(Step(_at(b), b.name or "", b.op, "pass", "a byte search of the rest of the file finds no node that could change the answer"))
            break
        wait_until = nxt
    return st



_CALL_DEPTH = 8


def _into_call(g: GraphFile, opts: Options, ans: Answer, call: Optional[Block], *, role: RoleOf, search: bool, depth: int = 0) -> Answer:
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
    st = fp_pass(body.blocks(), opts, body.args, role=role)
    sub = _fp_pick(st, opts, g, fname, search=search)
    if sub.point is None:
        return ans
    if depth < _CALL_DEPTH:  # (a SavedModel's signature wrapper calls the model's __call__)
        sub = _into_call(g, opts, sub, st.chosen, role=role, search=search, depth=depth + 1)
    reason = "the model runs in function %s, which %s calls with the data and the variables: %s" % (fname, p.name, _inside(sub.reason))
    alts = tuple(a for a in ans.alternatives) + sub.alternatives
    return sub._replace(reason=reason, trail=_passed_on(ans.trail, fname) + sub.trail, alternatives=alts)


def _passed_on(trail: List[Step], fname: str) -> List[Step]:
    """A trail whose answer was given up for one inside function ``fname``: its "chosen" step is a
    pass (``--explain`` shows one CHOSEN line, the answer's)."""
    return [
        s._replace(verdict="pass", why="%s; the answer is inside function %s" % (s.why, fname)) if s.verdict == "chosen" else s
        for s in trail
    ]


def _inside(reason: str) -> str:
    """A function body's reason as part of its caller's: the body's arguments carry the caller's
    data, so "no data source" (its ``_Arg`` placeholders) is not said."""
    return reason[len("no data source: "):] if reason.startswith("no data source: ") else reason


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
