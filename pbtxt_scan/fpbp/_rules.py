r"""fp_point and bp_point: the rules, and the trail that explains each answer.

fp reads forward and stops at its answer; bp reads backward (``_reverse``) and stops at its answer.

Rules (``--rule``):
- ``doc``: the documented recipe made complete. fp = the first node, scanning forward, whose op is
  not in the catalog, whose name holds none of the recipe's filters (step, Dataset, seed, kernel)
  and that is not inside a variable initializer (``.../Initializer/...``). bp = scanning backward,
  the first node in a gradients scope whose op is not in the catalog.
- ``dataflow``: fp = the first op of the model on the training step's data. The step's input is the
  training data source (IteratorGetNext*, the last QueueDequeue* of an input pipeline, GetNext, a
  staging area's Unstage), else the data Placeholders, else a constant that may hold the data
  (``--source`` names it instead). Its data is followed through every op until it meets a trained
  variable (a MatMul or Conv with its kernel, an embedding Gather): fp is that op, or the first op
  of the model before it on the same data. Input preprocessing before the model (a dtype Cast of
  the batch, arithmetic with constants), ops on data that meets no variable (labels, metric
  inputs, an unused feature, the next batch going into a queue or a Stage) and the backward pass
  are not the model: the first of them stay as ``alternatives``. Copies of the model fed by
  different inputs (global/local, train/eval) are told apart by their gradient ops (a byte
  search, started again without each name it finds: time at grep's speed, however many copies
  follow), and the answer is ``ambiguous``. A call that hands the data and the variables to a
  library function (a ``tf.function`` model) is answered inside it. bp = the doc bp, also skipping
  nodes that compute only from constants and shapes (shape arithmetic that GE folds away, e.g. the
  int32 ops that pack an IndexedSlices gradient) and gradients-scope nodes whose result nothing
  that runs uses (read backward, a node's consumers all come before it: ``_bp_reach._Reach``); a call
  that takes a gradient is answered inside the function it calls.
- ``auto`` (default): dataflow where the graph has a data source or placeholder, else doc.

A gradients scope is a path component ``gradients``, ``gradients_N`` or ``gradient_tape`` anywhere
in the name but the last (a summary *named* ``.../gradients`` is not in one).

Where the step is (:func:`step_body`, one rule for fp and bp): the top level when one of its nodes
is in a gradients scope; else the ``library`` function holding the most gradients-scope nodes
(GradientTape in a ``tf.function``; Keras ``model.fit``, whose ``train_function`` calls
``one_step_on_data``; an Ascend ``GeOp`` body), however deep the call chain; else the top level.
Both points then come from that body, and name it. The function is found by one pass over the
library that keeps, of each function, its gradients count, its arguments (bare inputs: few) and
its blocks' offsets (32 bytes a node), never its blocks: fp then reads the chosen function's
blocks again forward, bp backward (:class:`_body.FunctionBody`).

fp in bounded memory, at the cost of the distance to its answer
----------------------------------------------------------------
fp reads blocks forward (``_fp_scan._Scan``). What it keeps grows only until its answer: what data
reaches each node (a small ``_Flow``: its input, and the first preprocessing and model ops on the
way), the names that carry a variable, the nodes judged before one of their inputs was met (TF1
while loops write an ``Enter`` after the op that reads it), a few candidates and the
:class:`Trail` (bounded). Once the best input has a candidate, the pass looks for another input's
copy of the model close by (one bounded byte search, as far again as the answer lies, at least
4 MiB; without a search, 2,000 blocks). An input of the same class met inside that window is
followed to its own candidate (for as many blocks again as were read before it, at least 2,000;
a better input wherever it is met), unless its data goes into a queue or a staging area (a stage
of a pipeline, not the step's input). One met past the window is not followed: in a graph of
many copies, each with its own input pipeline, every copy's queues would otherwise hold the pass
to the next copy, to the end of the file, keeping every name. After that the answer can change
only if a node with one of a few ops comes later: a data source after a placeholder's candidate;
an enqueue after the first op on a queue's data that met no variable (the queue would be a
pipeline stage); a source or placeholder after a constant's or a doc-rule candidate. Rather than
read every later block to rule those out, fp asks a byte search where such a node may be (``_ahead._Ahead``), reads blocks on to
there if anywhere, and stops when the answer is "nowhere".

Why the search never misses such a node, whatever the layout. Every op that matters holds one of
a few words (``_needles._OP_WORDS``: GetNext, QueueDequeue, QueueEnqueue, Placeholder, Data, Arg, Unstage,
Stage). A
value that holds a word is written (i) plainly, and the word is in the bytes; or (ii) as adjacent
literals split inside the word (``"QueueDe" "queue"``), and a piece ends with a proper prefix of
the word and a quote; or (iii) with a letter escaped, and the bytes hold ``\1``, ``\5`` (octal
0o1xx, and 0o5xx that the grammar wraps to a byte, are where letters are), ``\x``, ``\u`` or
``\U``. ``_needles._pattern`` matches all three, as one regex run by ``grep -E`` (a DFA at grep's
speed; ``_ahead.needle_hits``, ``_grep``) from the candidate on. So a node that matters yields a hit on its
line. Each hit's line is then judged (``_needles.judge_line``): it is passed over only when it surely
sets no such op, that is when it is one whole scalar field (``field: value``) whose field is not
the op (``op``, GE's ``type``/``op_type``), or whose (unescaped) value is not a wanted op, and the
next line does not continue its string. Any other line (several fields on one line, a line too
long to read, a field split over lines) counts as a possible node: fp reads blocks on to it and
asks again from there, so a non-canonical layout costs reading, never a wrong answer. Lines are
judged by content, not by indentation: the search does not assume the writer layout.

fp and bp must also agree on the body, so fp must know whether a top-level node sits in a
gradients scope. It knows if it met one; else, if the ops search read to the end and met no
``library`` field (and no gap between node blocks where one could hide), there is no function
and the question is moot; else a second search for ``gradient`` (same construction) judges each
line: a ``name`` field right after a ``node {`` opener names a top-level node (GraphDef has no
other ``node`` field), after any other opener it does not, and anything else is "cannot tell",
where fp reads the remaining blocks' names (bounded, slower).

Without grep (or on stdin and gzip input) there is no search: fp reads the blocks it would have
skipped, names and ops only, with the same bounded state: the same answers, at block speed.

The modules, one job each
-------------------------
- ``_rules``: this design, and the names the package offers (``find_fp``, ``find_bp``, ``Options``,
  ``Answer``, ``Point``...).
- ``_answers``: what fp and bp answer (``Point``, ``Answer``, ``Options``), and the bounded trail.
- ``_catalog``: the op types that are never a point, by category, and the gradients-scope test.
- ``_body``: where the training step is (``step_body``), and a library function held as offsets.
- ``_fp``: fp's passes (top level, the step's function, a called model) over blocks read forward.
- ``_fp_scan``: fp's scan state: each node judged as it is read.
- ``_fp_flow``: what the scan knows of the data: what reaches a node, inputs met, candidates.
- ``_fp_settle``: when the scan's answer is settled (read on, or ask the byte search).
- ``_fp_inputs``: the step's inputs: whether a placeholder or a Const holds the data (roles).
- ``_fp_pick``: fp's answer from a scan, and copies of the model told apart by their gradient ops.
- ``_fp_steps``: fp when several optimizers train in separate train ops (``--train-op``).
- ``_ahead``: fp's reading ahead, through the lane's two byte searches (``Lane.ahead``).
- ``_needles``: what those searches look for: the ops that can still change fp, and their words.
- ``_bp``: bp's passes (top level, a called backward function, the step functions) and its answer.
- ``_bp_scan``: bp's backward loop: each optimizer's point, ``--train-op``, when to stop.
- ``_bp_reach``: liveness: which optimizers a node's data reaches, and whether it runs.
- ``_bp_back``: the backward read: look-ups ahead, shape arithmetic, inputs read again.
- ``_profiling``: the Ascend profiling options built from the two points.
- ``_hood``, ``_hood_find``, ``_hood_near``: a node's neighbourhood (``show --context``, the report).
"""
from __future__ import annotations

from ._answers import DOC_NAME_FILTERS, RULES, Answer, Options, Point, Step, Trail, format_trail
from ._body import step_body, training_function
from ._bp import find_bp
from ._catalog import in_gradients_scope
from ._fp import find_fp
from ._fp_inputs import placeholder_role

__all__ = [
    "DOC_NAME_FILTERS", "RULES", "Answer", "Options", "Point", "Step", "Trail", "find_bp", "find_fp",
    "format_trail", "in_gradients_scope", "placeholder_role", "step_body", "training_function",
]
