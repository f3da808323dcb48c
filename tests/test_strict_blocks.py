"""No silent drop (issue 37): a command never answers past a block it read that is no valid node.

fp, bp, points, report and show read a node's heads only. A block they read before their answer
that is no valid node (``nod {``: a top-level field GraphDef has not; a node without its ``name``
or its ``op``; a name that is no string) stops them with ``check``'s error: the same line, column
and words (the schema package's). The same damage where the command never reads (after fp's
answer, before bp's: bp reads from the end) leaves the answer as it was; ``--lenient`` skips the
block and says so in one stderr line. Binary graphs: protobuf keeps an unknown field number, so
only a node without a name or an op counts there.

The cases are data: a real fixture, a line changed, and the error expected.
"""
from __future__ import annotations

from pathlib import Path
from typing import List, NamedTuple, Optional, Tuple

import pytest
from support.cli import CliRunner

from pbtxt_scan.cli import app
from pbtxt_scan.language._grammar import _lark, string_value
from pbtxt_scan.schema import Checker, check_tokens

DATA = Path(__file__).parent / "data"
BASE = DATA / "graphs" / "mlp_sgd.pbtxt"
FP, BP = "dense/MatMul", "gradients/dense/MatMul_grad/MatMul_1"
runner = CliRunner()

GRAPHDEF = 'Message type "tensorflow.GraphDef" has no field named "nod". Did you mean "node"? (schema: TensorFlow 2.21.0)'
MISSING = 'Message type "tensorflow.NodeDef" is missing required field "%s": a node needs a name and an op.'


class Damage(NamedTuple):
    """One change to a node of the fixture: the node's opener line, the change, and the error it
    gives (``LINE:COL: message``, the line counted in the changed file)."""

    kind: str
    opener: int  # the node's ``node {`` line in the fixture
    error: str


def damages(opener: int) -> List[Damage]:
    return [
        Damage("misspelt_node", opener, "%d:1: %s" % (opener, GRAPHDEF)),
        Damage("no_name", opener, "%d:1: %s" % (opener, MISSING % "name")),
        Damage("no_op", opener, "%d:1: %s" % (opener, MISSING % "op")),
        Damage("name_a_number", opener, "%d:9: Expected string but found: '5'" % (opener + 1)),
    ]


def damaged(d: Damage) -> str:
    lines = BASE.read_text(encoding="utf-8").split("\n")
    i = d.opener - 1
    assert lines[i] == "node {" and lines[i + 1].startswith("  name: ") and lines[i + 2].startswith("  op: ")
    if d.kind == "misspelt_node":
        lines[i] = "nod {"
    elif d.kind == "no_name":
        del lines[i + 1]
    elif d.kind == "no_op":
        del lines[i + 2]
    else:
        lines[i + 1] = "  name: 5"
    return "\n".join(lines)


EARLY = 30  # global_step, read before fp's answer (line 944); bp never reads it (it stops at line 3227)
LATE = 3518  # the last node: read by bp before its answer; fp stops long before it
NEIGHBOUR = 991  # dense/BiasAdd, which consumes dense/MatMul: show --context reads it

# (command, the damaged node's line, whether the command reads it before its answer)
COMMANDS: List[Tuple[List[str], int, bool]] = [
    (["fp"], EARLY, True), (["fp"], LATE, False),
    (["bp"], LATE, True), (["bp"], EARLY, False),
    (["points"], EARLY, True), (["points"], LATE, True),
    (["report", "-o", "-"], EARLY, True),
    # (show NAME finds its node by one byte search and reads that block alone: issue 38)
    (["show", "{f}", FP], EARLY, False), (["show", "{f}", "dense/MatMul/ReadVariableOp"], LATE, False),
    (["show", "--context", "1", "{f}", FP], NEIGHBOUR, True),  # (its window, 256 KiB each way, reads this whole fixture)
]
# show NAME reads blocks after all where a name line is written otherwise than the writer writes it
# (``name: 5``): its byte search cannot vouch for such a file, and falls back to reading it, up to
# its node.
CASES = [(args, d, reads or (args[0] == "show" and d.kind == "name_a_number" and line < LATE))
         for args, line, reads in COMMANDS for d in damages(line)]


def _run(args: List[str], f: Path, *more: str) -> "object":
    argv = [a.format(f=f) for a in args] + list(more)
    if "{f}" not in args:
        argv.append(str(f))
    return runner.invoke(app, argv)


def _answer(args: List[str], f: Path) -> str:
    r = _run(args, f)
    assert r.exit_code == 0, r.stderr
    return r.stdout


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> "dict[str, str]":
    """Each command's output on the fixture as it is."""
    return {" ".join(args): _answer(args, BASE) for args, _line, _reads in COMMANDS}


