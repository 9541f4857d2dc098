"""negotiate's offers analysed in the command's process, or spread over a pool of processes (`--jobs N`).

Why a pool: the offers' analyses are independent (each starts from the base plan alone,
solver.analysis.negotiate_probes `Asker.fresh`), and HiGHS solves one model on one core, so
on a machine with more cores the offers run side by side. Each worker builds its own engine
ONCE (one Instance and one model, from the same `Setup`, force rows in the same order) and
takes the base plan and its bound from the command's process instead of solving it again.
The pool is spawned, not forked (a forked child would inherit HiGHS' threads and may hang,
as solver.analysis.sweep found).

One clock: every worker stops starting solves at the command's deadline (handed over as a
time.monotonic() instant, which all processes on a machine share), and the command's stop
(its budget, or Ctrl-C) is handed on through an Event that interrupts the worker's running
solve. Workers never hear Ctrl-C (solver.analysis.workers: started with SIGINT blocked, then
ignoring it; a terminal sends it to every process of its group): the command's process hears it,
tells them to stop, and kills those still busy after a short grace; what they had not priced is
said not analysed.
Results come back by task and are put in the output's order, so the output is the same with
any --jobs.
With `--ray ADDRESS` the same workers are Ray actors (RayRunner), on this machine or a cluster.
"""

from __future__ import annotations

import copy
import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing import get_context

from solver.analysis.negotiate_offers import WORKER_FAILED, OfferTerms, not_analysed, price_limit
from solver.analysis.negotiate_probes import Asker, OutOfBudget, Setup, build_engine
from solver.analysis.ray_actors import cluster_cpus, ray_session
from solver.analysis.workers import STOP_GRACE, Pool, hear_stop, interruptible, stop_here
from solver.api import Solution
from solver.clock import RunClock, stopped
from solver.model.plan import Plan
from solver.probes import Answer
from solver.rows import ROWS


@dataclass(frozen=True)
class Shared:
    """What every offer's analysis reads: the base plan, its proven bound and values, and the rules."""

    base: Plan
    base_low: float
    base_status: str
    base_values: dict[int, float]
    margin: float
    max_solves: int
    tolerance: float


@dataclass
class Done:
    """One offer's terms, and the solves it took (all, and those not proven optimal)."""

    terms: OfferTerms
    solves: int
    unproven: int


def analyse(asker: Asker, terms: OfferTerms, drop: float, shared: Shared) -> Done:
    """One offer's walk-away or break-even price, from the base plan alone; not analysed when the
    run's time is spent before or during it."""
    t = copy.deepcopy(terms)
    asker.fresh()
    left = asker.probes.clock.left()
    if left is not None and left <= 0:
        not_analysed(t)
        return Done(t, 0, 0)
    solves, unproven = asker.solves, asker.unproven
    try:
        price_limit(asker, t, shared.base, shared.base_low, shared.margin, shared.max_solves, shared.tolerance, drop)
    except OutOfBudget:
        not_analysed(t)
    t.solves = asker.solves - solves
    return Done(t, t.solves, asker.unproven - unproven)


class Runner:
    """Runs offers' analyses in this process (jobs 1) or in one pool kept for the whole command
    (each worker builds its engine once, however many batches it is given)."""

    def __init__(self, asker: Asker, shared: Shared, jobs: int, deadline: float | None) -> None:
        self.asker, self.shared, self.jobs, self.deadline = asker, shared, jobs, deadline
        self.pool: Pool | None = None
        self.stop = None

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.close()

    def workers(self) -> int:
        """Processes the offers run in (this one counts as one)."""
        return max(1, self.jobs)

    def spent(self) -> bool:
        """The command's time is over (its deadline passed, or it was stopped): no solve will start."""
        return stopped() or (self.deadline is not None and time.monotonic() >= self.deadline)

    def run(self, work: list[tuple[OfferTerms, float]]) -> list[Done]:
        """Every (terms, estimated drop) analysed; results in the order of `work`."""
        if self.jobs <= 1 or self.spent() or (self.pool is None and len(work) <= 1):
            # one offer, or no time left to price any: no pool to start (each worker would build the model);
            # each is then said not analysed at once
            return [_announced(analyse(self.asker, terms, drop, self.shared)) for terms, drop in work]
        if self.pool is None:
            self.stop = get_context("spawn").Event()
            self.pool = Pool(self.jobs, _init_worker, (self.asker.setup, self.shared, self.deadline, self.stop))
        futures = {self.pool.submit(_pool_task, terms, drop): i for i, (terms, drop) in enumerate(work)}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, timeout=0.1, return_when=FIRST_COMPLETED)
            for fut in finished:  # each row as it comes (the table keeps the order of `work`)
                if fut.exception() is None:
                    _announced(fut.result())
            if stopped() and pending:  # the command was stopped: the workers stop too; those still busy are killed
                self.stop.set()
                self.pool.stop(pending, STOP_GRACE)
                break
        return [_done(fut, *work[i]) for fut, i in futures.items()]


