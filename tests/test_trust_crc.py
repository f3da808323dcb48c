"""Every byte an answer rests on is checked (issue 35): fp, bp, points and report verify the data
CRC of the event-file record their graph comes from before they answer, with the hardware CRC-32C
library (``google-crc32c``) where it runs on its C extension, else with pure Python up to
``PURE_MAX`` bytes; past that, the answer says on stderr that the CRC was not checked.

The event files are built at test time (tests/support/events.py) around mlp_sgd.pb; a damaged
one has one flipped byte in one region of the graph's record: its length, its length's CRC, its
data (the bp op's name: a flip there names another op) or its data's CRC.
"""
from __future__ import annotations

import json
import re
import struct
import sys
import types
from pathlib import Path
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import events as ev
from support.cli import CliRunner
from support.data import DATA

from pbtxt_scan.cli import app
from pbtxt_scan.source import _crc32c
from pbtxt_scan.wire._events_split import _SYNC_CHUNK, _first_header
from pbtxt_scan.wire._tfrecord import iter_records

MLP = (DATA / "binary" / "mlp_sgd.pb").read_bytes()
FP, BP = "dense/MatMul", "gradients/dense/MatMul_grad/MatMul_1"
NAME_FIELD = b"\x0a" + bytes([len(BP)]) + BP.encode()  # (the bp NodeDef's name: field 1, its length, the name)
LIBRARY = _crc32c.library()  # (before a test takes it away: the big files are built with it)


def run(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args))


def _graph_record(blob: bytes) -> "tuple[int, int, int]":
    """(record number, header offset, data start) of the record that holds MLP."""
    read_at = lambda pos, n: blob[pos : pos + n]  # noqa: E731
    for r in iter_records(read_at, len(blob)):
        if MLP in blob[r.data_start : r.data_start + r.length]:
            return r.index, r.offset, r.data_start
    raise AssertionError("no graph record")


def _damaged(region: str) -> "tuple[bytes, int, int]":
    """An event file with one byte of the graph record flipped in ``region``; its number and offset."""
    blob = bytearray(ev.around([ev.graph_def(MLP)]))
    k, offset, data = _graph_record(bytes(blob))
    length = struct.unpack_from("<Q", blob, offset)[0]
    at = {
        "length": offset,  # (the length's low byte)
        "length_crc": offset + 9,
        "data": blob.index(NAME_FIELD, data) + len(NAME_FIELD) - 1,  # MatMul_1 -> MatMul_3
        "data_crc": data + length + 2,
    }[region]
    blob[at] ^= 0x02
    return bytes(blob), k, offset


REGIONS = {  # what the one stderr line says after "FILE:offset X: record N: "
    "length": "its length's CRC does not hold",
    "length_crc": "its length's CRC does not hold",
    "data": "data CRC mismatch",
    "data_crc": "data CRC mismatch",
}
COMMANDS: List[List[str]] = [["fp"], ["bp"], ["points"], ["points", "--format", "env"], ["report", "-o", "{out}"]]


def test_a_flip_in_the_name_would_name_another_op() -> None:
    """(The case of the issue: the flipped byte stays a valid graph, with another bp name.)"""
    blob, _, _ = _damaged("data")
    assert NAME_FIELD not in blob and NAME_FIELD[:-1] + b"3" in blob


@pytest.mark.parametrize("region", sorted(REGIONS))
@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:3]).replace(" {out}", ""))
def test_a_damaged_graph_record_gives_no_answer(tmp_path: Path, region: str, args: List[str]) -> None:
    blob, k, offset = _damaged(region)
    f = tmp_path / "events.out.tfevents.1"
    f.write_bytes(blob)
    out = tmp_path / "report.html"
    r = run(*[a.format(out=out) for a in args], str(f))
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert r.stdout == "" and not out.exists()
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("%s:offset %d: record %d: %s" % (f, offset, k, REGIONS[region])), lines


