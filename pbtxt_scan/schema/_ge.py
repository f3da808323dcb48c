"""A GE ge_proto dump's field names against the fields seen in GE's dumps (``_ge_seen``).

GE's own schema (``ge_ir.proto``) is not vendored, so a ge_proto dump is held to what GE's dumps
are seen to hold: a field name the table has not for its message is *warned* of, once for each
message and name (the first place it is met, with the table's nearest name), and the reading goes
on: it may be a field GE writes that no dump here shows. :class:`SeenNames` takes the events a
:class:`~pbtxt_scan.schema.Checker` takes (a reader feeds either the same way), checks names only
(no value is typed here), and never has a problem to raise: its ``warnings`` are told to ``on_warn``.
Memory: one frame per open message, and at most ``WARNED_MAX`` names warned of.
"""
from __future__ import annotations

import functools
from typing import Callable, Dict, List, Optional, Set, Tuple

from ._near import nearest
from ._types import FieldType

NOTE = "(schema: the fields seen in GE's ge_proto dumps; no ge_ir.proto here, so a warning: the file is read on)"
WARNED_MAX = 1000  # (message, name) pairs warned of at most: a file made of new names says the first ones


class _Seen:
    """The table as :class:`FieldType`\\ s (what a reader of a Checker's fields asks: every field
    repeated, so none is "set twice"; a scalar typed ``bytes``, so no value is decoded to be checked)."""

    def __init__(self) -> None:
        from . import _ge_seen

        self.root: str = _ge_seen.ROOT
        self._fields: Dict[str, Dict[str, FieldType]] = {
            msg: {name: FieldType(name, 0, held or "bytes", "message" if held else "bytes", True, "", False, msg)
                  for name, held in fields.items()}
            for msg, fields in _ge_seen.MESSAGES.items()
        }

    def fields(self, message: str) -> Dict[str, FieldType]:
        return self._fields.get(message, {})


@functools.lru_cache(maxsize=None)
def seen() -> _Seen:
    return _Seen()


def unknown_ge_field(message: str, name: str) -> str:
    """A name the table has not for ``message``, with the nearest it has."""
    near = nearest(name, seen().fields(message))
    return 'warning: Message type "%s" has no field named "%s".%s %s' % (
        message, name, ' Did you mean "%s"?' % near if near is not None else "", NOTE)


class SeenNames:
    """A Checker's events (``name``, ``open``, ``close``, ``value``, lists) for a ge_proto dump:
    names only, warned of (``on_warn(line, column, message)``), never a problem."""

    __slots__ = ("schema", "problems", "limit", "dropped", "warned", "on_warn", "_stack", "_field")

    def __init__(self, on_warn: Optional[Callable[[int, int, str], None]] = None) -> None:
        self.schema = seen()
        self.problems: List[Tuple[int, int, str]] = []  # (always empty: nothing here is an error)
        self.limit = 1
        self.dropped = 0
        self.warned: Set[Tuple[str, str]] = set()
        self.on_warn = on_warn
        self._stack: List[Optional[str]] = [self.schema.root]
        self._field: Optional[FieldType] = None

    full = False

    @property
    def field(self) -> Optional[FieldType]:
        return self._field

    @property
    def here(self) -> Optional[str]:
        """The message open now (None: below a field the table has not, where nothing is checked)."""
        return self._stack[-1]

    @property
    def depth(self) -> int:
        return len(self._stack) - 1

    def root_set(self) -> Tuple[str, ...]:
        return ()

    def seed(self, names: Tuple[str, ...]) -> None:
        pass

    def name(self, name: str, line: int, column: int) -> None:
        here = self._stack[-1]
        self._field = None
        if here is None:
            return
        field = self.schema.fields(here).get(name)
        if field is not None:
            self._field = field
            return
        key = (here, name)
        if key not in self.warned and len(self.warned) < WARNED_MAX:
            self.warned.add(key)
            if self.on_warn is not None:
                self.on_warn(line, column, unknown_ge_field(here, name))

    def open(self, line: int, column: int, colon: bool) -> None:
        f = self._field
        self._stack.append(f.type if f is not None and f.kind == "message" else None)
        self._field = None

    def close(self) -> None:
        if len(self._stack) > 1:
            self._stack.pop()
        self._field = None

    def value(self, kind: str, text: str, line: int, column: int, *, decoded: Optional[str] = None,
              after: Optional[Tuple[int, int]] = None) -> None:
        pass

    def begin_list(self, line: int, column: int, colon: bool = True) -> None:
        pass

    def end_list(self) -> None:
        pass
