"""A small reader of ``.proto`` files, enough for the schemas pbtxt-scan vendors (a maintainer tool:
``tools/gen_schema.py`` builds ``pbtxt_scan/schema/_table.py`` with it; no protoc needed).

It reads proto2 and proto3 as ``tools/protos/`` holds them: ``syntax``, ``package``, ``import``,
``option``, messages (nested), enums, ``oneof``, ``map<K, V>``, labels (``repeated``,
``optional``, ``required``), field options (``[packed = true]``...), ``reserved`` and
``extensions`` ranges; services and ``extend`` blocks are skipped. Type names are resolved as
protoc resolves them: from the innermost scope outwards, a leading dot meaning the root.
"""
from __future__ import annotations

import os
import re
from typing import Dict, List, NamedTuple, Optional, Tuple

SCALARS = frozenset(
    "double float int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 bool string bytes".split()
)

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|(?P<tok>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|[A-Za-z_.][\w.]*|-?\d[\w.+-]*|[^\s\w])""",
    re.S,
)


class ProtoError(ValueError):
    pass


class FieldDef(NamedTuple):
    name: str
    number: int
    type: str  # a scalar's name, or the full name of a message or enum (resolved), "map" never
    label: str  # "", "optional", "required" or "repeated"
    oneof: str  # the oneof's name, or ""
    map_entry: str  # for map<K, V>: the full name of the entry message made for it


class MessageDef(NamedTuple):
    full_name: str
    syntax: str
    fields: List[FieldDef]
    is_map_entry: bool


class EnumDef(NamedTuple):
    full_name: str
    syntax: str  # proto2 enums are closed (an unknown number is refused), proto3 ones open
    values: List[Tuple[str, int]]


class Schema:
    """Every message and enum of the files read, by full name (no leading dot)."""

    def __init__(self) -> None:
        self.messages: Dict[str, MessageDef] = {}
        self.enums: Dict[str, EnumDef] = {}
        self.files: List[str] = []
        self._pending: List[Tuple[str, FieldDef, MessageDef]] = []  # (scope, field, its message)

    def read(self, root: str, path: str) -> None:
        """Read ``root/path`` and, first, every file it imports (relative to ``root``)."""
        if path in self.files:
            return
        self.files.append(path)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        _File(self, root, text, path).parse()

    def resolve(self) -> None:
        """Give every field its type's full name (after all files are read)."""
        for scope, field, msg in self._pending:
            full = self._lookup(scope, field.type)
            i = msg.fields.index(field)
            msg.fields[i] = field._replace(type=full)
        self._pending = []

    def _lookup(self, scope: str, name: str) -> str:
        if name.startswith("."):
            if name[1:] in self.messages or name[1:] in self.enums:
                return name[1:]
            raise ProtoError("unknown type %s" % name)
        first = name.split(".", 1)[0]
        parts = scope.split(".") if scope else []
        while True:
            base = ".".join(parts + [first])
            if any(k == base or k.startswith(base + ".") for k in list(self.messages) + list(self.enums)):
                full = ".".join(parts + [name])
                if full in self.messages or full in self.enums:
                    return full
                raise ProtoError("unknown type %s in %s" % (name, scope))
            if not parts:
                raise ProtoError("unknown type %s in %s" % (name, scope))
            parts.pop()


