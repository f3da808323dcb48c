#!/usr/bin/env python3
"""Print where the expected fp/bp nodes sit in the binary twins (tests/data/binary/).

Maintainer tool, pure Python (no TensorFlow, no protobuf): a minimal walk of the
protobuf wire format over the field numbers listed in tests/data/README.md
(## binary/). For every twin it prints, for the fp and the bp of the text twin's
``expected.json``, the byte offset of the NodeDef record: the offset of its tag
byte (``0x0a`` for ``GraphDef.node`` = 1, ``0x1a`` for ``FunctionDef.node_def`` = 3)
and of its first payload byte, both from the start of the (decompressed) file.

    python3 tools/binary_offsets.py            # the table used in the README
"""

import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, os.pardir, "tests", "data")


def varint(b, i):
    shift = result = 0
    while True:
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        if c < 0x80:
            return result, i
        shift += 7


def fields(b, start, end):
    """Yield (field_number, wire_type, tag_offset, payload_start, payload_end_or_value)."""
    i = start
    while i < end:
        tag_at = i
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
            yield num, wt, tag_at, None, v
        elif wt == 1:
            yield num, wt, tag_at, i, i + 8
            i += 8
        elif wt == 5:
            yield num, wt, tag_at, i, i + 4
            i += 4
        elif wt == 2:
            n, i = varint(b, i)
            yield num, wt, tag_at, i, i + n
            i += n
        else:
            raise ValueError("wire type %d at %d" % (wt, tag_at))
    if i != end:
        raise ValueError("overrun")


def node_name(b, s, e):
    for num, wt, _, ps, pe in fields(b, s, e):
        if num == 1 and wt == 2:
            return b[ps:pe].decode("utf-8")
    return None


def graph_nodes(b, s, e):
    """(function or None, name, tag_offset, payload_offset) for every node of a GraphDef."""
    for num, wt, tag, ps, pe in fields(b, s, e):
        if num == 1 and wt == 2:  # GraphDef.node
            yield None, node_name(b, ps, pe), tag, ps
        elif num == 2 and wt == 2:  # GraphDef.library
            for fnum, fwt, _, fps, fpe in fields(b, ps, pe):
                if fnum != 1 or fwt != 2:  # FunctionDefLibrary.function
                    continue
                fname = None
                for num2, wt2, tag2, ps2, pe2 in fields(b, fps, fpe):
                    if num2 == 1 and wt2 == 2:  # FunctionDef.signature (OpDef.name = 1)
                        fname = node_name(b, ps2, pe2)
                    elif num2 == 3 and wt2 == 2:  # FunctionDef.node_def
                        yield fname, node_name(b, ps2, pe2), tag2, ps2


def graph_defs(path):
    """(label, bytes, start, end) of each GraphDef in a .pb / .meta / saved_model.pb."""
    b = open(path, "rb").read()
    if b[:2] == b"\x1f\x8b":
        b = gzip.decompress(b)
    base = os.path.basename(path)
    if base == "saved_model.pb":
        for num, wt, _, ps, pe in fields(b, 0, len(b)):
            if num == 2 and wt == 2:  # SavedModel.meta_graphs
                tags = []
                gd = None
                for n2, w2, _, p2, e2 in fields(b, ps, pe):
                    if n2 == 1 and w2 == 2:  # meta_info_def
                        tags += [b[p3:e3].decode() for n3, w3, _, p3, e3 in fields(b, p2, e2)
                                 if n3 == 4 and w3 == 2]  # MetaInfoDef.tags
                    elif n2 == 2 and w2 == 2:  # graph_def
                        gd = (p2, e2)
                yield "tags=" + ",".join(tags), b, gd[0], gd[1]
    elif base.endswith(".meta"):
        for num, wt, _, ps, pe in fields(b, 0, len(b)):
            if num == 2 and wt == 2:  # MetaGraphDef.graph_def
                yield "", b, ps, pe
    else:
        yield "", b, 0, len(b)


def main():
    bdir = os.path.join(DATA, "binary")
    files = []
    for root, _, names in os.walk(bdir):
        for n in sorted(names):
            if n.endswith((".pb", ".meta", ".pb.gz")):
                files.append(os.path.join(root, n))
    for path in sorted(files):
        rel = os.path.relpath(path, bdir)
        stem = rel.split("/")[0].split(".")[0].replace("_saved_model", "")
        exp = json.load(open(os.path.join(DATA, "graphs", stem + ".expected.json")))
        for label, b, s, e in graph_defs(path):
            found = {}
            for fn, name, tag, ps in graph_nodes(b, s, e):
                for key in ("fp", "bp"):
                    if name == exp[key] and fn == exp[key + "_function"]:
                        found[key] = (tag, ps)
            print("%-45s %-16s fp %-16s bp %-16s" % (
                rel, label,
                "%d/%d" % found["fp"] if "fp" in found else "-",
                "%d/%d" % found["bp"] if "bp" in found else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
