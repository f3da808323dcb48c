"""Hostile inputs shared by test_hostile.py, test_hostile_round2.py, test_guard.py and the memory
tests: the bad inputs with their exact messages, deep and huge-number inputs, every command of the
general guard with its rules, and a real process measured for time and peak memory."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import List

from pbtxt_scan.cli import app

from support.cli import CliRunner

ROOT = Path(__file__).resolve().parent.parent.parent
runner = CliRunner()

NODE = b'node {\n  name: "a"\n  op: "Const"\n}\n'


# --- bad input: (file bytes, exact message after "FILE:") -------------------------------------------

# A binary GraphDef (read since issue 13): field 1 (node, 0x0a) <varint length>, then the NodeDef's
# fields (name 0x0a, op 0x12, input 0x1a, device 0x22); then versions (field 4, 0x22).
_BINARY_GRAPHDEF = (
    b"\x0a\x1a\x0a\x05dense\x12\x06MatMul\x1a\x01x\x1a\x01w\x22\x03cpu" + b"\x0a\x09\x0a\x01y\x12\x04Relu" + b"\x22\x02\x08\x01"
)

# A binary GraphDef damaged in its second node's name (issue 35: it was read as text, "invalid
# UTF-8 byte 0x80 (is this a text file?)"): named as a damaged binary graph, at the byte.
_NODES_PB = b"".join(b"\x0a\x19\x0a\x0flayer_%02d/MatMul\x12\x06MatMul" % i for i in range(40))
_DAMAGED_PB = _NODES_PB[:33] + b"\x80" + _NODES_PB[34:]

CASES = [
    ("truncated_mid_block", NODE[:-2], "4:1: unexpected end of input: message 'node' is not closed (expected '}')"),
    ("truncated_mid_string", b'node {\n  name: "ab', "2:9: unterminated string at end of input"),
    ("truncated_after_name", b"node {\n  name", "2:7: unexpected end of input: message 'node' is not closed (expected '}')"),
    ("extra_close_brace", NODE + b"}\n", "5:1: unexpected '}': no message is open here (one '}' too many?)"),
    ("extra_close_angle", NODE + b">\n", "5:1: unexpected '>': no message is open here (one '>' too many?)"),
    ("mismatched_brace_angle", b'node {\n  name: "a"\n>\n', "3:1: unexpected '>': message 'node' was opened with '{', so it closes with '}'"),
    ("mismatched_angle_brace", b'node <\n  attr <\n  }\n>\n', "3:3: unexpected '}': message 'attr' was opened with '<', so it closes with '>'"),
    ("unterminated_string", b'node {\n  name: "a\n}\n', "2:9: unterminated string (a string cannot span lines)"),
    ("invalid_escape", b'node {\n  name: "a\\qb"\n}\n', "2:9: invalid escape '\\q' in string"),
    ("invalid_u_escape", b'node {\n  name: "\\uD800"\n}\n', "2:9: invalid \\u escape in string (too few hex digits, a surrogate, or beyond U+10FFFF)"),
    ("invalid_utf8_in_string", b'node {\n  name: "a\xff"\n}\n', "2:11: invalid UTF-8 byte 0xff (is this a text file?)"),
    ("invalid_utf8_outside", NODE + b"\xc3(\n", "5:1: invalid UTF-8 byte 0xc3 (is this a text file?)"),
    ("nul_in_string", b'node {\n  name: "a\x00"\n}\n', "2:9: NUL character inside a string"),
    ("nul_after_text", NODE + b"\x00\x00\x00", "5:1: NUL byte in text (is this a binary file?)"),
    ("binary_garbage", bytes(range(256)) * 8, "this looks like a binary file (it has NUL bytes), not protobuf text format"),
    ("binary_control_bytes", bytes([1, 2, 3, 4, 5, 6, 7, 8]) * 40, "this looks like a binary file (control bytes), not protobuf text format"),
    ("binary_graphdef_cut", _BINARY_GRAPHDEF[:-5], "offset 28: truncated: a length-delimited field runs past the end of the file"),
    ("binary_graphdef_damaged", _DAMAGED_PB, "offset 33: not a valid binary graph: a name is not UTF-8 (byte 0x80)"),
    ("number_then_letters", b"node {\n  op: 10bar\n}\n", "2:7: invalid number (a number cannot be followed directly by a letter or digit)"),
    ("plus_sign", b"node {\n  op: +1\n}\n", "2:7: unexpected '+' (a number takes no '+' sign)"),
    ("scalar_without_colon", b"node {\n  op 1\n}\n", "2:6: unexpected number 1, expected ':' or '{' after field name 'op'"),
    ("unnamed_message", b"{\n}\n", "1:1: unexpected '{', expected a field name"),
    ("double_separator", b"version: 1;;\n", "1:12: unexpected ';', expected a field name"),
    ("name_starting_with_a_digit", b'node {\n  9x: "a"\n}\n', "2:3: invalid number (a number cannot be followed directly by a letter or digit)"),
    # issue 37: what TensorFlow's parser refuses, refused where it does, in its words
    ("schema_unknown_node", b'nod {\n  name: "a"\n}\n', '1:1: Message type "tensorflow.GraphDef" has no field named "nod". '
     'Did you mean "node"? (schema: TensorFlow 2.21.0)'),
    ("schema_string_as_number", b'node {\n  name: "a"\n  op: 5\n}\n', "3:7: Expected string but found: '5'"),
    ("schema_enum_misspelt", b'node {\n  name: "a"\n  op: "Cast"\n  attr {\n    key: "T"\n    value {\n      type: DT_FLAOT\n    }\n  }\n}\n',
     '7:13: Enum type "tensorflow.DataType" has no value named DT_FLAOT. Did you mean DT_FLOAT?'),
    ("schema_int32_range", b"versions {\n  producer: 4294967297\n}\n", "2:13: Value out of range: 4294967297"),
    ("schema_op_twice", b'node { name: "a" op: "A" op: "B" }\n', '1:30: Message type "tensorflow.NodeDef" should not have multiple "op" fields.'),
    ("schema_not_utf8", b'node {\n  name: "\\377"\n}\n', "3:1: Couldn't parse string: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    # issue 38: a graph on one line, read back by blocks from its end (bp): the forward reading's words
    ("one_line_extra_close_brace", b'node { name: "a" op: "Const" } node { name: "b" op: "NoOp" } }',
     "1:62: unexpected '}': no message is open here (one '}' too many?)"),
    ("one_line_unknown_field", b'node { name: "a" op: "Const" } nod { name: "b" } node { name: "c" op: "NoOp" input: "a" }',
     '1:32: Message type "tensorflow.GraphDef" has no field named "nod". Did you mean "node"? (schema: TensorFlow 2.21.0)'),
]

# Blocks that are no valid node (issue 37): a command that reads one before its answer refuses it
# in check's words (tests/test_strict_blocks.py has the messages); the guard runs every command on them.
STRICT_BLOCKS = {
    "misspelt_node": b'nod {\n  name: "a"\n  op: "Const"\n}\n' + NODE,
    "node_without_name": b'node {\n  op: "Const"\n}\n' + NODE,
    "node_without_op": b'node {\n  name: "b"\n}\n' + NODE,
    "name_a_number": b'node {\n  name: 5\n  op: "Const"\n}\n' + NODE,
    "op_an_identifier": b'node {\n  name: "b"\n  op: Const\n}\n' + NODE,
    "one_line_misspelt": b'nod { name: "a" op: "Const" } node { name: "b" op: "Const" }',
    "function_node_without_op": b'library {\n  function {\n    signature {\n      name: "f"\n    }\n    node_def {\n'
                                b'      name: "x"\n    }\n  }\n}\n' + NODE,
    "binary_node_without_name": b"\x0a\x08\x12\x06MatMul" + b"\x0a\x09\x0a\x01y\x12\x04Relu",
    "one_line_name_a_number": b'node { name: 5 op: "Const" } node { name: "b" op: "Const" }',
    "saved_model_misspelt_node": b'meta_graphs {\n  graph_def {\n    nod {\n      name: "a"\n      op: "Const"\n    }\n'
                                 b'    node {\n      name: "b"\n      op: "Const"\n    }\n  }\n}\n',
    "meta_graph_node_without_op": b'graph_def {\n  node {\n    name: "a"\n  }\n  node {\n    name: "b"\n    op: "Const"\n  }\n}\n',
}

# The same in GE dumps (issue 37): an op without its type or its name, an ONNX node without its
# op_type, read before any answer by every GE reading (ge-auto, resolve, fp/bp/points on a dump).
_GE_OP = b'  op {\n    name: "n"\n    type: "Data"\n  }\n'
GE_STRICT_BLOCKS = {
    "ge_op_without_type": b'graph {\n  name: "g"\n  op {\n    name: "a"\n  }\n' + _GE_OP + b"}\n",
    "ge_op_without_name": b'graph {\n  name: "g"\n  op {\n    type: "Const"\n  }\n' + _GE_OP + b"}\n",
    "ge_op_name_a_number": b'graph {\n  name: "g"\n  op {\n    name: 5\n    type: "Const"\n  }\n' + _GE_OP + b"}\n",
    "ge_onnx_node_without_op_type": b'ir_version: 6\nproducer_name: "GE"\ngraph {\n  node {\n    name: "a"\n  }\n'
                                    b'  node {\n    name: "n"\n    op_type: "ge:Data"\n  }\n}\n',
}


# --- valid but deep or huge: (test_hostile_round2.py) ----------------------------------------------

_DEEP = "{ a " * 3000 + "{ }" + " }" * 3000
# The node on line 2: a parse of it is shifted to its file lines (that shift used to recurse).
DEEP_TF = 'versions { producer: 1 }\nnode {\n  name: "n"\n  op: "Placeholder"\n  attr ' + _DEEP + "\n}\n"
DEEP_GE = 'graph {\n  name: "g"\n  op {\n    name: "n"\n    type: "Const"\n    attr ' + _DEEP + "\n  }\n}\n"
BIG_INT = "9" * 5000
BIG_INT_TF = 'node {\n  name: "n"\n  op: "Const"\n  attr { key: "v" value { i: %s } }\n}\n' % BIG_INT
BIG_INT_GE = (
    'graph {\n  name: "g"\n  op {\n    name: "n"\n    type: "Const"\n'
    '    attr { key: "_parent_node_index" value { i: %s } }\n  }\n}\n' % BIG_INT
)



# --- the general guard (test_guard.py) ---------------------------------------------------------------

# Each command with its richest options (--json, --explain where they exist).
COMMANDS: List[List[str]] = [
    ["fp", "--json", "--explain", "{f}"],
    ["bp", "--json", "--explain", "{f}"],
    ["points", "--json", "--explain", "{f}"],
    ["points", "--format", "env", "{f}"],
    ["nodes", "--json", "{f}"],
    ["show", "{f}", "a"],
    ["show", "--json", "{f}", "n"],
    ["stats", "--json", "{f}"],
    ["check", "{f}"],
    ["resolve", "a", "n", "--ge", "{f}", "--json"],
    ["ge-auto", "--explain", "--json", "{f}"],
    ["report", "-o", os.devnull, "{f}"],
    ["report", "-o", "-", "{f}"],  # (issue 35: the page on stdout)
    ["ge-auto", "--format", "env", "{f}"],  # (issue 35: points' formats)
    ["events", "{f}"],  # (issue 38: an event file's records)
    ["events", "--json", "{f}"],
    ["nodes", "--op", "Const", "--name", "*a*a*a*a*a*b", "-z", "{f}"],  # (issue 38: filters, NUL-ended rows)
    ["nodes", "--count", "--name", "[", "{f}"],
    ["points", "-z", "{f}"],
    ["show", "{f}", "n", "a", "no/such"],  # (issue 38: several names, by one byte search)
    ["show", "--json", "{f}", "--glob", "*"],
    ["show", "{f}", "--regex", "^(a|n)$"],
]


# A model_dir's ``checkpoint`` file naming no usable path (issue 35): bad escapes, a NUL, a folder,
# a name too long for any file system, control bytes, bytes that are no UTF-8.
HOSTILE_CHECKPOINTS = [
    b'model_checkpoint_path: "model.ckpt-\\x"\n', b'model_checkpoint_path: "model.ckpt-\\000"\n',
    b'model_checkpoint_path: "/"\n', b'model_checkpoint_path: ".."\n', b'model_checkpoint_path: "' + b"a" * 5000 + b'"\n',
    b'model_checkpoint_path: "../x\\n\\033[31m"\n', b'model_checkpoint_path: "\xff\xfe"\n', b'model_checkpoint_path: ""\n',
]
# ``--record`` values well formed that name no graph (issue 35; malformed ones are usage errors, in
# test_trust_folders.py).
HOSTILE_RECORDS = ["9" * 30, "1." + "9" * 30, "0", "0.0", "2.3", "4.7", "1.5"]
# verify over hostile profiling folders (issue 35): {file under PROF_x/: its text}, and its commands.
_STEP = "Device_id,Iteration ID,FP Start(us),BP End(us)\r\n"
_OPS = "Device_id,Task ID,Stream ID,Op Name,Task Type,Task Start Time(us),Task Duration(us)\r\n0,1,5,a,AI_CORE,10.0,2.0\r\n"
_NEW, _OLD = "mindstudio_profiler_output/", "device_0/timeline/"
PROF_CASES = {
    "header_only": {_NEW + "step_trace_1.csv": _STEP},
    "cut_row": {_NEW + "step_trace_1.csv": _STEP + "0,1,9.0\r\n", _NEW + "op_summary_1.csv": _OPS},
    "nan": {_NEW + "step_trace_1.csv": _STEP + "0,1,nan,20.0\r\n"},
    "device_id_text": {_NEW + "step_trace_1.csv": _STEP + "zero,1,9.0,20.0\r\n"},
    "task_start_text": {_NEW + "step_trace_1.csv": _STEP + "0,1,9.0,20.0\r\n", _NEW + "op_summary_1.csv": _OPS.replace("10.0", "soon")},
    "two_step_traces": {_NEW + "step_trace_1.csv": _STEP + "0,1,9.0,20.0\r\n", _NEW + "step_trace_2.csv": _STEP + "0,1,9.0,20.0\r\n"},
    "json_garbage": {_OLD + "step_trace_0.json": '[{"name": "Iteration 1", "ph": "X", "args": {"FP Start": "garbage", "BP End": 5}}]'},
    "json_no_iterations": {_OLD + "step_trace_0.json": '[{"name": "process_name", "ph": "M"}]'},
    "both_layouts": {_NEW + "step_trace_1.csv": _STEP + "0,1,9.0,20.0\r\n",
                     _OLD + "step_trace_0.json": '[{"name": "Iteration 1", "ph": "X", "args": {"FP Start": 9, "BP End": 20}}]'},
    "first_task_opener": {_NEW + "step_trace_1.csv": _STEP + "0,1,9.0,20.0\r\n", _NEW + "op_summary_1.csv": _OPS.replace(",1,5,", ",0,5,")},
}
PROF_COMMANDS: List[List[str]] = [["verify", "{d}"], ["verify", "--json", "--iterations", "{d}"], ["verify", "{d}", "--graph", "{g}"]]


def check_rules(args: List[str]) -> None:
    r = runner.invoke(app, args)
    assert r.exception is None or isinstance(r.exception, SystemExit), "%s: %r" % (args, r.exception)
    assert r.exit_code in (0, 1, 2), (args, r.exit_code, r.stderr)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout, args
    if r.exit_code == 2:
        assert len(r.stderr.splitlines()) == 1, (args, r.stderr)


# --- huge tokens: a real process, time and peak memory -----------------------------------------------

_RSS_WRAPPER = textwrap.dedent(
    """
    import resource, runpy, sys
    out = sys.argv.pop(1)
    sys.argv[0] = "pbtxt-scan"
    try:
        runpy.run_module("pbtxt_scan", run_name="__main__")
    finally:
        # VmHWM is this process image's own peak; ru_maxrss also keeps the peak of the forking
        # parent (a pytest process grown by earlier tests), since Linux carries it across exec.
        try:
            kib = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
        except (OSError, StopIteration):
            kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        with open(out, "w") as f:
            f.write(str(kib))
    """
)


def run_measured(tmp_path: Path, *args: str, timeout: float = 60):
    rss = tmp_path / "rss.txt"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", _RSS_WRAPPER, str(rss), *args], capture_output=True, timeout=timeout, env=env)
    return p, time.perf_counter() - t0, int(rss.read_text()) // 1024



# --- a long line in the middle (session 18) -----------------------------------------------------------

# A Const's tensor_content between two node blocks, one line of ``LONG_LINE`` escaped bytes (TF writes
# a large constant so: hundreds of MB happen). grep holds a line whole: with its address space held
# to ``LONG_LINE_CAP`` (``parallel._grep.MEMORY`` lowered by the test) it fails on it, as it does on
# a line of 300 MB under the real cap, and every command reads the blocks instead.
LONG_LINE = 6 << 20
LONG_LINE_CAP = 8 << 20
LONG_LINE_MIDDLE = (
    NODE + b'node {\n  name: "n"\n  op: "MatMul"\n  input: "a"\n}\n'
    + b'node {\n  name: "w"\n  op: "Const"\n  attr {\n    key: "value"\n    value {\n      tensor {\n        dtype: DT_FLOAT\n'
    + b'        tensor_content: "' + b"\\000\\200?\\'\\\"" * (LONG_LINE // 16) + b'"\n      }\n    }\n  }\n}\n'
    + b'node {\n  name: "gradients/n_grad/MatMul"\n  op: "MatMul"\n  input: "n"\n  input: "w"\n}\n'
    + b'node {\n  name: "no/such/twin"\n  op: "Identity"\n  input: "gradients/n_grad/MatMul"\n}\n'
)