def test_the_json_error_names_the_record_and_its_offset(tmp_path: Path) -> None:
    blob, k, offset = _damaged("data")
    f = tmp_path / "events.out.tfevents.1"
    f.write_bytes(blob)
    r = run("bp", "--json", str(f))
    assert r.exit_code == 2
    err = json.loads(r.stdout)
    assert err["offset"] == offset and err["error"].startswith("record %d: data CRC mismatch (stored 0x" % k), err


def test_an_undamaged_file_answers_as_its_graph_does(tmp_path: Path) -> None:
    f = tmp_path / "events.out.tfevents.1"
    f.write_bytes(ev.around([ev.graph_def(MLP)]))
    r = run("points", str(f))
    assert r.exit_code == 0 and [line.split()[:2] for line in r.stdout.splitlines()] == [["fp_point", FP], ["bp_point", BP]]
    assert "not checked" not in r.stderr


# --- which CRC: the library's, else pure Python's, up to PURE_MAX --------------------------------


@pytest.fixture
def no_library(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """The CRC library away (as where no wheel installs, or in a zipapp): the bytes pure Python reads."""
    monkeypatch.setattr(_crc32c, "_extend", None)
    read: List[int] = []
    pure = _crc32c.py_crc32c
    monkeypatch.setattr(_crc32c, "py_crc32c", lambda data, crc=0: read.append(len(data)) or pure(data, crc))
    return read


def test_the_declared_library_runs_on_its_c_extension() -> None:
    assert _crc32c.fast(), "google-crc32c is a dependency: its C extension should be in use here"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.binary(max_size=300))
def test_the_library_and_pure_python_agree(a: bytes, b: bytes) -> None:
    extend = _crc32c.library()
    assert extend is not None
    assert extend(0, a + b) == _crc32c.py_crc32c(a + b)
    assert extend(_crc32c.py_crc32c(a), b) == _crc32c.py_crc32c(b, extend(0, a)) == _crc32c.crc32c(a + b)


@pytest.mark.parametrize("module, uses", [
    (types.SimpleNamespace(implementation="c", extend=len), len),
    (types.SimpleNamespace(implementation="python", extend=len), None),  # (its own fallback: as slow as ours)
    (None, None),  # (not importable: sys.modules' None makes the import fail)
])
def test_the_library_is_used_only_on_its_c_extension(monkeypatch: pytest.MonkeyPatch, module: object, uses: object) -> None:
    monkeypatch.setitem(sys.modules, "google_crc32c", module)
    assert _crc32c._load() is uses


@pytest.mark.parametrize("args", [["fp"], ["check"], ["stats"]])
def test_commands_use_the_library_where_it_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: List[str]) -> None:
    pure = _crc32c.py_crc32c
    read: List[int] = []
    monkeypatch.setattr(_crc32c, "py_crc32c", lambda data, crc=0: read.append(len(data)) or pure(data, crc))
    f = tmp_path / "events.out.tfevents.1"
    f.write_bytes(ev.around([ev.graph_def(MLP)]))
    r = run(*args, str(f))
    assert r.exit_code == 0, r.stderr
    assert max(read, default=0) <= 8  # (a header's length, before the library is loaded: no record's data)


def test_without_the_library_pure_python_checks_a_record_up_to_16_mb(tmp_path: Path, no_library: List[int]) -> None:
    blob, k, offset = _damaged("data")
    f = tmp_path / "events.out.tfevents.1"
    f.write_bytes(blob)
    r = run("bp", str(f))
    assert r.exit_code == 2 and "record %d: data CRC mismatch" % k in r.stderr
    assert sum(no_library) >= len(MLP)


def _big_event_file(path: Path, padding: int) -> int:
    """An event file whose graph record holds mlp_sgd.pb and ``padding`` more bytes (an unknown
    Event field: a reader steps over it), its CRCs right (the library's, for speed); the record's length."""
    record = ev.event([(4, MLP), (15, bytes(padding))])
    crc = LIBRARY(0, record) if LIBRARY is not None else _crc32c.py_crc32c(record)
    n = struct.pack("<Q", len(record))
    with path.open("wb") as w:
        w.write(ev.event_file([]))
        w.write(n + struct.pack("<I", _crc32c.masked_crc32c(n)) + record + struct.pack("<I", _crc32c.masked(crc)))
    return len(record)


