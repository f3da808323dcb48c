"""A folder given as the input: the one graph file in it that a command reads (:func:`graph_in_folder`).

What TensorFlow leaves in a folder, in the order looked for:

1. a SavedModel: ``saved_model.pb`` (or ``saved_model.pbtxt``, the text one ``as_text=True`` writes);
2. a ``model_dir`` (Estimator, ``tf.compat.v1.train.Saver``): the ``.meta`` of the newest
   checkpoint, the one the ``checkpoint`` file names (``model_checkpoint_path: "model.ckpt-1000"``,
   relative to the folder); without that file, the ``.meta`` of the highest step;
3. the ``graph.pbtxt`` an Estimator writes beside them;
4. TensorBoard event files (a ``logs/`` folder, a ``FileWriter`` logdir): those in ``train/`` first,
   then the folder's own, then other subfolders, ``validation/``, ``eval/`` and ``test/`` last; in
   each, the newest (by the time in its name, then its mtime) that holds a graph (a pass over its
   record headers, ``wire._events``).

The folder's own files come first. TF1 writes ``checkpoint`` paths absolute, so a model_dir copied or
moved names the checkpoint of the folder it came from, which may have been retrained since; a relative
``../other/`` path leads out the same way. Such a path is looked for by its name in this folder
first; without that file, 2 to 4 above are tried in this folder; only then is the path out
followed, and the note says so with the path resolved. (``events_only``: ``--record`` was given,
which picks a record of an event file: only 4.)

``--run NAME`` (:func:`graph_in_run`): the logdir's run of that name (``_logdir``: a folder under it
holding event files, named by its path, as TensorBoard names runs), its newest event file with a graph.

A folder with only GE dumps is refused with what to give instead.
A GE dump folder is for the GE commands (``ge._dumps`` picks the training graph there).
"""
from __future__ import annotations

import os
import re
from typing import List, Optional, Tuple

from .._errors import PbtxtError
from ..language._values import decode, unescape

_CKPT_PATH = re.compile(r'^\s*model_checkpoint_path\s*:\s*"((?:[^"\\]|\\.)*)"', re.M)
_STEP = re.compile(r"-([0-9]+)\.meta$")
_GE_DUMP = re.compile(r"^ge_(?:proto|onnx)_[0-9]+_.*\.(?:txt|pbtxt)(?:\.gz)?$")


def graph_in_folder(folder: str, *, events_only: bool = False) -> Tuple[str, str]:
    """``(path, why)``: the graph file a command reads from ``folder``, and one line saying which
    and why (for stderr). Raises :class:`PbtxtError` when the folder holds no graph."""
    try:
        names = sorted(os.listdir(folder))
    except OSError as e:
        raise PbtxtError("cannot list the folder: %s" % (e.strerror or e), path=folder) from None
    if events_only:
        return _event_file_with_graph(folder, _event_files(folder, names), record=True)
    files = [n for n in names if os.path.isfile(os.path.join(folder, n))]
    for saved in ("saved_model.pb", "saved_model.pbtxt"):
        if saved in files:
            return _chose(folder, saved, "a SavedModel folder")
    named = _Named(folder) if "checkpoint" in files else None
    if named is not None and named.here is not None:
        return _chose(folder, named.here, "the newest checkpoint's graph, as the folder's 'checkpoint' file names it%s"
                      % named.said_here())
    elsewhere = "" if named is None else named.said_not_here()
    metas = [n for n in files if n.endswith(".meta")]
    if metas:
        best = max(metas, key=lambda n: (_step(n), os.path.getmtime(os.path.join(folder, n)), n))
        return _chose(folder, best, "the checkpoint graph of the highest step (%d .meta file%s)%s" % (
            len(metas), "" if len(metas) == 1 else "s", elsewhere))
    if "graph.pbtxt" in files:
        return _chose(folder, "graph.pbtxt", "the graph the training wrote to its model_dir%s" % elsewhere)
    events = _event_files(folder, names)
    out = named.out if named is not None else None
    if events:
        try:
            return _event_file_with_graph(folder, events)
        except PbtxtError:
            if out is None:
                raise
    if out is not None:
        return out, "%s: reading %s: the newest checkpoint's graph, as the folder's 'checkpoint' file names it: a path " \
            "out of this folder, which holds no .meta, graph.pbtxt or event file with a graph of its own" % (folder, out)
    if any(_GE_DUMP.match(n) for n in files) or _has_nested_ge_dumps(folder, names):
        raise PbtxtError(
            "a GE dump folder: 'pbtxt-scan ge-auto %s' gives GE's own choice, 'points GRAPH --ge %s' maps a TF graph's "
            "points onto it; fp/bp read one dump file, or the TF graph" % (folder, folder),
            path=folder,
        )
    raise PbtxtError(
        "no graph in this folder (looked for saved_model.pb, saved_model.pbtxt, checkpoint, *.meta, graph.pbtxt): "
        "give the graph file itself",
        path=folder,
    )


