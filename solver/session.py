"""Session: one built model, re-bounded and re-solved, for the frontiers and the min-time objective.

Why in the api layer (solver/, beside solver/api.py), not in solver/analysis: a Session is
a way of solving, like solver.api.solve_built, only with memory. It changes the built
model's bounds and rows itself, solves it raw (solver.engine.solve), searches over one job's
fabric choices (solver.milp.decompose) and verifies every plan it returns, so it needs the
MILP's handles that the analyses never touch; the analyses (solver.analysis.min_time,
solver.analysis.frontier) only ask it for plans under limits (solver.limits). It imports
solver.api and the MILP; solver.api does not import it.

Why a cap on a built model, not a rebuilt problem: whether some plan finishes by day D is
monotone in D, so the earliest D is found by bisection — a dozen solves of one problem
that differ only in when work may run. Replica variables exist only in periods wholly
inside their job's window, so "every job done by D" is exactly "no replica in a period
ending after D": upper bounds of zero on one model built once, restored afterwards.
The cap limits when work runs and nothing else: the plan is priced as the problem
prices it (storage for each job's whole window), so every point of a frontier is a plan
of the same problem, comparable in cost.

Why feasibility probes: asking "is there any plan by D" with a zero objective stops at
the first plan found (measured 0.03–0.1 s on the bundled problems, where the min-cost
solve takes 0.3–3 s); only the final D gets a min-cost solve. A probe's plan may finish
before D, which moves the bisection's upper end straight to its finish.

Session keeps, for each fabric choice of the one job that chooses (see
solver.milp.decompose), the last plan and proven bound found. When the next solve only
tightens the model (an earlier cap, a smaller budget, spot share or vendor count), those
bounds stay valid and a remembered plan that meets the tighter limits is still optimal:
a frontier swept from loose to tight re-solves only where the answer changes.

Why on the probe engine (solver.probes, issue 34): the model is the engine's, built once, and
every solve, LP bound and feasibility probe of a Session is a probe of it, the limits and the
fabric choice its changes (solver.limits.Limits.changes, solver.probes.Choice). So what one
probe found starts the next (MIP start), a tightening probe is bounded by the problem's own
optimum (and answered without a solve when a plan in hand costs that), and the command's one
clock (solver.clock) cuts every solve. What the engine does not know stays here: the search
over one job's fabric choices, each bounded by an LP (a `Relaxed` probe of the same model), and
the memory of each choice's plan and bound while the limits only tighten.
"""

from __future__ import annotations

import bisect
import heapq
import math
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, replace

from solver.api import DEFAULT_BACKEND, PROGRESS, explain_quick
from solver.clock import OutOfTime, RunClock, ctrl_c_or, fix_for_time
from solver.errors import Infeasible, PlanRejected
from solver.limits import Limits, finish_day, plan_vendors
from solver.milp.decompose import choices_by_job
from solver.milp.extract import extract_plan
from solver.milp.families.spot import spot_terms, spot_work
from solver.milp.families.vendors import vendor_nodes, vendors_used
from solver.milp.registry import SPOT, VENDORS
from solver.milp.solution import OPTIMALITY_GAP, Solution
from solver.milp.work import grain_work
from solver.model.catalog import Catalog
from solver.model.modes import MODES
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Answer, Change, Choice, Probes, Relaxed, any_plan
from solver.verify import check_plan

