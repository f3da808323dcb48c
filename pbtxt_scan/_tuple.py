"""``NamedTuple`` as ``typing`` declares it, made at a third of its cost: start-up (issue 38).

Every module here writes ``from __future__ import annotations``, so a class's annotations are
strings, and ``typing.NamedTuple`` checks each one by compiling it into a ``ForwardRef``: with
``collections.namedtuple`` itself, about 0.1 ms a class, and ``pbtxt-scan fp`` makes some forty.
This one makes the same class (``collections.namedtuple`` with the class body's defaults, methods,
docstring and qualified name; the same refusals) and keeps the annotations as the strings they
are, as ``typing.get_type_hints`` reads them. Type checkers see ``typing.NamedTuple`` itself.
"""
from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any, Dict, Tuple

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
