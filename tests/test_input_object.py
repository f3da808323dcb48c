"""One immutable input (issue 36): ``GraphFile.open`` returns an object whose store, lane and
provenance are fixed when it is opened. Nothing sets an attribute on it afterwards, in this process
(``__setattr__`` refuses) or in the source (no module but its own assigns one); its notes are data
(a tuple), the format to read it as is an argument of opening, and each way the bytes are reached is
a store class of its own."""
from __future__ import annotations

import ast
import gzip
import io
from pathlib import Path
from typing import Any, BinaryIO, Callable, Dict, List, Tuple, cast

import pytest
from support.cli import CliRunner
from support.data import DATA

import pbtxt_scan
from pbtxt_scan import DIALECTS, GraphFile
from pbtxt_scan.cli import app

MLP = DATA / "graphs" / "mlp_sgd.pbtxt"
MLP_PB = DATA / "binary" / "mlp_sgd.pb"
SAVED = DATA / "binary" / "saved_model_keras"
EVENTS = DATA / "events" / "v1_filewriter"
ROOT = Path(pbtxt_scan.__file__).parent


def _event_file() -> Path:
    return next(p for p in sorted(EVENTS.rglob("events.out.tfevents.*")))


def _gz(tmp_path: Path) -> Path:
    p = tmp_path / "mlp_sgd.pb.gz"
    p.write_bytes(gzip.compress(MLP_PB.read_bytes()))
    return p


# How an input is opened -> what reads its bytes: (store class, regular, spooled, offset_free, base > 0).
OPENINGS: Dict[str, Tuple[Callable[[Path], GraphFile], Tuple[str, bool, bool, bool, bool]]] = {
    "a text file": (lambda t: GraphFile.open(MLP), ("FileStore", True, False, True, False)),
    "a binary file": (lambda t: GraphFile.open(MLP_PB), ("FileStore", True, False, True, False)),
    "gzip, spooled": (lambda t: GraphFile.open(_gz(t)), ("SpooledStore", True, True, True, False)),
    "gzip, read once": (lambda t: GraphFile.open(_gz(t), spool=False), ("StreamStore", False, False, False, False)),
    "a stream object": (lambda t: GraphFile.of_stream(io.BytesIO(MLP.read_bytes()), "<pipe>"), ("FillingStore", True, True, False, False)),
    "a stream, read once": (lambda t: GraphFile(cast(BinaryIO, io.BufferedReader(io.BytesIO(MLP.read_bytes()))), "<pipe>", spool=False),
                            ("StreamStore", False, False, False, False)),
    "an event file": (lambda t: GraphFile.open(_event_file()), ("RecordStore", True, False, False, True)),
    "a SavedModel folder": (lambda t: GraphFile.open(SAVED), ("FileStore", True, False, True, False)),
}


@pytest.mark.parametrize("how", sorted(OPENINGS))
def test_each_way_to_the_bytes_is_a_store_of_its_own(tmp_path: Path, how: str) -> None:
    open_it, (cls, regular, spooled, offset_free, based) = OPENINGS[how]
    with open_it(tmp_path) as g:
        store = g._store
        assert type(store).__name__ == cls
        assert (g.regular, g.spooled, g.offset_free, g.base > 0) == (regular, spooled, offset_free, based)
        assert g.read_at.__self__ is store  # (the store's own read: no hop through the input)
        assert next(iter(g.nodes())).name  # (and the lane reads through it)


# Every attribute an input has, and one it has not: none can be set once it is open.
_NAMES = ("dialect", "notes", "on_note", "unchecked", "picked", "chosen", "record_read", "events", "lane", "name",
          "size", "regular", "read_at", "provenance", "_store", "_fd_busy", "anything")


@pytest.mark.parametrize("how", sorted(OPENINGS))
def test_no_attribute_is_set_on_an_open_input(tmp_path: Path, how: str) -> None:
    with OPENINGS[how][0](tmp_path) as g:
        before = (g.name, g.lane, g.dialect, g.notes)
        for name in _NAMES:
            with pytest.raises(AttributeError):
                setattr(g, name, None)
        with pytest.raises(AttributeError):
            del g.lane
        assert (g.name, g.lane, g.dialect, g.notes) == before


