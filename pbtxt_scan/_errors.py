"""The one public error type."""
from __future__ import annotations

from typing import Optional


class PbtxtError(ValueError):
    """Bad input: a syntax error, an unreadable file, or a file that is not text format.

    ``str(err)`` is the one-line ``FILE:LINE:COL: message`` the CLI prints; ``line`` and ``column``
    are 1-based (``None`` where no position exists, e.g. a missing file). An error in a binary
    graph (wire format: no lines) has a byte ``offset`` instead and reads ``FILE:offset N: message``.
    """

    def __init__(
        self,
        msg: str,
        line: Optional[int] = None,
        column: Optional[int] = None,
        path: Optional[str] = None,
        offset: Optional[int] = None,
    ) -> None:
        self.msg = msg
        self.line = line
        self.column = column
        self.path = path
        self.offset = offset
        super().__init__(str(self))

    def __str__(self) -> str:
        where = [self.path or "<input>"]
        if self.line is not None:
            where.append(str(self.line))
            if self.column is not None:
                where.append(str(self.column))
        elif self.offset is not None:
            where.append("offset %d" % self.offset)
        return ":".join(where) + ": " + self.msg

    def with_path(self, path: str) -> "PbtxtError":
        """The same error, naming ``path`` (errors are raised deep down, where the path is unknown)."""
        if self.path is None:
            self.path = path
            self.args = (str(self),)
        return self


class IncompleteInputError(PbtxtError):
    """The input ended inside a block, a string or a list: typically a file cut off mid-write."""


class SchemaErrors(PbtxtError):
    """Every schema error of a file (``check --all``), in file order, at most a cap of them: ``errors``
    (each a :class:`PbtxtError`; the last may be the syntax error that ended the reading) and
    ``more``, how many were left out past the cap. ``str(err)`` is the first one's line."""

    def __init__(self, errors: "list[PbtxtError]", more: int = 0) -> None:
        first = errors[0]
        self.errors = list(errors)
        self.more = more
        super().__init__(first.msg, first.line, first.column, first.path, first.offset)

    def with_path(self, path: str) -> "PbtxtError":
        for e in self.errors:
            e.with_path(path)
        return super().with_path(path)

    def lines(self) -> "list[str]":
        """What the CLI prints: one line an error, then ``FILE: and N more schema errors``."""
        out = [str(e) for e in self.errors]
        if self.more:
            out.append("%s: and %d more schema error%s" % (self.path or "<input>", self.more, "" if self.more == 1 else "s"))
        return out
