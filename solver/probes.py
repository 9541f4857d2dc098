"""The probe engine: one built model under every question a command asks (issue 34).

Why: an analysis — why, negotiate, the infeasibility explanation, what-if, the frontiers, the
MFU margin, the baselines — asks many questions of one problem: "and with this offer left
out?", "at this price?", "with this budget?". Asked as new problems, each cost an Instance, a
model and a cold solve (`why` on global-burst built 78 Instances and 81 models; 90 % of the
analyses' time went to cold solves). Here the base model is built once and each question is
a *probe*: a list of `Change`s applied to the built model, solved, and undone.

What one probe reuses of the others:
- a start: the cheapest plan found so far that still meets the changed model (checked on the
  model's own numbers, solver.milp.feasible), priced under its objective, is the solve's MIP
  start and stands when the solve finds nothing better in its time;
- a bound: a probe whose changes only tighten the model (`Change.tightens`: every plan after
  is a plan before, with the same cost) cannot be cheaper than the base optimum, so the base
  bound bounds it; when the start already costs that, the probe is answered without a solve.

Every answer is an interval from a proven bound to a plan's cost (`Answer.low`, `Answer.cost`):
one number when proven, "+23,954 to +25,100 CNY" when the time ran out first. One clock for
the command (solver.clock): each solve is cut to what is left; a probe with no time left
raises OutOfTime for the caller to report what it has.

The changes say what they do in words (`Change.words`), so what a user reads is generated from
the change itself, never parsed back from edit text.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ortools.linear_solver.python import model_builder as mb

from solver import api
from solver.clock import OutOfTime, RunClock, stopped
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem

Undo = Callable[[], None]

KEEP_PLANS = 12
"""Plans kept as starts for later probes: the latest distinct ones (each is checked against a
probe's model, so a long list costs a little on every probe)."""


# ----- changes -------------------------------------------------------------------------------

@dataclass(eq=False)
class Change:
    """One change of the built model, undone after the probe.

    words:    what it does, for the user ("offer X left out").
    tightens: every plan of the changed model is a plan of the model before, at the same cost
              (a bound lowered, a variable fixed, a row switched on; not a cost changed)."""

    words: str
    tightens: bool

    def apply(self, milp: api.Milp) -> Undo:
        raise NotImplementedError


@dataclass(eq=False)
class RowBounds(Change):
    """Rows' right-hand sides set (None: left as they are; ±inf: no limit that side)."""

    rows: Sequence[mb.LinearConstraint] = ()
    lower: float | None = None
    upper: float | None = None
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        saved = [(r, r.lower_bound, r.upper_bound) for r in self.rows]
        for r in self.rows:
            if self.lower is not None:
                r.lower_bound = self.lower
            if self.upper is not None:
                r.upper_bound = self.upper

        def undo() -> None:
            for r, lo, hi in saved:
                r.lower_bound, r.upper_bound = lo, hi
        return undo


@dataclass(eq=False)
class VarBounds(Change):
    """Variables' bounds set (None: left as they are): e.g. an offer's nodes fixed at 0."""

    variables: Sequence[mb.Variable] = ()
    lower: float | None = None
    upper: float | None = None
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        saved = [(v, v.lower_bound, v.upper_bound) for v in self.variables]
        for v in self.variables:
            if self.lower is not None:
                v.lower_bound = self.lower
            if self.upper is not None:
                v.upper_bound = self.upper

        def undo() -> None:
            for v, lo, hi in saved:
                v.lower_bound, v.upper_bound = lo, hi
        return undo


@dataclass(eq=False)
class Limit(Change):
    """A constraint family's bound on one target (solver.milp.registry: `family.set_bound`; None
    lifts it, see Bound), put back as it was after. The plan is verified against the budget the
    model then holds (api.plan_of); a probe past another written limit is read with verify=False."""

    family: api.Family | None = None
    target: str = ""
    value: float | None = None
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        fam, before = self.family, self.family.bound(milp, self.target)
        fam.set_bound(milp, self.target, self.value)

        def undo() -> None:
            fam.set_bound(milp, self.target, before)
        return undo


@dataclass(eq=False)
class AtLeast(Change):
    """Σ variables ≥ `least`: a row added to the model the first time and switched off (no
    lower bound) after, so the next probe of the same kind only switches it back on."""

    name: str = ""
    variables: Sequence[mb.Variable] = ()
    least: float = 1.0
    tightens: bool = True

    def apply(self, milp: api.Milp) -> Undo:
        row = milp.rows.get(self.name)
        if row is None:
            milp.add_row(self.name, mb.LinearExpr.sum(list(self.variables)) >= -math.inf)
            row = milp.rows[self.name]
        row.lower_bound = self.least

        def undo() -> None:
            row.lower_bound = -math.inf
        return undo


@dataclass(eq=False)
class Costs(Change):
    """Cost terms' coefficients replaced: `coefs` maps (cost part, index in milp.cost[part]) to
    the new coefficient; the objective is rebuilt from the cost parts (and again on undo)."""

    coefs: dict[tuple[str, int], float] = field(default_factory=dict)
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        saved = {}
        for (part, k), coef in self.coefs.items():
            var, old = milp.cost[part][k]
            saved[part, k] = (var, old)
            milp.cost[part][k] = (var, coef)
        milp.model.minimize(milp.total_cost())

        def undo() -> None:
            for (part, k), term in saved.items():
                milp.cost[part][k] = term
            milp.model.minimize(milp.total_cost())
        return undo


@dataclass(eq=False)
class Relaxed(Change):
    """Every variable continuous: the probe's answer is the LP relaxation's bound (an Answer
    with no plan; ask with verify=False). Not a tightening: the LP may be cheaper than the base."""

    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        integral = [v for v in milp.model.get_variables() if v.is_integral]
        for v in integral:
            v.is_integral = False

        def undo() -> None:
            for v in integral:
                v.is_integral = True
        return undo


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
        stranded = [j.name for j in problem.jobs if not any(o.job == j.name for o in self.inst.options)]
        if stranded:
            raise Infeasible(f"no offer can carry job {', '.join(stranded)}", reasons=api.explain_quick(self.inst))
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
            if answer.status == "infeasible":
                raise Infeasible(answer.why, reasons=api.explain_quick(self.inst))
            hint = ("the command's time ran out: raise --max-seconds" if stopped() else
                    f"raise {self.clock.more_time}, or try another --backend" if self.clock.time_limit or self.clock.cut
                    else "try another --backend")
            raise Infeasible(f"{answer.why}: {hint}", reasons=[], proven=False)
        return answer.plan

    def plan(self, export_mps=None) -> Plan:
        """What solver.api.solve_problem returns for the engine's problem, on the engine's model:
        the base optimum, a switch of software stack priced by a probe (the offers off the usual
        stack left out, verified against the problem held to that stack). With soft preferences
        the problem is solved by solver.api.solve_problem (each preference's re-solve builds its
        own model there), and the engine has no base: later probes are not bounded by it."""
        if self.problem.preferences:
            return api.solve_problem(self.problem, self.catalog, backend=self.backend, time_limit=self.clock.time_limit,
                                     gap=self.gap, export_mps=export_mps, max_seconds=self.clock.left())
        if export_mps:
            api.write_mps(self.milp.model, export_mps)
        try:
            plan = self.solve_base()
        except OutOfTime:
            raise Infeasible("no plan found (not proven infeasible): the run's time (--max-seconds) ran out "
                             "before the solve could start", reasons=["raise --max-seconds"], proven=False) from None
        others = api.off_stack(plan, self.problem, self.catalog)
        return self._stack_switch(plan, others) if others else plan

    def _stack_switch(self, plan: Plan, others: list[str]) -> Plan:
        """The plan with its stack switch noted and priced against the best plan on the catalog's
        usual stack (solver.api._stack_switch's rule: that plan itself when it costs no more)."""
        usual = api.usual_stack(self.catalog)
        held = self.problem.model_copy(update={"stacks": [usual]})
        off = [v for o, offer in self.catalog.offers.items()
               if self.catalog.gpus[offer.gpu].stack != usual for v in self.offer_nodes(o)]
        try:
            answer = self.probe(VarBounds(f"only {usual} cards", True, off, upper=0.0), problem=held, tiebreak=True)
        except OutOfTime:
            answer = None
        if answer is None or answer.plan is None:
            why = ("no plan on the usual stack alone meets the problem" if answer is not None
                   and answer.status == "infeasible" else "no time was left to price a plan without it")
            return plan.model_copy(update={"stack_switch": api.stack_switch(plan, self.catalog, others, None, why)})
        if answer.plan.total_cost <= plan.total_cost + 0.005:
            return answer.plan
        return plan.model_copy(update={"stack_switch": api.stack_switch(plan, self.catalog, others, answer.plan, "")})

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
    def offer_nodes(self, offer: str) -> list[mb.Variable]:
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


# ----- negotiate's and the baselines' changes (issue 34: prices, the budget, an offer's periods) -----

@dataclass(eq=False)
class Reprice(Change):
    """One offer's price column at `price` (in the offer's own currency): its rent, platform fee
    and volume discount coefficients, the budget row's, and the Instance its plans are read from,
    as a model built at that price would have them (solver.milp.reprice). Not tightening: every
    plan stays a plan, at another cost."""

    offer: str = ""
    price: float = 0.0
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        return api.reprice(milp, self.offer, self.price)


def reprice(offer: str, price: float) -> Reprice:
    return Reprice(f"offer {offer} at price {price:,.6g}", False, offer, price)


def no_budget(probes: Probes) -> Change:
    """The problem's budget dropped (the budget family's bound lifted): a relaxation, not tightening."""
    return Limit("budget dropped", False, api.BUDGET, "", None)


def early_nodes(probes: Probes, offer: str, stop: int, start: int = 0) -> list[mb.Variable]:
    """The offer's node and contract variables of periods start ≤ t < stop (what a lead time
    ending in period `stop` rules out and one ending in `start` allows)."""
    configs = {key for key, cfg in probes.inst.configs.items() if cfg.offer.offer == offer}
    return ([v for (key, t), v in probes.milp.nodes.items() if key in configs and start <= t < stop]
            + [v for (key, s), v in probes.milp.contracts.items() if key in configs and start <= s < stop])


@dataclass(eq=False)
class Restock(Change):
    """One offer's stock at `most` nodes: its node and contract variables' bounds (those not
    shut at 0) and its `Availability` rows; its volume discounts' X̄ widened where the build's
    is smaller (solver.milp.capacity.widen_discount). Exact when the model was built with at
    least `most` nodes of stock (size tiers and cuts are preprocessing's, from the built stock).
    Not the availability family's set_bound: that one sets every node variable of the offer, and
    would open the periods negotiate keeps shut before an offer's written lead time."""

    offer: str = ""
    most: int = 0
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        configs = {key for key, cfg in milp.inst.configs.items() if cfg.offer.offer == self.offer}
        held = [v for (key, _), v in [*milp.nodes.items(), *milp.contracts.items()]
                if key in configs and v.upper_bound > 0]
        rows = [row for key, row in milp.family_rows("availability", self.offer).items() if not key.part]
        narrow = [(kt, v.upper_bound) for kt, v in milp.full_price.items() if kt[0] in configs and v.upper_bound < self.most]
        saved = [(v, v.upper_bound) for v in held], [(r, r.upper_bound) for r in rows]
        for v in held:
            v.upper_bound = self.most
        for r in rows:
            r.upper_bound = self.most
        for (key, t), _ in narrow:
            api.widen_discount(milp, key, t, self.most)

        def undo() -> None:
            for v, hi in saved[0]:
                v.upper_bound = hi
            for r, hi in saved[1]:
                r.upper_bound = hi
            for (key, t), built in narrow:
                api.widen_discount(milp, key, t, int(built))
        return undo

# ===== deltas for the margin, what-if and the infeasibility explanation (issue 34, helper D) =====
# Changes that are not a bound or a row's switch: a job's throughput read at another MFU
# (solver.milp.scale), a plan's decisions fixed (a constrain function of solver.api's pins, made
# undoable), and the objective dropped for a probe that only asks whether a plan exists.

@dataclass(eq=False)
class ScaledWork(Change):
    """`jobs` run at the rates `problem` states (their mfu_factor) on the model built at the
    assumed MFU (solver.milp.scale): the plan read from it reports the work at those rates, so
    a probe with this change verifies its plan against `problem`."""

    problem: Problem | None = None
    jobs: Sequence[str] = ()
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        assert self.problem is not None
        return api.scale_work(milp, self.problem, self.jobs)


@dataclass(eq=False)
class Pinned(Change):
    """Variable bounds set by a constrain function that only sets bounds (solver.api's
    `pin_schedule`, `pin_rentals`), restored after: a given plan's decisions fixed. NotInModel
    when the model cannot hold them (raised by `apply`, nothing left changed)."""

    pin: Callable[[api.Milp], None] | None = None
    tightens: bool = True

    def apply(self, milp: api.Milp) -> Undo:
        assert self.pin is not None
        variables = [*milp.contracts.values(), *milp.nodes.values(), *milp.replicas.values()]
        saved = [(v, v.lower_bound, v.upper_bound) for v in variables]

        def undo() -> None:
            for v, lo, hi in saved:
                v.lower_bound, v.upper_bound = lo, hi
        try:
            self.pin(milp)
        except api.NotInModel:
            undo()
            raise
        return undo


@dataclass(eq=False)
class NoObjective(Change):
    """Every plan costs 0 to the solver: a probe asking only whether a plan exists stops at
    the first one (limits on money, the budget row, stay rows of their own)."""

    words: str = "feasibility only"
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        milp.model.minimize(mb.LinearExpr.weighted_sum([], []))

        def undo() -> None:
            milp.model.minimize(milp.total_cost())
        return undo


def exists(probes: Probes, *changes: Change) -> bool | None:
    """Is there a plan of the model with `changes`? None when the time ran out before a plan
    or a proof (a probe not started for want of time included). A plan an earlier probe found
    that meets the changed model answers yes without a solve."""
    undo: list[Undo] = []
    try:
        for c in changes:  # one by one: a change that cannot apply (NotInModel) leaves none applied
            undo.append(c.apply(probes.milp))
        known = probes._start()  # a plan an earlier probe found that meets this one answers it
    finally:
        for u in reversed(undo):
            u()
    if known is not None:
        probes.answered_without_solve += 1
        return True
    kept, probes.known = probes.known, []  # none meets it: the probe need not read the model to check again
    try:
        answer = probes.probe(*changes, NoObjective(), verify=False)
    except OutOfTime:
        return None
    finally:
        probes.known = kept + probes.known
        del probes.known[:-KEEP_PLANS]
    if answer.status == "infeasible":
        return False
    return None if answer.solution is None else True


@dataclass(eq=False)
class ReadAs(Change):
    """The plan read as `problem` and `catalog` state the limits (a what-if edit's budget,
    quota, stock or deadline): the Instance the plan is extracted from carries them, so what
    binds is worded with the edited numbers. The model itself is not changed."""

    problem: Problem | None = None
    catalog: Catalog | None = None
    tightens: bool = True

    def apply(self, milp: api.Milp) -> Undo:
        from dataclasses import replace

        from solver.model.catalog import priced_in
        assert self.problem is not None and self.catalog is not None
        inst = milp.inst
        milp.inst = replace(inst, problem=self.problem, as_given=self.catalog,
                            catalog=priced_in(self.catalog, self.problem.currency, self.problem.rates()))

        def undo() -> None:
            milp.inst = inst
        return undo


def bound_changes(probes: Probes, problem: Problem, catalog: Catalog) -> list[Change] | None:
    """`problem` and `catalog` (an edited copy of the engine's) as changes of its built model,
    when every difference is a limit's bound; None when one is not (the caller builds the
    edited problem: its preprocessing differs).

    Bounds: the budget (set, raised, lowered or dropped) and a site's power quota, by their
    families' setters (`Limit`); an offer's stock lowered (`max_nodes`: its node and contract
    variables and its stock rows) and a job's deadline made earlier on a model of uniform periods
    (its replicas after the new deadline's period fixed at 0, as solver.session caps finishing
    days; event periods move with deadlines), as bounds set and put back exactly: the families'
    setters put back what they read, which on a model with elastic stock rows (the infeasibility
    explanation's) is the written stock, and the deadline's resets every replica of the job,
    a pinned plan's included (the kept baseline's replay pins first); the model's
    symmetry rows, early periods held first, stay valid: a cap only takes a job from the later
    of two periods, so the earlier still serves whatever the later does). Not bounds:
    a stock raised (the variables' bounds, size tiers and replica bounds come from it), a later
    deadline, prices, MFU, windows, anything else."""
    base, base_cat = probes.problem, probes.catalog
    changes = budget_changes(probes, problem.budget)
    deadlines = _deadline_changes(probes, problem)
    if deadlines is None or len(problem.jobs) != len(base.jobs):
        return None
    unedited = problem.model_copy(update={"budget": base.budget, "jobs": [
        j.model_copy(update={"deadline_days": b.deadline_days}) for j, b in zip(problem.jobs, base.jobs)]})
    if unedited != base:
        return None
    catalog_changes = _catalog_changes(probes, catalog)
    if catalog_changes is None:
        return None
    return [*changes, *deadlines, *catalog_changes]


def budget_changes(probes: Probes, budget: float | None) -> list[Change]:
    """The model's budget set to `budget` (None: none), by the budget family's setter (a model
    built without one gets its row on the first finite bound)."""
    old = probes.problem.budget
    if budget == old:
        return []
    words = "no budget" if budget is None else f"budget {budget:,.0f} {probes.problem.currency}"
    tightens = budget is not None and (old is None or budget <= old)
    return [Limit(words, tightens, api.BUDGET, "", budget)]


def _deadline_changes(probes: Probes, problem: Problem) -> list[Change] | None:
    inst, out = probes.inst, []
    for job, was in zip(problem.jobs, probes.problem.jobs):
        if job.name != was.name:
            return None
        if job.deadline_days == was.deadline_days:
            continue
        if job.deadline_days > was.deadline_days or probes.problem.periods != "uniform":
            return None
        late = [var for (i, t), var in probes.milp.replicas.items()
                if inst.options[i].job == job.name and inst.timeline.end(t) > job.deadline_days]
        out.append(VarBounds(f"job {job.name} done by day {job.deadline_days}", True, late, upper=0.0))
    return out


def _catalog_changes(probes: Probes, catalog: Catalog) -> list[Change] | None:
    base, milp, out = probes.catalog, probes.milp, []
    sites = {}
    for name, dc in catalog.datacenters.items():
        was = base.datacenters.get(name)
        if was is None:
            return None
        if dc.power_quota_kw != was.power_quota_kw:
            sites[name] = was
            out.append(Limit(f"power quota at {name} {dc.power_quota_kw:g} kW", dc.power_quota_kw <= was.power_quota_kw,
                             api.POWER, name, dc.power_quota_kw))
    offers = {}
    for name, offer in catalog.offers.items():
        was = base.offers.get(name)
        if was is None or offer.max_nodes > was.max_nodes:
            return None
        if offer.max_nodes < was.max_nodes:
            offers[name] = was
            out.extend(_stock_lowered(probes, name, offer.max_nodes))
    unedited = catalog.model_copy(update={
        "datacenters": {k: sites.get(k, v) for k, v in catalog.datacenters.items()},
        "offers": {k: offers.get(k, v) for k, v in catalog.offers.items()}})
    return out if unedited == base else None


def _stock_lowered(probes: Probes, offer: str, nodes: int) -> list[Change]:
    words = f"offer {offer} at most {nodes} nodes"
    rows = list(probes.milp.family_rows("availability", offer).values())
    variables = [v for v in probes.offer_nodes(offer) if v.upper_bound > nodes]
    return [RowBounds(words, True, rows, upper=nodes), VarBounds(words, True, variables, upper=float(nodes))]


@dataclass(eq=False)
class Objective(Change):
    """The objective replaced by Σ weight·variable (an elastic probe: the least slack), the
    cost put back after. Its plan breaks written limits on purpose: ask with verify=False."""

    terms: Sequence[tuple[mb.Variable, float]] = ()
    tightens: bool = False

    def apply(self, milp: api.Milp) -> Undo:
        milp.model.minimize(mb.LinearExpr.weighted_sum([v for v, _ in self.terms], [w for _, w in self.terms]))

        def undo() -> None:
            milp.model.minimize(milp.total_cost())
        return undo


def add_slacks(probes: Probes, slack: Callable[..., dict[str, mb.Variable]], **kw) -> dict[str, tuple[mb.Variable, float]]:
    """A family's elastic slack (solver.api.FAMILIES' `slack`: one variable per target in its
    rows) added to the built model once, switched off (upper bound 0): the model stays the
    problem's, and a probe switches a slack on by its bound, `{target: (variable, its upper
    bound when on)}`. Plans kept as starts stay plans of it (a new variable is 0 in them)."""
    out = {}
    for target, var in slack(probes.milp, **kw).items():
        out[target] = (var, var.upper_bound)
        var.upper_bound = 0.0
    return out


def slack_on(words: str, slacks: Sequence[tuple[mb.Variable, float]]) -> list[Change]:
    """Changes letting each slack variable up to its bound when on."""
    return [VarBounds(words, False, [var], upper=upper) for var, upper in slacks]


# ===== the frontiers' and min-time's changes (issue 34, helper F: solver.session on the engine) =====

@dataclass(eq=False)
class Choice(Change):
    """One job's fabric choice fixed (flag k at 1, the others at 0; solver.milp.decompose), freed
    after: solver.session searches the choices one probe at a time. Tightening: a choice's plans
    are plans of the model."""

    flags: Sequence[mb.Variable] = ()
    k: int = 0
    tightens: bool = True

    def apply(self, milp: api.Milp) -> Undo:
        saved = [(v, v.lower_bound, v.upper_bound) for v in self.flags]
        for i, flag in enumerate(self.flags):
            flag.lower_bound = flag.upper_bound = 1.0 if i == self.k else 0.0

        def undo() -> None:
            for v, lo, hi in saved:
                v.lower_bound, v.upper_bound = lo, hi
        return undo


def any_plan(probes: Probes, *changes: Change, time_limit: float | None = None) -> Answer:
    """Some plan of the model with `changes` (the first one found: every plan costs 0 to the
    solver), as an Answer whose solution is priced under the cost when it is a plan an earlier
    probe found (answered without a solve, `solved` False). infeasible: proven none; unknown:
    the time ran out first. OutOfTime when the command's time is spent before the solve."""
    undo = [c.apply(probes.milp) for c in changes]
    try:
        known = probes._start()
    finally:
        for u in reversed(undo):
            u()
    if known is not None:
        probes.answered_without_solve += 1
        return Answer("feasible", -math.inf, None, known, solved=False)
    kept, probes.known = probes.known, []  # none meets it: the probe need not check them again
    try:
        return probes.probe(*changes, NoObjective(), verify=False, time_limit=time_limit)
    finally:
        probes.known = kept + probes.known
        del probes.known[:-KEEP_PLANS]


# ===== a sweep's scenario as changes of the base model (issue 34, helper G) =====
# bound_changes above takes limits' bounds; a sweep's grids edit prices too ("offers[vendor=x].
# price*=0.9"), and a price is a change of the built model as well (Reprice: negotiate's).

def edit_changes(probes: Probes, problem: Problem, catalog: Catalog) -> list[Change] | None:
    """`problem` and `catalog` (an edited copy of the engine's) as changes of its built model:
    each offer whose price column differs re-priced (Reprice, at the edited catalog's price in
    the offer's own currency), every other difference as bound_changes reads it; None when one
    is neither (the caller builds the edited problem: its preprocessing differs).

    Why a price is no preprocessing: the build prunes an offer's interconnect options against
    each other (solver.milp.prune), and those share the offer's rent, so a price scales them
    alike and the same options survive; the rest of the build reads no price.

    A deadline made earlier is left to a build here (None), though bound_changes takes it: on
    problems/hybrid-burst.yaml with deadline 200 the probe's plan costs the same as the built
    scenario's but finishes on day 195 and binds no deadline, where the build's finishes on
    day 200 against it; a sweep's row must read as the scenario's own solve."""
    if any(job.deadline_days != was.deadline_days for job, was in zip(problem.jobs, probes.problem.jobs)):
        return None
    base = probes.catalog.offers
    repriced = sorted(name for name, offer in catalog.offers.items()
                      if name in base and offer.price != base[name].price)
    if not repriced:
        return bound_changes(probes, problem, catalog)
    unpriced = catalog.model_copy(update={"offers": {
        name: offer.model_copy(update={"price": base[name].price}) if name in repriced else offer
        for name, offer in catalog.offers.items()}})
    bounds = bound_changes(probes, problem, unpriced)
    if bounds is None:
        return None
    return [*(reprice(name, catalog.offers[name].price) for name in repriced), *bounds]


# ===== why's second model (issue 34, helper E) =====
# `why` asks its elastic questions ("which limit does this forced runner-up need most?") of a
# twin of the base model: the same Instance, built again, with every family's slack added once
# and switched off. Why a twin and not the base model: the stock slack raises the offers' node
# bounds and widens the volume discounts' rows (solver.milp.elastic), which loosens the LP the
# runners-up's bounds are read from and moves HiGHS' path among equally cheap plans.

def twin(probes: Probes) -> Probes:
    """A second model of the engine's Instance (no second build_instance), on the engine's clock,
    with no base and no plans in hand: its probes are bounded by nothing the base proved."""
    import copy

    other = copy.copy(probes)
    other.milp = api.build_milp(probes.inst)
    other.base, other.known = None, []
    other.solves = other.answered_without_solve = 0
    return other