@pytest.mark.parametrize("args, d, reads", CASES, ids=["%s-%s-%d" % (a[0] + ("-context" if "--context" in a else ""), d.kind, d.opener)
                                                      for a, d, _ in CASES])
def test_a_damaged_block_read_before_the_answer_stops_the_command(tmp_path: Path, args: List[str], d: Damage, reads: bool,
                                                                   answers: "dict[str, str]") -> None:
    f = tmp_path / "graph.pbtxt"
    f.write_text(damaged(d), encoding="utf-8")
    r = _run(args, f)
    if not reads:
        assert r.exit_code == 0, r.stderr
        # (the damage shifts the lines after it: the answer's name stands)
        assert _names(r.stdout) == _names(answers[" ".join(args)])
        return
    assert r.exit_code == 2, r.stdout
    assert r.stderr.splitlines() == ["%s:%s" % (f, d.error)]
    if args[0] == "points":  # (a row for the point it could read, and one saying why for the other)
        assert "bp_point  -" in r.stdout if d.opener == LATE else "fp_point  dense" not in r.stdout
    else:
        assert r.stdout == ""


@pytest.mark.parametrize("args, d", [(a, d) for a, d, reads in CASES if reads and a[0] != "report"],
                         ids=lambda v: v.kind if isinstance(v, Damage) else "-".join(v[:3]))
def test_lenient_skips_it_with_one_warning(tmp_path: Path, args: List[str], d: Damage, answers: "dict[str, str]") -> None:
    f = tmp_path / "graph.pbtxt"
    f.write_text(damaged(d), encoding="utf-8")
    r = _run(args, f, "--lenient")
    assert r.exit_code == 0, r.stderr
    if "--context" in args:  # (the damaged neighbour is left out, the rest stands)
        assert "* dense/MatMul" in r.stdout and "IteratorGetNext" in r.stdout and "dense/BiasAdd" not in r.stdout
    else:
        assert _names(r.stdout) == _names(answers[" ".join(args)])
    warned = [line for line in r.stderr.splitlines() if "--lenient" in line]
    line = d.error.split(":")[0]
    assert warned == ["%s: --lenient: skipped 1 block that is no valid node; the first at line %s: %s" % (
        f, line, d.error.split(": ", 1)[1] if d.kind != "name_a_number" else "Expected string but found: '5'")]


def _names(out: str) -> List[str]:
    """The node names an output gives (the lines shift with the damage; the names do not)."""
    import re

    return re.findall(r"(?:dense|gradients|global_step)[\w/]*", out)


def _checker(text: str) -> Optional[Tuple[int, int, str]]:
    toks = [(t.type, str(t), t.line, t.column) for t in _lark(False).lex(text) if t.type not in ("WS", "COMMENT")]
    got = check_tokens(toks, Checker(limit=1), decode=string_value)
    return (got[0].line, got[0].column, got[0].message) if got else None


@pytest.mark.parametrize("d", [d for d in damages(EARLY) if d.kind in ("misspelt_node", "name_a_number")], ids=lambda d: d.kind)
def test_the_error_is_the_schema_check_s_own(d: Damage) -> None:
    """Where TensorFlow's parser refuses the damage, ``check``'s validator (the schema's Checker)
    names the same line, column and words as the commands do."""
    line, col, msg = d.error.split(":", 2)
    assert _checker(damaged(d)) == (int(line), int(col), msg.strip())


# --- binary: a node without a name or an op -----------------------------------------------------


def _varint(data: bytes, i: int) -> Tuple[int, int]:
    n = shift = 0
    while True:
        b = data[i]
        n |= (b & 0x7F) << shift
        i += 1
        shift += 7
        if b < 0x80:
            return n, i