def _done(fut: Future, terms: OfferTerms, drop: float) -> Done:
    """A task's result; an offer whose worker was stopped before it ended (or failed) is not analysed."""
    if not fut.done() or fut.cancelled():
        return _unfinished(terms, None)
    if isinstance(fut.exception(), BrokenProcessPool):   # its worker was killed or died
        return _unfinished(terms, fut.exception())
    return fut.result()   # its answer, or the analysis' own error, raised as in this process


def _unfinished(terms: OfferTerms, error: BaseException | None) -> Done:
    """An offer whose worker did not answer: not analysed, because the command was stopped (the reason
    says the budget, or Ctrl-C once the command's process rewords it), else because the worker died."""
    t = copy.deepcopy(terms)
    not_analysed(t)
    if not stopped():   # no stop asked for it: its worker process died (a crash, the OOM killer)
        t.reason = WORKER_FAILED if error is None else f"{WORKER_FAILED} ({type(error).__name__})"
    return Done(t, 0, 0)


class RayRunner(Runner):
    """Runs offers' analyses on Ray actors (`--ray ADDRESS`): a local instance started with `jobs`
    CPUs, or the cluster at ADDRESS with one actor per CPU it offers (or `jobs`), never more than
    `most`. Each actor holds one engine, built once; offers go one at a time to idle actors and
    come back in the order of the work, so the output is the pool's. The command's deadline is
    handed over as seconds left (machines of a cluster share no clock), and its stop reaches each
    actor's running solve (two threads per actor: one solves, one hears the stop)."""

    def __init__(self, asker: Asker, shared: Shared, jobs: int | None, deadline: float | None, address: str,
                 most: int) -> None:
        super().__init__(asker, shared, jobs or 0, deadline)
        self.address, self.most = address, most
        self.stack = ExitStack()
        self.ray = None
        self.actors: list = []

    def __exit__(self, *exc) -> None:
        """Ray shut down (its processes and the actors' solver children with it: solver.analysis.ray_actors)."""
        self.stack.close()

    def workers(self) -> int:
        """Actors started (this process counts as one while every offer ran in it)."""
        return max(1, len(self.actors))

    def run(self, work: list[tuple[OfferTerms, float]]) -> list[Done]:
        if self.spent() or (not self.actors and len(work) <= 1):  # one offer, or no time: no cluster to start
            return [_announced(analyse(self.asker, terms, drop, self.shared)) for terms, drop in work]
        if not self.actors:
            self._start()
        out: list[Done | None] = [None] * len(work)
        waiting, pending, give_up = list(range(len(work)))[::-1], {}, None

        def give(actor) -> None:
            if waiting and not stopped():
                i = waiting.pop()
                pending[actor.analyse.remote(*work[i])] = (i, actor)
        for actor in self.actors:
            give(actor)
        while pending and (give_up is None or time.monotonic() < give_up):
            finished, _ = self.ray.wait(list(pending), num_returns=1, timeout=0.1)
            for ref in finished:
                i, actor = pending.pop(ref)
                out[i] = _announced(self._answer(ref, work[i][0]))
                give(actor)
            if stopped() and give_up is None:
                # the command was stopped: the actors stop too and say what they had; those still busy
                # after the grace (building their engine) are left to Ray's shutdown
                give_up = time.monotonic() + STOP_GRACE
                for actor in self.actors:
                    actor.stop.remote()
        return [done if done is not None else _unfinished(work[i][0], None) for i, done in enumerate(out)]

    def _answer(self, ref, terms: OfferTerms) -> Done:
        """An actor's answer; not analysed when the actor died (Ray raises its error here)."""
        dead = (self.ray.exceptions.RayActorError, self.ray.exceptions.WorkerCrashedError)
        try:
            return self.ray.get(ref)
        except dead as exc:   # its offer is said not analysed, never a traceback
            return _unfinished(terms, exc)

    def _start(self) -> None:
        self.ray = ray = self.stack.enter_context(ray_session(self.address, self.jobs or os.cpu_count() or 1, "--ray"))
        n = max(1, min(self.jobs or cluster_cpus(ray), self.most))
        left = None if self.deadline is None else max(0.0, self.deadline - time.monotonic())
        base = ray.put((self.asker.setup, self.shared))
        actor = ray.remote(num_cpus=1, max_concurrency=2)(_RayAsker)
        self.actors = [actor.remote(base, left) for _ in range(n)]


