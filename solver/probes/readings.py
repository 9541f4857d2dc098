"""An edited problem or catalog read as changes of the base model, where preprocessing would
give the same model: the margin's slower throughput (`ScaledWork`), a plan's decisions fixed
(`Pinned`), feasibility-only probes (`NoObjective`, `exists`), a plan read as another problem
(`ReadAs`), what-if's and a sweep's edits as bounds (`bound_changes`, `edit_changes`; None when
the edit needs a build of its own)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from solver import api
from solver.clock import OutOfTime
from solver.model.catalog import Catalog
from solver.model.problem import Problem
from solver.probes.changes import Change, Limit, RowBounds, Undo, VarBounds
from solver.probes.engine import KEEP_PLANS, Probes
from solver.probes.prices import reprice


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
        milp.model.minimize(api.weighted([], []))

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
    base = probes.problem
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
    base, out = probes.catalog, []
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
