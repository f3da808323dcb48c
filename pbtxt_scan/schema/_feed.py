"""The grammar's tokens fed to a :class:`Checker`: what the general scanner, which sees every token,
gives the validator (the syntax was checked before; this only tells names, values, lists and
messages apart)."""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional, Tuple

from ._check import Checker, Problem

Token = Tuple[str, str, int, int]  # kind, text, line, column: the grammar's terminals (language/)


def check_tokens(tokens: Iterable[Token], checker: Checker, *, decode: Optional[Callable[[str], str]] = None) -> List[Problem]:
    """Feed ``checker`` a syntactically valid message's tokens, as the grammar's lexer names them
    (``IDENT``, ``NUMBER``, ``STRING``, ``NEG``; punctuation by its text), comments and whitespace
    left out; ``decode(literal) -> str`` gives a string literal's value (for the UTF-8 check of
    ``string`` fields). Returns the checker's problems."""
    _Feed(checker, decode).run(iter(tokens))
    return checker.problems


class _Feed:
    """The grammar's shape, enough to tell names, values, lists and messages apart (the syntax
    was checked before): a stack of "this message is an item of a list"."""

    __slots__ = ("checker", "decode", "in_list")

    def __init__(self, checker: Checker, decode: Optional[Callable[[str], str]]) -> None:
        self.checker, self.decode = checker, decode
        self.in_list: List[bool] = []

    def run(self, toks: "Iterable[Token]") -> None:
        c = self.checker
        it = iter(toks)
        look: Optional[Token] = None
        listing = False  # inside a [...] of the field named last
        colon = False
        expect_name = True
        while not c.full:
            tok = look if look is not None else next(it, None)
            look = None
            if tok is None:
                return
            kind, text, line, col = tok
            if expect_name:
                if text in ("}", ">"):
                    c.close()
                    listing = self.in_list.pop() if self.in_list else False
                    expect_name = not listing
                elif text == "[":
                    parts, first = [], tok
                    for t in it:
                        if t[1] == "]":
                            break
                        parts.append(t[1])
                    c.name("[%s]" % "".join(parts), first[2], first[3])
                    expect_name, colon = False, False
                elif kind == "IDENT":
                    c.name(text, line, col)
                    expect_name, colon = False, False
                continue  # (";" and "," between fields)
            if listing:
                if text == "]":
                    c.end_list()
                    listing, expect_name = False, True
                    continue
                if text == ",":
                    continue
            if text == ":":
                colon = True
            elif text in ("{", "<"):
                c.open(line, col, colon)
                self.in_list.append(listing)
                listing, expect_name = False, True
            elif text == "[":
                c.begin_list(line, col, colon)
                listing = True
            else:
                if kind == "NEG":
                    nxt = next(it, None)
                    if nxt is None:
                        return
                    kind, text = nxt[0], "-" + nxt[1]
                decoded = None
                if kind == "STRING":
                    look = next(it, None)
                    literals = [text]
                    while look is not None and look[0] == "STRING":
                        literals.append(look[1])
                        look = next(it, None)
                    if self.decode is not None:
                        decoded = "".join(self.decode(s) for s in literals)
                c.value(kind, text, line, col, decoded=decoded, after=None if look is None else (look[2], look[3]))
                expect_name = not listing
