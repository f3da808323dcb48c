"""How a neighbourhood's hop finds its blocks (``_hood``): one forward reading of the blocks
(:func:`pass_finder`), or one byte search whose hits are read at their blocks only
(:func:`grep_finder`, where the input allows it)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, FrozenSet, Iterable, Iterator, NamedTuple, Optional, Tuple

from .._model import TF_HEADS

if TYPE_CHECKING:
    from ..graph._input import GraphFile


class Rec(NamedTuple):
    """What a hop keeps of a block: no more than the Hood prints, and its inputs."""

    name: str
    op: str
    line: Optional[int]
    offset: int
    inputs: Tuple[str, ...]


# One hop's search: (names wanted, names whose consumers are wanted) -> the blocks that match, in file order.
Finder = Callable[[FrozenSet[str], FrozenSet[str]], Iterable[Rec]]


def producer(inp: str) -> str:
    """The node an ``input:`` names: ``^x`` (a control input) and ``x:1`` (an output) name ``x``;
    a function body's ``x:output:0`` names ``x`` too."""
    return inp[1:].split(":", 1)[0] if inp.startswith("^") else inp.split(":", 1)[0]


def rec_of(b: "object") -> Rec:
    from .._model import Block

    assert isinstance(b, Block)
    return Rec(b.name or "", b.op or "", b.line or None, b.start, tuple(b.inputs))


def _matches(r: Rec, want: FrozenSet[str], cons: FrozenSet[str]) -> bool:
    return r.name in want or any(producer(i) in cons for i in r.inputs)


def pass_finder(g: "GraphFile", path: Tuple[str, ...], function: Optional[str]) -> Finder:
    """A hop as one forward reading of the blocks at ``path`` (of ``function`` only, if given)."""

    def find(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Rec]:
        for b in g.blocks(path, TF_HEADS):
            if function is not None and (not b.parents or b.parents[-1] != function):
                continue
            r = rec_of(b)
            if _matches(r, want, cons):
                yield r

    return find


def grep_finder(g: "GraphFile", path: Tuple[str, ...], function: Optional[str]) -> Optional[Finder]:
    """A hop as one grep over the file, or ``None`` where the input allows none."""
    return None
