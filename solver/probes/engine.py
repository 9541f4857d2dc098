"""`Probes`, the engine: one problem's Instance and model, and the probes a command runs on it;
`Answer`, what one probe found (proven, or an interval from bound to plan).

See solver.probes for why there is one engine under every analysis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math

from solver import api
from solver.clock import OutOfTime, RunClock, not_started
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes.changes import AtLeast, Change, Relaxed, VarBounds


KEEP_PLANS = 12
"""Plans kept as starts for later probes: the latest distinct ones (each is checked against a
probe's model, so a long list costs a little on every probe)."""


# ----- answers -------------------------------------------------------------------------------

@dataclass
class Answer:
    """What a probe found. status: optimal (cost proven), feasible (a plan; the optimum lies in
    [low, cost]), infeasible (proven: no plan), unknown (no plan found in the time; `low` is
    still a bound). `solved`: a solve ran (False: answered from the base's bound and a plan
    in hand)."""

    status: str
    low: float
    plan: Plan | None = None
    solution: api.Solution | None = None
    solved: bool = True
    why: str = ""           # the solver's words when there is no plan

    @property
    def cost(self) -> float | None:
        return None if self.plan is None else self.plan.total_cost

    @property
    def proven(self) -> bool:
        return self.status in ("optimal", "infeasible")

    def interval(self) -> tuple[float, float | None]:
        """(lowest the optimum can be, the best plan's cost or None)."""
        return (self.low, self.cost)


# ----- the engine ----------------------------------------------------------------------------

class Probes:
    """The base model of a problem, built once, and the probes a command runs on it.

    `build_instance` and `build_milp` run once here (tests count them); a command that needs the
    problem read under other words (a what-if edit that is not a bound) builds another Probes."""

    def __init__(self, problem: Problem, catalog: Catalog, *, backend: str = api.DEFAULT_BACKEND,
                 time_limit: float | None = None, gap: float | None = None, clock: RunClock | None = None) -> None:
        self.problem, self.catalog = problem, catalog
        self.backend, self.gap = backend, gap
        self.clock = clock if clock is not None else RunClock(time_limit, None, least=0.0)
        self.inst = api.build_instance(problem, catalog)
        api.carried(problem, self.inst)
        self.milp = api.build_milp(self.inst)
        self.base: Answer | None = None
        self.known: list[dict[int, float]] = []
        self.solves = self.answered_without_solve = 0

    # -- the base -----------------------------------------------------------------------------
    def solve_base(self, *, tiebreak: bool = True) -> Plan:
        """The problem's own cheapest verified plan (as solver.api.solve_built: earliest finish,
        fewest rentals at that cost), in the same words when there is none (Infeasible); OutOfTime
        when the command's time is spent before it starts."""
        answer = self.probe(tiebreak=tiebreak)
        self.base = answer
        if answer.plan is None:
            limited = self.clock.time_limit or self.clock.cut
            raise api.no_plan(self.inst, self.milp, answer.why, proven=answer.status == "infeasible",
                              more_time=self.clock.more_time if limited else None)
        return answer.plan

    def plan(self, export_mps=None) -> Plan:
        """What solver.api.solve_problem returns for the engine's problem, on the engine's model, by the
        same steps (solver.api: `carried` at the build, `no_plan`'s words, `with_stack_price`): the
        base optimum, a switch of software stack priced by a probe (the offers off the usual stack left
        out, verified against the problem held to that stack). With soft preferences the problem is
        solved by solver.api.solve_problem (each preference's re-solve builds its own model there), and
        the engine has no base: later probes are not bounded by it."""
        if self.problem.preferences:
            return api.solve_problem(self.problem, self.catalog, backend=self.backend, time_limit=self.clock.time_limit,
                                     gap=self.gap, export_mps=export_mps, max_seconds=self.clock.left())
        if export_mps:
            api.write_mps(self.milp.model, export_mps)
        try:
            plan = self.solve_base()
        except OutOfTime:
            raise not_started(advice=api.size_advice(self.inst, self.milp)) from None
        return api.with_stack_price(plan, self.problem, self.catalog, self._usual_stack)

    def _usual_stack(self) -> Plan:
        """The best plan on the catalog's usual stack alone, by a probe (the other cards' nodes fixed at
        0), verified against the problem held to that stack; Infeasible (proven or not) when it has none."""
        usual = api.usual_stack(self.catalog)
        held = self.problem.model_copy(update={"stacks": [usual]})
        off = [v for o, offer in self.catalog.offers.items()
               if self.catalog.gpus[offer.gpu].stack != usual for v in self.offer_nodes(o)]
        answer = self.probe(VarBounds(f"only {usual} cards", True, off, upper=0.0), problem=held, tiebreak=True)
        if answer.plan is None:
            raise Infeasible(answer.why, proven=answer.status == "infeasible")
        return answer.plan

    # -- probes -------------------------------------------------------------------------------
    def probe(self, *changes: Change, problem: Problem | None = None, catalog: Catalog | None = None,
              tiebreak: bool = False, verify: bool = True, backend: str | None = None,
              time_limit: float | None = None) -> Answer:
        """Apply `changes`, solve, undo. The plan is verified against `problem`/`catalog` (the
        problem as the changed model reads it; default the engine's) unless verify=False (an
        elastic probe whose plan breaks written limits on purpose). OutOfTime (solver.clock)
        when the command's time is spent before the solve starts. `backend`: another solver for
        this probe (an LP relaxation goes to HiGHS whatever the command's backend); `time_limit`:
        this probe's own limit, within the clock's (a search sharing one limit among its probes)."""
        if self.clock.spent():
            # spent or stopped: not even a start is looked for (reading the model's numbers takes
            # ~0.1 s on a large model; why's hundred runners-up after the budget took 10 s)
            raise OutOfTime("the run's time is spent")
        undo = [c.apply(self.milp) for c in changes]
        try:
            floor = self._floor(changes)
            start = None if any(isinstance(c, Relaxed) for c in changes) else self._start()  # an LP takes no plan
            if start is not None and start.objective <= floor + self._tolerance(start.objective):
                self.answered_without_solve += 1
                start.bound, start.status = floor, "optimal"
                return self._answer(start, floor, problem, catalog, verify, solved=False)
            limit = self.clock.next_limit()
            if time_limit is not None:
                limit = time_limit if limit is None else min(limit, time_limit)
            self.solves += 1
            try:
                sol = api.solve_milp(self.milp, backend=backend or self.backend, time_limit=limit, gap=self.gap,
                                     tiebreak=tiebreak, start=start)
            except api.NoSolution as exc:
                return Answer("infeasible" if exc.proven else "unknown", math.inf if exc.proven else floor, why=str(exc))
            sol.bound = max(sol.bound, min(floor, sol.objective))
            if sol.status != "optimal" and sol.gap <= api.OPTIMALITY_GAP:
                sol.status = "optimal"
            if sol.integral:  # an LP's point is no plan to start from
                self._remember(sol.values)
            return self._answer(sol, sol.bound, problem, catalog, verify, solved=True)
        finally:
            for u in reversed(undo):
                u()

    def in_hand(self, *changes: Change, problem: Problem | None = None,
                catalog: Catalog | None = None) -> Answer | None:
        """The changed model answered from a plan in hand, with no solve: even when the command's
        time is spent (issue 47: a budget cut the baseline plan meets was called "infeasible"
        because no time was left to start its solve). When every change tightens, each plan of
        the changed model is one of the base model, so the base's proven bound bounds it, and a
        known plan that meets it is a plan of it: its optimum lies in [bound, that plan's cost],
        proven when the two meet. None when a change does not tighten, the base was not solved,
        or no known plan meets the changed model."""
        if self.base is None or self.base.solution is None or not all(c.tightens for c in changes):
            return None
        undo = [c.apply(self.milp) for c in changes]
        try:
            start = self._start()
            if start is None:
                return None
            floor = self._floor(changes)
            proven = start.objective <= floor + self._tolerance(start.objective)
            start.bound, start.status = min(floor, start.objective), "optimal" if proven else "feasible"
            self.answered_without_solve += 1
            return self._answer(start, start.bound, problem, catalog, True, solved=False)
        finally:
            for u in reversed(undo):
                u()

    def bound_of(self, *changes: Change) -> float | None:
        """The least the changed model's optimum can cost, from the base's proven bound (None:
        not known, a change does not tighten or the base was not solved)."""
        floor = self._floor(changes)
        return None if math.isinf(floor) else floor

    def _answer(self, sol: api.Solution, low: float, problem, catalog, verify: bool, *, solved: bool) -> Answer:
        plan = api.plan_of(self.inst, sol, problem or self.problem, catalog or self.catalog) if verify else None
        return Answer(sol.status, low, plan, sol, solved)

    def _floor(self, changes: Sequence[Change]) -> float:
        """A lower bound on the changed model's optimum from what the base solve proved."""
        if self.base is None or self.base.solution is None or not all(c.tightens for c in changes):
            return -math.inf
        return self.base.low

    def _tolerance(self, cost: float) -> float:
        return max(abs(cost), 1.0) * (self.gap if self.gap is not None else api.OPTIMALITY_GAP)

    def _start(self) -> api.Solution | None:
        """The cheapest known plan that meets the model as it stands, priced under its objective."""
        if not self.known:
            return None
        numbers = api.ModelNumbers.read(self.milp.model)
        best = None
        for values in self.known:
            if numbers.meets(values):
                sol = api.Solution(self.milp, "feasible", 0.0, -math.inf, 0.0, self.backend, dict(values), True)
                sol.objective = sum(sol.cost_parts().values())
                if best is None or sol.objective < best.objective:
                    best = sol
        return best

    def _remember(self, values: dict[int, float]) -> None:
        if values not in self.known:
            self.known.append(dict(values))
            del self.known[:-KEEP_PLANS]

    # -- the model's handles the analyses name changes by ---------------------------------------
    def offer_nodes(self, offer: str) -> list[api.Variable]:
        """Every node and contract variable of one offer (all its interconnect options)."""
        configs = {key for key, cfg in self.inst.configs.items() if cfg.offer.offer == offer}
        return ([v for (key, _), v in self.milp.nodes.items() if key in configs]
                + [v for (key, _), v in self.milp.contracts.items() if key in configs])

    def leave_out(self, offer: str) -> Change:
        """The offer rented nowhere (its nodes and contracts fixed at 0)."""
        return VarBounds(f"offer {offer} left out", True, self.offer_nodes(offer), upper=0.0)

    def force(self, offer: str) -> Change:
        """At least one node of the offer in some period (the smallest use there is)."""
        nodes = [v for (key, _), v in self.milp.nodes.items() if self.inst.configs[key].offer.offer == offer]
        return AtLeast(f"offer {offer} rented", True, f"Probe-force-{offer}", nodes, 1.0)
