"""The two declarations every module makes, made cheaper for start-up (issue 38): ``NamedTuple``
and :func:`regex`.

``NamedTuple``: the class ``typing.NamedTuple`` makes, at a third of its cost. Every module here
writes ``from __future__ import annotations``, so a class's annotations are strings, and
``typing.NamedTuple`` checks each one by compiling it into a ``ForwardRef``: with
``collections.namedtuple`` itself, about 0.1 ms a class, and ``pbtxt-scan fp`` makes some forty.
This one makes the same class (``collections.namedtuple`` with the class body's defaults, methods,
docstring and qualified name; the same refusals) and keeps the annotations as the strings they
are, as ``typing.get_type_hints`` reads them. Type checkers see ``typing.NamedTuple`` itself.

:func:`regex`: ``re.compile`` on first use. A module's regexes were compiled when it loaded, most of
them for inputs or errors a command may never meet (fp on a small graph compiled 22 it never used).
"""
from __future__ import annotations

import collections
import re
from typing import TYPE_CHECKING, Any, AnyStr, Dict, Tuple

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    # (as typing's NamedTupleMeta: what a class body may not set, and what it sets but is not copied)
    _PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                             "_make", "_replace", "_asdict", "_source"})
    _SPECIAL = frozenset({"__module__", "__name__", "__annotations__"})

    class _Maker(type):
        def __new__(cls, typename: str, bases: Tuple[type, ...], ns: Dict[str, Any]) -> Any:
            if ns.get("_root_of_named_tuples"):
                return super().__new__(cls, typename, bases, ns)
            if bases != (NamedTuple,):
                raise TypeError("can only inherit from a NamedTuple type")
            types = ns.get("__annotations__", {})
            with_default = [f for f in types if f in ns]
            if with_default and list(types)[-len(with_default):] != with_default:
                raise TypeError("%s: a field without a default after one with a default" % typename)
            made = collections.namedtuple(typename, list(types), defaults=[ns[f] for f in with_default],
                                          module=ns["__module__"])
            made.__annotations__ = dict(types)
            for key, value in ns.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in made._fields:
                    setattr(made, key, value)
            return made

    class NamedTuple(metaclass=_Maker):
        _root_of_named_tuples = True


# What a compiled pattern offers, taken over by the stand-in at its first use.
_PATTERN = ("match", "fullmatch", "search", "finditer", "findall", "sub", "subn", "split", "scanner",
            "pattern", "flags", "groups", "groupindex")


class _OnFirstUse:
    """A stand-in for ``re.compile(pattern, flags)`` that compiles it when first asked anything: then
    the pattern's own methods and attributes are set on it, so later uses cost what the pattern's do."""

    def __init__(self, pattern: Any, flags: int) -> None:
        self._args = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        compiled = re.compile(*self._args)
        for attr in _PATTERN:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(compiled, name)


def regex(pattern: AnyStr, flags: int = 0) -> "re.Pattern[AnyStr]":
    """``re.compile(pattern, flags)``, done at the first use of what it returns (its methods and
    attributes; not ``re``'s module functions, which want the pattern itself)."""
    return _OnFirstUse(pattern, flags)  # type: ignore[return-value]
