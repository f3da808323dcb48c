"""fp's answer from a finished scan (:func:`_fp_pick`): the rule's candidate, why, and the
alternatives a careful reader could have taken for it; copies of the model fed by different inputs
told apart by their gradient ops (:func:`_copies`, one byte search)."""
from __future__ import annotations

import re
from typing import Callable, List, Optional, Set, Tuple

from .._kit import NamedTuple, regex
from ..parallel._grep import needle_hits
from ..parallel._grep import _SearchFailed
from ._answers import _at, _point, Alternative, Answer, Options, Step
from ._fp_flow import _KLASS, _Candidate
from ._fp_scan import _MEET_BUDGET, _Scan
from ..graph._input import GraphFile
from .._model import Block


class _Copies(NamedTuple):
    """Which copy of the model is the step's (``pick``), how sure that is, and the other copies."""

    pick: _Candidate
    confidence: str  # "certain" or "ambiguous"
    doubt: str
    alternatives: List[Alternative]


# What a part of the batch that meets no trained variable before the model is, by its name: a
# metric's input, a mask or a length of the features, the labels, else a part nothing uses.
_METRIC = regex(r"(?i)(?:^|/)(?:[^/]*_)?(?:metrics?|accuracy|auc|precision|recall|mean_iou)(?:_\d+)?(?:/|$)")
_MASK = regex(r"(?i)mask|length|_len\b|(?:^|/)len(?:/|$)|seq_?len")
_LABEL = regex(r"(?i)label|target|one_hot|dense_to_sparse|sparse_to_dense|ground_?truth|(?:^|/)y(?:_true)?(?:/|$)")
_SIDE = {
    "metric": "a metric's input",
    "feature_mask": "a mask or a length on the feature side",
    "label": "the label side (its data reaches the loss without meeting one)",
    "dead": "a part of the batch nothing on the way to the loss uses",
}


_LOSS_OPS = frozenset("SparseSoftmaxCrossEntropyWithLogits SoftmaxCrossEntropyWithLogits CTCLoss CTCLossV2".split())
_LOSS = regex(r"(?i)(?:^|/)[^/]*(?:loss|cross_?entropy)[^/]*/")


def _side_of_loss(b: Block) -> str:
    """A "copy of the model" that begins at a loss or a metric is no copy: its input is the
    loss's labels (a Keras step's second data argument), or a metric's (``""``: neither)."""
    name = b.name or ""
    if _METRIC.search(name):
        return "metric"
    return "label" if b.op in _LOSS_OPS or _LOSS.search(name) else ""


def _side(b: Block, source: str) -> str:
    """Which ``why`` a part of the batch that meets no trained variable has, by its op's name (or
    its input's: a placeholder ``labels``)."""
    name = b.name or ""
    if _LABEL.search(source):
        return "label"
    if _METRIC.search(name):
        return "metric"
    if _MASK.search(name) or b.op == "SequenceMask":
        return "feature_mask"
    if _LABEL.search(name):
        return "label"
    return "dead"


_PREPROCESSING_WHY = "input preprocessing of the batch (a dtype conversion or scaling) before the model's first op"


