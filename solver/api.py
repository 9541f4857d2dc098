"""The one door into the MILP: what the analyses and the commands use of solver/milp (the
formulation) and solver/engine (the solve) (docs/ARCHITECTURE.md). Outside those two only this
module imports them, and the api layer's re-bounded solves beside it (solver.session,
solver.limits), which import this one.

Solving a problem:
    solve_problem(problem, catalog, ...) → a verified Plan, or Infeasible.
        Analyses change the problem or catalog (solver.analysis.edits, or pydantic
        `model_copy(update=...)`) and call it again.
        `constrain=f` calls f(milp) on the built model before solving: the one door for an
        analysis that needs an extra row (a spot share cap, a vendor count, an offer forced
        in). `pin_schedule(schedule)` is such an f: a given plan's decisions fixed, to read
        that plan under an edited problem (NotInModel when the model cannot hold them);
        `pin_rentals(schedule)` fixes its rentals only, the jobs' replicas free. f adds rows through `milp.add_row` and new variables through `milp.model`; rows
        it adds are part of the model the verifier's plan came from, but the verifier
        checks only the problem's own constraints.
    plan_of(inst, solution, problem, catalog) → the verified Plan of a raw solve (solver.probes).
    carried, no_plan, with_stack_price: solve_problem's steps, which the probe engine's plan
        (solver.probes.Probes.plan, above this module) takes too: one copy of each (issue 44).
    build(problem, catalog) → (Instance, Milp) and solve_built(inst, milp, ...) → Plan:
        build once, change bounds (each constraint family's `set_bound`: the budget, a site's
        power, an offer's stock, a job's deadline, the spot work, the vendor count), solve
        again — for frontiers and probes that reuse one model.
    explain_quick(inst): the obvious blockers of a problem with no plan, from preprocessing.

The model itself, for analyses that edit it and solve it raw (an elastic solve's plan
breaks the written limits, so the verifier would reject it):
    build_instance, build_milp, Milp                the preprocessed problem, the model
    solve_milp → Solution, or NoSolution            one raw solve
    held_nodes, asked_work, job_layout              reading the model
    ModelNumbers                                    whether a plan meets the model as it stands
    reprice(milp, offer, price) → undo              one offer's price on the built model (its cost
                                                    coefficients, the budget row, the Instance plans
                                                    are read from); with_offer_price for the verifier
    reduced_costs, price_drops                      one LP's estimate of how far each offer's price
                                                    must fall to enter (orders negotiate's work)
    budget_slack, power_slack, power_sites, stock_slack, add_work_slack, widen_discount
                                                    elastic edits (solver.milp.elastic, ...)
    scale_work                                      a job's work read at another MFU, undoable (solver.milp.scale)

For the commands: BACKENDS (the --backend choices), DEFAULT_BACKEND, and PROGRESS (set
PROGRESS.listener to hear a running solve's best plan and bound; PROGRESS.node_limit =
DETERMINISTIC_NODES for `solve --deterministic`); arm_interrupter / fire_interrupter: the stop a
running solve heeds (Ctrl-C, the budget's end, a worker told to stop).

The model's types for code that names them (solver.probes): Variable, LinearConstraint,
LinearExpr, and total / weighted sums of variables (solver.milp.terms). Only solver.milp and
solver.engine import OR-Tools (an import-linter contract).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from solver.clock import OutOfTime, RunClock, no_plan_found, not_started
from solver.engine.backends import BACKENDS, DEFAULT_BACKEND
from solver.engine.export import write_mps
from solver.engine.interrupt import arm_interrupter, fire_interrupter
from solver.engine.progress import DETERMINISTIC_NODES, PROGRESS
from solver.engine.promise import price_drops, reduced_costs
from solver.engine.solve import solve_milp
from solver.errors import Infeasible
from solver.milp.build import build_milp
from solver.milp.capacity import held_nodes, widen_discount
from solver.milp.core import BIG_MODEL_VARIABLES, Milp
from solver.milp.families.budget import budget_slack
from solver.milp.families.power import power_sites, power_slack
from solver.milp.families.stock import stock_slack
from solver.milp.exclusion import Exclusion
from solver.milp.extract import extract_plan
from solver.milp.families.vendors import add_vendor_count, vendor_nodes
from solver.milp.feasible import ModelNumbers
from solver.milp.instance import Instance, build_instance, job_layout, options_as_written
from solver.milp.pin import NotInModel, pin_rentals, pin_schedule
from solver.milp.prefer import keep_preferred, pinned_milp
from solver.milp.registry import (
    AVAILABILITY, BINDING_KINDS, BUDGET, DEADLINE, FAMILIES, MONEY, POWER, SPOT, VENDORS, Family, NotApplicable,
    as_bounded, family,
)
from solver.milp.reprice import reprice, with_offer_price
from solver.milp.scale import scale_work
from solver.milp.solution import OPTIMALITY_GAP, NoSolution, Solution
from solver.milp.stacks import STACK_NAMES, off_stack, stack_switch, stack_warnings, usual_stack
from solver.milp.terms import LinearConstraint, LinearExpr, Variable, total, weighted
from solver.milp.work import add_work_slack, asked_work
from solver.model.catalog import Catalog
from solver.model.plan import Plan, StackSwitch
from solver.model.problem import Problem
from solver.verify import check_plan

__all__ = [
    # solving a problem
    "solve_problem", "build", "solve_built", "plan_of", "explain_quick", "pin_schedule", "pin_rentals", "NotInModel",
    # its steps, which the probe engine (solver.probes) takes too: one copy of each
    "carried", "no_plan", "with_stack_price", "size_advice",
    # the model, for analyses that edit it and solve it raw
    "build_instance", "Milp", "build_milp", "solve_milp", "Solution", "NoSolution", "OPTIMALITY_GAP",
    "held_nodes", "asked_work", "job_layout", "ModelNumbers", "reprice", "with_offer_price", "options_as_written",
    "reduced_costs", "price_drops",
    "budget_slack", "power_slack", "power_sites", "stock_slack", "add_work_slack", "widen_discount",
    "scale_work", "off_stack",
    # the constraint families (solver.milp.registry) and what preprocessing excluded
    "FAMILIES", "Family", "NotApplicable", "family", "BINDING_KINDS", "MONEY", "as_bounded", "Exclusion",
    "BUDGET", "POWER", "AVAILABILITY", "DEADLINE", "VENDORS", "SPOT",
    "add_vendor_count", "vendor_nodes",
    # what a solve adds to its plan (solver.probes does the same on its engine)
    "off_stack", "usual_stack", "stack_switch", "priced_switch", "NOT_FOUND_ON_STACK", "write_mps",
    # the model's types, and sums of its variables (solver.milp.terms): only milp and engine import OR-Tools
    "Variable", "LinearConstraint", "LinearExpr", "total", "weighted",
    # for the commands
    "BACKENDS", "DEFAULT_BACKEND", "PROGRESS", "DETERMINISTIC_NODES", "arm_interrupter", "fire_interrupter",
]


def solve_problem(problem: Problem, catalog: Catalog, *, backend: str = DEFAULT_BACKEND,
                  time_limit: float | None = None, gap: float | None = None,
                  export_mps: str | Path | None = None, constrain: Callable[[Milp], None] | None = None,
                  max_seconds: float | None = None, price_stack: bool = True) -> Plan:
    """Cheapest plan for the problem, checked by the independent verifier before it is returned.

    Among plans of that cost, the one finishing earliest, then renting the fewest
    configurations (solver.engine.tiebreak; Plan.tie_break says whether that is proven), so the
    same input gives the same plan.

    Soft preferences (a job's or the problem's `prefer`: site, vendor, mode, GPU; only there, a
    share there, or avoid) are weighed by re-solving with each imposed; see solver.milp.prefer
    for the rule, Plan.preferences for what each did and cost. `time_limit` bounds each solve,
    `max_seconds` all of them (a re-solve with no time left is not started). A plan off the
    catalog's usual software stack is priced against the best usual-stack plan (one more solve)
    unless `price_stack` is False: a probe that only asks whether a plan exists (the margin's)
    has no use for that price."""
    clock = RunClock.starting_now(time_limit, max_seconds, least=0.0)  # building the model is part of the run
    if clock.spent():  # no build once the run's time is over (issue 47: phases after the solve ran on)
        raise not_started()
    inst = build_instance(problem, catalog)
    carried(problem, inst)
    if clock.spent():  # the model's build takes longer than the Instance's: not started past the budget
        raise not_started()
    milp = build_milp(inst)
    if constrain is not None:
        constrain(milp)
    if export_mps:
        write_mps(milp.model, export_mps)
    try:
        limit = clock.next_limit()
    except OutOfTime:
        raise not_started(advice=size_advice(inst, milp)) from None
    plan = solve_built(inst, milp, backend=backend, time_limit=limit, gap=gap, more_time=clock.more_time)
    if problem.preferences:  # soft preferences: re-solve with each imposed (solver.milp.prefer)
        def pinned(pins: list[int]) -> Plan:
            try:
                limit = clock.next_limit()
            except OutOfTime:
                raise Infeasible("no time left for the pinned re-solve", proven=False) from None
            return solve_built(inst, pinned_milp(inst, pins, constrain), backend=backend, time_limit=limit, gap=gap)
        plan = keep_preferred(inst, plan, pinned)
    if not price_stack:
        return plan
    usual = problem.model_copy(update={"stacks": [usual_stack(catalog)]})
    # the problem's own best plan on the usual stack: an analysis' rows (a pinned plan) are not its
    return with_stack_price(plan, problem, catalog, lambda: solve_problem(
        usual, catalog, backend=backend, time_limit=clock.next_limit(), gap=gap), keep_usual=constrain is None)


def carried(problem: Problem, inst: Instance) -> None:
    """Infeasible, with preprocessing's reasons (explain_quick), when a job has no configuration that
    can carry it: nothing to build or solve. The check of solve_problem and of the probe engine."""
    stranded = [job.name for job in problem.jobs if not any(o.job == job.name for o in inst.options)]
    if stranded:
        raise Infeasible(f"no offer can carry job {', '.join(stranded)}", reasons=explain_quick(inst))


def no_plan(inst: Instance, milp: Milp, why: str, *, proven: bool, more_time: str | None) -> Infeasible:
    """What a solve that found no plan says: proven infeasible, with preprocessing's reasons; else no
    plan found (solver.clock.no_plan_found: what ended the solve, and the model's size advice). The
    words of solve_built and of the probe engine's base (solver.probes.Probes.solve_base)."""
    if proven:
        return Infeasible(why, reasons=explain_quick(inst))
    return no_plan_found(why, more_time=more_time, advice=size_advice(inst, milp))


def with_stack_price(plan: Plan, problem: Problem, catalog: Catalog, solve_usual: Callable[[], Plan], *,
                     keep_usual: bool = True) -> Plan:
    """A plan off the catalog's usual software stack (solver.milp.stacks) with its switch noted and
    priced against `solve_usual()`, the best plan on the usual stack alone (OutOfTime when no time is
    left to look for it, Infeasible when it found none); that plan itself when it costs no more and
    `keep_usual` (a tie is no reason to port code). The plan as it is when it keeps to the usual stack.
    solve_problem prices with a whole solve, the probe engine with a probe of its model."""
    others = off_stack(plan, problem, catalog)
    if not others:
        return plan
    try:
        same = solve_usual()
    except OutOfTime:
        note = stack_switch(plan, catalog, others, None, "no time was left to price a plan without it")
    except Infeasible as exc:
        note = stack_switch(plan, catalog, others, None, "no plan on the usual stack alone meets the problem"
                            if exc.proven else NOT_FOUND_ON_STACK)
    else:
        if same.total_cost <= plan.total_cost + 0.005 and keep_usual:
            return same
        note = priced_switch(plan, catalog, others, same)
    return plan.model_copy(update={"stack_switch": note})


NOT_FOUND_ON_STACK = "its solve found no plan on the usual stack alone in the time (none proven impossible)"
"""Why a switch has no price when the usual stack's solve stopped without a plan or a proof."""


def priced_switch(plan: Plan, catalog: Catalog, others: list[str], same: Plan) -> StackSwitch:
    """The switch priced against `same`, the best plan found on the usual stack alone (issue 47:
    "saves 65,217 CNY over the best CUDA plan" was said of a CUDA solve the budget cut, while a
    CUDA plan cheaper than the switch existed). The saving over the best plan on that stack lies
    in [same's proven bound − cost, same's cost − cost]: one number only when `same` is proven
    optimal; an interval when even its bound is dearer than the plan; no saving at all when the
    bound is not (the usual stack may be cheaper)."""
    if same.status == "optimal":
        return stack_switch(plan, catalog, others, same, "")
    usual, cur = STACK_NAMES.get(usual_stack(catalog), usual_stack(catalog)), plan.currency
    low, high = same.lower_bound - plan.total_cost, same.total_cost - plan.total_cost
    found = (f"its solve stopped before a proof: the best {usual} plan found costs {same.total_cost:,.0f}, "
             f"none costs less than {same.lower_bound:,.0f}")
    if low > 0.005:
        why = (f"it saves between {low:,.0f} and {high:,.0f} {cur} over the best {usual} plan ({found})")
    else:
        why = f"no saving over the best {usual} plan is proven ({found}, not above this plan's {plan.total_cost:,.0f})"
    note = stack_switch(plan, catalog, others, None, why)
    return note.model_copy(update={"same_stack_cost": same.total_cost, "same_stack_bound": same.lower_bound,
                                   "saving_interval": [round(low, 2), round(high, 2)]})


def solve_built(inst: Instance, milp: Milp, *, backend: str = DEFAULT_BACKEND, time_limit: float | None = None,
                gap: float | None = None, more_time: str = "--time-limit") -> Plan:
    """Solve an already built (and possibly re-bounded) model; verify the plan against inst's problem
    as the model holds it (plan_of: a budget or power quota set on the built model).
    `more_time`: the option that would have given the solve more time, named when it found no plan."""
    try:
        solution = solve_milp(milp, backend=backend, time_limit=time_limit, gap=gap, tiebreak=True)
    except NoSolution as exc:
        raise no_plan(inst, milp, str(exc), proven=exc.proven, more_time=more_time if time_limit else None) from None
    return plan_of(inst, solution)


def size_advice(inst: Instance, milp: Milp) -> list[str]:
    """Why a run's time ended with no plan when its model is big (BIG_MODEL_VARIABLES or more): its
    size, and `restrict:` to shrink it; nothing for a smaller model. Why (issue 47): 5,000 unrestricted
    offers ended in a bare "no plan", exit 1, as if the problem had none."""
    variables = milp.model.num_variables
    if variables < BIG_MODEL_VARIABLES:
        return []
    offers, jobs = len({c.offer.offer for c in inst.configs.values()}), len(inst.problem.jobs)
    return [f"the problem is too large to solve in the run's time: {offers:,} offers for {jobs} "
            f"job{'s' if jobs != 1 else ''} make a model of {variables:,} variables; narrow it with "
            "`restrict:` in the problem (gpus, vendors, datacenters, modes or offers; `gpuplan catalog show` "
            "lists them), or raise --max-seconds"]


def plan_of(inst: Instance, solution: Solution, problem: Problem | None = None,
            catalog: Catalog | None = None) -> Plan:
    """The solution as a Plan, checked by the independent verifier against `problem` and
    `catalog` (default: the instance's own). A probe (solver.probes) passes the problem it
    reads the model as: a raised budget's plan is checked against the raised budget.

    The budget and power quotas checked are those the solved model holds (a family's set_bound
    on the built model: registry.as_bounded reads them from the model, never from edit text)."""
    plan = extract_plan(solution)
    problem, written = as_bounded(solution.milp, problem or inst.problem, catalog or inst.as_given or inst.catalog)
    check_plan(problem, written, plan)  # the catalog in its own currencies
    mixed = stack_warnings(plan, catalog or inst.catalog)  # a cost the price columns do not show (solver.milp.stacks)
    return plan.model_copy(update={"warnings": [*plan.warnings, *mixed]}) if mixed else plan


def build(problem: Problem, catalog: Catalog) -> tuple[Instance, Milp]:
    """The instance and the built model, for benchmarks and tests that inspect them."""
    inst = build_instance(problem, catalog)
    return inst, build_milp(inst)


def explain_quick(inst: Instance) -> list[str]:
    """What stands out before any relaxation: jobs with no usable configuration, and why.

    The full elastic explanation (smallest relaxation of each limit) belongs to
    solver/analysis; this names the obvious blockers from preprocessing alone.
    """
    reasons = []
    usable = {o.job for o in inst.options}
    for job in inst.problem.jobs:
        if job.name not in usable:
            reasons.extend(f"job {job.name}: {why}" for why in _distinct_reasons(inst, job.name))
    if not reasons:
        reasons.append("every job has usable offers, but not enough capacity, power, budget or time "
                       "together: try a later deadline, a larger budget, or more offers")
    return reasons


def _distinct_reasons(inst: Instance, job: str, most: int = 6) -> list[str]:
    """One line per kind of reason (memory, lead_time, ...) with an example; for capacity the
    fabric that comes closest, since that is the one to enlarge."""
    seen: dict[str, str] = {}
    for reason in inst.excluded[job]:
        if reason.code != "capacity":
            seen.setdefault(reason.kind, f"{reason.text} (e.g. {reason.config})")
    lead = [inst.configs[r.config].offer for r in inst.excluded[job]
            if r.code == "lead_time" and r.config in inst.configs]
    if lead:  # in numbers: the shortest lead time against the window (issue 36)
        first = min(lead, key=lambda o: o.lead_time_days)
        spec = next(j for j in inst.problem.jobs if j.name == job)
        seen["lead_time"] = (f"lead_time: the shortest lead time of its offers is {first.lead_time_days} d "
                             f"({first.offer}) against its {spec.deadline_days - spec.start_day}-day window "
                             f"(days {spec.start_day}–{spec.deadline_days}): no node arrives in time")
    if job in inst.closest:
        seen["capacity"] = inst.closest[job][1].text
    return list(seen.values())[:most]
