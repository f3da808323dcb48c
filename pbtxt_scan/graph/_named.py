"""Nodes by name without reading the graph (``show``): the lane's one byte search
(``Lane.find_named``: text by its name lines, binary by its name fields), each node it finds read
alone; where the lane offers none or cannot tell, the blocks are read instead (the same answers).

:func:`look_up` finds names (a missing name costs one search, and the close names come from the
same pass: those holding a piece of the name, in any case); :func:`iter_named` every node whose
name a filter keeps (a glob, a regex), searched by a fixed string the names must hold."""
from __future__ import annotations

from typing import Callable, Dict, FrozenSet, Iterator, Optional, Sequence, Tuple

from .._kit import NamedTuple
from .._model import Block
from ..parallel._grep import _SearchFailed, newlines_to_end
from ..source._lane import Named, NameQuery, Unplaced
from ._dialect import NAME_AND_OP
from ._input import GraphFile, Source, opened

_PIECE_MIN = 4  # (a shorter piece of a name is met in too many others to be worth reading)


class Lookup(NamedTuple):
    """What :func:`look_up` found: the graph's own node of each name found (the first: its heads
    and line read), and the names met in a library function's body (read for them:
    :func:`~pbtxt_scan.find_node`, which also says which functions hold them)."""

    found: Dict[str, Block]
    elsewhere: FrozenSet[str]


def pieces(name: str) -> Tuple[str, ...]:
    """What the close names of ``name`` are searched by, in any case: itself and its two halves
    (a slip of one or two keys leaves one of them whole), each of :data:`_PIECE_MIN` or more."""
    h = len(name) // 2
    return (name,) + tuple(p for p in (name[:h], name[h:]) if len(p) >= _PIECE_MIN)


def look_up(src: Source, names: Sequence[str], *, near: Optional[Callable[[str], None]] = None) -> Optional[Lookup]:
    """The graph's own nodes named ``names``, by one byte search, and ``near(name)`` called with
    each name close to one of them met by the same pass (those holding one of their
    :func:`pieces`); ``None`` where the search cannot be made or trusted (read for them instead)."""
    with opened(src) as g:
        wanted = frozenset(names)
        near_pieces = tuple(sorted({p for n in wanted for p in pieces(n)})) if near is not None else ()
        found: Dict[str, Block] = {}
        elsewhere = set()
        hits = _search(g, NameQuery(tuple(sorted(wanted)), wanted.__contains__, exact=True, near=near_pieces))
        if hits is None:
            return None
        try:
            for n in hits:
                if n.kind == "near":
                    if near is not None:
                        near(n.name)
                elif n.kind == "elsewhere":
                    elsewhere.add(n.name)
                elif n.name not in found and n.block is not None:
                    found[n.name] = n.block
                    if near is not None:
                        near(n.name)  # (a name found is close to another asked for: another case, a slip)
            lines = _Lines(g)
            for name, b in sorted(found.items(), key=lambda kv: kv[1].start):
                found[name] = _read(g, b, lines)
        except (Unplaced, _SearchFailed):
            return None
        finally:
            hits.close()
        return Lookup(found, frozenset(elsewhere))


def iter_named(src: Source, keep: Callable[[str], bool], *, needles: Sequence[str] = ()) -> Iterator[Block]:
    """The graph's own nodes (of a GE dump: its ops) whose name ``keep`` keeps, in file order, with
    their names and ops: by one byte search for the name lines holding one of ``needles`` (none:
    every name line) where the lane offers it, else (and from where it cannot tell on) by reading
    the blocks."""
    with opened(src) as g:
        last = -1
        hits = _search(g, NameQuery(tuple(needles), keep))
        if hits is not None:
            lines = _Lines(g)
            try:
                for n in hits:
                    if n.kind == "node" and n.block is not None:
                        b = _read(g, n.block, lines)
                        last = b.start
                        yield b
                return
            except (Unplaced, _SearchFailed):
                pass
            finally:
                hits.close()
        for b in g.blocks(g.dialect.path, NAME_AND_OP):
            if b.start > last and b.name is not None and keep(b.name):
                yield b


def _search(g: GraphFile, query: NameQuery) -> "Optional[_Closing]":
    from . import _cache

    if any('"' in n or "\\" in n or "\n" in n for n in query.needles):
        return None  # (no name line spells one plainly: read)
    found = g.lane.find_named(query, cache=_cache.Handle(_cache.key_of(g)))
    return None if found is None else _Closing(found)


class _Closing:
    """A lane's search as an iterator that can be closed (which ends its grep)."""

    __slots__ = ("_it",)

    def __init__(self, it: Iterator[Named]) -> None:
        self._it = it

    def __iter__(self) -> Iterator[Named]:
        return self._it

    def close(self) -> None:
        close = getattr(self._it, "close", None)
        if close is not None:
            close()


def _read(g: GraphFile, b: Block, lines: "_Lines") -> Block:
    """A block the search placed, read with its name and op (on text, at its line)."""
    if g.lane.unit == "line":
        b = b._replace(line=lines.at(b.start))
    got = g.rescan(b, NAME_AND_OP)
    if len(got) != 1:
        raise Unplaced("a block that does not read")
    return got[0]


class _Lines:
    """The line of each offset asked for, in increasing order: counted on from the last, the first
    past the file's middle counted back from its end (``wc -l``, as the neighbourhood's lines)."""

    __slots__ = ("g", "pos", "line")

    def __init__(self, g: GraphFile) -> None:
        self.g = g
        self.pos, self.line = 0, 1

    def at(self, off: int) -> int:
        g = self.g
        size = g.size or 0
        if off < self.pos:
            self.pos, self.line = 0, 1
        if self.pos == 0 and off > size // 2:
            total = newlines_to_end(g)
            tail = newlines_to_end(g, off) if total is not None else None
            if total is not None and tail is not None:
                self.pos, self.line = off, total - tail + 1
        while self.pos < off:
            k = min(1 << 20, off - self.pos)
            self.line += g.read_at(self.pos, k).count(b"\n")
            self.pos += k
        return self.line


__all__ = ["Lookup", "iter_named", "look_up", "pieces"]
