"""The text lane: protobuf text format (``graph.pbtxt``, GE dumps) read in place.

A block's bytes are the file's own, at its offsets and lines: forward through the canonical fast
path (``_canonical``, the general scanner when the layout is another), one block again through the
general scanner (``_scan``), backward through ``_backward``. The protocol is
:class:`pbtxt_scan.source._lane.Lane`.
"""
from __future__ import annotations

import functools
import re
from typing import Any, BinaryIO, Callable, Dict, FrozenSet, Generator, Iterable, Iterator, List, Optional, Sequence, cast

from .._errors import PbtxtError
from .._model import Block, Message
from ..source._lane import PARSE_MAX, Ahead, Found, Lane, Named, NameQuery, Near
from ._strict import TopFields, top_fields
from ..source._views import Prefixed


LONG_LINE = 1 << 20  # a first line longer than this: no byte search (grep) on the file


class TextLane(Lane):
    """Blocks of protobuf text format, read through the byte store ``store``."""

    kind = None
    text = True

    def __init__(self, store: Any, dialect_of: Any) -> None:
        """``dialect_of(head bytes)``: the dialect of a text input (the graph layer's detection)."""
        super().__init__(store)
        self._dialect_of = dialect_of
        self._dialect: Any = None
        self._searchable: Optional[bool] = None

    @property
    def searchable(self) -> bool:  # type: ignore[override]
        """Whether grep may search the file: not where its first line runs past ``LONG_LINE`` (a
        one-line file), since grep holds a line whole, and a hit's line may be the file."""
        if self._searchable is None:
            head = self.store.head(LONG_LINE + 1)
            self._searchable = len(head) <= LONG_LINE or b"\n" in head
        return self._searchable

    @property
    def dialect(self) -> Any:
        if self._dialect is None:
            self._dialect = self._dialect_of(self.store.head())
        return self._dialect

    def forward(
        self,
        block_path: Sequence[str],
        heads: FrozenSet[str],
        *,
        chunk_size: int,
        end_state: Optional[Dict[str, Any]],
        validate: bool,
        schema: int = 0,
    ) -> Generator[Block, None, None]:
        from ._canonical import scan_canonical

        # ``validate=False``: the escapes of a string over a MiB on a line of its own are left
        # unread, as a binary graph's skipped fields are (``_strings.StringLines._body_ends``);
        # every other byte is checked down to its last value either way. Then too a top-level
        # field the graph has not is refused (or skipped, lenient: ``_strict``); validating
        # (``check``, ``stats``), or with the schema checked (``nodes``), the schema's own check words it.
        watch = self.watch(schema)
        return scan_canonical(
            self.store.reader(), tuple(block_path), heads, chunk_size=chunk_size, display=self.store.name,
            end_state=end_state, validate=validate, watch=watch,
            top=None if validate or watch is not None else self.top_fields(block_path),
        )

    def watch(self, limit: int) -> Any:
        """The schema check of a whole-file reader: the file's message by what it is (a GraphDef,
        a GE dump's onnx.ModelProto; a ge_proto dump, whose schema is not vendored: its field
        names against those seen in GE's dumps, a name not seen warned of in the input's notes)."""
        if not limit:
            return None
        from ._schema import Watch

        if self.dialect.name == "ge_proto":
            from ..schema import SeenNames

            return Watch("", limit=limit, display=self.store.name, checker=cast(Any, SeenNames(self._warn)))
        root = self.schema_root()
        return None if root is None else Watch(root, limit=limit, display=self.store.name)

    def _warn(self, line: int, column: int, message: str) -> None:
        """A warning of the schema check (a ge_proto dump's field not seen): a note of the input."""
        on_note = getattr(self.store, "on_note", None)
        if on_note is not None:
            on_note(str(PbtxtError(message, line, column, self.store.name)))

    def schema_root(self) -> Optional[str]:
        return _ROOTS.get(self.dialect.name)

    def top_fields(self, block_path: Sequence[str]) -> Optional[TopFields]:
        """The check of the top-level fields met reading ``block_path`` (``_strict``)."""
        return top_fields(block_path, self.store, self.dialect)

    def read(self, block: Block) -> bytes:
        return self.store.read_at(block.start, block.end - block.start)

    def rescan(self, block: Block, heads: FrozenSet[str]) -> List[Block]:
        store = self.store
        if block.column == 1 and store.read_at(block.start, len(block.path[-1]) + 3) == block.path[-1].encode() + b" {\n":
            got = self._rescan_canonical(block, heads)
            if got is not None:
                return got
        src: BinaryIO = store.reader(block.start, block.end)
        at = block.start
        field = block.path[-1]
        if store.read_at(block.start, 1) in (b"{", b"<"):
            # An item of a [...] list starts at its "{": give it a field name so it scans alone.
            prefix = field.encode() + b" "
            src = cast(BinaryIO, Prefixed(prefix, src))  # (an io.RawIOBase: a binary file to the scanner)
            at -= len(prefix)
        from ._scan import scan  # (the general scanner: a block out of the writer layout)

        try:
            got = list(scan(src, (field,), heads, start_offset=at, start_line=block.line, display=store.name))
        except PbtxtError:
            return []
        return [b._replace(path=block.path, start=block.start, line=block.line, column=block.column) for b in got]

    def _rescan_canonical(self, block: Block, heads: FrozenSet[str]) -> Optional[List[Block]]:
        """A top-level block in the writer's layout, through the canonical fast path: a node with
        150,000 ``input:`` lines (an optimizer's group NoOp) in 0.3 s, where the general scanner
        takes 8. ``None`` where the fast path does not take it (the general scanner decides)."""
        from . import _layout as layout
        from ._canonical import scan_canonical

        size = block.end - block.start
        # (a small block is walked line by line: building the batch patterns costs more than it saves)
        warm_up = None if layout.warm() or size > 1 << 20 else size
        try:
            # (with the byte after its "}": the newline that ends its last line, and the walk with it; the
            # general scanner, and its lexer's regex to build, is left the rare block without one)
            got = list(scan_canonical(
                self.store.reader(block.start, block.end + 1), (block.path[-1],), heads, start_offset=block.start,
                start_line=block.line, display=self.store.name, warm_up=warm_up,
            ))
        except PbtxtError:
            return None
        if len(got) != 1 or got[0].end != block.end:
            return None
        return [got[0]._replace(path=block.path, line=block.line, column=block.column)]

    def parse(self, block: Block, max_bytes: int = PARSE_MAX) -> Message:
        """Positions are those of the file."""
        size = block.end - block.start
        if size > max_bytes:  # (the caller's bound on what it reads)
            raise self._too_big(block, size, max_bytes)
        raw = self.read(block)
        if block.column % 2 and not raw.startswith((b"{", b"<")):
            # In the writer layout the lines alone give the tree: no Lark parser to build.
            from ._layout import read_block

            msg = read_block(raw, block.column // 2, block.line)
            if msg is not None:
                return msg
        from ..language._grammar import parse_text_at  # (the grammar's parse: a block out of the writer layout)

        text = raw.decode("utf-8", "surrogateescape")
        column = block.column  # (keep columns true on the first line)
        if text.startswith(("{", "<")):  # an item of a [..] list has no field name of its own
            text = block.path[-1] + " " + text
            column = 1
        # Lark's own bound: the text less its long strings (a tensor_content is one token to it)
        msg = parse_text_at(text, block.line, column, self.store.name, min(max_bytes, PARSE_MAX))
        if msg is None:
            raise self._too_big(block, size, min(max_bytes, PARSE_MAX))
        return msg

    def _too_big(self, block: Block, size: int, limit: int) -> PbtxtError:
        return PbtxtError(
            "block is %.1f MB, over the %.1f MB limit for a full parse (the grammar's parse takes about 50 bytes of "
            "memory per byte of text)" % (size / (1 << 20), limit / (1 << 20)),
            block.line,
            block.column,
            self.store.name,
        )

    def backward(self, block_path: Sequence[str], heads: FrozenSet[str], cache: Any) -> Generator[Block, None, None]:
        from ._backward import reverse_blocks

        return reverse_blocks(self, tuple(block_path), heads, cache)

    # --- the rules' shortcuts, on text (``_needles``) -----------------------------

    def lines_of(self, offsets: Iterable[int]) -> Dict[int, int]:
        """The line of each byte offset: one count of the newlines before the last (once a
        neighbourhood, where grep -n would count them on every hop)."""
        out: Dict[int, int] = {}
        pos, line = 0, 1
        read_at = self.store.read_at
        for off in sorted(set(offsets)):
            while pos < off:
                k = min(1 << 20, off - pos)
                line += read_at(pos, k).count(b"\n")
                pos += k
            out[off] = line
        return out

    def ahead(self, ops: FrozenSet[str], op_words: Sequence[str], name_words: Sequence[str]) -> Optional[Ahead]:
        """A ``grep -E`` for the words (ops are searched by a word each holds), each hit judged by
        its line (``_needles``)."""
        from ._needles import text_ahead

        return text_ahead(self.store, op_words, name_words)

    def inputs_naming(self, block: Block, raw: bytes, word: bytes, *, every: bool) -> Optional[List[str]]:
        """In the writer layout, its ``input`` lines, taken only when they are all the block's
        inputs: every ``input`` in its bytes is one of those lines (an input field's name is always
        written plainly), and no value is escaped. A line taken that is not an input (another
        layout) only keeps more nodes live, the answer reading gradients scopes alone."""
        if b"input" not in raw or not (every or self.may_name(raw, word)):
            return []
        if block.column > _DEEPEST_OPENER:
            return None  # (no writer layout: a one-line file's block, far along its line)
        found = _input_lines(block.column).findall(raw)
        if len(found) != raw.count(b"input"):
            return None
        return [v.decode("utf-8", "surrogateescape") for v in found]

    def may_hold(self, raw: bytes, field: bytes) -> bool:
        return field in raw  # (a field's name is always written plainly)

    def may_name(self, raw: bytes, word: bytes) -> bool:
        """``word`` plainly, an escape (a letter of it escaped: a backslash), or a literal split
        inside it (``"gradi" "ents/x"``: a piece ending in a proper prefix of the word, then its
        quote). Three cheap searches (``in`` and a regex with a literal first byte) rather than
        one alternation."""
        return word in raw or b"\\" in raw or _split_in(word).search(raw) is not None

    def find_blocks(
        self, path: Sequence[str], centre: Optional[Block] = None, *, upto: Optional[int] = None,
        known: Optional[Callable[[int], bool]] = None, first: bool = False, cache: Any = None, since: int = 0,
    ) -> Optional[Found]:
        """A fixed-string grep for the names, each hit placed at its block by the writer's layout
        around it (``_hood``); none in a stream, or where the layout is another at the centre."""
        import shutil

        from ._hood import hood_blocks

        if not self.searchable or not self.store.regular:
            return None
        grep = shutil.which("grep")
        if grep is None:
            return None
        # (``first``: each hit as it is found: the search stops at the node, not at the file's end)
        opts = ("-F", "--line-buffered") if first else ("-F",)
        return hood_blocks(self.store, grep, tuple(path), centre, upto=upto, known=known, opts=opts, since=since)

    def find_named(self, query: NameQuery, *, cache: Any = None) -> Optional[Iterator[Named]]:
        """One ``grep -E`` for the name lines that matter and every name spelt otherwise, each
        node placed by the writer's layout (``_named``); none in a stream, a nested graph, a GE dump."""
        import shutil

        from ._named import named_blocks

        if not self.searchable or not self.store.regular or tuple(self.dialect.path) != ("node",):
            return None
        grep = shutil.which("grep")
        if grep is None:
            return None
        return named_blocks(self.store, grep, query)

    def read_near(
        self, lo: int, hi: int, at: int, heads: FrozenSet[str], *, inside: Callable[[int, int], bool], cache: Any = None,
    ) -> Optional[Near]:
        """Column-0 nodes in the writer's layout, between the openers and closers nearest the
        window's ends (``_hood``)."""
        from ._hood import read_near

        if not self.searchable or not self.store.regular:
            return None
        return read_near(self.store, lo, hi, at, heads, inside)


_ROOTS = {"graphdef": "tensorflow.GraphDef", "function": "tensorflow.GraphDef", "ge_onnx": "onnx.ModelProto"}


@functools.lru_cache(maxsize=None)
def _split_in(word: bytes) -> "re.Pattern[bytes]":
    """A literal split inside ``word``: a proper prefix of it, then a quote
    (``g(?:r(?:a...)?)?["']`` for ``gradient``)."""
    rx = b""
    for ch in reversed(word[1:-1]):
        rx = b"(?:" + re.escape(bytes([ch])) + rx + b")?"
    return re.compile(re.escape(word[:1]) + rx + b"[\"']")


# The writer layout indents two spaces a level, and a node block is a few levels deep at most (a
# function's node_def: 5): a block whose column is past this one is on a line of other fields.
_DEEPEST_OPENER = 17


@functools.lru_cache(maxsize=None)
def _input_lines(column: int) -> "re.Pattern[bytes]":
    indent = b" " * (column + 1)  # (one level in from the block's field name)
    return re.compile(rb"^" + indent + rb'input: "([^"\\\n]*)"$', re.M)