class _RayAsker:
    """A Ray actor: one worker's engine, built once; `stop` runs beside `analyse`."""

    def __init__(self, base: tuple[Setup, Shared], left: float | None) -> None:
        setup, self.shared = base
        interruptible()
        self.asker = _worker(setup, self.shared, None if left is None else time.monotonic() + left)

    def analyse(self, terms: OfferTerms, drop: float) -> Done:
        return analyse(self.asker, terms, drop, self.shared)

    def stop(self) -> None:
        stop_here()


_ASKER: Asker | None = None     # each worker's one engine
_SHARED: Shared | None = None


def _init_worker(setup: Setup, shared: Shared, deadline: float | None, stop) -> None:
    """A pool process (deaf to Ctrl-C: solver.analysis.workers): the command's stop heard through
    `stop` from the start, so one that comes while the engine is built keeps every solve from starting;
    then its one engine."""
    global _ASKER, _SHARED
    hear_stop(stop)
    _ASKER, _SHARED = _worker(setup, shared, deadline), shared


def _worker(setup: Setup, shared: Shared, deadline: float | None) -> Asker:
    """Build a worker's engine once and take the base plan as its start and bound; no solve of it
    starts after `deadline` (a time.monotonic() instant)."""
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    clock = RunClock(setup.time_limit, None if left is None else time.perf_counter() + left, least=0.0)
    probes, shut = build_engine(setup, clock)
    solution = Solution(probes.milp, shared.base_status, shared.base.total_cost, shared.base_low, 0.0,
                        probes.backend, dict(shared.base_values))
    asker = Asker(probes, setup, shut)
    asker.adopt_base(Answer(shared.base_status, shared.base_low, shared.base, solution))
    return asker


def _pool_task(terms: OfferTerms, drop: float) -> Done:
    return analyse(_ASKER, terms, drop, _SHARED)


def _announced(done: Done) -> Done:
    """Tell the command line the offer's row is determined (solver.rows), in words; not an offer the
    command's stop left unanalysed (the table says so, once, instead of a line per offer)."""
    if done.terms.analysed:
        ROWS.announce(row_words(done.terms))
    return done


def row_words(t: OfferTerms) -> str:
    """An offer's row in one line: its walk-away or break-even price (an interval when unproven),
    or why it has none."""
    if t.limit_price is None:
        return f"{t.offer}: {t.reason or 'no price found'}"
    kind = (t.limit_kind or "limit").replace("_", "-")
    low, high = t.limit_low, t.limit_high
    price = (f"{low:,.2f} to {high:,.2f}" if low is not None and high is not None and abs(high - low) > 0.005
             else f"{t.limit_price:,.2f}")
    return f"{t.offer}: {kind} price {price} {t.price_unit}"

