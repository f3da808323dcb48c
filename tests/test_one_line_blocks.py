"""A block far along one long line (a one-line file: `tr '\\n' ' '` of a graph, or a writer that puts
no newline): its file positions are the file's, and nothing the size of the line is built to say so
(the pad that makes Lark's columns the file's is replaced by a shift past ``PAD_MAX``)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import CliRunner

from pbtxt_scan import PbtxtError
from pbtxt_scan.cli import app
from pbtxt_scan.language import _grammar

DATA = Path(__file__).parent / "data" / "graphs"
runner = CliRunner()


def one_line(tmp_path: Path, stem: str) -> Path:
    p = tmp_path / (stem + "_one_line.pbtxt")
    p.write_bytes((DATA / (stem + ".pbtxt")).read_bytes().replace(b"\n", b" "))
    return p


def last_name(path: Path) -> str:
    r = runner.invoke(app, ["nodes", "--json", str(path)])
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])["name"]


@pytest.mark.parametrize("stem", ["mlp_sgd", "batchnorm_conv"])
def test_show_json_of_a_late_block_on_one_line_has_the_padded_parse_positions(tmp_path: Path, stem: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if not (DATA / (stem + ".pbtxt")).exists():
        pytest.skip("no fixture %s" % stem)
    f = one_line(tmp_path, stem)
    name = last_name(f)
    shifted = runner.invoke(app, ["show", "--json", str(f), name])
    assert shifted.exit_code == 0, shifted.stderr
    column = json.loads(shifted.stdout)["block"]["name"][0]["column"]
    assert column > _grammar.PAD_MAX  # (the case: far along the line)
    monkeypatch.setattr(_grammar, "PAD_MAX", 1 << 40)  # the padded parse, as before
    padded = runner.invoke(app, ["show", "--json", str(f), name])
    assert padded.exit_code == 0, padded.stderr
    assert shifted.stdout == padded.stdout


@pytest.mark.parametrize("text, at", [
    ('node { name: "a" op: }', (1, 22)),  # an error on the first line: its column shifted
    ('node { name: "a"\n  op: }\n', (2, 7)),  # on a later line: as written
    ('node { name: "a" op: "A" attr { key: "x" value { i: 1 } } }', None),
])
@pytest.mark.parametrize("column", [1, 3, 5000, 123456])
def test_parse_at_a_column_gives_the_file_positions(text: str, at: "tuple[int, int] | None", column: int, monkeypatch: pytest.MonkeyPatch) -> None:
    def both() -> "list[object]":
        out = []
        for pad_max in (0, 1 << 40):  # shifted, padded
            monkeypatch.setattr(_grammar, "PAD_MAX", pad_max)
            try:
                out.append(_grammar.parse_text_at(text, 7, column, "f", 1 << 20))
            except PbtxtError as e:
                out.append((str(e), e.line, e.column))
        return out

    shifted, padded = both()
    assert shifted == padded
    if at is not None:
        assert shifted[1:] == (at[0] + 6, at[1] + (column - 1 if at[0] == 1 else 0))  # type: ignore[index]


@pytest.mark.parametrize("command", [["show"], ["show", "--json"]])
def test_show_of_a_late_block_on_a_long_line_prints_the_block_not_the_line(tmp_path: Path, command: "list[str]") -> None:
    # (show printed the node's column in blanks before it, and show --json parsed as many: the
    # line's length; measured on a 40 MB one-line graph in CHANGELOG's entry)
    f = tmp_path / "long_line.pbtxt"
    f.write_bytes(b"".join(b'node { name: "n%06d" op: "Const" } ' % i for i in range(40000)))  # 1.5 MB, one line
    r = runner.invoke(app, command + [str(f), "n039999"])
    assert r.exit_code == 0, r.stderr
    assert "n039999" in r.stdout and len(r.stdout) < 1000, r.stdout[:200]


@pytest.mark.parametrize("args", [["fp", "{f}"], ["bp", "{f}"], ["points", "--json", "{f}"], ["show", "--json", "{f}", "dense/MatMul"],
                                  ["show", "{f}", "no/such/node"], ["show", "--context", "1", "{f}", "dense/MatMul"], ["nodes", "--count", "{f}"]])
def test_a_file_whose_first_line_is_long_is_not_searched_by_grep_and_answers_alike(tmp_path: Path, args: "list[str]",
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # grep holds a line whole, and a hit's line (its -o text) may be the whole file: on a file whose
    # first line runs past LONG_LINE (a one-line file) the lanes read blocks instead. The answers are
    # those the search gives (LONG_LINE lowered here, so a small file is such a file).
    from pbtxt_scan.parallel import _grep
    from pbtxt_scan.text import _lane

    f = one_line(tmp_path, "mlp_sgd")
    argv = [a.format(f=f) for a in args]
    searched = runner.invoke(app, argv)
    monkeypatch.setattr(_lane, "LONG_LINE", 1000)

    def no_grep(*a: object, **k: object) -> None:
        raise AssertionError("grep started on a one-line file: %r" % (a,))

    monkeypatch.setattr(_grep, "spawn", no_grep)
    read = runner.invoke(app, argv)
    assert (read.exit_code, read.stdout, read.stderr) == (searched.exit_code, searched.stdout, searched.stderr)
