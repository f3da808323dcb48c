"""What a command says, and where: results on stdout (one per line, or JSON), notes and errors on
stderr through a :class:`Console` (under ``--json`` an error is also one JSON line on stdout), and
the exit codes. A closed pipe or a full disk is never a traceback.

Exit codes: 0 found / valid, 1 looked and found nothing, 2 usage error or unreadable / invalid input
(or stdout cannot be written), 130 interrupted, 143 terminated (SIGTERM).
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, Optional, Sequence

import typer

from .._kit import NamedTuple
from .. import PbtxtError

EXIT_NOT_FOUND = 1
EXIT_BAD_INPUT = 2


class Console(NamedTuple):
    """How a command speaks, decided once per run from its options and passed down: ``json``
    (--json, or --format json: errors also come as one JSON line on stdout), ``quiet`` (--quiet:
    no notes on stderr)."""

    json: bool = False
    quiet: bool = False

    def note(self, text: str) -> None:
        """A note on stderr (which file was read, a renamed point, an ambiguous answer): none under --quiet."""
        if not self.quiet:
            typer.echo(text, err=True)

    def notes(self, g: Any, more: Sequence[str] = ()) -> None:
        """An input's notes (``g.notes``: which file of a folder, which record of an event file, which
        MetaGraph of a SavedModel is read), then the command's own ``more``, on stderr: said once, when
        the command has its result (a failure is one line on stderr)."""
        for text in g.notes + tuple(more):
            self.note(text)
        if g.unchecked:  # (an event file's graph record whose CRC was not checked: check and stats check it)
            self.note(g.unchecked)

    def error(self, err: PbtxtError) -> None:
        """The one-line message on stderr, and under ``--json`` the same error as one JSON line on stdout
        (``check --all``'s list of schema errors: a line each, then how many more were not listed)."""
        for e in getattr(err, "errors", None) or [err]:
            typer.echo(str(e), err=True)
            if self.json:
                emit(error_object(e.msg, e.path, e.line, e.column, e.offset))
        more = getattr(err, "more", 0)
        if more:
            typer.echo("%s: and %d more schema error%s" % (err.path or "<input>", more, "" if more == 1 else "s"), err=True)

    def fail(self, err: PbtxtError) -> "typer.Exit":
        """:meth:`error`; ``raise con.fail(e)`` exits 2."""
        self.error(err)
        return typer.Exit(EXIT_BAD_INPUT)

    def failed(self, err: PbtxtError) -> int:
        """One file's error, said as :meth:`fail` says it, while the other files go on: its exit code."""
        return self.fail(err).exit_code

    def usage(self, err: Any) -> None:
        """A usage error (click's, raised before or in the command): under ``--json`` also one JSON
        line on stdout (click writes the stderr lines)."""
        if self.json:
            emit(error_object(err.format_message()))


# --- stdout ----------------------------------------------------------------------------------------


def error_object(message: str, file: Optional[str] = None, line: Optional[int] = None,
                 column: Optional[int] = None, offset: Optional[int] = None) -> Dict[str, Any]:
    """An error as JSON (docs/json.md, ``error``)."""
    return {"error": message, "file": file, "line": line, "column": column, "offset": offset}


_dumps: Optional[Callable[..., str]] = None  # (json.dumps: json loads with the first object, not at start)


def emit(obj: Any) -> None:
    """One JSON object on one line of stdout."""
    global _dumps
    if _dumps is None:
        import json

        _dumps = json.dumps
    out(_dumps(obj, ensure_ascii=False))


def out(line: str, end: str = "\n") -> None:
    """``line`` and ``end`` on stdout (``end``: NUL for ``-z``)."""
    try:
        try:
            sys.stdout.write(line + end)
        except UnicodeEncodeError:
            # A name that was not UTF-8 in the file (escapes such as "\345\236" are kept as
            # surrogates when read), or a terminal that cannot show a character: backslash
            # escapes (in JSON, valid \u escapes), never a traceback.
            enc = getattr(sys.stdout, "encoding", None) or "utf-8"
            sys.stdout.write((line + end).encode(enc, "backslashreplace").decode(enc))
    except BrokenPipeError:  # `| head` has read enough: stop quietly, successfully
        quiet_stdout()
        raise typer.Exit(0) from None
    except OSError as e:  # a full disk, an I/O error: the results are lost, and the caller must know
        raise typer.Exit(unwritable(e)) from None


def plural(n: int, word: str) -> str:
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


LISTED = 5  # a list of candidates on stderr (dumps, functions, names): this many, then "and N more"


def listed(names: Any) -> str:
    """``a, b, c, d, e, and 7 more``: a stderr line stays a line however many candidates there are."""
    names = list(names)
    more = len(names) - LISTED
    return ", ".join(names[:LISTED]) + (", and %d more" % more if more > 0 else "")


def unwritable(e: OSError) -> int:
    """stdout cannot be written (a full disk, an I/O error; not a closed pipe): one line on stderr,
    stdout pointed at /dev/null (the interpreter's final flush must not fail a second time), and
    the exit code (2: the environment is at fault, and what was found is not all written)."""
    sys.stderr.write("<stdout>: cannot write the output: %s\n" % (e.strerror or e))
    quiet_stdout()
    return EXIT_BAD_INPUT


def quiet_stdout() -> None:
    # The reader went away (`| head`): point stdout at /dev/null so the interpreter's final flush
    # does not print a second error.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