def test_without_the_library_a_bigger_record_is_said_unchecked(tmp_path: Path, no_library: List[int]) -> None:
    f = tmp_path / "events.out.tfevents.1"
    length = _big_event_file(f, _crc32c.PURE_MAX)
    r = run("fp", str(f))
    assert r.exit_code == 0 and r.stdout == FP + "\n", r.stderr
    said = [line for line in r.stderr.splitlines() if "not checked" in line]
    assert said == ["%s: record 1's data CRC was not checked: it holds %s bytes, and this Python has no CRC-32C library "
                    "(pure Python checks up to 16 MB); to check it, pip install google-crc32c"
                    % (f, format(length, ","))], r.stderr
    assert sum(no_library) < 1 << 20  # (the length CRCs only)
    assert "not checked" not in run("fp", "--quiet", str(f)).stderr


@pytest.mark.slow  # (pure Python reads 16 MB: about 2 s)
def test_without_the_library_stats_and_check_check_a_bigger_record_anyway(tmp_path: Path, no_library: List[int]) -> None:
    f = tmp_path / "events.out.tfevents.1"
    _big_event_file(f, _crc32c.PURE_MAX)
    for cmd in ("stats", "check"):
        del no_library[:]
        r = run(cmd, str(f))
        assert r.exit_code == 0 and "not checked" not in r.stderr, r.stderr
        assert sum(no_library) > _crc32c.PURE_MAX


def test_with_the_library_a_bigger_record_is_checked(tmp_path: Path) -> None:
    f = tmp_path / "events.out.tfevents.1"
    _big_event_file(f, _crc32c.PURE_MAX)
    blob = bytearray(f.read_bytes())
    blob[blob.index(NAME_FIELD) + len(NAME_FIELD) - 1] ^= 0x02
    f.write_bytes(bytes(blob))
    r = run("fp", str(f))
    assert r.exit_code == 2 and "record 1: data CRC mismatch" in r.stderr and r.stdout == ""


def _applies(marker: str, version: "tuple[int, int]") -> bool:
    """A marker of ``python_version OP 'X.Y'`` terms joined by ``and`` (the form pyproject uses)."""
    ops = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
    terms = re.findall(r"python_version\s*(<=|>=|<|>)\s*'(\d+)\.(\d+)'", marker)
    assert terms and len(terms) == marker.count("python_version"), marker
    return all(ops[op](version, (int(x), int(y))) for op, x, y in terms)


@pytest.mark.parametrize("minor", range(7, 14))
def test_every_python_asks_for_the_library_once(minor: int) -> None:
    """One google-crc32c requirement for each Python 3.7-3.13, its floor a release with wheels there."""
    import pbtxt_scan

    text = (Path(pbtxt_scan.__file__).resolve().parent.parent / "pyproject.toml").read_text()  # (the tested checkout's)
    deps = re.search(r"^dependencies = \[(.*?)^\]", text, re.S | re.M)
    assert deps, "dependencies"
    reqs = re.findall(r'"google-crc32c([^";]*);([^"]*)"', deps.group(1))
    ours = [spec for spec, marker in reqs if _applies(marker, (3, minor))]
    floor = {12: "1.6", 13: "1.7"}.get(minor, "1.5")
    assert len(ours) == 1 and ours[0].startswith(">=" + floor), (minor, reqs)


# --- the cost: a big graph record among the parts that workers read -------------------------------


@pytest.mark.parametrize("before", [0, 1, _SYNC_CHUNK - 13, _SYNC_CHUNK - 12, _SYNC_CHUNK - 1, _SYNC_CHUNK + 5])
def test_a_worker_finds_the_first_header_wherever_it_lies(before: int) -> None:
    """A worker whose part starts inside a record (a 100 MB graph's) finds the first header after
    it, also one that starts in the last bytes of a search chunk (they used to be passed over)."""
    blob = b"\x01" * before + ev.event_file([ev.scalar("loss", 0.5, s) for s in range(4)])
    assert _first_header(lambda pos, n: blob[pos : pos + n], len(blob), 0, len(blob)) == before