def _enc(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def binary_without(field: int, index: int) -> Tuple[bytes, int]:
    """mlp_sgd.pb with node ``index`` (a top-level field 1) less its field ``field`` (1: name,
    2: op); and the offset of that node's serialized NodeDef."""
    data = (DATA / "binary" / "mlp_sgd.pb").read_bytes()
    i, k = 0, 0
    while True:
        tag_at = i
        tag, i = _varint(data, i)
        n, body = _varint(data, i)
        if tag == 0x0A:
            if k == index:
                break
            k += 1
        i = body + n
    node = data[body : body + n]
    j, kept = 0, b""
    while j < len(node):
        t, a = _varint(node, j)
        m, b = _varint(node, a)
        if t != (field << 3 | 2):
            kept += node[j : b + m]
        j = b + m
    head = b"\x0a" + _enc(len(kept))
    return data[:tag_at] + head + kept + data[body + n :], tag_at + len(head)


@pytest.mark.parametrize("field, what", [(1, "name"), (2, "op")])
def test_a_binary_node_without_a_name_or_an_op_stops_fp(tmp_path: Path, field: int, what: str) -> None:
    data, at = binary_without(field, 1)
    f = tmp_path / "graph.pb"
    f.write_bytes(data)
    r = _run(["fp"], f)
    assert r.exit_code == 2, r.stdout
    assert r.stderr.splitlines() == ["%s:offset %d: %s" % (f, at, MISSING % what)]
    r = _run(["fp"], f, "--lenient")
    assert r.exit_code == 0 and r.stdout == FP + "\n", r.stderr
    assert "--lenient: skipped 1 block that is no valid node; the first at offset %d" % at in r.stderr
    r = _run(["bp"], f)  # (bp stops long before the second node)
    assert r.exit_code == 0 and r.stdout == BP + "\n", r.stderr


def test_an_unknown_field_number_in_a_binary_graph_is_kept_as_protobuf_keeps_it(tmp_path: Path) -> None:
    data = (DATA / "binary" / "mlp_sgd.pb").read_bytes()
    f = tmp_path / "graph.pb"
    f.write_bytes(data + b"\xa2\x06\x03abc")  # field 100 (GraphDef has none), 3 bytes long
    r = _run(["fp"], f)
    assert r.exit_code == 0 and r.stdout == FP + "\n", r.stderr


# --- other layouts: the general scanner, bp's block index -------------------------------------------


ONE_LINE = b'node { name: "x" op: "Placeholder" } nod { name: "a" op: "Const" } node { name: "w" op: "VarHandleOp" }\n'


@pytest.mark.parametrize("command", ["fp", "bp"])
def test_a_file_out_of_the_writer_layout_is_held_to_the_same(tmp_path: Path, command: str) -> None:
    f = tmp_path / "graph.pbtxt"
    f.write_bytes(ONE_LINE)
    r = _run([command], f)
    assert r.exit_code == 2
    assert r.stderr.splitlines() == ["%s:1:38: %s" % (f, GRAPHDEF)]
    assert _checker(ONE_LINE.decode()) == (1, 38, GRAPHDEF)  # (check's own)


def test_bp_s_block_index_kept_by_a_lenient_reading_does_not_let_the_next_one_pass(tmp_path: Path) -> None:
    """A file out of the writer layout is read backward through an index of its blocks, kept in
    the cache; one built past a skipped block is not kept, so a reading without --lenient still
    meets the block."""
    f = tmp_path / "graph.pbtxt"
    f.write_bytes(ONE_LINE)
    r = _run(["bp"], f, "--lenient")
    assert r.exit_code == 1 and "--lenient: skipped 1 block" in r.stderr, r.stderr  # (no gradients: exit 1)
    r = _run(["bp"], f)
    assert r.exit_code == 2 and GRAPHDEF in r.stderr


# --- GE dumps: an op without a name or a type ---------------------------------------------------

GE_DUMP = DATA / "ge" / "mlp_sgd" / "ge_proto_00000003_graph_1_Build.txt"


@pytest.mark.parametrize("args", [["fp"], ["bp"], ["ge-auto"], ["ge-auto", "--jobs", "2"], ["resolve", "dense/MatMul", "--ge"]],
                         ids=lambda a: "-".join(a[:3]))
def test_a_ge_op_without_its_type_stops_every_ge_reading(tmp_path: Path, args: List[str]) -> None:
    lines = GE_DUMP.read_text(encoding="utf-8").split("\n")
    assert lines[2] == "  op {" and lines[4] == '    type: "FrameworkOp"'
    del lines[4]
    f = tmp_path / "ge_proto_00000003_graph_1_Build.txt"
    f.write_text("\n".join(lines), encoding="utf-8")
    r = _run(args, f)
    assert r.exit_code == 2, r.stdout
    assert r.stderr.splitlines() == ['%s:3:3: Message type "ge.proto.OpDef" is missing required field "type": '
                                     "a node needs a name and an op." % f]


def _ge_without_type(tmp_path: Path) -> Path:
    """The GE fixture with its first op's ``type`` line gone (an op GE would not load)."""
    lines = GE_DUMP.read_text(encoding="utf-8").split("\n")
    del lines[4]
    f = tmp_path / "ge_proto_00000003_graph_1_Build.txt"
    f.write_text("\n".join(lines), encoding="utf-8")
    return f


GE_SKIPPED = ('%s: --lenient: skipped 1 block that is no valid node; the first at line 3: Message type "ge.proto.OpDef" '
              'is missing required field "type": a node needs a name and an op.')


@pytest.mark.parametrize("args", [["ge-auto"], ["ge-auto", "--jobs", "2"], ["ge-auto", "--json"],
                                  ["resolve", "dense/MatMul", "--ge"], ["resolve", "dense/MatMul", "--jobs", "2", "--ge"]],
                         ids=lambda a: "-".join(a))
def test_lenient_on_a_ge_command_skips_the_op_with_one_warning(tmp_path: Path, args: List[str]) -> None:
    """ge-auto and resolve take --lenient as fp and bp do: the op without its type is left out (it
    was the data source, IteratorV2: GE's own choice then has no fp), and one stderr line says so."""
    f = _ge_without_type(tmp_path)
    whole = _run(args, GE_DUMP)
    r = _run(args[:1] + ["--lenient"] + args[1:], f)
    if args[0] == "resolve":  # (the op skipped is no match of dense/MatMul: the same matches, a line up)
        assert r.exit_code == 0, r.stderr
        assert r.stdout == whole.stdout.replace("line 24", "line 23")
    else:
        assert r.exit_code == 1, r.stderr  # (no data source left: GE would find no fp)
        if "--json" in args:
            import json

            assert json.loads(r.stdout)["fp"]["name"] is None and json.loads(r.stdout)["bp"]["name"]
        else:
            assert r.stdout.startswith("fp  (none)\nbp  gradients/"), r.stdout
    assert r.stderr.splitlines().count(GE_SKIPPED % f) == 1, r.stderr


def test_lenient_on_points_ge_skips_in_the_dump_too(tmp_path: Path) -> None:
    f = _ge_without_type(tmp_path)
    r = _run(["points", str(BASE), "--ge"], f)
    assert r.exit_code == 2 and "ge.proto.OpDef" in r.stderr and "--lenient" not in r.stderr, r.stderr
    r = _run(["points", "--lenient", str(BASE), "--ge"], f)
    assert r.exit_code == 0, r.stderr
    assert "dense/MatMuldense/BiasAdd" in r.stdout
    assert GE_SKIPPED % f in r.stderr.splitlines(), r.stderr


# --- a graph inside a text SavedModel or MetaGraphDef: its node blocks held to the same ----------

# (the container, the file's name, the lines and columns its graph_def's text is moved by)
CONTAINERS = [("saved_model", "saved_model.pbtxt", 7, 4), ("meta_graph", "model.ckpt-1.meta", 5, 2)]


def _contained(container: str, text: str) -> str:
    from support.containers import text_meta_graph, text_saved_model

    return text_saved_model([("train", text)]) if container == "saved_model" else text_meta_graph(text)


def _moved(error: str, lines: int, columns: int) -> str:
    line, col, msg = error.split(":", 2)
    return "%d:%d:%s" % (int(line) + lines, int(col) + columns, msg)


NESTED = [(c, args, d) for c in CONTAINERS for args, line in ((["fp"], EARLY), (["bp"], LATE)) for d in damages(line)]


@pytest.mark.parametrize("container, args, d", NESTED, ids=["%s-%s-%s" % (c[0], a[0], d.kind) for c, a, d in NESTED])
def test_a_damaged_node_inside_a_text_container_stops_the_command(tmp_path: Path, container: Tuple[str, str, int, int],
                                                                   args: List[str], d: Damage, answers: "dict[str, str]") -> None:
    """A text SavedModel's (or MetaGraphDef's) graph_def is a GraphDef: a ``nod {`` in it, a node
    without a name or with a number for one, stops fp and bp where they read it, at the file's own
    line and column, as in a graph.pbtxt; --lenient skips it with one stderr line."""
    kind, name, lines, columns = container
    f = tmp_path / name
    f.write_text(_contained(kind, damaged(d)), encoding="utf-8")
    r = _run(args, f)
    assert r.exit_code == 2, r.stdout
    assert r.stderr.splitlines() == ["%s:%s" % (f, _moved(d.error, lines, columns))]
    r = _run(args, f, "--lenient")
    assert r.exit_code == 0, r.stderr
    assert _names(r.stdout) == _names(answers[args[0]])
    assert "%s: --lenient: skipped 1 block that is no valid node; the first at line %d" % (
        f, int(d.error.split(":")[0]) + lines) in r.stderr, r.stderr


@pytest.mark.parametrize("container", CONTAINERS, ids=lambda c: c[0])
def test_damage_a_container_s_reading_never_meets_leaves_the_answer(tmp_path: Path, container: Tuple[str, str, int, int],
                                                                     answers: "dict[str, str]") -> None:
    """fp stops at its answer: a ``nod {`` after it is never read (check refuses it)."""
    kind, name, lines, _ = container
    f = tmp_path / name
    f.write_text(_contained(kind, damaged(damages(LATE)[0])), encoding="utf-8")
    r = _run(["fp"], f)
    assert r.exit_code == 0 and _names(r.stdout) == _names(answers["fp"]), r.stderr
    r = _run(["check"], f)
    assert r.exit_code == 2 and r.stderr.startswith("%s:%d:" % (f, LATE + lines)) and '"nod"' in r.stderr, r.stderr


# --- a GE dump's graph: a field its graph has not, where its ops are ------------------------------

GE_ONNX = DATA / "ge" / "ge_onnx_00000042_graph_1_Build.pbtxt"
GE_READINGS = [["ge-auto"], ["ge-auto", "--jobs", "2"], ["resolve", "IteratorV2", "--ge"], ["fp"], ["bp"], ["points"]]


def _ge_edited(tmp_path: Path, src: Path, line: int, new: Optional[str], name: str = "") -> Path:
    """``src`` with its line ``line`` (1-based) made ``new`` (None: the block opened there taken out)."""
    lines = src.read_text(encoding="utf-8").split("\n")
    if new is None:
        opener = lines[line - 1]
        end = lines.index(opener[: len(opener) - len(opener.lstrip())] + "}", line)
        del lines[line - 1 : end + 1]
    else:
        lines[line - 1] = new
    f = tmp_path / (name + src.name)
    f.write_text("\n".join(lines), encoding="utf-8")
    return f


def _reading(args: List[str], f: Path, lenient: bool = False) -> "object":
    return _run(args[:1] + (["--lenient"] if lenient else []) + args[1:], f)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--jobs 2`` cuts even these small dumps (at op openers, every 200 bytes or so)."""
    import functools

    from pbtxt_scan.ge import _split

    monkeypatch.setattr(_split, "load", functools.partial(_split.load, split_bytes=200))


@pytest.mark.parametrize("args", GE_READINGS, ids=lambda a: "-".join(a))
def test_a_misspelt_node_in_a_ge_onnx_graph_stops_every_ge_reading(tmp_path: Path, args: List[str], small_chunks: None) -> None:
    """onnx.proto is vendored: ``nod {`` in an ONNX dump's graph is refused, as check refuses it."""
    f = _ge_edited(tmp_path, GE_ONNX, 219, "  nod {")
    r = _reading(args, f)
    assert r.exit_code == 2, r.stdout
    assert r.stderr.splitlines() == ['%s:219:3: Message type "onnx.GraphProto" has no field named "nod". Did you mean "node"? '
                                     "(schema: ONNX 1.23.2)" % f]
    r = _reading(args, f, lenient=True)
    want = _reading(args, _ge_edited(tmp_path, GE_ONNX, 219, None, "cut_"))
    assert (r.exit_code, _lines_less(r.stdout)) == (want.exit_code, _lines_less(want.stdout.replace("cut_", ""))), r.stderr
    assert "%s: --lenient: skipped 1 block that is no valid node; the first at line 219" % f in r.stderr, r.stderr


@pytest.mark.parametrize("args", GE_READINGS, ids=lambda a: "-".join(a))
def test_a_misspelt_op_in_a_ge_proto_graph_is_warned_and_read_past(tmp_path: Path, args: List[str], small_chunks: None) -> None:
    """ge_ir.proto is not vendored: ``opp {`` in a ge_proto graph (a name no GE dump shows there) is
    warned of, once, with a did-you-mean, and the answer is the dump's without that op."""
    f = _ge_edited(tmp_path, GE_DUMP, 47, "  opp {")
    r = _reading(args, f)
    want = _reading(args, _ge_edited(tmp_path, GE_DUMP, 47, None, "cut_"))
    assert (r.exit_code, _lines_less(r.stdout)) == (want.exit_code, _lines_less(want.stdout.replace("cut_", ""))), r.stderr
    warned = [line for line in r.stderr.splitlines() if "warning" in line]
    assert warned == ['%s:47:3: warning: Message type "ge.proto.GraphDef" has no field named "opp". Did you mean "op"? '
                      "(schema: the fields seen in GE's ge_proto dumps; no ge_ir.proto here, so a warning: the file is read on)" % f]


def _lines_less(out: str) -> str:
    """An output less its line numbers (an op taken out moves the ones after it)."""
    import re

    return re.sub(r'line[" :]+\d+|\b\d{2,}\b', "N", out)
