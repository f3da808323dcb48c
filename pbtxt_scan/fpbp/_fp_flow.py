"""What fp's forward scan (``_fp_scan``) knows of the data: what reaches a node from one of the
step's inputs (:class:`_Flow`), a data path's first compute op (:class:`_Start`), an input met
(:class:`_Input`) and a candidate (:class:`_Candidate`), where the data meets a trained variable."""
from __future__ import annotations

from typing import FrozenSet, Optional

from .._kit import NamedTuple
from .._model import Block


class _Flow(NamedTuple):
    """What reaches a node from one of the step's inputs: the input, its class (0 a data source,
    1 a data placeholder, 2 a constant big enough to be data), and the first ops on the way: the
    first input preprocessing (``pre``) and the first op of the model (``head``), each ``None``
    while only plumbing lay between."""

    source: str
    klass: int
    pre: Optional[Block]
    head: Optional[Block]
    heads: FrozenSet[int] = frozenset()  # where the first ops of the paths merged into it start


class _Start(NamedTuple):
    """The first compute op of a data path (``block``), and the data that reaches it."""

    block: Block
    flow: _Flow


class _Input(NamedTuple):
    """One of the step's inputs met: its class (as :class:`_Flow`'s), the blocks read then and
    where its block starts."""

    klass: int
    at: int
    off: int


class _Candidate(NamedTuple):
    """An fp candidate: the first op of the model on the data of ``flow.source``, found where that
    data meets a trained variable (``meets``, reading ``variable``)."""

    block: Block
    meets: Block
    flow: _Flow
    seen: int  # blocks read when it was found
    variable: str = ""


_KLASS = ("the data source", "a data placeholder", "a constant big enough to be data")
