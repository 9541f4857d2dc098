"""The processes an analysis spreads its work over (sweep's and negotiate's pools, a local Ray):
deaf to Ctrl-C, and stopped by the command's process.

Why (issue 47 items 10, 11): a terminal's Ctrl-C is SIGINT to the whole foreground process group.
A spawned pool worker still importing its modules died of it with a KeyboardInterrupt traceback,
and the command then failed with BrokenProcessPool and printed nothing; a worker that did not die
raised KeyboardInterrupt in its task; Ray's own processes (raylet, GCS) died under the driver. So
every process the command starts is started with SIGINT blocked (`sigint_held`: a child inherits
the mask of the thread that starts it, through fork and exec, so the signal cannot reach it even
before its first line of Python runs); a pool worker then ignores SIGINT for good (`deaf`, which
also discards a Ctrl-C that came while it started). Only the command's process hears Ctrl-C: it
tells the workers to stop (each analysis hands them an Event), gives their running tasks a short
grace to say what they had, and kills whatever is still running (`Pool.stop`), its solver child
processes first (solver.engine.child starts them in a session of their own, out of Ctrl-C's reach).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path

STOP_GRACE = 2.0
"""Seconds a stopped command waits for its workers' running tasks before killing the workers. A
worker told to stop ends its solve at once (a solve in a child process is killed within 0.1 s), so
this is only for the one busy building its model, which would otherwise hold the command's exit."""


@contextmanager
def sigint_held() -> Iterator[None]:
    """While the block runs, SIGINT is blocked in this thread: the processes it starts inherit the
    block (and the threads it starts, which is harmless: the main thread hears Ctrl-C). A Ctrl-C that
    comes meanwhile to this process is not lost: it is delivered when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):   # Windows: no process groups, no terminal SIGINT to all
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def deaf() -> None:
    """In a worker process, before anything else: SIGINT ignored from now on, then unblocked. Setting
    it ignored discards one that came while the worker started (POSIX), so none is ever raised here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _deaf_start(initializer: Callable, initargs: tuple) -> None:
    """A pool worker's initializer: deaf first, then the analysis' own."""
    deaf()
    initializer(*initargs)


class Pool:
    """A spawned ProcessPoolExecutor whose workers never hear Ctrl-C; the command stops it.

    Spawned, not forked: a forked child would inherit HiGHS' threads and may hang. The workers
    are started as tasks are submitted (ProcessPoolExecutor spawns them in `submit`), so every
    submit holds SIGINT (sigint_held)."""

    def __init__(self, jobs: int, initializer: Callable, initargs: tuple) -> None:
        with sigint_held():
            self.executor = ProcessPoolExecutor(jobs, mp_context=get_context("spawn"), initializer=_deaf_start,
                                                initargs=(initializer, initargs))

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, kind, *exc) -> None:
        """Shut down; killed at once when the block ends in an exception (a library caller's Ctrl-C:
        the workers would otherwise finish their running tasks first)."""
        if kind is None:
            self.close()
        else:
            self.kill()

    def submit(self, fn: Callable, *args) -> Future:
        with sigint_held():
            return self.executor.submit(fn, *args)

    def stop(self, pending: set[Future], grace: float = STOP_GRACE) -> None:
        """After the workers were told to stop: wait up to `grace` for the running tasks, then kill
        the workers still alive (their solver children first) and shut the pool down. Tasks not done
        by then end with an exception (BrokenProcessPool or CancelledError), which the caller reads
        as "not done"."""
        if pending:
            wait(pending, timeout=grace)
        self.kill()

    def kill(self) -> None:
        """Every worker and its descendants killed, waited for; the pool shut down."""
        processes = list((getattr(self.executor, "_processes", None) or {}).values())
        for process in processes:
            if process.is_alive():
                kill_tree(process.pid)
        for process in processes:
            process.join()
        self.close()

    def close(self) -> None:
        """Shut the pool down: queued tasks cancelled, its threads and processes waited for."""
        self.executor.shutdown(wait=True, cancel_futures=True)


def hear_stop(stop) -> None:
    """In a worker process: the command's stop, heard through the Event `stop`, stops this process's
    solves too (none starts; a running one in a child process is killed: `interruptible`)."""
    interruptible()

    def watch() -> None:
        stop.wait()
        stop_here()
    threading.Thread(target=watch, name="gpuplan-worker-stop", daemon=True).start()


def interruptible() -> None:
    """This process's solves listen to an interrupter (solver.engine.progress), so a stop reaches the
    running one (solves of the bigger models then run in a child process the stop kills)."""
    from solver.api import arm_interrupter

    arm_interrupter()


def stop_here() -> None:
    """Stop this worker as Ctrl-C stops a command: no solve starts, the running one is interrupted."""
    from solver.api import fire_interrupter
    from solver.clock import stop_command

    stop_command("signal")
    fire_interrupter()


def reap(pids: Iterable[int], grace: float = STOP_GRACE) -> None:
    """Wait up to `grace` for the processes `pids` to end (a service shut down, its processes going
    away by themselves), then kill those still alive with everything below them."""
    left = [pid for pid in pids if alive(pid)]
    end = time.monotonic() + grace
    while left and time.monotonic() < end:
        time.sleep(0.05)
        left = [pid for pid in left if alive(pid)]
    for pid in left:
        kill_tree(pid)


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended and waiting for its parent to read it, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def kill_tree(pid: int) -> None:
    """Kill a process and every process below it. It is frozen first (SIGSTOP) so that it starts no
    new child meanwhile; its children are found by their parent id in /proc (Linux), since a solver
    child in a session of its own would outlive it otherwise (elsewhere: the process alone)."""
    _signal(pid, signal.SIGSTOP)
    for child in descendants(pid):
        _signal(child, signal.SIGKILL)
    _signal(pid, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """The processes below `pid` (children, theirs, …), read from /proc; [] where there is none."""
    parents: dict[int, list[int]] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        parents.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (OSError, AttributeError):   # gone already, or a signal this platform lacks
        pass