INF = math.inf
Step = Callable[[int, bool], None]
"""Told each day a bisection probes: (day, whether some plan finishes by it)."""
EFFORT = 0.25
"""Time of an earlier-at-the-same-cost probe, as a share of the solve it follows, on a backend that
takes no node limit (SCIP, CP-SAT: solver.engine.backends passes PROGRESS.node_limit to HiGHS only)."""
EARLIER_NODES = 1
"""Branch-and-bound nodes an earlier-at-the-same-cost probe may search (HiGHS; the root is node 1).
Why nodes, not time: the limit was EFFORT × the solve's time (at least 0.5 s), and
seed-7b-200b-30d's checks, each proven at the root, ran 0.5-0.75 s at a load of 8 on 2 cores:
the frontier's answer (its golden case) then depended on the load. A node limit stops the
same search at the same place on any machine. One node, measured with no limit on the bundled
problems: the root settles every check of seed-7b-200b-30d, seed-13b-100b, hybrid-burst and
data-locality (proven or a plan found at node 0 or 1); debug-then-train's two checks need 5 and
274 nodes (~10 s of root work each, after a 12-s solve) and stay unsettled, as the time limit left
them on a quiet machine. The root is searched whole whatever its time; the command's budget still
ends it (solver.clock.hard_stop)."""


@dataclass
class _Known:
    """What is known of one fabric choice under the remembered limits (valid for tighter ones)."""

    bound: float = -INF
    sol: Solution | None = None
    infeasible: bool = False
    lp_done: bool = False      # bounded by an LP under the remembered limits


