"""``pbtxt_scan._kit.NamedTuple``: the class ``typing.NamedTuple`` makes, without compiling each
annotation (start-up, issue 38), and the one every module of the package declares its tuples with.
"""
from __future__ import annotations

import ast
import pickle
import typing
from pathlib import Path
from typing import Any, Dict, Optional

import pytest

from pbtxt_scan._kit import NamedTuple, regex

PACKAGE = Path(__file__).resolve().parent.parent / "pbtxt_scan"

BODY = '''
from __future__ import annotations

class Point(Base):
    """A point: its docstring."""

    name: str
    line: int
    why: Optional[str] = None
    hops: "int" = 2

    def where(self) -> str:
        return "%s:%d" % (self.name, self.line)

    @property
    def far(self) -> bool:
        return self.hops > 1

    @classmethod
    def at(cls, line: int) -> "Point":
        return cls("x", line)

    LIMIT = 7
'''


def _made(base: Any) -> Any:
    ns: Dict[str, Any] = {"Base": base, "Optional": Optional, "__name__": __name__}
    exec(compile(BODY, "<tuple body>", "exec"), ns)
    return ns["Point"]


OURS, TYPING = _made(NamedTuple), _made(typing.NamedTuple)


def test_the_class_is_typings() -> None:
    for cls in (OURS, TYPING):
        p = cls("a", 3)
        assert p == ("a", 3, None, 2) and p.where() == "a:3" and p.far and cls.at(5).line == 5
        assert p._replace(line=4).line == 4 and cls._make(["b", 1, "w", 0]).why == "w"
        assert p._asdict() == {"name": "a", "line": 3, "why": None, "hops": 2}
        assert cls.LIMIT == 7 and isinstance(p, tuple)
    for attr in ("_fields", "_field_defaults", "__doc__", "__name__", "__qualname__", "__module__", "__mro__"):
        got, want = getattr(OURS, attr), getattr(TYPING, attr)
        assert (got == want) if attr != "__mro__" else ([c.__name__ for c in got] == [c.__name__ for c in want]), attr
    assert typing.get_type_hints(OURS) == typing.get_type_hints(TYPING)


def test_a_tuple_pickles_as_typings_does() -> None:
    from pbtxt_scan._model import Block, Head

    head = Head("name", "a/b", 3)
    assert pickle.loads(pickle.dumps(head)) == head
    assert Block.__module__ == "pbtxt_scan._model" and Block.__qualname__ == "Block"


@pytest.mark.parametrize("body, error", [
    ("a: int = 1\n    b: int", TypeError),  # a field without a default after one with a default
    ("a: int\n    def _replace(self): pass", AttributeError),  # what typing keeps its own
    ("a: int\n    _fields = ()", AttributeError),
])
def test_it_refuses_what_typing_refuses(body: str, error: type) -> None:
    for base in (NamedTuple, typing.NamedTuple):
        with pytest.raises(error):
            exec("class T(Base):\n    " + body, {"Base": base})


def test_every_module_declares_its_tuples_with_it() -> None:
    # (typing's NamedTuple compiles each annotation: some forty classes on fp's path cost ~5 ms)
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "typing" and any(a.name == "NamedTuple" for a in node.names):
                if path.name != "_kit.py":
                    bad.append(str(path.relative_to(PACKAGE)))
            if isinstance(node, ast.Attribute) and node.attr == "NamedTuple":
                bad.append(str(path.relative_to(PACKAGE)))
    assert not bad, "typing.NamedTuple in: %s (import it from pbtxt_scan._kit)" % ", ".join(bad)


def test_a_regex_is_compiled_at_its_first_use_and_is_the_pattern_after(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda *a: compiled.append(a) or real(*a))
    rx = regex(rb"(a+)(b)?", re.I)
    assert not compiled
    m = rx.match(b"AAb")
    assert compiled == [(rb"(a+)(b)?", re.I)] and m is not None and m.groups() == (b"AA", b"b")
    want = real(rb"(a+)(b)?", re.I)
    assert [x.span() for x in rx.finditer(b"xab aa")] == [x.span() for x in want.finditer(b"xab aa")]
    assert (rx.pattern, rx.flags, rx.groups, rx.groupindex) == (want.pattern, want.flags, want.groups, want.groupindex)
    assert rx.sub(b"-", b"ab") == b"-" and len(compiled) == 1
