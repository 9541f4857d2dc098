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
With `--ray ADDRESS` the same workers are Ray actors, on this machine or a cluster. The loop that
feeds them and collects their answers, and what an offer whose worker died says, are
solver.analysis.executor's, the same as sweep's.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass

from solver.analysis.executor import Executor, Lost
from solver.analysis.negotiate_offers import OfferTerms, not_analysed, price_limit
from solver.analysis.words import NOT_ANALYSED
from solver.analysis.negotiate_probes import Asker, Setup, build_engine
from solver.api import Solution
from solver.clock import OutOfTime, RunClock, stopped
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
    except OutOfTime:
        not_analysed(t)
    t.solves = asker.solves - solves
    return Done(t, t.solves, asker.unproven - unproven)


class Runner:
    """Runs offers' analyses (solver.analysis.executor): in this process (jobs 1, one offer, or no time
    left), in one pool of `jobs` processes kept for the whole command, or on Ray actors with `ray` (a
    local instance started with `jobs` CPUs, or the cluster at that address with one actor per CPU it
    offers, or `jobs`, never more than `most`). Each worker builds its engine once, however many
    batches it is given; an offer whose worker died is said not analysed, with why."""

    def __init__(self, asker: Asker, shared: Shared, jobs: int | None, deadline: float | None,
                 ray: str | None = None, most: int = 1) -> None:
        self.deadline = deadline
        self.executor = Executor(_worker, (asker.setup, shared), _analyse, local=lambda: (asker, shared),
                                 jobs=jobs or 0, deadline=deadline, ray=ray, ray_key="--ray", most=most)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc) -> None:
        self.executor.__exit__(*exc)

    def workers(self) -> int:
        """Processes or actors the offers ran in (this one counts as one)."""
        return self.executor.workers()

    def spent(self) -> bool:
        """The command's time is over (its deadline passed, or it was stopped): no solve will start."""
        return stopped() or (self.deadline is not None and time.monotonic() >= self.deadline)

    def run(self, work: list[tuple[OfferTerms, float]]) -> list[Done]:
        """Every (terms, estimated drop) analysed; results in the order of `work`. One offer, or no time
        left to price any: no pool or cluster to start (each worker would build the model); each is
        then said not analysed at once."""
        ex = self.executor
        here = self.spent() or (not ex.started and (len(work) <= 1 or (not ex.ray_address and ex.jobs <= 1)))
        out = ex.run(work, lambda i, result: _announced(result) if isinstance(result, Done) else None, here=here)
        return [result if isinstance(result, Done) else _unfinished(work[i][0], result) for i, result in enumerate(out)]


def _unfinished(terms: OfferTerms, lost: Lost) -> Done:
    """An offer whose worker did not answer: not analysed, because the command was stopped (the reason
    says the budget, or Ctrl-C once the command's process rewords it), else because its worker died
    (solver.analysis.executor's words for it)."""
    t = copy.deepcopy(terms)
    not_analysed(t)
    if lost.died:
        t.reason = f"{NOT_ANALYSED}: {lost.words()}"
    return Done(t, 0, 0)


def _analyse(state: tuple[Asker, Shared], terms: OfferTerms, drop: float) -> Done:
    """One offer's task on a worker's engine (solver.analysis.executor)."""
    asker, shared = state
    return analyse(asker, terms, drop, shared)


def _worker(setup: Setup, shared: Shared, deadline: float | None) -> tuple[Asker, Shared]:
    """Build a worker's engine once and take the base plan as its start and bound; no solve of it
    starts after `deadline` (a time.monotonic() instant)."""
    left = None if deadline is None else max(0.0, deadline - time.monotonic())
    clock = RunClock(setup.time_limit, None if left is None else time.perf_counter() + left, least=0.0)
    probes, shut = build_engine(setup, clock)
    solution = Solution(probes.milp, shared.base_status, shared.base.total_cost, shared.base_low, 0.0,
                        probes.backend, dict(shared.base_values))
    asker = Asker(probes, setup, shut)
    asker.adopt_base(Answer(shared.base_status, shared.base_low, shared.base, solution))
    return asker, shared


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