def graph_in_run(logdir: str, run: str) -> Tuple[str, str]:
    """``(path, why)``: the newest event file with a graph in the run ``run`` of the TensorBoard
    logdir ``logdir`` (``_logdir.run_folder``: an error naming the runs there when it has none)."""
    from ._logdir import run_folder, run_name

    folder, files = run_folder(logdir, run)
    newest = sorted((os.path.basename(f) for f in files), key=lambda n: _event_time(folder, n), reverse=True)
    return _event_file_with_graph(folder, newest, in_run=run_name(run))


_EVENTS = "events.out.tfevents."
_LAST_SUBFOLDERS = ("validation", "eval", "test")
_TIME = re.compile(r"^events\.out\.tfevents\.([0-9]+)")


def _event_files(folder: str, names: List[str]) -> List[str]:
    """The folder's event files (relative paths), in the order they are tried."""
    def newest_first(sub: str) -> List[str]:
        d = os.path.join(folder, sub)
        try:
            found = [n for n in os.listdir(d) if n.startswith(_EVENTS) and os.path.isfile(os.path.join(d, n))]
        except OSError:
            return []
        return [os.path.join(sub, n) if sub else n for n in sorted(found, key=lambda n: _event_time(d, n), reverse=True)]

    subs = [n for n in names if os.path.isdir(os.path.join(folder, n))]
    order = (["train"] if "train" in subs else []) + [""]
    order += [n for n in subs if n != "train" and n not in _LAST_SUBFOLDERS]
    order += [n for n in _LAST_SUBFOLDERS if n in subs]
    return [path for sub in order for path in newest_first(sub)]


def _event_time(folder: str, name: str) -> Tuple[int, float, str]:
    m = _TIME.match(name)
    try:
        mtime = os.path.getmtime(os.path.join(folder, name))
    except OSError:
        mtime = 0.0
    return (int(m.group(1)) if m else 0, mtime, name)


def _event_file_with_graph(
    folder: str, events: List[str], *, record: bool = False, in_run: Optional[str] = None,
) -> Tuple[str, str]:
    """The first of ``events`` that holds a graph; else the error of the first, naming the others.
    (``record``: for ``--record``, which needs an event file: a folder without one says so.)"""
    from ..wire import events as _events, events_pick as _pick

    if record and not events:
        raise PbtxtError(_no_event_file(folder), path=folder)
    first_error: Optional[str] = None
    for rel in events:
        path = os.path.join(folder, rel)
        try:
            with open(path, "rb") as f:
                found = _events.scan(lambda pos, n: (f.seek(pos), f.read(n))[1], os.fstat(f.fileno()).st_size)
        except (OSError, PbtxtError) as e:
            if first_error is None:
                first_error = "%s: %s" % (path, getattr(e, "msg", None) or getattr(e, "strerror", None) or e)
            continue
        if found.graphs:
            tried = events.index(rel)
            return _chose(folder, rel, "the newest event file %s that holds a graph%s" % (
                "of run %s" % in_run if in_run else "in train/" if rel.startswith("train" + os.sep) else "here",
                "; the %d tried before it hold none" % tried if tried else ""))
        if first_error is None:
            first_error = "%s: %s" % (path, _pick.no_graph(found))
    raise PbtxtError(
        "no event file in %s holds a graph (%d looked at%s); the first: %s" % (
            "run %s" % in_run if in_run else "this folder", len(events), "" if in_run else ", train/ first", first_error),
        path=folder,
    )


