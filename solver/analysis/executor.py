"""One executor for the analyses that spread independent tasks over processes (sweep's scenarios,
negotiate's offers): in the command's process, in a pool of spawned processes, or on Ray actors.

Why one module (issue 44): sweep's two executors and negotiate's process pool and Ray runner were
the same feed-and-collect loop four times, with different policies when a worker died: sweep wrote
a failed row, negotiate raised (a traceback) or, on Ray, handed the dead actor its next offer. Here
there is one loop per kind of worker and one policy for each way a task can end without an answer:

- its worker died, or the task raised in it (a crash, the system's memory killer, a bug): `Lost`
  with `died` True and the error, which the analysis shows as its row ("worker failed: …"); no
  further task goes to a Ray actor that failed, and when none is left the tasks not started are
  lost the same way;
- the command was stopped (its budget, or Ctrl-C: solver.clock.stopped) first: no task starts,
  the workers are told to stop (solver.analysis.workers: deaf to Ctrl-C, stopped through an Event
  or an actor's `stop`), those still busy after STOP_GRACE are killed (Ray's with its shutdown),
  and what they had not answered is `Lost` with `died` False.

A worker's state is built once (`init(*init_args, deadline)`, e.g. one engine of the base
problem) and every task of the worker runs on it (`task(state, *args)`); `init` and `task` are
module-level functions (a spawned process or a Ray actor imports them by name). `deadline` is the
time.monotonic() instant after which no solve of the command starts: a pool's processes share
the machine's clock, a Ray actor is handed the seconds left (a cluster's machines share none).
Results are returned in the order of the work whatever ran them, and `on_result(i, result)` hears
each as it arrives.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from solver.analysis.ray_actors import cluster_cpus, ray_session
from solver.analysis.workers import STOP_GRACE, Pool, hear_stop, interruptible, stop_here
from solver.clock import stopped

Init = Callable[..., Any]
"""init(*init_args, deadline) → a worker's state, built once in each worker."""
Task = Callable[..., Any]
"""task(state, *args) → the task's result."""
Heard = Callable[[int, Any], None]
"""on_result(index in the work, result or Lost)."""


@dataclass(frozen=True)
class Lost:
    """A task that ended without an answer. `died`: its worker died or the task raised there (`error`
    says how); else the command's stop came first."""

    died: bool
    error: str = ""

    def words(self) -> str:
        """The one wording of a dead worker, for the row that takes its place."""
        return f"worker failed: {self.error}".strip() if self.died else "not done: the command was stopped"


def lost(exc: BaseException) -> Lost:
    """A task's error as a Lost task: died, unless the command's stop killed its worker."""
    return Lost(not stopped(), f"{type(exc).__name__}: {exc}".strip().rstrip(":"))


NO_WORKER_LEFT = Lost(True, "no worker left to run it (every one failed)")