def _assigned_outside(tree: ast.AST) -> List[Tuple[int, str]]:
    """``g.x = ...`` (``+=``, ``del``, ``setattr(g, ...)``) where ``g`` names an input: a name ``g``
    or ``graph_file``, or an attribute ``_g``/``g`` (``self._g``)."""

    def is_input(node: ast.AST) -> bool:
        return (isinstance(node, ast.Name) and node.id in ("g", "graph_file")) or (
            isinstance(node, ast.Attribute) and node.attr in ("g", "_g"))

    found = []
    for node in ast.walk(tree):
        targets: List[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
            if node.args and is_input(node.args[0]):
                found.append((node.lineno, "setattr"))
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, (ast.Store, ast.Del)) and is_input(sub.value):
                    found.append((sub.lineno, sub.attr))
    return found


def test_no_module_but_the_inputs_own_sets_an_attribute_on_it() -> None:
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "graph/_input.py":
            continue
        for line, attr in _assigned_outside(ast.parse(path.read_text(encoding="utf-8"))):
            bad.append("%s:%d: %s" % (rel, line, attr))
    assert bad == []


@pytest.mark.parametrize("source, caught", [
    ("g.dialect = d", [(1, "dialect")]),
    ("g.notes += []", [(1, "notes")]),
    ("self._g._fd_busy = True", [(1, "_fd_busy")]),
    ("setattr(g, 'x', 1)", [(1, "setattr")]),
    ("del graph_file.lane", [(1, "lane")]),
    ("x = g.notes\ng.notes.append(1)\nh.dialect = 1", []),
])
def test_the_source_check_sees_every_form_of_assignment(source: str, caught: List[Tuple[int, str]]) -> None:
    assert _assigned_outside(ast.parse(source)) == caught


def test_the_input_kind_is_an_argument_of_opening() -> None:
    with GraphFile.open(MLP, dialect=DIALECTS["function"]) as g:
        assert g.dialect is DIALECTS["function"]
        assert g.lane.dialect is DIALECTS["graphdef"]  # (the lane is not changed: the input reads as it was asked)
    with GraphFile.open(MLP) as g:
        assert g.dialect is DIALECTS["graphdef"]


def test_the_notes_are_data_and_reading_them_changes_nothing() -> None:
    with GraphFile.open(SAVED) as g:
        picked = g.notes
        assert isinstance(picked, tuple) and len(picked) == 1 and "saved_model.pb" in picked[0]
        for _ in g.nodes():
            pass
        said = g.notes  # (the lane said which MetaGraph it reads, as it read it)
        assert said[:1] == picked and len(said) == 2 and "SavedModel: reading MetaGraph 1 of 1" in said[1]
        assert g.notes == said and g.provenance.picked == picked[0]
        assert (g.provenance.asked, g.provenance.record, g.provenance.graph) == (str(SAVED), None, None)


def test_an_event_files_provenance_says_what_was_asked_and_what_was_read() -> None:
    f = _event_file()
    with GraphFile.open(f, record=None) as g:
        p = g.provenance
        assert p.asked == str(f) and p.record is None and p.picked is None
        assert p.chosen is not None and p.chosen.startswith("%s: reading " % f) and g.notes == (p.chosen,)
        assert p.record_read and p.events is not None and g.events is p.events
        with pytest.raises(AttributeError):
            setattr(p, "chosen", "x")  # (a NamedTuple: fixed)


def test_the_cli_says_each_note_once() -> None:
    r = CliRunner().invoke(app, ["fp", str(SAVED)])
    assert r.exit_code == 0
    said = [line for line in r.stderr.splitlines() if line.startswith(str(SAVED))]
    assert len(said) == len(set(said)) == 2, r.stderr


def test_the_descriptor_is_lent_to_one_child_at_a_time(tmp_path: Path) -> None:
    with GraphFile.open(MLP) as g:
        assert g.take_offset() and not g.take_offset()
        g.free_offset()
        assert g.take_offset()
        g.free_offset()
    for how in ("an event file", "gzip, read once"):
        with OPENINGS[how][0](tmp_path) as g:
            assert not g.take_offset()  # (not its own descriptor to the end, or none at all)


def test_an_input_that_fails_to_open_closes_what_it_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: List[Any] = []
    from pbtxt_scan.graph import _input

    real = _input.open_binary

    def spy(path: Any) -> Any:
        raw, name = real(path)
        opened.append(raw)
        return raw, name

    monkeypatch.setattr(_input, "open_binary", spy)
    bad = tmp_path / "events.out.tfevents.1"
    bad.write_bytes(_event_file().read_bytes()[:40])
    for path in (bad, DATA / "graphs" / "mlp_sgd.pbtxt"):
        try:
            with GraphFile.open(path, record=0):
                pass
        except pbtxt_scan.PbtxtError:
            pass
    assert opened and all(raw.closed for raw in opened)