def _chose(folder: str, name: str, why: str) -> Tuple[str, str]:
    path = os.path.join(folder, name)
    return path, "%s: reading %s: %s" % (folder, path, why)


class _Named:
    """The ``.meta`` that the folder's ``checkpoint`` file names: ``here``, the one in this folder
    (the path written, if it stays in the folder; else a file of its name here), or ``out``, the
    path written leading out of the folder (resolved), to follow when the folder has no graph of
    its own. ``written``: the path as the file writes it."""

    __slots__ = ("written", "here", "out", "leads_out")

    def __init__(self, folder: str) -> None:
        self.written: Optional[str] = None
        self.here: Optional[str] = None
        self.out: Optional[str] = None
        self.leads_out = False
        ckpt = _checkpoint_path(folder)
        if not ckpt:
            return
        self.written = ckpt
        meta = ckpt + ".meta"
        target = os.path.abspath(os.path.join(folder, meta))
        self.leads_out = not _inside(target, folder)
        if not self.leads_out and _is_file(target):
            self.here = os.path.relpath(target, os.path.abspath(folder))
            return
        base = os.path.basename(meta)
        if base != ".meta" and _is_file(os.path.join(folder, base)):
            self.here = base
        elif self.leads_out and _is_file(target):
            self.out = target

    def said_here(self) -> str:
        if not self.leads_out:
            return ""
        return " (written as %s, out of this folder: the file of that name here is read)" % _quoted(self.written or "")

    def said_not_here(self) -> str:
        if self.written is None:
            return ""
        return "; the 'checkpoint' file names %s, %s, and this folder has no %s" % (
            _quoted(self.written), "out of this folder" if self.leads_out else "not here",
            _quoted(os.path.basename(self.written) + ".meta"))


def _checkpoint_path(folder: str) -> Optional[str]:
    """The path the folder's ``checkpoint`` file writes as ``model_checkpoint_path`` (its text-format
    escapes read), or ``None``."""
    try:
        with open(os.path.join(folder, "checkpoint"), "rb") as f:
            text = f.read(1 << 16).decode("utf-8", "replace")
    except OSError:
        return None
    m = _CKPT_PATH.search(text)
    if m is None:
        return None
    ckpt = decode(unescape(m.group(1)))
    if "\0" in ckpt or not ckpt.strip():
        return None  # (no file has such a name)
    return ckpt


def _inside(path: str, folder: str) -> bool:
    """Whether ``path`` lies in ``folder`` (or a subfolder), links resolved."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _is_file(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except (ValueError, UnicodeError):  # (a name no file system takes)
        return False


def _quoted(path: str) -> str:
    return repr(path) if any(c < " " or c == "\x7f" for c in path) else path


def _no_event_file(folder: str) -> str:
    """``--record`` on a folder without event files: what it applies to, and what the folder gives."""
    try:
        path, why = graph_in_folder(folder)
    except PbtxtError as e:
        return "--record applies to TensorBoard event files, and this folder has none (%s)" % e.msg
    why = why[len("%s: reading %s: " % (folder, path)):]
    return "--record applies to TensorBoard event files, and this folder has none (without --record: %s, %s)" % (path, why)


def _step(name: str) -> int:
    m = _STEP.search(name)
    return int(m.group(1)) if m else -1


def _has_nested_ge_dumps(folder: str, names: List[str]) -> bool:
    for n in names:
        sub = os.path.join(folder, n)
        if os.path.isdir(sub):
            try:
                if any(_GE_DUMP.match(x) for x in os.listdir(sub)):
                    return True
            except OSError:
                continue
    return False
