"""The nodes a command reads, each a valid node or refused in ``check``'s words (or, lenient, skipped).

fp, bp, show and the GE commands read a node's heads only (its name, op, inputs): a node
without a name or an op (``nme:`` misspelt, the line lost), or whose name is no string
(``name: 5``), would otherwise be read as a node named ``None`` or ``5``. Every block read
forward (:meth:`GraphFile.blocks`) or backward (``_reverse``) passes :func:`checked`, which looks
at the two heads the reader took anyway; the rare block that fails is explained by the schema's
validator (text: the first problem ``check`` finds in it, at its line and column; else the
missing field) and refused, or skipped and counted (``GraphFile.strict``, ``--lenient``).
"""
from __future__ import annotations

from typing import Any, Dict, FrozenSet, Iterator, Optional, Tuple

from .._errors import PbtxtError
from .._model import FUNCTION_NODES, Bare, Block

# A block's op head and its message type, by the field that holds its op
OP_HEADS = {"op": "tensorflow.NodeDef", "type": "ge.proto.OpDef", "op_type": "onnx.NodeProto"}
# The message holding the blocks read at a path (the schema's validator reads a block as its field)
_HOLDERS: Dict[Tuple[str, ...], str] = {
    ("node",): "tensorflow.GraphDef", FUNCTION_NODES: "tensorflow.FunctionDef", ("graph", "node"): "onnx.GraphProto",
}
_EXPLAIN_MAX = 2 << 20  # a block explained by the validator is read whole: bounded (else: the missing field)


def op_head(heads: FrozenSet[str]) -> str:
    """The head a dialect reads its op from (``op``, ``type``, ``op_type``) among ``heads``."""
    for h in OP_HEADS:
        if h in heads:
            return h
    return "op"


def is_node(b: Block, op: str) -> bool:
    """Whether ``b`` (read with heads ``name`` and ``op``) is a valid node (what :func:`checked` lets pass)."""
    name, kind = b.head("name"), b.head(op)
    return bool(name and kind) and type(name) is not Bare and type(kind) is not Bare


def checked(g: Any, blocks: Iterator[Block], op: str) -> Iterator[Block]:
    """``blocks`` (read with heads ``name`` and ``op``), each a valid node, else refused or skipped."""
    refuse = g.strict.refuse
    for b in blocks:
        hs = b.heads
        # (the writer's order, name then op, first: the rest only for a block that fails it)
        name: Optional[str]
        kind: Optional[str]
        if len(hs) > 1 and hs[0].name == "name" and hs[1].name == op:
            name, kind = hs[0].value, hs[1].value
        else:
            name, kind = b.head("name"), b.head(op)
        if name and kind and type(name) is not Bare and type(kind) is not Bare:
            yield b
            continue
        refuse(why(g, b, op), b.start)


def check_one(g: Any, b: Block, op: str = "op", *, recount: bool = False) -> Optional[Block]:
    """One block read apart (a neighbourhood's, found by a byte search or read near a node): itself
    if a valid node; else refused, or (lenient) None. ``recount``: its line is not the file's (a
    search's block): counted for the error."""
    if is_node(b, op):
        return b
    if recount and b.line:
        b = b._replace(line=g.lane.lines_of([b.start]).get(b.start, b.line))
    g.strict.refuse(why(g, b, op), b.start)
    return None


def why(g: Any, b: Block, op: str) -> PbtxtError:
    """The error of a block that is no valid node: on text, the first problem the schema's
    validator finds in it (``nme:`` misspelt: that field, as ``check`` words it); else its name or
    op missing or no string."""
    found = _problem(g, b) if b.line else None
    if found is not None:
        return found
    for field in ("name", op):
        value = b.head(field)
        if type(value) is Bare:
            from ..schema import not_string

            return PbtxtError(not_string(value), b.head_line(field) or b.line, None, g.name)  # (a block too big to explain)
    from ..schema import missing_field

    field = "name" if not b.head("name") else op
    return _at(g, b, missing_field(OP_HEADS.get(op, "tensorflow.NodeDef"), field))


def _at(g: Any, b: Block, msg: str) -> PbtxtError:
    if b.line:
        return PbtxtError(msg, b.line, b.column, g.name)
    return PbtxtError(msg, path=g.name, offset=b.start)


def _problem(g: Any, b: Block) -> Optional[PbtxtError]:
    """The first schema problem in a text block (read whole: at most ``_EXPLAIN_MAX``), or None."""
    holder = _HOLDERS.get(tuple(b.path))
    if holder is None or b.end - b.start > _EXPLAIN_MAX:
        return None
    from ..language._grammar import _lark, string_value
    from ..schema import Checker, check_tokens

    text = g.read(b).decode("utf-8", "surrogateescape")
    if text.startswith(("{", "<")):  # (an item of a [...] list: its field's name first)
        text = b.path[-1] + " " + text
    shift = b.column - 1  # (the first line's columns: the file's, with no pad as long as a one-line file)
    try:
        toks = [(t.type, str(t), t.line + b.line - 1, t.column + (shift if t.line == 1 else 0)) for t in _lark(False).lex(text)
                if t.type not in ("WS", "COMMENT")]
        problems = check_tokens(toks, Checker(holder, limit=1), decode=string_value)
    except Exception:  # (the block was validated as read: a lexer's surprise only loses the explanation)
        return None
    if not problems:
        return None
    p = problems[0]
    return PbtxtError(p.message, p.line, p.column, g.name)
