#!/usr/bin/env python3
"""Trace the input object's path through a command with ``sys.setprofile`` (issue 36's measure).

    python tools/trace_input.py [FILE] [COMMAND]    # default: tests/data/graphs/mlp_sgd.pbtxt, fp

Runs the command in this process (the CLI, as ``pbtxt-scan COMMAND FILE`` runs it) and follows the
one ``GraphFile`` it opens: a *touch* is a Python call (not a generator's resume) that has the input
object, its store or its lane among its arguments (``self`` included), or is made on the input's
own class. For every touch it notes the module of the function called. It prints

- the modules entered, each with its layer (ARCHITECTURE.md's table, as tests/test_imports.py
  holds it) and its number of touches;
- *returns*: how often the path enters a module it had left before (the touches' modules, runs of
  one module taken as one visit);
- *climbs*: how often a touch is called from a module of a lower layer (a callback up: the lane
  calling the input back, the input called from a rule's helper below it).

Maintainer tool: nothing in the package or its tests imports it.
"""
import collections
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
sys.path.insert(0, ROOT)

import pbtxt_scan  # noqa: E402

PKG_DIR = os.path.dirname(os.path.abspath(pbtxt_scan.__file__))
LAYERS = [  # (tests/test_imports.py's LAYERS)
    {"pbtxt_scan._errors", "pbtxt_scan._model"},
    {"pbtxt_scan.language", "pbtxt_scan.source", "pbtxt_scan.parallel", "pbtxt_scan.report", "pbtxt_scan.prof"},
    {"pbtxt_scan.text", "pbtxt_scan.wire"},
    {"pbtxt_scan.graph"},
    {"pbtxt_scan.fpbp", "pbtxt_scan.ge"},
    {"pbtxt_scan"},
    {"pbtxt_scan.cli"},
    {"pbtxt_scan.__main__"},
]


def module_of(filename):
    """The dotted name of a module of the package, ``None`` for any other file."""
    path = os.path.abspath(filename)
    if not path.startswith(PKG_DIR + os.sep):
        return None
    rel = os.path.relpath(path, PKG_DIR)[: -len(".py")].replace(os.sep, ".")
    return "pbtxt_scan" + ("" if rel == "__init__" else "." + rel[: -len(".__init__")] if rel.endswith("__init__") else "." + rel)


def layer_of(mod):
    parts = mod.split(".")
    unit = ".".join(parts[:2]) if len(parts) > 1 and os.path.isdir(os.path.join(PKG_DIR, parts[1])) else mod
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    return 5  # (a module at the package's root: the public API)


def trace(path, command):
    from pbtxt_scan.cli import app
    from pbtxt_scan import GraphFile

    found = []  # the input object, once it is made
    touches = []  # (module called, module calling)

    def ours():
        """The input object, its lane and its parts (store, provenance): pbtxt_scan objects it holds."""
        if not found:
            return ()
        g = found[0]
        objs = [g]
        names = list(getattr(g, "__dict__", {})) + list(getattr(type(g), "__slots__", ()))
        for name in names:
            v = getattr(g, name, None)
            if v is not None and type(v).__module__.startswith("pbtxt_scan"):
                objs.append(v)
        return objs

    def profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        if code.co_flags & 0x20 and frame.f_lasti > 0:  # (a generator resumed: not a new call)
            return
        mod = module_of(code.co_filename)
        if mod is None:
            return
        nargs = code.co_argcount + code.co_kwonlyargcount
        args = [frame.f_locals.get(n) for n in code.co_varnames[:nargs]]
        if not found:
            for a in args:
                if isinstance(a, GraphFile):
                    found.append(a)
                    break
        objs = ours()
        if not any(a is o for a in args for o in objs) and not any(isinstance(a, type) and a is GraphFile for a in args):
            return
        back = frame.f_back
        caller = module_of(back.f_code.co_filename) if back is not None else None
        touches.append((mod, caller))

    sys.setprofile(profile)
    try:
        app([command, path], standalone_mode=False)
    except SystemExit:
        pass
    finally:
        sys.setprofile(None)
    return touches


def report(touches):
    counts = collections.Counter(m for m, _ in touches)
    visits = []
    for m, _ in touches:
        if not visits or visits[-1] != m:
            visits.append(m)
    seen, returns = set(), 0
    for m in visits:
        if m in seen:
            returns += 1
        seen.add(m)
    climbs = [(c, m) for m, c in touches if c is not None and layer_of(c) < layer_of(m)]
    print("touches: %d calls in %d modules" % (len(touches), len(counts)))
    for m, n in sorted(counts.items(), key=lambda kv: (-layer_of(kv[0]), kv[0])):
        print("  layer %d  %-32s %5d" % (layer_of(m), m, n))
    print("visits: %d; returns to a module left before: %d" % (len(visits), returns))
    print("climbs back up a layer: %d" % len(climbs))
    for (c, m), n in sorted(collections.Counter(climbs).items()):
        print("  %-32s -> %-32s %5d" % (c, m, n))


def main(argv):
    path = argv[1] if len(argv) > 1 else os.path.join(ROOT, "tests", "data", "graphs", "mlp_sgd.pbtxt")
    command = argv[2] if len(argv) > 2 else "fp"
    report(trace(path, command))


if __name__ == "__main__":
    main(sys.argv)