class _File:
    def __init__(self, schema: Schema, root: str, text: str, path: str) -> None:
        self.schema, self.root, self.path = schema, root, path
        self.toks = [m.group("tok") for m in _TOKEN.finditer(text) if m.group("tok")]
        self.pos = 0
        self.syntax = "proto2"
        self.package = ""

    # --- tokens --------------------------------------------------------------------------------

    def peek(self) -> Optional[str]:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def next(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ProtoError("%s: unexpected end of file" % self.path)
        self.pos += 1
        return tok

    def expect(self, want: str) -> None:
        got = self.next()
        if got != want:
            raise ProtoError("%s: expected %r, got %r" % (self.path, want, got))

    def skip_statement(self) -> None:
        """To the end of a statement: its ``;``, or its balanced ``{ ... }``."""
        depth = 0
        while True:
            tok = self.next()
            if tok == "{":
                depth += 1
            elif tok == "}":
                depth -= 1
                if depth == 0:
                    return
            elif tok == ";" and depth == 0:
                return

    def options(self) -> None:
        """A field's ``[...]`` options, skipped (none changes what text format accepts)."""
        if self.peek() == "[":
            depth = 0
            while True:
                tok = self.next()
                depth += tok == "["
                depth -= tok == "]"
                if depth == 0:
                    return

    # --- the grammar ---------------------------------------------------------------------------

    def parse(self) -> None:
        while self.peek() is not None:
            tok = self.next()
            if tok == "syntax":
                self.expect("=")
                self.syntax = self.next().strip("\"'")
                self.expect(";")
            elif tok == "package":
                self.package = self.next()
                self.expect(";")
            elif tok == "import":
                name = self.next()
                if name in ("public", "weak"):
                    name = self.next()
                self.expect(";")
                self.schema.read(self.root, name.strip("\"'"))
            elif tok == "message":
                self.message(self.package)
            elif tok == "enum":
                self.enum(self.package)
            elif tok in ("option", "service", "extend"):
                self.skip_statement()
            elif tok != ";":
                raise ProtoError("%s: unexpected %r at the top level" % (self.path, tok))

    def enum(self, scope: str) -> None:
        name = self.next()
        full = scope + "." + name if scope else name
        values: List[Tuple[str, int]] = []
        self.expect("{")
        while True:
            tok = self.next()
            if tok == "}":
                break
            if tok in ("option", "reserved"):
                self.skip_statement()
            elif tok != ";":
                self.expect("=")
                values.append((tok, int(self.next(), 0)))
                self.options()
                self.expect(";")
        self.schema.enums[full] = EnumDef(full, self.syntax, values)

    def message(self, scope: str, map_entry: bool = False) -> MessageDef:
        name = self.next()
        full = scope + "." + name if scope else name
        msg = MessageDef(full, self.syntax, [], map_entry)
        self.schema.messages[full] = msg
        self.expect("{")
        self.body(msg, "")
        return msg

    def body(self, msg: MessageDef, oneof: str) -> None:
        while True:
            tok = self.next()
            if tok == "}":
                return
            if tok == ";":
                continue
            if tok == "message" and not oneof:
                self.message(msg.full_name)
            elif tok == "enum" and not oneof:
                self.enum(msg.full_name)
            elif tok == "oneof" and not oneof:
                name = self.next()
                self.expect("{")
                self.body(msg, name)
            elif tok in ("option", "reserved", "extensions", "extend"):
                self.skip_statement()
            elif tok == "map":
                self.map_field(msg)
            else:
                label = tok if tok in ("repeated", "optional", "required") else ""
                self.field(msg, label, self.next() if label else tok, oneof)

    def field(self, msg: MessageDef, label: str, type_name: str, oneof: str, entry: str = "") -> FieldDef:
        name = self.next()
        self.expect("=")
        number = int(self.next(), 0)
        self.options()
        self.expect(";")
        f = FieldDef(name, number, type_name, label, oneof, entry)
        msg.fields.append(f)
        if type_name not in SCALARS:
            self.schema._pending.append((msg.full_name, f, msg))
        return f

    def map_field(self, msg: MessageDef) -> None:
        self.expect("<")
        key = self.next()
        self.expect(",")
        value = self.next()
        self.expect(">")
        name = self.toks[self.pos]
        entry_name = "".join(p[:1].upper() + p[1:] for p in name.split("_")) + "Entry"
        entry = MessageDef(msg.full_name + "." + entry_name, self.syntax, [], True)
        self.schema.messages[entry.full_name] = entry
        entry.fields.append(FieldDef("key", 1, key, "", "", ""))
        entry.fields.append(FieldDef("value", 2, value, "", "", ""))
        if value not in SCALARS:
            self.schema._pending.append((msg.full_name, entry.fields[1], entry))
        self.field(msg, "repeated", entry.full_name, "", entry.full_name)


def read(root: str, paths: List[str]) -> Schema:
    schema = Schema()
    for p in paths:
        schema.read(root, p)
    schema.resolve()
    return schema