def _fp_pick(st: _Scan, opts: Options, g: GraphFile, fn: Optional[str], *, search: bool = True) -> Answer:
    """The answer of one scan of the top level (``fn`` ``None``) or of function ``fn``.
    ``search``: copies of the model may be told apart by a byte search (else by reading blocks)."""
    file = g.name
    trail = st.trail
    rule = opts.rule
    if opts.sources and not st.inputs:
        return Answer("fp", None, "dataflow", "no node named %s (--source)" % ", ".join(sorted(opts.sources)), trail)
    if rule == "doc" or (rule == "auto" and not st.candidates and st.fallback is None):
        b = st.doc
        if b is None:
            return Answer("fp", None, "doc", "no compute op found", trail)
        reason = "first node not in the catalog and not filtered by name"
        if rule == "auto":
            reason = "no data source: " + reason
        trail.append(Step(_at(b), b.name or "", b.op, "chosen", reason))
        st.chosen = b
        return Answer("fp", _point("fp", b, "doc", file, fn), "doc", reason, trail)
    if not st.candidates and st.fallback is None:
        if opts.sources:
            return Answer("fp", None, "dataflow", "no compute op on the data of --source %s" % ", ".join(sorted(opts.sources)), trail)
        return Answer("fp", None, "dataflow", "no data source or placeholder feeds a compute op", trail)
    best = st.best()
    alts: List[Alternative] = []
    confidence, doubt = "certain", ""
    if best is None:
        assert st.fallback is not None
        b, flow = st.fallback.block, st.fallback.flow
        reason = "first compute op on the data from %s (it meets no trained variable within %d nodes)" % (flow.source, _MEET_BUDGET)
        chosen = _Candidate(b, b, flow, 0)
    else:
        chosen = best
        same = [c for c in st.candidates if c.flow.klass == best.flow.klass]
        if best.flow.source in st.joins:
            # an input whose data meets the batch's in one op is no copy of the model: a mask or
            # a length of the features (dropout's keep_prob, a sequence length)
            for c in same:
                if c is not best and c.flow.source in st.joins and c.block.name != best.block.name:
                    word = _side_of_loss(c.block) or "feature_mask"  # (labels meet the model's output at the loss)
                    alts.append(Alternative(_point("fp", c.block, "dataflow", file, fn), "on the data of %s, which meets the model's data at %s: %s" % (c.flow.source, c.block.name, _SIDE[word]), word))
            same = [c for c in same if c is best or c.flow.source not in st.joins]
        if len(same) > 1:
            copies = _copies(g, same, search=search)
            chosen, confidence, doubt = copies.pick, copies.confidence, copies.doubt
            alts.extend(copies.alternatives)
        flow = chosen.flow
        reason = "first op of the model on %s %s (%s)" % (_KLASS[flow.klass], flow.source, _meets(chosen))
        if flow.klass == 1 and not opts.sources:
            reason = "no data source: " + reason
    b = chosen.block
    if chosen.flow.pre is not None and chosen.flow.pre is not b:
        alts.append(Alternative(_point("fp", chosen.flow.pre, "dataflow", file, fn), _PREPROCESSING_WHY, "cast"))
    named = {a.point.name for a in alts} | {b.name}
    for sb, sf in st.starters:  # (block, flow)
        if sb.start >= b.start or sb.name in named or (sf.pre is not None and sf.pre.name in named):
            continue  # (a path's first op after its cast: the cast stands for it)
        # (a path of the answer's input is read on while it may meet a variable: one that nothing
        # read uses is dead; another input's is not read on)
        same_input = sf.source == chosen.flow.source
        if sb is sf.pre and (sb.start in st.met_heads or (_side(sb, sf.source) != "label" and (sb.name in st.used or not same_input))):
            word, why = "cast", _PREPROCESSING_WHY  # (a cast on the feature side, or of a part read on, not the labels)
        elif same_input and sb.start not in st.met_heads and sb.name not in st.used and sf.source not in st.pipeline:
            word, why = "dead", "nothing read after it uses it: %s" % _SIDE["dead"]
        elif sf.source in st.pipeline:
            word, why = "prefetch", "its data goes into a queue or staging area (%s): it prepares a later step's batch" % sf.source
        else:
            word = _side(sb, sf.source)
            why = "on %s from %s, whose data meets no trained variable before the model's first op: %s" % (
                "another part of the batch" if sf.source == chosen.flow.source else "the data", sf.source, _SIDE[word])
        alts.append(Alternative(_point("fp", sb, "dataflow", file, fn), why, word))
        named.add(sb.name)
    trail.append(Step(_at(b), b.name or "", b.op, "chosen", reason))
    st.chosen = b
    return Answer("fp", _point("fp", b, "dataflow", file, fn), "dataflow", reason, trail,
                  confidence=confidence, doubt=doubt, alternatives=tuple(alts))


