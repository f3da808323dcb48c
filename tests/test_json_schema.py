"""Every command's --json output against the table in docs/json.md (read from the document itself,
so the document and the output cannot drift apart): every object has exactly the table's keys
(optional ones may be left out), each value of the type the table gives, nested objects checked
the same way; one object per line."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
GRAPHS = DATA / "graphs"
GE = DATA / "ge"
DOC = ROOT / "docs" / "json.md"
runner = CliRunner()

Key = Tuple[str, bool]  # (value type, optional)


def schema() -> Tuple[Dict[str, Dict[str, Key]], Dict[str, str]]:
    """The objects' table and the commands' table of docs/json.md."""
    objects: Dict[str, Dict[str, Key]] = {}
    commands: Dict[str, str] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] not in ("object", "---"):
            name, key, value, meaning = cells
            objects.setdefault(name, {})[key] = (value, "*optional*" in meaning)
        elif len(cells) == 2 and cells[0].startswith("`") and cells[1].startswith("`"):
            first = re.match(r"`(\w+)`", cells[1]).group(1)  # type: ignore[union-attr]
            for cmd in re.findall(r"`([\w-]+(?: --[\w-]+)?)`", cells[0]):  # (`show --context`: its own object)
                commands[cmd] = first
    return objects, commands


OBJECTS, COMMANDS = schema()


def check(value: Any, typ: str, where: str) -> None:
    if typ.startswith("list of "):
        assert isinstance(value, list), where
        for i, v in enumerate(value):
            check(v, typ[len("list of "):], "%s[%d]" % (where, i))
        return
    if typ.endswith(" or null"):
        if value is None:
            return
        typ = typ[: -len(" or null")]
    simple = {"string": str, "int": int, "number": (int, float), "bool": bool}
    if typ in simple:
        assert isinstance(value, simple[typ]) and (typ == "bool" or not isinstance(value, bool)), (where, typ, value)
    elif typ == "any":
        return
    elif typ == "map of int":
        assert isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, int) for k, v in value.items()), where
    else:
        check_object(value, typ, where)


def check_object(value: Any, name: str, where: str) -> None:
    assert name in OBJECTS, "%s: docs/json.md has no object %r" % (where, name)
    assert isinstance(value, dict), (where, value)
    table = OBJECTS[name]
    required = {k for k, (_, optional) in table.items() if not optional}
    assert required <= set(value), "%s (%s): missing %s" % (where, name, sorted(required - set(value)))
    assert set(value) <= set(table), "%s (%s): keys not in docs/json.md: %s" % (where, name, sorted(set(value) - set(table)))
    for k, v in value.items():
        check(v, table[k][0], "%s.%s" % (where, k))


def lines_of(args: List[str]) -> List[Any]:
    r = runner.invoke(app, args)
    assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.stderr)
    assert r.stdout.strip(), (args, r.stderr)
    return [json.loads(line) for line in r.stdout.splitlines()]  # (one object per line: each parses alone)


MLP = str(GRAPHS / "mlp_sgd.pbtxt")
INFERENCE = str(GRAPHS / "inference_no_gradients.pbtxt")
TF2 = str(GRAPHS / "tf2_called_function.pbtxt")
BINARY = str(DATA / "binary" / "mlp_sgd.pb")
GE_FILE = str(GE / "ge_proto_00000013_graph_3_Build.txt")
GE_ONNX = str(GE / "ge_onnx_00000042_graph_1_Build.pbtxt")
GE_DIR = str(GE / "dump_dir")
NO_FP_GE = str(GE / "dump_dir" / "ge_proto_00000041_graph_1_PreRunBegin.txt")
PROF = str(DATA / "prof" / "mindinsight_PROF_000001")

RUNS = [
    ("fp", ["fp", "--json", MLP]),
    ("fp", ["fp", "--json", TF2]),
    ("fp", ["fp", "--format", "json", BINARY]),
    ("bp", ["bp", "--json", INFERENCE]),  # nothing found: the same keys, null
    ("points", ["points", "--json", MLP]),
    ("points", ["points", "--json", MLP, "--ge", GE_DIR]),
    ("points", ["points", "--json", INFERENCE]),
    # a GE dump file: GE's own choice (rule ge), in the same shapes; and where GE picks none
    ("fp", ["fp", "--json", GE_ONNX]),
    ("bp", ["bp", "--json", NO_FP_GE]),
    ("points", ["points", "--json", GE_ONNX]),
    ("points", ["points", "--json", NO_FP_GE]),
    ("report", ["report", "--json", GE_FILE, "-o", os.devnull]),
    ("check", ["check", "--json", MLP, BINARY, GE_FILE]),
    ("nodes", ["nodes", "--json", MLP]),
    ("nodes", ["nodes", "--json", "--input-kind", "function", TF2]),
    ("nodes", ["nodes", "--json", BINARY]),
    ("show", ["show", "--json", MLP, "dense/MatMul"]),
    ("show --context", ["show", "--json", MLP, "dense/MatMul", "--context", "2"]),
    ("show", ["show", "--json", MLP, "no/such"]),  # a miss: the same shape, name null, with a reason
    ("show --context", ["show", "--json", MLP, "no/such", "--context", "1"]),
    ("show --context", ["show", "--format", "json", BINARY, "dense/MatMul", "--context", "1"]),
    ("stats", ["stats", "--json", MLP]),
    ("stats", ["stats", "--json", BINARY]),
    ("stats", ["stats", "--json", str(DATA / "events" / "v1_filewriter")]),
    ("events", ["events", "--json", str(DATA / "events")]),
    ("resolve", ["resolve", "--json", "dense/MatMul", "gradients/dense/MatMul_grad/MatMul_1", "nosuch", "--ge", GE_DIR]),
    ("ge-auto", ["ge-auto", "--json", GE_DIR]),
    ("ge-auto", ["ge-auto", "--json", GE_ONNX]),
    ("ge-auto", ["ge-auto", "--json", NO_FP_GE]),
    ("report", ["report", "--json", MLP, "-o", os.devnull]),
    ("report", ["report", "--json", INFERENCE, "-o", os.devnull]),
    ("verify", ["verify", "--json", PROF]),
    ("verify", ["verify", "--json", PROF, "--graph", MLP, "--ge", str(GE / "mlp_sgd")]),
]


@pytest.mark.parametrize("command, args", RUNS, ids=[" ".join(a[:3]) for _, a in RUNS])
def test_every_object_matches_the_table(command: str, args: List[str]) -> None:
    objs = lines_of(args)
    for i, obj in enumerate(objs):
        check_object(obj, "error" if "error" in obj else COMMANDS[command], "%s line %d" % (command, i + 1))


def test_the_table_names_every_command():
    import typer.main

    names = set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    assert names and names <= set(COMMANDS), sorted(names - set(COMMANDS))
    assert {c.split()[0] for c, _ in RUNS} == names  # and every command's --json is run above


ERRORS = [
    ["fp", "--json", "nosuch.pbtxt"],
    ["points", "--json", "nosuch.pbtxt"],
    ["stats", "--json", "nosuch.pbtxt"],
    ["events", "--json", "nosuch.pbtxt"],
    ["nodes", "--json", "nosuch.pbtxt"],
    ["show", "--json", "nosuch.pbtxt", "a"],
    ["resolve", "--json", "a", "--ge", "nosuch.txt"],
    ["ge-auto", "--json", "nosuch.txt"],
    ["verify", "--json", "nosuch_prof"],
    ["fp", "--json", "--rule", "bogus", MLP],  # a usage error
    ["fp", "--json"],  # a missing argument
]


@pytest.mark.parametrize("args", ERRORS, ids=lambda a: " ".join(a))
def test_an_error_is_one_json_line_beside_its_stderr_line(args: List[str]) -> None:
    r = runner.invoke(app, args)
    assert r.exit_code == 2
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(objs) == 1, r.stdout
    check_object(objs[0], "error", " ".join(args))
    assert objs[0]["error"] and objs[0]["error"] in r.stderr
    if "nosuch" in " ".join(args):
        assert objs[0]["file"].startswith("nosuch")


def test_check_json_gives_an_object_for_each_file_good_or_bad(tmp_path: Path):
    bad = tmp_path / "bad.pbtxt"
    bad.write_text('node {\n  name: "a"\n  op: \n}\n')
    r = runner.invoke(app, ["check", "--json", MLP, str(bad)])
    assert r.exit_code == 2
    good, err = [json.loads(line) for line in r.stdout.splitlines()]
    check_object(good, "check", "check")
    check_object(err, "error", "check")
    assert good["ok"] is True and err["file"] == str(bad) and err["line"] == 4 and len(r.stderr.splitlines()) == 1