class Session:
    """One built model, re-bounded and re-solved: caps on finishing day, budget, spot work, vendors.

    `spot=True` adds the row `Frontier-Spot`: Σ work on spot nodes ≤ ε (EFLOP, counted as
    the work rows count it). `vendors=True` adds a flag per vendor, rows tying every node
    and contract variable at that vendor to its flag, and `Frontier-Vendors`: Σ flags ≤ ε.

    Solving is an exact search over the one choosing job's fabric choices (solver.milp.decompose;
    each fixed by a `Choice` change): choices visited best LP bound first, each solved as a
    MILP probe with the choice fixed, until no open bound can beat the best plan; with two
    additions: each choice's LP bound is a `Relaxed` probe of the same model under the same
    limits (a cap makes a choice's bound rise fast, or shows it infeasible, for the price of
    one LP), and what was learnt under looser limits — a choice's bound, its plan, its
    infeasibility — is kept while the limits only tighten. With several choosing jobs, or
    none, the full MILP is probed (as a plain solve does). When the command's time ends in
    the middle of a search with a plan in hand, that plan is returned with the least open
    bound: an interval, status "feasible".
    Plans are verified against the problem by solver.verify, and the limits are checked
    again on the plan itself before it is returned.
    """

    def __init__(self, problem: Problem, catalog: Catalog, *, backend: str = DEFAULT_BACKEND,
                 time_limit: float | None = None, gap: float | None = None,
                 spot: bool = False, vendors: bool = False, lp_bounds: bool = True,
                 stop_at: float | None = None, engine: Probes | None = None) -> None:
        """`engine`: the command's probe engine for `problem` (its model and clock; the spot and
        vendor rows asked for are added to it), else one built here on a clock of `time_limit`
        per solve, none started after `stop_at`."""
        self.problem, self.catalog = problem, catalog
        self.lp_bounds = lp_bounds  # False: each choice's LP bound once per tightening run
        self.gap = gap if engine is None else engine.gap
        if engine is None:
            engine = Probes(problem, catalog, backend=backend, gap=gap, clock=RunClock(time_limit, stop_at))
        self.engine, self.clock = engine, engine.clock  # OutOfTime once the clock's time has passed
        self.inst, self.milp = self.engine.inst, self.engine.milp
        self.tolerance = gap if gap is not None else OPTIMALITY_GAP
        self.latest = max(j.deadline_days for j in problem.jobs)
        self.ends = [self.inst.timeline.end(t) for t in self.inst.periods]
        self.required = sum(self.inst.required.values())
        self.base_limits = self.limits = Limits(self.latest, problem.budget)
        self.spot, self.vendors = spot, vendors
        self._with_rows()
        self.spot_terms = spot_terms(self.milp)
        self.vendor_of = vendor_nodes(self.milp)
        choosing = choices_by_job(self.milp)
        self._flags: list = next(iter(choosing.values())) if len(choosing) == 1 else []
        self.last: Solution | None = None     # what the last solve() returned
        self.last_seconds = 0.0
        self.unsettled: list[int] = []        # finishing days earlier_at_same_cost could not settle
        self._memory: dict[int | None, _Known] = {}
        self._memory_limits: Limits | None = None
        self.milp_solves = self.lp_solves = self.probes = self.reused = 0
        self.plans: list[Plan] = []
        self.bracket: tuple[int, int, Solution] | None = None  # earliest_cap's progress (see there)

    @property
    def answered_without_solve(self) -> int:
        """Probes the engine answered with a plan in hand (solver.probes): no solve ran."""
        return self.engine.answered_without_solve

    # ----- limits -----------------------------------------------------------------------------
    def _with_rows(self) -> None:
        """The spot and vendor rows asked for, unbounded, added before anything is solved (so
        every plan the engine keeps is a plan of the model with them)."""
        for asked, fam in ((self.spot, SPOT), (self.vendors, VENDORS)):
            if asked:
                fam.set_bound(self.milp, "", INF)

    def _set(self, **change) -> None:
        self.limits = replace(self.limits, **change)

    def _changes(self) -> list[Change]:
        """The current limits as changes of the engine's model (which holds the problem's own)."""
        return list(self.limits.changes(self.base_limits))

    def set_cap(self, day: int | None) -> None:
        """Every job done by `day` (None: by its own deadline)."""
        self._set(cap=self.latest if day is None else min(int(day), self.latest))

    def set_budget(self, value: float | None) -> None:
        """Total cost ≤ min(value, the problem's budget); None: the problem's own budget."""
        own = self.problem.budget
        self._set(budget=own if value is None else (value if own is None else min(value, own)))

    def set_spot(self, eflop: float | None) -> None:
        assert self.spot, "Session(spot=True) adds the spot row"
        self._set(spot=eflop)

    def set_vendors(self, count: int | None) -> None:
        assert self.vendors, "Session(vendors=True) adds the vendor rows"
        self._set(vendors=count)

    # ----- what a solution does ----------------------------------------------------------------
    def finish(self, sol: Solution) -> int:
        return max((self.ends[t] for (i, t), var in self.milp.replicas.items() if sol.count(var) > 0), default=0)

    def spot_work(self, sol: Solution) -> float:
        return spot_work(self.spot_terms, sol)

    def plan_spot_work(self, plan: Plan, *, spot_only: bool = True) -> float:
        """Work (EFLOP, as the Frontier-Spot row counts it) the plan does on spot nodes, or in all."""
        index = {(o.job, o.config): i for i, o in enumerate(self.inst.options)}
        return sum(a.replicas * grain_work(self.milp, index[a.job, f"{a.offer}:{a.interconnect}"], a.period)
                   for a in plan.schedule.assignments
                   if not spot_only or MODES[self.catalog.offers[a.offer].mode].preemptible)

    def plan_spot_share(self, plan: Plan) -> float:
        """Share of the work the plan does that runs on spot nodes (at most 1).

        Why the work done, not the work needed, here: whole replicas do a little more than
        the need, so an all-spot plan's spot work ÷ need read 101%. The Frontier-Spot row
        still bounds spot work by ε × the need (a fixed denominator: a share of work done
        could be lowered by surplus replicas on idle non-spot nodes); since the work done is
        at least the need, a plan within that row has a share of at most ε."""
        done = self.plan_spot_work(plan, spot_only=False)
        return self.plan_spot_work(plan) / done if done > 0 else 0.0

    def vendors_used(self, sol: Solution) -> set[str]:
        return vendors_used(self.vendor_of, sol)

    def meets(self, sol: Solution, limits: Limits | None = None) -> bool:
        lim = limits or self.limits
        return (self.finish(sol) <= lim.cap
                and (lim.budget is None or sol.objective <= lim.budget * (1 + 1e-9) + 1e-6)
                and (lim.spot is None or self.spot_work(sol) <= lim.spot + 1e-9 * max(1.0, self.required))
                and (lim.vendors is None or len(self.vendors_used(sol)) <= lim.vendors))

    # ----- solving -----------------------------------------------------------------------------
    def probe(self, time_limit: float | None = None) -> Solution | None:
        """Any plan under the current limits (zero objective), or None when there is proven none.
        Infeasible(proven=False) when the time limit (the smaller of the command's and this)
        stops it first. A plan remembered, by this Session or the engine, that meets the limits
        answers without a solve."""
        for known in self._memory.values():
            if known.sol is not None and self.meets(known.sol):
                return known.sol
        answer = any_plan(self.engine, *self._changes(), time_limit=time_limit)
        self.probes += answer.solved
        if answer.solution is not None:
            return answer.solution
        if answer.status == "infeasible":
            return None
        raise Infeasible(f"cannot tell whether a plan exists {self.describe()}: {answer.why}",
                         reasons=fix_for_time(f"raise {self.clock.more_time}, or try another --backend"), proven=False)

    def earliest_cap(self, hi: int | None = None, on_step: Step | None = None) -> int:
        """Smallest day D such that some plan finishes by D under the other limits (bisection
        over period ends; `hi` a day known or assumed feasible). Leaves the cap where it was.
        `on_step(day, found)`: told each day probed and whether a plan finishes by it. Until it
        returns, `bracket` holds what is settled: (the earliest day not ruled out, the earliest
        day a plan is known for, that plan), for a caller the time stopped (OutOfTime)."""
        return self._earliest(hi, on_step=on_step)[0]

    def _earliest(self, hi: int | None = None, *, lo: int = 0, known: Solution | None = None,
                  step_first: bool = False, probe_limit: float | None = None,
                  on_step: Step | None = None) -> tuple[int, Solution]:
        """(earliest day after `lo`, a plan finishing by then). `known`: a plan meeting the
        current limits (saves the first probe); `step_first`: probe one period before its
        finish first, the usual answer when `known` is already the earliest."""
        saved = self.limits.cap
        top = self.latest if hi is None else min(hi, self.latest)
        days = [d for d in sorted(set(self.ends)) if lo < d <= top]
        tell = on_step or (lambda day, found: None)
        self.bracket = None
        try:
            sol = known
            if sol is None:
                if not days:
                    raise Infeasible(f"no plan finishing by day {top}", reasons=explain_quick(self.inst))
                self.set_cap(days[-1])
                sol = self.probe(probe_limit)
                tell(days[-1], sol is not None)
                if sol is None:
                    raise Infeasible(f"no plan {self.describe()}", reasons=explain_quick(self.inst))
            lo_i, hi_i = 0, max(0, bisect.bisect_right(days, self.finish(sol)) - 1)
            first = step_first
            while lo_i < hi_i:
                self.bracket = (days[lo_i], days[hi_i], sol)
                mid = hi_i - 1 if first else (lo_i + hi_i) // 2
                first = False
                self.set_cap(days[mid])
                found = self.probe(probe_limit)
                tell(days[mid], found is not None)
                if found is None:
                    lo_i = mid + 1
                else:
                    sol, hi_i = found, min(mid, bisect.bisect_right(days, self.finish(found)) - 1)
            self.bracket = (days[hi_i], days[hi_i], sol)
            return days[hi_i], sol
        finally:
            self.set_cap(saved)

    def unminimised(self, sol: Solution) -> Plan:
        """A plan a feasibility probe found (its cost not minimised), verified under the current
        limits, its cost's bound 0 at most: for a search the time stopped, never as optimal."""
        plan = self._plan(replace(sol, bound=max(0.0, min(sol.bound, sol.objective))))
        return plan.model_copy(update={"status": "feasible"})

    def earlier_at_same_cost(self, after: int = 0, nodes: int | None = EARLIER_NODES) -> Plan | None:
        """After solve(): the earliest plan finishing after day `after` that costs no more than
        the one just found (so it is optimal too), or None when that one finishes earliest.

        One feasibility probe when it does — but a hard one, as hard as proving the cost
        optimal a period earlier (debug-then-train: 10 s after a 12 s solve). So a frontier
        asks only about days its grid skips, and each probe may search `nodes` branch-and-bound
        nodes (None: no limit; another backend than HiGHS, which takes no node limit here: EFFORT
        × the solve's time, at least 0.5 s). When that runs out the plan is kept as found and its
        finishing day is added to `unsettled`: an equally cheap plan might finish earlier. Makes
        points lexicographic: cheapest first, then earliest.
        """
        last = self.last
        assert last is not None, "call solve() first"
        if self.finish(last) <= after + 1:
            return None
        saved = self.limits
        highs = self.engine.backend == "highs"
        limit = None if nodes is None or highs else max(0.5, EFFORT * self.last_seconds)
        self.set_budget(last.objective * (1 + 1e-9) + 1e-6)
        try:
            with _nodes_at_most(nodes if highs else None):
                _, sol = self._earliest(self.finish(last), lo=after, known=last, step_first=True, probe_limit=limit)
        except Infeasible as exc:
            if exc.proven:
                raise
            self.unsettled.append(self.finish(last))
            return None
        finally:
            self._set(budget=saved.budget)
        if sol is last:
            return None
        better = replace(sol, bound=min(last.bound, sol.objective))
        better.status = "optimal" if better.gap <= self.tolerance + 1e-12 else "feasible"
        return self._plan(better)

    def solve(self) -> Plan:
        """Cheapest verified plan under the current limits; Infeasible when there is none."""
        start = time.perf_counter()
        try:
            self.last = sol = self._solve()
        finally:
            self.last_seconds = time.perf_counter() - start
        if self.limits == self.base_limits and self.engine.base is None:  # the problem's own optimum bounds
            self.engine.base = Answer(sol.status, sol.bound, None, sol)   # every tighter probe's
        plan = self._plan(sol)
        self.plans.append(plan)  # every verified plan, for a frontier cut short (OutOfTime)
        return plan

    def _solve(self) -> Solution:
        if self._memory_limits is None or not self.limits.within(self._memory_limits):
            self._memory = {}  # loosened: what was learnt no longer holds
        self._memory_limits = self.limits
        keys: list[int | None] = list(range(len(self._flags))) if self._flags else [None]
        queue = []
        for k in keys:
            known = self._memory.setdefault(k, _Known())
            if not known.infeasible:
                heapq.heappush(queue, (known.bound, -1 if k is None else k, k))
        fresh: set[int | None] = set() if self._flags else {None}
        best: Solution | None = None
        open_bound = INF
        began = time.perf_counter()
        budget = self.clock.time_limit  # for all of this solve's choices (the command's clock cuts each)
        while queue:
            lower, _, k = heapq.heappop(queue)
            if best is not None and lower >= best.objective * (1 - self.tolerance):
                break
            known = self._memory[k]
            try:
                if known.sol is not None and self.meets(known.sol):
                    sol = known.sol  # still meets the tighter limits: still the best under this choice
                    self.reused += 1
                elif k not in fresh and not (known.lp_done and not self.lp_bounds):
                    fresh.add(k)  # bound this choice under the current limits before solving it
                    known.lp_done = True
                    lp = self._lp_bound(k)
                    if lp is None:
                        known.infeasible = True
                    else:
                        known.bound = max(known.bound, lp)
                        heapq.heappush(queue, (known.bound, -1 if k is None else k, k))
                    continue
                else:
                    left = None if budget is None else budget - (time.perf_counter() - began)
                    if left is not None and left <= 0:
                        open_bound = min(open_bound, lower)
                        break
                    sol = self._solve_choice(k, left)
                    if sol is None:
                        if not known.infeasible:  # stopped by the time limit: still open
                            open_bound = min(open_bound, lower)
                        continue
            except OutOfTime:
                if best is None:
                    raise
                open_bound = min(open_bound, lower)  # the command's time ended: what is found, as an interval
                break
            if sol.status != "optimal":
                open_bound = min(open_bound, sol.bound)
            if best is None or sol.objective < best.objective:
                best = sol
        if best is None:
            proven = open_bound == INF
            why = "proven infeasible" if proven else ctrl_c_or("no plan found within the time limit",
                                                                 "no plan found before Ctrl-C stopped the run")
            raise Infeasible(f"no plan {self.describe()} ({why})",
                             reasons=explain_quick(self.inst) if proven else fix_for_time(f"raise {self.clock.more_time}"),
                             proven=proven)
        out = replace(best, bound=min(best.objective, open_bound))
        out.status = "optimal" if out.gap <= self.tolerance + 1e-12 else "feasible"
        return out

    def _choice(self, k: int | None) -> list[Change]:
        return [] if k is None else [Choice(f"fabric choice {k}", True, self._flags, k)]

    def _lp_bound(self, k: int | None) -> float | None:
        """LP bound of choice k under the current limits (a `Relaxed` probe of the same model);
        None when the LP is infeasible."""
        assert k is not None
        self.lp_solves += 1
        answer = self.engine.probe(*self._changes(), *self._choice(k), Relaxed("LP relaxation"),
                                   verify=False, backend="highs")
        if answer.solution is not None:
            return answer.solution.objective
        return None if answer.status == "infeasible" else -INF

    def _solve_choice(self, k: int | None, left: float | None) -> Solution | None:
        """Solve with choice k fixed (None: the full model); remember the result."""
        known = self._memory[k]
        answer = self.engine.probe(*self._changes(), *self._choice(k), verify=False, time_limit=left)
        self.milp_solves += answer.solved
        if answer.solution is None:
            known.infeasible = answer.status == "infeasible"
            return None
        sol = answer.solution
        known.sol, known.bound = sol, max(known.bound, sol.bound)
        return sol

    def _plan(self, sol: Solution) -> Plan:
        """Extract, verify against the problem, check the limits on the plan itself."""
        plan = extract_plan(sol)
        check_plan(self.problem, self.catalog, plan)
        lim = self.limits
        broken = []
        if finish_day(plan) > lim.cap:
            broken.append(f"finishes on day {finish_day(plan)}, after the cap {lim.cap}")
        if lim.budget is not None and plan.total_cost > lim.budget * (1 + 1e-9) + 0.01:
            broken.append(f"costs {plan.total_cost:,.2f}, over {lim.budget:,.2f}")
        if lim.vendors is not None and len(plan_vendors(plan)) > lim.vendors:
            broken.append(f"rents from {len(plan_vendors(plan))} vendors, over {lim.vendors}")
        if lim.spot is not None and self.plan_spot_work(plan) > lim.spot + 1e-6 * max(1.0, self.required):
            broken.append("does more work on spot nodes than allowed")
        if broken:
            raise PlanRejected(broken)
        return plan

    def describe(self) -> str:
        lim = self.limits
        parts = [f"finishing by day {lim.cap}" if lim.cap < self.latest else "meeting the deadlines"]
        if lim.budget is not None:
            parts.append(f"within {lim.budget:,.0f} {self.problem.currency}")
        if lim.spot is not None:
            parts.append(f"with at most {lim.spot / max(self.required, 1e-12):.0%} of the work on spot")
        if lim.vendors is not None:
            parts.append(f"with at most {lim.vendors} vendor{'s' if lim.vendors != 1 else ''}")
        return ", ".join(parts)


@contextmanager
def _nodes_at_most(nodes: int | None):
    """Every HiGHS solve inside stops after `nodes` branch-and-bound nodes (and not at a time limit
    of its own: solver.engine.run), or at the command's own node limit if smaller (solve
    --deterministic); the command's budget still ends it. Put back after."""
    saved = PROGRESS.node_limit
    if nodes is not None:
        PROGRESS.node_limit = nodes if saved is None else min(saved, nodes)
    try:
        yield
    finally:
        PROGRESS.node_limit = saved