def _meets(c: _Candidate) -> str:
    """Where the answer's data meets a trained variable: the answer itself when it reads one."""
    var = c.variable or "a trained variable"
    if c.meets is c.block:
        return "it reads trained variable %s" % var if c.variable else "it reads a trained variable"
    return "its data meets trained variable %s at %s" % (var, c.meets.name) if c.variable else "its data meets a trained variable at %s" % c.meets.name


def _copies(g: GraphFile, cands: List[_Candidate], *, search: bool = True) -> _Copies:
    """Several inputs of one class each feed a copy of the model (global/local, train/eval): the
    copy the gradients differentiate is the step's. One byte search for the gradient ops of each
    copy's variable op (TF1 ``gradients/<op>_grad/``, TF2 ``gradient_tape/<op>/``)."""
    trained = _differentiated(g, [c.meets.name or "" for c in cands], min(c.meets.start for c in cands), search=search)
    tagged: List[Tuple[_Candidate, Optional[bool]]]  # (each copy: whether it is trained, None: not known)
    if trained is None:
        tagged = [(c, None) for c in cands]
    else:
        tagged = [(c, (c.meets.name or "") in trained) for c in cands]
    pick = next((c for c, t in tagged if t), cands[0])
    alts = []
    for c, t in tagged:
        if c is pick:
            continue
        if t is False and _side_of_loss(c.block):
            word = _side_of_loss(c.block)
            why = "on the data of %s, which reaches the loss without meeting a trained variable: %s" % (c.flow.source, _SIDE[word])
        elif t is False:
            word, why = "untrained_copy", "the first op of another copy of the model, fed by %s: no gradient op differentiates it (not trained in this step)" % c.flow.source
        elif t:
            word, why = "other_copy", "the first op of the model on %s, which is trained too" % c.flow.source
        else:
            word, why = "other_copy", "the first op of another copy of the model, fed by %s" % c.flow.source
        alts.append(Alternative(_point("fp", c.block, "dataflow", g.name, None), why, word))
    if trained is not None and (sum(1 for _c, t in tagged if t) == 1 or (all(t for _c, t in tagged) and _replicas(cands))):
        # one copy alone is trained, or every copy is and they are replicas of one model (one
        # step trains them all): the step's copy is known
        return _Copies(pick, "certain", "", alts)
    named = [c.flow.source for c in cands[:_NAMED_INPUTS]]
    more = len(cands) - len(named)
    srcs = ", ".join(named) + (", and %d more" % more if more else "")  # (a file of copies has hundreds)
    if trained is None:
        doubt = "%d inputs (%s) feed copies of the model and no byte search could tell which one is trained: the first in file order; name one with --source" % (len(cands), srcs)
    elif not trained:
        doubt = "%d inputs (%s) feed copies of the model and no gradient op names any of them: the first in file order; name one with --source" % (len(cands), srcs)
    elif sum(1 for _c, t in tagged if t) > 1:
        doubt = "%d inputs (%s) feed copies of the model and %d of them are trained: the first of those in file order; name another with --source" % (
            len(cands), srcs, sum(1 for _c, t in tagged if t))
    else:
        doubt = "%d inputs (%s) feed copies of the model; %s's copy is the one with gradients; name another with --source" % (len(cands), srcs, pick.flow.source)
    return _Copies(pick, "ambiguous", doubt, alts)


_REPLICA = regex(r"(?:^|/)(?:replica|tower)_\d+/")


def _replicas(cands: List[_Candidate]) -> bool:
    """Whether the copies are replicas of one model (``replica_N/``, ``tower_N/``: MirroredStrategy
    leaves replica 0 unprefixed)."""
    return sum(1 for c in cands if not _REPLICA.search(c.block.name or "")) <= 1


_NAMED_INPUTS = 5  # the inputs a doubt names: one line on stderr, whatever the copies


