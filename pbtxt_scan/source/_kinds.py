"""What a file is when it is not a graph, told by its first bytes (and, for a checkpoint's data
files, its name): :func:`not_a_graph` gives the one-line message that says what the file is and
what to give instead.

An event file is no such file: :func:`is_event_file` tells it, and ``graph._input`` reads the graph
in it. Asked only after the binary graphs and event files were told apart (``wire._binary.sniff``), on the bytes the
input already holds (its first 64 KiB): nothing more is read, so a stream is not held up and a
big file costs nothing. Each test here looks for a structure no graph has (a TFRecord frame whose
length checksum holds, an image's magic number, UTF-16's zero bytes, a checkpoint's own field
names), so a real graph never matches one (``tests/test_input_kinds.py`` runs every fixture
through it).
"""
from __future__ import annotations

import os
import re
import struct
from typing import Optional, Tuple

from .._kit import regex
from ._source import BOM, looks_binary

GIVE = "give a graph.pbtxt, a binary graph (.pb, .meta, saved_model.pb), a TensorBoard event file, a SavedModel, model_dir or logs folder, or a GE dump"

# Magic numbers of files people pass by mistake: (prefix, what it is).
_MAGIC: Tuple[Tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "an image (PNG)"),
    (b"\xff\xd8\xff", "an image (JPEG)"),
    (b"GIF87a", "an image (GIF)"),
    (b"GIF89a", "an image (GIF)"),
    (b"II*\x00", "an image (TIFF)"),
    (b"MM\x00*", "an image (TIFF)"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file (a Keras .h5 model or weights)"),
    (b"PK\x03\x04", "a zip archive (a Keras .keras model, or a folder zipped: unpack it first)"),
    (b"%PDF-", "a PDF document"),
)

_DATA_FILE = regex(r"\.data-[0-9]+-of-[0-9]+$")
_FIELD_START = re.compile(rb"\A(?:\s|#[^\n]*(?:\n|\Z))*")
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_AFTER_IDENT = re.compile(rb"(?:[ \t\r\n]|#[^\n]*\n)*")
# Starts of text that is no protobuf text at all: a docstring, XML/HTML, a JSON object or list.
_PROSE_START = regex(rb'''"""|\'\'\'|<[?!a-zA-Z]|\{\s*"|\[\s*[{"]''')
_CKPT_PATH = regex(rb'model_checkpoint_path\s*:\s*"((?:[^"\\\n]|\\.)*)"')


def not_a_graph(head: bytes, *, complete: bool, name: str) -> Optional[str]:
    """Why a file that starts with ``head`` is no graph this tool reads, or ``None`` if it may be
    one. ``complete``: ``head`` is the whole file. ``name``: its path (``<stdin>`` for stdin)."""
    base = os.path.basename(name)
    data_file = _DATA_FILE.search(base)
    if (data_file or base.endswith(".index")) and (not head or looks_binary(head[:4096])):
        stem = base[: data_file.start()] if data_file else base[: -len(".index")]
        return ("this is a checkpoint's %s file (%s), not a graph: give %s.meta, the graph "
                "saved beside it" % ("data" if data_file else "index", "the variables' values" if data_file else "where each variable's values are", stem or "the checkpoint's"))
    if not head:
        return "%s is empty: there is no graph in it; %s" % ("stdin" if name == "<stdin>" else "the file", GIVE)
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return "this is %s, not a graph: %s" % (what, GIVE)
    tfrecord = _tfrecord(head)
    if tfrecord:
        return tfrecord
    if _utf16(head):
        return ("this is UTF-16 text; pbtxt-scan reads UTF-8: convert it first "
                "(iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.pbtxt)")
    why = looks_binary(head[:4096])
    if why:
        return why
    return _text_kind(head[len(BOM):] if head.startswith(BOM) else head, complete)


def _text_kind(head: bytes, complete: bool) -> Optional[str]:
    """Text that is no graph: nothing but comments, a checkpoint's ``checkpoint`` file, or no
    protobuf text at all (Markdown, Python: a first word not followed by ``:``, ``{`` or ``<``; a
    docstring, XML, JSON). A start that is protobuf text gone wrong is left to the scanner."""
    start = _FIELD_START.match(head)
    i = start.end() if start is not None else 0  # (it matches everywhere: `*` of comments and blanks)
    if i >= len(head):
        if complete:
            what = "has only comments and blank lines" if head.strip() else "is blank"
            return "the file %s: there is no graph in it; %s" % (what, GIVE)
        return None  # a long comment header: the fields come later
    m = _IDENT.match(head, i)
    if m is not None and m.group() in (b"model_checkpoint_path", b"all_model_checkpoint_paths"):
        ckpt = _CKPT_PATH.search(head)
        meta = (os.path.basename(ckpt.group(1).decode("utf-8", "replace")) + ".meta") if ckpt else "the newest model.ckpt-N.meta"
        return ("this is a checkpoint's 'checkpoint' file (it names the newest checkpoint), not a graph: give %s, "
                "or the folder it is in" % meta)
    if m is not None:
        gap = _AFTER_IDENT.match(head, m.end())
        j = gap.end() if gap is not None else m.end()  # (it matches everywhere, as _FIELD_START)
        if j >= len(head) or head[j : j + 1] in (b":", b"{", b"<", b"["):
            return None  # `node {`, `name: "x"`, `graph <`, `node [`: protobuf text
    elif not _PROSE_START.match(head, i):
        return None  # `{`, `}`, `[ext]`...: protobuf text or near it; the scanner says where it goes wrong
    line_start = head.rfind(b"\n", 0, i) + 1
    line_end = head.find(b"\n", i)
    first = head[line_start : line_end if line_end >= 0 else len(head)].strip()
    shown = first[:60].decode("utf-8", "replace") + ("..." if len(first) > 60 else "")
    return "this does not look like a graph: it is not protobuf text format (it starts with %r); %s" % (shown, GIVE)


def _utf16(head: bytes) -> bool:
    """UTF-16 text: a byte-order mark, or ASCII with a zero byte beside every character."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) and len(head) >= 4:
        return True
    sample = head[:512]
    if len(sample) < 16:
        return False
    even, odd = sample[0::2], sample[1::2]
    for chars, zeros in ((even, odd), (odd, even)):  # little-endian, big-endian
        if zeros.count(0) >= 0.9 * len(zeros) and sum(1 for c in chars if 9 <= c < 127) >= 0.9 * len(chars):
            return True
    return False


def is_event_file(head: bytes) -> bool:
    """Whether ``head`` starts a TensorBoard event file: a TFRecord frame whose length checksum
    holds and whose first Event names its ``file_version`` (``brain.Event:N``)."""
    return _framed(head) and b"brain.Event:" in head[12:12 + 64]


def _framed(head: bytes) -> bool:
    """A TFRecord frame's start: a little-endian u64 length and the masked CRC-32C of those 8 bytes."""
    if len(head) < 12:
        return False
    length, crc = struct.unpack_from("<QI", head)
    if length >> 48:  # (no record is 256 TB: text's first bytes read so; its CRC tables never built)
        return False
    from ._crc32c import masked_crc32c

    return masked_crc32c(head[:8]) == crc


def _tfrecord(head: bytes) -> Optional[str]:
    """A TFRecord file that is no event file (records of training data). (Event files are told
    apart before this is asked: ``graph._input`` reads them.)"""
    if not _framed(head) or is_event_file(head):
        return None
    return "this is a TFRecord file (records of training data, not a graph): %s" % GIVE
