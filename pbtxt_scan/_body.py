"""Where the training step is: the one rule fp and bp share (:func:`step_body`), and the library
function that holds the most gradients-scope nodes."""
from __future__ import annotations

from typing import Callable, FrozenSet, List, Optional, Sequence, Tuple

from ._answers import _HEADS
from ._catalog import in_gradients_scope
from ._input import GraphFile
from ._model import Block


def step_body(top_has_gradients: bool, functions: Callable[[], Optional[Tuple[str, List[Block]]]]) -> Optional[Tuple[str, List[Block]]]:
    """The one rule for where the training step is, shared by fp and bp: the top level when one of
    its nodes is in a gradients scope; else the library function holding the most gradients-scope
    nodes (a ``tf.function`` step, however deep the call chain: Keras ``model.fit`` calls
    ``one_step_on_data`` from ``train_function``); else the top level (an inference graph)."""
    if top_has_gradients:
        return None
    return functions()


def training_function(g: GraphFile) -> Optional[Tuple[str, List[Block]]]:
    """The library function holding the most gradients-scope nodes, with its node blocks."""
    best: Optional[Tuple[int, str, List[Block]]] = None
    cur: Optional[str] = None
    nodes: List[Block] = []
    count = 0

    def close() -> None:
        nonlocal best
        if cur is not None and count and (best is None or count > best[0]):
            best = (count, cur, nodes)

    for b in g.blocks(("library", "function", "node_def"), _HEADS):
        fname = b.parents[-1] if b.parents else None
        if fname != cur:
            close()
            cur, nodes, count = fname, [], 0
        nodes.append(b)
        if in_gradients_scope(b.name or ""):
            count += 1
    close()
    if best is None:
        return None
    return best[1] or "?", best[2]


def _function_args(blocks: Sequence[Block]) -> FrozenSet[str]:
    """A function body names its arguments bare (``x``); other nodes as ``node:out:idx``."""
    names = {b.name for b in blocks}
    args = set()
    for b in blocks:
        for inp in b.inputs:
            if not inp.startswith("^") and ":" not in inp and inp not in names:
                args.add(inp)
    return frozenset(args)