class Executor:
    """Runs tasks here, in a pool of `jobs` spawned processes, or on Ray actors (`ray`: an address,
    "local" or "auto"; `jobs` actors, or one per CPU the cluster offers, never more than `most`).
    The pool or the actors are started at the first run that is not here and kept until the block
    ends, each worker's state built once however many runs it is given."""

    def __init__(self, init: Init, init_args: tuple, task: Task, *, local: Callable[[], Any], jobs: int,
                 deadline: float | None = None, ray: str | None = None, ray_key: str = "--ray",
                 most: int | None = None) -> None:
        self.init, self.init_args, self.task, self.local = init, init_args, task, local
        self.jobs, self.deadline, self.ray_address, self.ray_key, self.most = jobs, deadline, ray, ray_key, most
        self.pool: Pool | None = None
        self.stop = None
        self.stack = ExitStack()
        self.ray = None
        self.actors: list = []          # the actors alive (one whose task failed is dropped)
        self.actors_started = 0
        self.here_state: Any = None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc) -> None:
        """The pool shut down, or Ray with its processes (solver.analysis.ray_actors)."""
        if self.pool is not None:
            self.pool.close()
        self.stack.close()

    @property
    def started(self) -> bool:
        """A pool or actors are running (a later run uses them, even for one task)."""
        return self.pool is not None or self.actors_started > 0

    def workers(self) -> int:
        """Processes or actors the tasks ran in (this process counts as one while every task ran here)."""
        return max(1, self.actors_started) if self.ray_address else max(1, self.jobs)

    def run(self, work: Sequence[tuple], on_result: Heard | None = None, *, here: bool = False) -> list:
        """Every task's result (or Lost) in the order of `work`; `here`: in this process."""
        heard = on_result or (lambda i, result: None)
        if here:
            return self._here(work, heard)
        if self.ray_address:
            return self._on_ray(work, heard)
        return self._in_pool(work, heard)

    # -- here ---------------------------------------------------------------------------------
    def _here(self, work: Sequence[tuple], heard: Heard) -> list:
        """Each task in this process, until the command is stopped."""
        if self.here_state is None:
            self.here_state = self.local()
        results: list = [Lost(False)] * len(work)
        for i, args in enumerate(work):
            if stopped():
                break
            results[i] = self.task(self.here_state, *args)
            heard(i, results[i])
        return results

    # -- a pool of processes --------------------------------------------------------------------
    def _in_pool(self, work: Sequence[tuple], heard: Heard) -> list:
        if self.pool is None:
            self.stop = get_context("spawn").Event()
            self.pool = Pool(self.jobs, _init_process, (self.init, self.init_args, self.deadline, self.stop))
        futures = {self.pool.submit(_in_process, self.task, *args): i for i, args in enumerate(work)}
        results: list = [Lost(False)] * len(work)
        pending = set(futures)
        while pending and not stopped():
            finished, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            for fut in finished:  # each as it comes
                results[futures[fut]] = _outcome(fut)
                heard(futures[fut], results[futures[fut]])
        if pending:  # the command was stopped: so are the workers; those still busy after the grace are killed
            self.stop.set()
            self.pool.stop(pending, STOP_GRACE)
            for fut in pending:  # an answer given within the grace is kept (not heard: the stop was)
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    results[futures[fut]] = fut.result()
        return results

    # -- Ray actors -------------------------------------------------------------------------------
    def _on_ray(self, work: Sequence[tuple], heard: Heard) -> list:
        """Each idle actor gets the next task; an actor whose task fails gets no more."""
        if not self.actors_started:
            self._start_actors()
        results: list = [Lost(False)] * len(work)
        waiting, pending, give_up = list(range(len(work)))[::-1], {}, None

        def give(actor) -> None:
            if waiting and not stopped():
                i = waiting.pop()
                pending[actor.run.remote(self.task, work[i])] = (i, actor)
        for actor in list(self.actors):
            give(actor)
        while (pending or (waiting and not stopped())) and (give_up is None or time.monotonic() < give_up):
            finished = self.ray.wait(list(pending), num_returns=1, timeout=0.1)[0] if pending else []
            for ref in finished:
                i, actor = pending.pop(ref)
                try:
                    results[i] = self.ray.get(ref)
                    give(actor)
                except Exception as exc:  # noqa: BLE001 — a dead actor, or its task's error: the row says so
                    results[i] = lost(exc)
                    self.actors.remove(actor)
                heard(i, results[i])
            if stopped() and give_up is None:
                # the actors stop too and say what they had; those still busy after the grace (building
                # their engine) are left to Ray's shutdown
                give_up = time.monotonic() + STOP_GRACE
                for actor in self.actors:
                    actor.stop.remote()
            if not pending and waiting and not stopped():  # no actor left alive to take the rest
                for j in reversed(waiting):
                    results[j] = NO_WORKER_LEFT
                    heard(j, results[j])
                waiting.clear()
        return results

    def _start_actors(self) -> None:
        self.ray = ray = self.stack.enter_context(
            ray_session(self.ray_address, self.jobs or os.cpu_count() or 1, self.ray_key))
        n = max(1, min(self.jobs or cluster_cpus(ray), self.most or cluster_cpus(ray)))
        left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        base = ray.put(self.init_args)
        actor = ray.remote(num_cpus=1, max_concurrency=2)(_Actor)
        self.actors = [actor.remote(self.init, base, left) for _ in range(n)]
        self.actors_started = n


def _outcome(fut: Future) -> Any:
    """A pool task's result; Lost when its worker died or it raised there."""
    error = fut.exception()
    return fut.result() if error is None else lost(error)


class _Actor:
    """A Ray actor: one worker's state, built once; `stop` runs beside `run` (two threads per actor:
    one runs the task, one hears the stop)."""

    def __init__(self, init: Init, init_args: tuple, left: float | None) -> None:
        interruptible()
        self.state = init(*init_args, None if left is None else time.monotonic() + left)

    def run(self, task: Task, args: tuple) -> Any:
        return task(self.state, *args)

    def stop(self) -> None:
        stop_here()


_STATE: Any = None   # a pool process's worker state


def _init_process(init: Init, init_args: tuple, deadline: float | None, stop) -> None:
    """A pool process (deaf to Ctrl-C: solver.analysis.workers): the command's stop heard through `stop`
    from the start, so one that comes while the state is built keeps every solve from starting."""
    global _STATE
    hear_stop(stop)
    _STATE = init(*init_args, deadline)


def _in_process(task: Task, *args) -> Any:
    return task(_STATE, *args)
