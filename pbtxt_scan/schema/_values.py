"""Whether a scalar token is a value of a field's type, in protobuf's own words.

These follow protobuf's text parser (``google.protobuf.text_format``, the one ``text_format.Parse``
runs): which tokens each type takes, the ranges, and the message of each refusal. A token is given
as the parser sees it: its kind (``STRING``, ``NUMBER``, ``IDENT``, or punctuation) and its text,
a ``-`` sign joined to what follows (protobuf reads ``-5`` and ``-inf`` as one token); a string's
text is its first literal as written, quotes included.
"""
from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

_RANGES: Dict[str, Tuple[int, int]] = {
    "int32": (-(1 << 31), (1 << 31) - 1),
    "sint32": (-(1 << 31), (1 << 31) - 1),
    "sfixed32": (-(1 << 31), (1 << 31) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
    "sint64": (-(1 << 63), (1 << 63) - 1),
    "sfixed64": (-(1 << 63), (1 << 63) - 1),
    "uint32": (0, (1 << 32) - 1),
    "fixed32": (0, (1 << 32) - 1),
    "uint64": (0, (1 << 64) - 1),
    "fixed64": (0, (1 << 64) - 1),
}
_C_OCTAL = re.compile(r"(-?)0(\d+)$")
_FLOAT_INFINITY = re.compile("-?inf(?:inity)?f?$", re.IGNORECASE)
_FLOAT_NAN = re.compile("nanf?$", re.IGNORECASE)
_FLOAT_OCTAL_PREFIX = re.compile("-?0[0-9]+")
_TRUE = ("true", "t", "1", "True")
_FALSE = ("false", "f", "0", "False")
# Python's int() and float() take forms no text format token has ("1_0", " 1"): a token here is
# one the grammar lexed, so those never reach them.

Verdict = Tuple[Optional[str], bool]  # (why it is refused, or None; whether it is the type's default)


def integer(text: str) -> Optional[int]:
    """An integer token's value as protobuf reads it (C octal ``017``, hex, a sign), or None."""
    m = _C_OCTAL.match(text)
    if m:
        text = m.group(1) + "0o" + m.group(2)
    try:
        return int(text, 0)
    except ValueError:
        return None


def scalar(type_name: str, kind: str, text: str) -> Verdict:
    """The verdict on a token for a field of scalar type ``type_name`` (not an enum)."""
    rng = _RANGES.get(type_name)
    if rng is not None:
        value = integer(text) if kind != "STRING" else None
        if value is None:
            return "Couldn't parse integer: %s" % text, False
        if not rng[0] <= value <= rng[1]:
            return "Value out of range: %d" % value, False
        return None, value == 0
    if type_name in ("string", "bytes"):
        if kind != "STRING":
            return "Expected string but found: %r" % text, False
        return None, text in ('""', "''")
    if type_name in ("float", "double"):
        return _float(kind, text)
    if type_name == "bool":
        if kind != "STRING" and text in _TRUE:
            return None, False
        if kind != "STRING" and text in _FALSE:
            return None, True
        return 'Expected "true" or "false".', False
    raise ValueError("not a scalar type: %s" % type_name)


def _float(kind: str, text: str) -> Verdict:
    if kind != "STRING":
        if _FLOAT_OCTAL_PREFIX.match(text):
            return "Invalid octal float: %s" % text, False
        for t in (text, text.rstrip("fF")):
            try:
                return None, float(t) == 0.0
            except ValueError:
                if t is text and (_FLOAT_INFINITY.match(text) or _FLOAT_NAN.match(text)):
                    return None, False
    return "Couldn't parse float: %s" % text, False


def enum(full_name: str, values: Dict[str, int], closed: bool, kind: str, text: str) -> Tuple[Optional[str], int]:
    """The verdict on a token for an enum field: (why refused or None, the number it names)."""
    number = integer(text) if kind == "NUMBER" and not _C_OCTAL.match(text) else None
    if number is None:  # (protobuf reads "017" with int(text, 0), which refuses it: a name, then)
        if kind != "STRING" and text in values:
            return None, values[text]
        return 'Enum type "%s" has no value named %s.' % (full_name, text), 0
    if not _RANGES["int32"][0] <= number <= _RANGES["int32"][1]:  # (an enum is an int32 on the wire)
        return "Value out of range: %d" % number, 0
    if closed and number not in values.values():
        return 'Enum type "%s" has no value with number %d.' % (full_name, number), 0
    return None, number
