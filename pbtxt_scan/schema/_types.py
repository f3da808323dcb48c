"""The generated tables (``_tensorflow``, ``_onnx``) seen as one schema: a message's fields as
:class:`FieldType`, an enum's values, and which schema a type comes from. The tables load on first
use: a reader that asks only a message's field names (:func:`field_names`: fp's check of the top
level) loads the table that holds it, and builds no schema."""
from __future__ import annotations

import functools
from typing import Dict, List, Tuple

from .._kit import NamedTuple

SCALARS = frozenset(
    "double float int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 bool string bytes".split()
)


class FieldType(NamedTuple):
    """One field of a message, as a text parser needs it."""

    name: str
    number: int
    type: str  # a scalar type (``int32``...), or the full name of a message or an enum
    kind: str  # the scalar type, ``message`` or ``enum``
    repeated: bool
    oneof: str  # "" when in none
    presence: bool  # a singular field that tells "set" from "default" (proto2, ``optional``, oneof, message)
    owner: str  # the full name of the message it belongs to


class Schema:
    """Messages and enums by full name, from one or more generated tables."""

    __slots__ = ("_fields", "enums", "closed", "map_entries", "proto2", "_source")

    def __init__(self, *tables: object) -> None:
        self._fields: Dict[str, Dict[str, FieldType]] = {}
        self.enums: Dict[str, Dict[str, int]] = {}
        self.closed: "frozenset[str]" = frozenset()
        self.map_entries: "frozenset[str]" = frozenset()
        self.proto2: "frozenset[str]" = frozenset()  # the messages of proto2 files (strings not checked as UTF-8)
        self._source: Dict[str, str] = {}  # a package's first name -> the schema it comes from
        for t in tables:
            self._add(t)

    def _add(self, table: object) -> None:
        enums: Dict[str, Dict[str, int]] = getattr(table, "ENUMS")
        proto2: "frozenset[str]" = getattr(table, "PROTO2")
        self.enums.update(enums)
        self.closed |= getattr(table, "CLOSED_ENUMS")
        self.map_entries |= getattr(table, "MAP_ENTRIES")
        self.proto2 |= proto2
        messages: Dict[str, Dict[str, Tuple[int, str, str, str]]] = getattr(table, "MESSAGES")
        for msg, fields in messages.items():
            self._source.setdefault(msg.split(".", 1)[0], getattr(table, "SOURCE"))
            self._fields[msg] = {
                name: _field(msg, name, spec, enums, msg in proto2) for name, spec in fields.items()
            }

    def fields(self, message: str) -> Dict[str, FieldType]:
        """The fields of ``message`` by name (KeyError for a message the schema has not)."""
        return self._fields[message]

    def by_number(self, message: str) -> Dict[int, FieldType]:
        """The fields of ``message`` by number (what a wire-format reader meets)."""
        return {f.number: f for f in self._fields[message].values()}

    def messages(self) -> List[str]:
        """Every message's full name."""
        return list(self._fields)

    def has_message(self, message: str) -> bool:
        return message in self._fields

    def source(self, type_name: str) -> str:
        """Which schema ``type_name`` comes from: ``TensorFlow 2.21.0``, ``ONNX 1.23.2``."""
        return self._source.get(type_name.split(".", 1)[0], "?")


def _field(msg: str, name: str, spec: Tuple[int, str, str, str], enums: Dict[str, Dict[str, int]], proto2: bool) -> FieldType:
    number, type_name, label, oneof = spec
    kind = type_name if type_name in SCALARS else "enum" if type_name in enums else "message"
    repeated = label == "repeated"
    presence = not repeated and (proto2 or label == "optional" or bool(oneof) or kind == "message")
    return FieldType(name, number, type_name, kind, repeated, oneof, presence, msg)


@functools.lru_cache(maxsize=None)
def default_schema() -> Schema:
    """TensorFlow's and ONNX's messages (built on first use, then kept)."""
    from . import _onnx, _tensorflow

    return Schema(_tensorflow, _onnx)


@functools.lru_cache(maxsize=None)
def field_names(message: str) -> "frozenset[str]":
    """The field names of ``message`` (empty for a message the schema has not), read off the table
    that holds it (ONNX's for ``onnx.``, else TensorFlow's), the schema left unbuilt."""
    import importlib

    table = importlib.import_module("._onnx" if message.startswith("onnx.") else "._tensorflow", __package__)
    fields: Dict[str, object] = getattr(table, "MESSAGES").get(message, {})
    return frozenset(fields)