def _differentiated(g: GraphFile, names: List[str], start: int, *, search: bool = True) -> Optional[Set[str]]:
    """Which of ``names`` have gradient ops (TF1 ``gradients/<name>_grad/``, TF2
    ``gradient_tape/<name>/``) after ``start``: a byte search, or, without one (no grep, a
    stream, ``search`` false), the names of the later top-level blocks. ``None`` when it cannot
    be told.

    The byte search looks only for the names not yet found: once a name is found it starts again
    there without it. A copy's gradients come by the hundred, and many copies leave most names
    unfound to the end of the file; searching on for a found name cost a Python step per hit
    where grep alone could read the rest."""
    want = set(names)
    found: Set[str] = set()

    def note(text: str, rx: "re.Pattern[str]") -> None:
        # Which names a match is a gradient of (``t`` ends with ``/<n>_grad/``: every "/"-suffix
        # of what precedes ``_grad/``; or ``t`` is ``gradient_tape/<n>/``), looked up rather than
        # compared with every name: a file of copies has a match per copy and 100+ names.
        for m in rx.finditer(text):
            t = m.group(0)
            if t.startswith("gradient_tape/") and t[14:-1] in want:
                found.add(t[14:-1])
            for m2 in _IN_COPY.finditer(t):  # (a copy's own gradients scope: left out, the name is the node's)
                inner = t[: m2.start()] + t[m2.end() :]
                if inner.endswith("_grad/") and inner[:-6] in want:
                    found.add(inner[:-6])
                elif inner.endswith("/") and inner[:-1] in want and m2.group(0).startswith("gradient_tape"):
                    found.add(inner[:-1])
            if t.endswith("_grad/"):
                head = t[:-6]
                k = head.find("/")
                while k >= 0:
                    if head[k + 1 :] in want:
                        found.add(head[k + 1 :])
                    k = head.find("/", k + 1)

    if not search or needle_hits(g, "gradients/") is None:
        if not g.can_seek:
            return None
        rx = _names_rx(names)
        for b in g.blocks(("node",), frozenset({"name"})):
            if b.start >= start:
                note(b.name or "", rx)
                if found == want:
                    break
        return found
    pos = start
    while found != want:
        left = [n for n in names if n not in found]
        hits = needle_hits(g, "|".join(_grad_patterns(n, _ere, "gradients(_[0-9]+)?/") for n in left))
        if hits is None:
            return None
        rx, before = _names_rx(left), len(found)
        it = hits(pos)
        try:
            for off, text in it:
                note(text.decode("utf-8", "replace"), rx)
                if len(found) > before:
                    pos = off
                    break
            else:
                break  # to the end of the file
        except _SearchFailed:  # grep failed or did not start: cannot tell
            return None
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
    return found


_IN_COPY = regex(r"(?<=/)(?:gradients(?:_[0-9]+)?|gradient_tape)/")


def _ere(n: str) -> str:
    """``n`` as a POSIX ERE literal."""
    return "".join("\\" + ch if ch in ".[]()*+?{}|^$\\" else ch for ch in n)


def _names_rx(names: List[str]) -> "re.Pattern[str]":
    return re.compile("|".join(_grad_patterns(n, re.escape, "gradients(?:_[0-9]+)?/") for n in names))


def _grad_patterns(n: str, esc: "Callable[[str], str]", scope: str) -> str:
    """What names a gradient of node ``n``: ``gradients/<n>_grad/``, ``gradient_tape/<n>/``, and
    the same inside the scope of an imported copy (``copy_1/gradients/hidden/MatMul_grad/`` is a
    gradient of ``copy_1/hidden/MatMul``: ``tf.import_graph_def`` renames the whole graph)."""
    out = ["%s%s_grad/|gradient_tape/%s/" % (scope, esc(n), esc(n))]
    k = n.find("/")
    while k > 0:
        head, rest = n[: k + 1], n[k + 1 :]
        out.append("%s%s%s_grad/|%sgradient_tape/%s/" % (esc(head), scope, esc(rest), esc(head), esc(rest)))
        k = n.find("/", k + 1)
    return "|".join(out)
