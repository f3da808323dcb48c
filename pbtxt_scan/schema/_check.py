"""The validator: a message's fields, one event at a time, against the schema.

A reader that has already matched a field tells a :class:`Checker` what it saw, in file order:
``name`` (a field's name), then either ``value`` (a scalar, once per item of a ``[...]`` list) or
``open`` ... ``close`` (a message), with ``begin_list`` before a list's items. The checker keeps one
small frame per open message (its type, the singular fields set, the oneof members set), so memory
is bounded by the depth and a message's field count, never by the file, and a caller's own pass
over the text is the only one: the general scanner feeds it every token (``_feed.check_tokens``),
and a fast path can feed it the fields it matched.

Each :class:`Problem` is where protobuf's text parser (``text_format.Parse``) stops and in its words:
an unknown field name at the name, a value of the wrong type at the value, a singular field given
twice at its second value (a message: at its ``{``), a second member of a oneof at its name. It
does not stop at the first: every problem is listed, the content of a field it refused skipped.
An unknown name or enum value gets the closest name of that message or enum (``did you mean``).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .._kit import NamedTuple
from . import _values
from ._near import nearest
from ._types import FieldType, Schema, default_schema

ANY = "google.protobuf.Any"


class Problem(NamedTuple):
    """A schema error: 1-based line and column, and the message (protobuf's wording)."""

    line: int
    column: int
    message: str


class _Frame:
    """An open message: its type (None while skipping a refused field's content), the singular
    fields that hold a value, and the member each oneof holds."""

    __slots__ = ("type", "fields", "seen", "oneofs")

    def __init__(self, type_name: Optional[str], fields: Dict[str, FieldType]) -> None:
        self.type = type_name
        self.fields = fields
        self.seen: Dict[str, bool] = {}
        self.oneofs: Dict[str, str] = {}


_SKIP = _Frame(None, {})  # the frame of a refused field's content: nothing in it is checked


class Checker:
    """Validates one message of type ``root`` (a whole file, or a file's top-level blocks in turn,
    which share the root's frame) fed as events. ``problems`` lists what it found, at most
    ``limit`` (then it stops looking: ``full``)."""

    __slots__ = ("schema", "problems", "limit", "dropped", "_stack", "_field", "_list")

    def __init__(self, root: str = "tensorflow.GraphDef", *, schema: Optional[Schema] = None, limit: int = 1000) -> None:
        self.schema = schema or default_schema()
        self.problems: List[Problem] = []
        self.limit = limit
        self.dropped = 0  # problems found past the limit
        self._stack = [_Frame(root, self.schema.fields(root))]
        self._field: Optional[FieldType] = None  # the field named last; None: skip its value
        self._list = False  # inside a [...] list of the field named last

    @property
    def full(self) -> bool:
        return len(self.problems) >= self.limit

    @property
    def field(self) -> Optional[FieldType]:
        """The field named last (None: unknown, refused, or its value is not checked)."""
        return self._field

    @property
    def here(self) -> Optional[str]:
        """The type of the message open now (None: inside a refused field's content)."""
        return self._stack[-1].type

    @property
    def depth(self) -> int:
        """How many messages are open below the root."""
        return len(self._stack) - 1

    def root_set(self) -> Tuple[str, ...]:
        """The root's singular fields that hold a value (what a reader of a file's later part,
        ``seed``-ed with them, must know to refuse one given again)."""
        return tuple(self._stack[0].seen)

    def seed(self, names: Tuple[str, ...]) -> None:
        """The root's singular fields ``names`` were set before (by an earlier part of the file)."""
        for n in names:
            self._stack[0].seen[n] = True

    def _problem(self, line: int, column: int, message: str) -> None:
        if len(self.problems) < self.limit:
            self.problems.append(Problem(line, column, message))
        else:
            self.dropped += 1

    # --- the events ----------------------------------------------------------------------------

    def name(self, name: str, line: int, column: int) -> None:
        """A field's name in the message open now (``[type.googleapis.com/pkg.Msg]`` for an Any's
        expansion, ``[pkg.ext]`` for an extension)."""
        frame = self._stack[-1]
        self._list = False
        self._field = None
        if frame.type is None:
            return
        field = frame.fields.get(name)
        if field is None:
            self._unknown(frame, name, line, column)
            return
        if field.oneof:
            other = frame.oneofs.get(field.oneof)
            if other is not None and other != name:
                self._problem(line, column, 'Field "%s" is specified along with field "%s", another member of oneof "%s" '
                              'for message type "%s".' % (name, other, field.oneof, frame.type))
                return
        self._field = field

    def _unknown(self, frame: _Frame, name: str, line: int, column: int) -> None:
        if name.startswith("["):
            if frame.type == ANY and "/" in name:
                packed = name[1:-1].rsplit("/", 1)[1]
                if self.schema.has_message(packed):
                    self._field = FieldType(name, 0, packed, "message", False, "", False, ANY)
                else:
                    self._problem(line, column, "Type %s not found in descriptor pool" % packed)
                return
            self._problem(line, column, 'Message type "%s" does not have extensions.' % frame.type)
            return
        self._problem(line, column, unknown_field(frame.type or "", name, self.schema))

    def begin_list(self, line: int, column: int, colon: bool = True) -> None:
        """A ``[`` after the field's name (``colon``: a ``:`` came between): its items follow,
        each a ``value`` or an ``open``."""
        field = self._field
        if field is not None and field.kind != "message" and not colon:
            self._problem(line, column, 'Expected ":".')
            self._field = None
        elif field is not None and not field.repeated:
            self._refuse(field, "PUNCT", "[", line, column)
            self._field = None
        self._list = True

    def value(
        self, kind: str, text: str, line: int, column: int, *, decoded: Optional[str] = None, after: Optional[Tuple[int, int]] = None
    ) -> None:
        """A scalar for the field named last: ``kind`` ``STRING``, ``NUMBER`` or ``IDENT``, ``text``
        its token (a sign joined: ``-5``; a string: its first literal, quotes included);
        ``decoded``, a string's value (UTF-8, undecodable bytes as surrogate escapes), if known;
        ``after``, where the next token starts (protobuf names it for a string that is no UTF-8)."""
        field = self._field
        if field is None:
            return
        if field.kind == "message":
            self._problem(line, column, 'Expected "{".')
            return
        if field.kind == "enum":
            why, number = _values.enum(field.type, self.schema.enums[field.type], field.type in self.schema.closed, kind, text)
            if why is not None and kind != "STRING" and why.endswith("named %s." % text):
                near = nearest(text, self.schema.enums[field.type])
                why += " Did you mean %s?" % near if near is not None else ""
            default = number == 0
        else:
            why, default = _values.scalar(field.type, kind, text)
            if why is None and decoded is not None and field.type == "string":
                why = _utf8(decoded)
                if why is not None and after is not None:
                    line, column = after
        if why is not None:
            self._problem(line, column, why)
        elif not field.repeated:
            self._set(field, line, column, not field.presence and default)

    def _set(self, field: FieldType, line: int, column: int, default: bool) -> None:
        """A singular field given a value: refused if it holds one already (for a field without
        presence, protobuf can only tell by a value other than the default)."""
        frame = self._stack[-1]
        if frame.seen.get(field.name):
            self._problem(line, column, 'Message type "%s" should not have multiple "%s" fields.' % (frame.type, field.name))
        if not default:
            frame.seen[field.name] = True
        if field.oneof:
            frame.oneofs[field.oneof] = field.name

    def open(self, line: int, column: int, colon: bool) -> None:
        """A message value begins (its ``{`` or ``<`` at line, column; ``colon``: a ``:`` came after the name)."""
        field = self._field
        if field is not None and field.kind != "message":
            if colon or self._list:
                self._refuse(field, "PUNCT", "{", line, column)
            else:
                self._problem(line, column, 'Expected ":".')
            field = None
        if field is None:
            self._stack.append(_SKIP)
            return
        if not field.repeated and field.owner != ANY:
            self._set(field, line, column, False)
        self._stack.append(_Frame(field.type, self.schema.fields(field.type)))

    def close(self) -> None:
        """The message opened last ends (at the root: nothing to end, a syntax error the
        scanner reports)."""
        if len(self._stack) > 1:
            self._stack.pop()
        self._field = None
        self._list = False

    def end_list(self) -> None:
        self._list = False

    def _refuse(self, field: FieldType, kind: str, text: str, line: int, column: int) -> None:
        if field.kind == "message":
            why: Optional[str] = 'Expected "{".'
        elif field.kind == "enum":
            why = _values.enum(field.type, self.schema.enums[field.type], True, kind, text)[0]
        else:
            why = _values.scalar(field.type, kind, text)[0]
        self._problem(line, column, why or "Expected a value.")


def _utf8(text: str) -> Optional[str]:
    """Why a string's value is no UTF-8 (as Python words it), or None."""
    try:
        text.encode("utf-8")
        return None
    except UnicodeEncodeError:
        try:
            text.encode("utf-8", "surrogateescape").decode("utf-8")
        except UnicodeDecodeError as e:
            return "Couldn't parse string: %s" % e
        return "Couldn't parse string: not UTF-8"


# --- the words of every reader that refuses what ``check`` refuses (fp, bp, show... read some
# fields only). A node without a name or an op is refused by those readers, not here: TensorFlow's
# text parser takes it (the Checker agrees with that parser), its graph import does not. --------

NODE_NEEDS = ("name", "op")


def unknown_field(message: str, name: str, schema: Optional[Schema] = None) -> str:
    """A field ``message`` has not, as protobuf says it, with the nearest of its fields and the
    schema's version."""
    schema = schema or default_schema()
    fields = schema.fields(message) if schema.has_message(message) else {}
    msg = 'Message type "%s" has no field named "%s".' % (message, name)
    near = nearest(name, fields)
    if near is not None:
        msg += ' Did you mean "%s"?' % near
    return msg + " (schema: %s)" % schema.source(message)


def missing_field(message: str, name: str) -> str:
    """A message without a field it needs (a node's ``name`` or ``op``; given as ``""``, it has none)."""
    return 'Message type "%s" is missing required field "%s": a node needs a name and an op.' % (message, name)


def not_string(text: str) -> str:
    """A ``string`` field given a scalar token ``text`` that is no string literal (protobuf's words)."""
    kind = "NUMBER" if text[:1].isdigit() or text[:1] in "-+." else "IDENT"
    return _values.scalar("string", kind, text)[0] or "Expected string but found: %r" % text
