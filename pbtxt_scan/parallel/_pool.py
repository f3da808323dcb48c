"""Worker processes: the one module that starts them.

Every parallel road forks its workers here: whole-file chunks (``graph._parallel``), GE chunks
(``ge._split``) and the long-line skim (``text._skim_pool``); fp's grep searches start their
programs with :func:`spawn`. A low layer: it knows no graph and no text. The work is handed to it
as functions, which the forked children inherit with the rest of the parent's memory (nothing is
pickled, nothing is looked up in a module table).

A worker (:func:`fork`):

- ignores Ctrl-C (the parent stops its workers), dies of SIGTERM (the command line's handler,
  which unwinds the parent through the ``with`` blocks that stop and reap its workers, is not
  inherited) and, on Linux, is killed when the parent dies (``PR_SET_PDEATHSIG``; elsewhere it meets
  an end of file on its pipe);
- holds only the descriptors it was told to keep: a pipe end kept open in a child would keep its
  reader waiting (grep's output, the other workers' replies);
- sets its own allocator options (``heap``), never the parent's;
- writes nothing (its ``sys.stdout``/``sys.stderr`` go to ``/dev/null``: the parent's unwritten
  output must not be written twice) and leaves by ``os._exit``: no atexit, no flush, no
  ``finally`` of the parent's frames above the fork;
- is stopped with SIGKILL and waited for (:func:`stop`): it holds nothing that needs cleaning up.

Two ways to feed workers: a :class:`Pool` deals tasks through each worker's own pipe and yields
the results in order (chunks of a file); or the caller runs its own loop in ``fork(main)``
(the skim: windows taken from one shared pipe).
"""
from __future__ import annotations

import collections
import functools
import os
import sys
from typing import IO, TYPE_CHECKING, Any, Callable, Collection, Deque, Dict, Iterator, List, Mapping, Optional, Sequence, Union

if TYPE_CHECKING:
    import subprocess


def can_fork() -> bool:
    """Whether workers can be forked here (and read their input with ``os.pread``)."""
    return hasattr(os, "fork") and hasattr(os, "pread")


class PoolError(Exception):
    """The workers cannot do the work: one could not start, died (killed, out of memory) or a task
    raised in it (a bug, whose traceback is the message). The caller goes on alone, and meets a
    task's error itself."""


def fork(main: Callable[[], Any], *, keep: Optional[Collection[int]] = None, close: Sequence[int] = (), heap: int = 0) -> int:
    """Fork a worker that runs ``main()`` and exits; returns its pid (in the parent only).

    ``keep``: the only descriptors above 2 the worker holds (None: all it inherits, but those in
    ``close``). ``heap`` (bytes, glibc only): buffers up to this size are taken from the heap and
    freed back to it, not mapped and unmapped each time. Raises OSError if no process can start."""
    for stream in (sys.stdout, sys.stderr):  # (a worker must not inherit unwritten output)
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # (a full disk, a closed or missing stream: the
            pass  # caller meets it at its next write or at exit; the worker never writes them)
    pid = os.fork()
    if pid:
        return pid
    _child(main, keep, close, heap)  # pragma: no cover - (the child: measured by the parent's tests)
    return 0  # pragma: no cover - (never reached: the child exits)


