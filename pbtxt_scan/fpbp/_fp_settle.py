"""When fp's forward scan (``_fp_scan._Scan``) has its answer: :func:`settled` (read on, or ask
the byte search) and :func:`wanted` (which later op could still change it)."""
from __future__ import annotations

from typing import Callable, Optional

from ._ahead import _Ahead
from ._catalog import DATA_SOURCES, ENQUEUES, PLACEHOLDERS, STAGES
from ._fp_scan import _COPY_BUDGET, _COPY_BYTES, _FEATURE_BUDGET, _MEET_BUDGET, _Scan


def settled(st: _Scan, ahead: Optional[_Ahead], here: int) -> Optional[int]:
    """Whether the answer can change only through a node the byte search can find: ``None``
    when it can (ask :func:`wanted`), else the offset to read on to (``here``: read the next
    block).

    - No candidate yet: read on, up to ``_MEET_BUDGET`` blocks past the data's first compute
      op (then that op stands in: a graph whose weights are constants).
    - A candidate: another input's copy of the model may follow close by (built side by
      side): as far again as the candidate lies in the file (at least ``_COPY_BYTES``), found
      with one bounded byte search for an input, or, without one, ``_COPY_BUDGET`` blocks.
    - An input met since whose data has not yet met a variable: read on to its candidate, if
      it is of a better class, or of the best class and met inside that window (a copy of
      the model), and its data has gone into no queue or staging area (a pipeline stage:
      the step reads the pipeline's last dequeue, not it). One met past the window is no
      copy close by: were it followed, every copy of an input pipeline would hold the pass
      to the next one, to the end of the file, with every name it met kept.
    """
    best = st.best()
    if best is None:
        if st.fallback is not None and st.seen - st.first_flow_at > max(_MEET_BUDGET, st.first_flow_at):
            return None
        return here
    first = st.candidates[0]  # (found in reading order: the fewest blocks read)
    if best.flow.source not in st.done:
        # A path of the batch that begins before the answer has not met a trained variable
        # yet: read on while it may (as many blocks again as read to the first candidate, at
        # least _FEATURE_BUDGET: a wide model's columns, each a few dozen ops, come between
        # its first lookup and the input layer's concat); what has not met one by then is
        # label side, a mask or unused.
        if st.seen - first.seen <= max(_FEATURE_BUDGET, first.seen) and st.unresolved(best.flow.source, best.block.start):
            return here
        st.done.add(best.flow.source)
    blocks = first.seen + max(_COPY_BUDGET, first.seen)  # the window for copies, without a search
    limit = first.block.end + max(_COPY_BYTES, first.block.end)  # and with one
    klass = best.flow.klass
    for n, i in st.inputs.items():
        if i.klass > klass or n in st.done or n in st.pipeline or st.seen - i.at > max(_MEET_BUDGET, i.at):
            continue
        if i.klass < klass or (i.at > first.seen and (i.at <= blocks if ahead is None else i.off < limit)):
            return here
    if ahead is None:
        return here if st.seen <= blocks else None
    kept = st.opts.keep_ops
    if best.flow.klass == 0:
        wanted: Callable[[str], bool] = lambda op: op in DATA_SOURCES and op not in kept
    else:  # (a PlaceholderWithDefault is a hyper-parameter or a file name, not a copy's batch)
        wanted = lambda op: op not in kept and (op in DATA_SOURCES or op in ("Placeholder", "PlaceholderV2", "Data", "_Arg"))
    return ahead.input_within(here, limit, wanted)

def wanted(st: _Scan) -> Optional[Callable[[str], bool]]:
    """Which later op could still change fp (else ``None``: settled, or read on)."""
    if st.opts.rule == "doc" or st.opts.sources:
        return None
    kept = st.opts.keep_ops
    best = st.best()
    if best is None and st.fallback is not None and st.fallback.flow.source in st.queues:
        # The first op on a queue's data, no variable met yet: an enqueue later would make the
        # queue a stage of the input pipeline (and a non-queue source would win).
        return lambda op: op not in kept and (op in ENQUEUES or op in STAGES or (op in DATA_SOURCES and not op.startswith("QueueDequeue")))
    klass = best.flow.klass if best is not None else (st.fallback.flow.klass if st.fallback else 3)
    if klass == 0:
        return None
    if klass == 1:
        return lambda op: op in DATA_SOURCES and op not in kept
    if klass == 2 or (st.opts.rule == "auto" and st.doc is not None and not st.flows):
        return lambda op: (op in DATA_SOURCES or op in PLACEHOLDERS) and op not in kept
    return None
