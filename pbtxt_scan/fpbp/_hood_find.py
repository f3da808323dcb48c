"""How a neighbourhood's hop finds its blocks (``_hood``): one forward reading of the blocks
(:func:`pass_finder`), or the lane's byte search (``Lane.find_blocks``), the blocks it places read
here (:func:`grep_finder`, where the lane offers one). The rules only: how a search finds and
places a block is the lane's (``text._hood``, ``wire._hood``)."""
from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING, Any, Callable, FrozenSet, Generator, Iterable, Iterator, Optional, Tuple

from .._kit import NamedTuple
from .._model import TF_HEADS, Block
from ..graph._strict import check_one
from ..parallel._grep import _SearchFailed
from ..source._lane import Unplaced

if TYPE_CHECKING:
    from ..graph._cache import Handle
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
# A lane's search, its blocks read: (names wanted, names whose consumers are wanted) -> blocks, in file order
# (a generator: closing it ends the search).
Blocks = Callable[[FrozenSet[str], FrozenSet[str]], Generator[Block, None, None]]


def producer(inp: str) -> str:
    """The node an ``input:`` names: ``^x`` (a control input) and ``x:1`` (an output) name ``x``;
    a function body's ``x:output:0`` names ``x`` too."""
    return inp[1:].split(":", 1)[0] if inp.startswith("^") else inp.split(":", 1)[0]


UNCOUNTED = -1  # a text block found by a search: its line is counted at the end (the lane's lines_of)


def rec_of(b: Block) -> Rec:
    return Rec(b.name or "", b.op or "", b.line if b.line else None, b.start, tuple(b.inputs))


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


Fallback = Unplaced  # a hit the byte search cannot place (a layout the lane does not read): read the hop instead

_NAME_OK = re.compile(r"[A-Za-z0-9_./>\-]+\Z")  # (what TF allows in a node name: no quote, no escape)


class _Cache:
    """The input's cache (``graph._cache``) as a lane reads its hints, keyed on first use only."""

    __slots__ = ("g", "_handle")

    def __init__(self, g: "GraphFile") -> None:
        self.g = g
        self._handle: "Optional[Handle]" = None

    def read(self, kind: str) -> Optional[bytes]:
        from ..graph import _cache

        if self._handle is None:
            self._handle = _cache.Handle(_cache.key_of(self.g))
        return self._handle.read(kind)


def lane_finder(g: "GraphFile", path: Tuple[str, ...], centre: Optional[Block] = None, **kw: Any) -> Optional[Blocks]:
    """The lane's byte search for blocks by name and by input (``Lane.find_blocks``), each block
    it places read here with the heads a hop keeps; ``None`` where the lane offers none."""
    found = g.lane.find_blocks(path, centre, cache=_Cache(g), **kw)
    if found is None:
        return None
    shown_by_line = g.lane.unit == "line"

    def read(want: FrozenSet[str], cons: FrozenSet[str]) -> Generator[Block, None, None]:
        places = found(want, cons)
        try:
            for b in places:
                got = read_at_place(g, b, shown_by_line)
                if check_one(g, got, recount=True) is not None:  # (lenient: one that is no valid node skipped)
                    yield got
        finally:
            close = getattr(places, "close", None)
            if close is not None:
                close()

    return read


def read_at_place(g: "GraphFile", b: Block, shown_by_line: bool) -> Block:
    """A block a lane's search placed, read with the heads a hop keeps (its line, on a lane with
    lines, counted at the end: :data:`UNCOUNTED`); :class:`Fallback` if it does not read."""
    got = g.rescan(b, TF_HEADS)
    if len(got) != 1:
        raise Fallback("a block that does not read")
    return got[0]._replace(line=UNCOUNTED) if shown_by_line else got[0]


def grep_finder(
    g: "GraphFile", path: Tuple[str, ...], function: Optional[str], centre: "Block", *, within: Optional[Tuple[int, int]] = None,
) -> Optional[Finder]:
    """A hop as one byte search for the frontier's names, its hits read at their blocks only
    (the lane's ``find_blocks``); ``None`` where the lane offers none (a stream, no grep, a
    binary graph's functions or a MetaGraphDef, a text graph not in the writer's layout at the
    centre). ``within``: the graph's own nodes in bytes ``[lo, hi)`` (``lo`` at a block's end;
    a lane may search from earlier): a search that stops early costs its stretch, not the file."""
    if within is not None:
        blocks = lane_finder(g, path, None, since=within[0], upto=within[1])
    else:
        blocks = lane_finder(g, path, centre)
    if blocks is None:
        return None
    return _checked(_recs(blocks), g, path, function)


def _checked(find: Finder, g: "GraphFile", path: Tuple[str, ...], function: Optional[str]) -> Finder:
    """``find``, lazily (the walk stops it once a hop is full), and where a hit cannot be placed,
    a reading of the hop from past the last block ``find`` gave on: both give blocks in file order."""

    def hop(want: FrozenSet[str], cons: FrozenSet[str]) -> Iterator[Rec]:
        last = -1
        if all(_NAME_OK.match(n) for n in want | cons):
            try:
                with stopping(find(want, cons)) as found:
                    for r in found:
                        last = r.offset
                        yield r
                return
            except (Fallback, _SearchFailed):
                pass
        for r in pass_finder(g, path, function)(want, cons):
            if r.offset > last:
                yield r

    return hop


@contextlib.contextmanager
def stopping(found: Iterable[Rec]) -> Iterator[Iterator[Rec]]:
    """A finder's blocks, its search stopped (its grep ended) when the reader leaves early."""
    it = iter(found)
    try:
        yield it
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


def _recs(blocks: Blocks) -> Finder:
    return lambda want, cons: (rec_of(b) for b in blocks(want, cons))


def searched_centre(g: "GraphFile", name: str) -> Optional[Block]:
    """The graph's own node ``name`` (not a function's), found by one byte search, with its
    inputs; ``None`` if the search finds none or cannot be made (then read for it)."""
    if not _NAME_OK.match(name):
        return None
    blocks = lane_finder(g, ("node",), first=True)
    if blocks is None:
        return None
    try:
        for b in blocks(frozenset([name]), frozenset()):
            if b.name == name:
                return b
    except (Fallback, _SearchFailed):
        pass
    return None
