"""The ``slow`` mark for the fixtures that make an agreement test long.

The tests that run every fixture many ways (every chunk size, tiny limits, broken variants, every
command split across workers) spend most of their time on the few largest graphs. The quick set
(the README's command, on every Python) runs them on the fixtures up to ``BIG_FIXTURE`` bytes
(``slow_if_big``); the ``slow`` run in CI adds the large ones, so together they check all that was
checked before.

A test that runs every fixture the same way (42 graphs, their binary twins, the GE dumps) keeps,
in the quick set, the fixtures that differ in kind: ``quick_graphs`` (the graphs of
``support.data.QUICK_GRAPHS``, one of each kind of training graph) or ``one_of_each`` (one or two
of each ``input_kind``: text, .pb, .pb.gz, .meta, SavedModel, GE's two dialects). ``quick_first``
keeps the first few of a list of commands. The others are marked ``slow``: CI's slow run has them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Hashable, List, Sequence

import pytest
from support.data import QUICK_GRAPHS

# bytes: most of the graphs are larger (tests/data/graphs), none of the GE dumps; test_scanner already
# kept its chunk size 7 to the fixtures under this size.
BIG_FIXTURE = 40_000
_ParameterSet = type(pytest.param(None))


def slow_if_big(fixtures: Sequence[Any], size_of: Any = None) -> List[Any]:
    """``fixtures`` for ``parametrize``, each one over ``BIG_FIXTURE`` bytes marked ``slow``.
    ``size_of`` gives the path of a parameter that is not a path itself (a tuple)."""
    return [_slow(f) if Path(size_of(f) if size_of else f).stat().st_size > BIG_FIXTURE else f for f in fixtures]


def _slow(value: Any) -> Any:
    """``value`` as a ``parametrize`` case marked ``slow`` (a tuple: one case of several arguments)."""
    return pytest.param(*(value if isinstance(value, tuple) else (value,)), marks=pytest.mark.slow)


def quick_first(values: Sequence[Any], n: int = 2) -> List[Any]:
    """``values`` for ``parametrize`` with all but the first ``n`` marked ``slow``: a test that runs
    every command through a real process keeps two of them in the quick set (every Python), and
    the ``slow`` run in CI runs them all."""
    return [v if i < n else _slow(v) for i, v in enumerate(values)]


def quick_graphs(values: Sequence[Any], path_of: Callable[[Any], Any] = lambda v: v) -> List[Any]:
    """``values`` for ``parametrize`` (graph fixtures, their twins, or tuples that hold one: ``path_of``
    gives its path) with those of the graphs in ``support.data.QUICK_GRAPHS`` in the quick set, one
    of each kind, and the others marked ``slow``: a test that runs every graph fixture the same way
    runs ten of them on every Python, all 42 in CI's ``slow`` run. Cases marked already
    (``quick_graphs(slow_if_big(...))``) stay as they are."""
    return [v if isinstance(v, _ParameterSet) or _stem(Path(path_of(v))) in QUICK_GRAPHS else _slow(v) for v in values]


def _stem(path: Path) -> str:
    """The graph a fixture is (``mlp_sgd`` for graphs/mlp_sgd.pbtxt, binary/mlp_sgd.pb.gz and
    binary/mlp_sgd_saved_model/saved_model.pb)."""
    name = path.parent.name if path.name.startswith("saved_model.") else path.name
    return name.split(".")[0].replace("_saved_model", "")


def input_kind(path: Any) -> str:
    """A fixture's kind of input, for :func:`one_of_each`: ``.pbtxt`` (a text graph), ``.pb``,
    ``.pb.gz``, ``.meta``, ``savedmodel`` (a saved_model.pb), ``folder``, ``ge_proto`` or ``ge_onnx``
    (GE dumps)."""
    p = Path(path)
    if p.is_dir():
        return "folder"
    if p.name.startswith("ge_"):
        return "ge_onnx" if p.name.startswith("ge_onnx") else "ge_proto"
    if p.name == "saved_model.pb":
        return "savedmodel"
    return "".join(p.suffixes[-2:]) if p.suffix == ".gz" else p.suffix


def one_of_each(values: Sequence[Any], kind: Callable[[Any], Hashable], n: int = 1) -> List[Any]:
    """``values`` for ``parametrize`` with only the first ``n`` of each ``kind`` (text, binary, gzip,
    a dialect, an answer inside a function...) in the quick set and the others marked ``slow``: a
    test that runs every fixture the same way keeps one case of each kind on every Python, and the
    ``slow`` run in CI runs them all. Cases marked already (``one_of_each(slow_if_big(...), ...)``)
    stay as they are and count for no kind. ``kind`` must read only what every process reads alike (a
    name, a size, a fixture's content), never a time or a random draw: xdist's workers collect
    the same cases."""
    seen: Dict[Hashable, int] = {}
    out: List[Any] = []
    for v in values:
        if isinstance(v, _ParameterSet):  # (marked already, by slow_if_big: neither kept nor counted)
            out.append(v)
            continue
        k = kind(v)
        seen[k] = seen.get(k, 0) + 1
        out.append(v if seen[k] <= n else _slow(v))
    return out