def _child(main: Callable[[], Any], keep: Optional[Collection[int]], close: Sequence[int], heap: int) -> None:  # pragma: no cover
    """A worker's life: set itself up, run ``main``, exit. Never returns."""
    import signal

    code = 0
    try:
        parent = os.getppid()
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the workers
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (not the parent's handler: SIGTERM ends a worker)
        libc = _libc()
        if libc is not None:
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
            if heap:
                libc.mallopt(-3, heap)  # M_MMAP_THRESHOLD: buffers up to `heap` come from the heap
                libc.mallopt(-1, 4 * heap)  # M_TRIM_THRESHOLD: ... and go back to it, not the OS
        if os.getppid() != parent:
            os._exit(0)  # (the parent died before the prctl)
        for x in close:
            _close(x)
        if keep is not None:
            try:
                fds = [int(x) for x in os.listdir("/proc/self/fd")]
            except OSError:
                fds = list(range(3, 256))
            for x in fds:
                if x > 2 and x not in keep:
                    _close(x)
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        main()
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _libc() -> Any:
    """glibc's ``prctl`` and ``mallopt`` (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl, libc.mallopt  # noqa: B018 - (both or neither)
        return libc
    except (ImportError, OSError, AttributeError):
        return None


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def stop(pids: Sequence[int], fds: Sequence[int] = ()) -> None:
    """Close the parent's ends of the workers' pipes, then kill the workers and wait for them (no
    zombie is left). Safe to call twice."""
    import signal

    for x in fds:
        _close(x)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except OSError:
            pass


class Pool:
    """``n`` forked workers, each fed tasks through its own pipe; ``fns`` are the functions a task
    may name (given before the fork, so the workers have them). (Not ``multiprocessing.Pool``: its
    ``terminate`` can hang while tasks are still queued, and a worker that dies leaves its ``get``
    waiting forever. Here a dead worker is an end of file on its pipe.)

    Raises PoolError if the workers cannot start. Use as a context manager, or call ``close``."""

    def __init__(self, n: int, fns: Sequence[Callable[[Any], Any]]) -> None:
        from multiprocessing.connection import Pipe

        self._fns = list(fns)
        self.conns: List[Any] = []
        self.pids: List[int] = []
        try:
            for _ in range(n):
                parent, child = Pipe()
                # (the worker holds neither our end of its pipe nor those of the workers before it)
                others = [c.fileno() for c in self.conns] + [parent.fileno()]
                self.pids.append(fork(functools.partial(self._serve, child), close=others))
                child.close()
                self.conns.append(parent)
        except OSError as e:  # (no more processes allowed: one will do)
            self.close()
            raise PoolError("cannot start a worker: %s" % e) from None
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _serve(self, conn: Any) -> None:  # pragma: no cover - (runs in the child)
        """Tasks in, results out, until the pipe closes."""
        import traceback

        while True:
            try:
                i, task = conn.recv()
            except EOFError:
                return
            try:
                result = (True, self._fns[i](task))
            except Exception:
                result = (False, traceback.format_exc())
            conn.send(result)

    def map(self, fn: Callable[[Any], Any], tasks: Sequence[Any], *, ahead: int) -> Iterator[Any]:
        """``fn(task)`` for each task, in the workers, results in task order; at most ``ahead``
        tasks handed out and not yet consumed. ``fn`` is one of the pool's ``fns``. Raises
        PoolError if a worker died or a task raised."""
        from multiprocessing.connection import wait

        i = self._fns.index(fn)
        busy: Dict[Any, Deque[int]] = {c: collections.deque() for c in self.conns}
        done: Dict[int, Any] = {}
        todo = 0  # the next task to hand out
        want = 0  # the next result to yield
        try:
            while want < len(tasks):
                # Hand out tasks: to the least busy worker, two at most each (one queued behind
                # the running one, so no worker waits for the parent), within `ahead`.
                while todo < len(tasks) and todo - want < ahead:
                    c = min(self.conns, key=lambda k: len(busy[k]))
                    if len(busy[c]) >= 2:
                        break
                    c.send((i, tasks[todo]))
                    busy[c].append(todo)
                    todo += 1
                while want not in done:
                    ready: List[Any] = wait([c for c in self.conns if busy[c]])  # (of the connections given: ours)
                    for c in ready:
                        ok, value = c.recv()  # (EOFError, ConnectionResetError: the worker died)
                        if not ok:
                            raise PoolError(value)
                        done[busy[c].popleft()] = value
                value = done.pop(want)
                want += 1
                yield value
        except (EOFError, OSError) as e:
            raise PoolError("a worker died: %r" % e) from None

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        for c in self.conns:
            c.close()
        stop(self.pids)
        self.conns = []
        self.pids = []


def spawn(
    argv: Sequence[str], *, stdin: Union[int, IO[Any], None] = None, env: Optional[Mapping[str, str]] = None
) -> "subprocess.Popen[bytes]":
    """Start the program ``argv`` (fp's grep searches, ``points._ahead``) reading ``stdin`` (a
    descriptor, e.g. the input file's own, or a pipe's read end), its output on a pipe
    (``.stdout``), its errors dropped. It holds no other descriptor of ours (``close_fds``), and
    runs with ``env`` (None: ours). The caller reads its output and waits for it. Raises OSError
    if it cannot start."""
    import subprocess

    return subprocess.Popen(list(argv), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, close_fds=True)
