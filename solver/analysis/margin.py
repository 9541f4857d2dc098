"""The margin of a plan against a slower run than assumed, and the plan that has one.

Why: every plan rests on one MFU figure per GPU, and published runs put sustained MFU in
bands (A100 38–52 %, H100 at scale 38–48 %; model cards' GPU-hours imply 14–28 % for
Llama 3 8B–70B). A lead's first question is how much slower the run may be before a
deadline slips, and what a plan that survives that costs.

- `mfu_margins`: each job's `JobResult.mfu_margin`, the lowest fraction of its MFU at which
  the plan's rentals still carry it (and every other job) by its deadline: searched by
  probes with the rentals pinned. `at_mfu` is the problem read at such a fraction
  (`Job.mfu_factor`), for checking a plan there (the verifier) or solving there.
- `robust_plan`: the problem solved with every MFU × factor (the problem's
  `robust.mfu_factor`, or `DEFAULT_MFU_FACTOR`): the cheapest plan meeting every deadline at
  that pessimism, and its premium over the optimum.

Builds (issue 34): `with_margins` builds one Instance and one model (solver.probes.Probes) and
asks every margin probe and the robust plan of it, each a change undone after: the rentals
pinned, a job's work read at a factor (solver.milp.scale), feasibility only for a margin.
Before, every probe was the problem rebuilt and re-solved at the factor (finetune-sprint-30d:
50 Instances, 50 models, 50 solves for five margins).
"""

from __future__ import annotations

import math

from solver import api
from solver.api import DEFAULT_BACKEND, NotInModel, pin_rentals
from solver.clock import OutOfTime, RunClock
from solver.estimate.spread import deadline_reading
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.plan import Plan, RobustPlan
from solver.model.problem import DEFAULT_MFU_FACTOR, Problem
from solver.probes import Answer, Pinned, Probes, ScaledWork, exists


STEP = 0.001
"""The margin's resolution: the search stops when the infeasible and the feasible fraction are this close."""


def at_mfu(problem: Problem, catalog: Catalog, factor: float,
           jobs: list[str] | None = None) -> tuple[Problem, Catalog]:
    """The problem with the MFU of every job (or of `jobs`) × factor (Job.mfu_factor), the catalog as is."""
    if not 0 < factor <= 1:
        raise ValueError(f"factor must be in (0, 1], got {factor!r}")
    edited = [j.model_copy(update={"mfu_factor": j.mfu_factor * factor}) if jobs is None or j.name in jobs else j
              for j in problem.jobs]
    return problem.model_copy(update={"jobs": edited}), catalog


def mfu_margins(problem: Problem, catalog: Catalog, plan: Plan, *, backend: str = DEFAULT_BACKEND,
                time_limit: float | None = None, gap: float | None = None,
                clock: RunClock | None = None, probes: Probes | None = None) -> Plan:
    """The plan with each job's `mfu_margin`: the lowest fraction f of its MFU at which the plan's
    rentals (contracts and nodes as rented, the replicas free) still carry every job by its
    deadline, the others at their assumed MFU.

    f = required ÷ done is feasible (the plan's own assignments still suffice), so the search
    halves downwards from there to an infeasible fraction, then bisects to within STEP and
    reports the feasible end: a plan exists at the margin and none 1 % below it (for margins
    above 0.1). A probe that runs out of time (the command's budget, Ctrl-C: the margins come
    after the solve, in what is left) leaves the margin at what is proven, the feasible end so
    far, and `mfu_margin_low` at the highest fraction known too low, so the report says the
    search was cut and the margin lies between the two.

    Each probe is a change of one built model (`probes`, built here when not given: one
    Instance and one model for every job's search): the rentals pinned (solver.api.pin_rentals)
    and the job's work read at f (solver.milp.scale), asked as feasibility only. It answers as
    the problem re-solved at f with the rentals pinned did (tests/analysis/test_margin.py
    compares them), but from the model in memory and the last plan that still meets it."""
    probes = probes if probes is not None else Probes(problem, catalog, backend=backend, time_limit=time_limit,
                                                      gap=gap, clock=clock)
    pinned = Pinned("the plan's rentals", pin=pin_rentals(plan.schedule))
    margins, cut = {}, {}
    for job in plan.jobs:
        if job.done_eflop <= 0:
            margins[job.name] = None
            continue
        feasible = min(1.0, job.required_eflop / job.done_eflop + 1e-4)  # + the rounding of the two to 0.001 EFLOP
        low = 0.0
        probe = feasible / 2
        while feasible - low > STEP:
            # no time left (the budget, Ctrl-C): said cut at once, not found out by each job's probe in turn
            verdict = None if probes.clock.spent() else _carries(probes, pinned, job.name, probe)
            if verdict is None:  # out of time: the margin lies in (low, feasible], said as such
                cut[job.name] = round(low, 4)
                break
            if verdict:
                feasible = probe
                probe = probe / 2 if low == 0.0 else (low + feasible) / 2
            else:
                low = probe
                probe = (low + feasible) / 2
        margins[job.name] = round(feasible, 4)
    specs = {j.name: j for j in problem.jobs}
    return plan.model_copy(update={"jobs": [j.model_copy(update={"mfu_margin": margins[j.name],
                                                                 "mfu_margin_low": cut.get(j.name),
                                                                 **deadline_reading(specs[j.name], margins[j.name])})
                                            for j in plan.jobs]})


def _carries(probes: Probes, pinned: Pinned, job: str, factor: float) -> bool | None:
    """Do the plan's rentals carry every job with `job` at factor × its MFU? None: no time to say."""
    slow, _ = at_mfu(probes.problem, probes.catalog, factor, jobs=[job])
    try:
        return exists(probes, pinned, ScaledWork(f"job {job} at {factor:.1%} of its MFU", problem=slow, jobs=[job]))
    except NotInModel:
        return False


def robust_factor(problem: Problem, asked: bool) -> float | None:
    """The pessimistic factor to plan a robust plan at: the problem's, or the default when asked
    on the command line (`--robust`); None when neither asks."""
    if problem.robust is not None:
        return problem.robust.mfu_factor
    return DEFAULT_MFU_FACTOR if asked else None


def robust_plan(problem: Problem, catalog: Catalog, optimum: Plan, factor: float, *,
                backend: str = DEFAULT_BACKEND, time_limit: float | None = None, gap: float | None = None,
                max_seconds: float | None = None, probes: Probes | None = None) -> RobustPlan:
    """The cheapest plan meeting every deadline with every MFU × factor, beside `optimum`.

    With `probes` (the problem's built model), one probe: every job's work read at the factor
    (solver.milp.scale), solved with the plan's tie-break and verified against the problem at
    the factor. A problem with soft preferences, or whose plan there leaves the catalog's usual
    software stack, is solved again as a problem instead (solver.api.solve_problem weighs those
    with re-solves of its own)."""
    slow_problem, slow_catalog = at_mfu(problem, catalog, factor)
    if probes is not None and not problem.preferences:
        answer = _robust_probe(probes, slow_problem, factor)
        if answer is None or answer.plan is None or not api.off_stack(answer.plan, slow_problem, catalog):
            return _robust(factor, optimum, answer)
    try:
        plan = api.solve_problem(slow_problem, slow_catalog, backend=backend, time_limit=time_limit, gap=gap,
                                 max_seconds=max_seconds)
    except Infeasible as exc:
        return _robust(factor, optimum, Answer("infeasible" if exc.proven else "unknown", math.inf))
    return _robust(factor, optimum, Answer(plan.status, -math.inf, plan))


def _robust_probe(probes: Probes, slow_problem: Problem, factor: float) -> Answer | None:
    """The problem at the factor as one probe of the built model; None when no time was left to start it."""
    everyone = [j.name for j in slow_problem.jobs]
    try:
        return probes.probe(ScaledWork(f"every MFU × {factor:g}", problem=slow_problem, jobs=everyone),
                            problem=slow_problem, tiebreak=True)
    except OutOfTime:
        return None


def _robust(factor: float, optimum: Plan, answer: Answer | None) -> RobustPlan:
    """The robust plan as shown: its cost and premium, or why there is none; a plan not proven
    cheapest says the least any such plan costs (the interval from bound to plan)."""
    if answer is None or answer.plan is None:
        proven = answer is not None and answer.status == "infeasible"
        words = "no plan meets every deadline" if proven else "no plan found in the time given"
        return RobustPlan(mfu_factor=factor, status="infeasible" if proven else "not solved", total_cost=None,
                          premium=None, premium_pct=None, text=f"at {factor:.0%} of the assumed MFU {words}")
    plan = answer.plan
    premium = round(plan.total_cost - optimum.total_cost, 2)
    pct = premium / optimum.total_cost * 100 if optimum.total_cost else None
    share = f" ({pct:+.1f} %)" if pct is not None else ""
    least = (f" (no such plan costs less than {answer.low:,.0f} {plan.currency})"
             if answer.status != "optimal" and math.isfinite(answer.low) else "")
    return RobustPlan(mfu_factor=factor, status=plan.status, total_cost=plan.total_cost, premium=premium,
                      premium_pct=None if pct is None else round(pct, 2), allocations=plan.allocations,
                      jobs=plan.jobs,
                      text=f"at {factor:.0%} of the assumed MFU every deadline is met for "
                           f"{plan.total_cost:,.0f} {plan.currency}{least}, {premium:,.0f}{share} over the optimum")


def with_margins(problem: Problem, catalog: Catalog, plan: Plan, *, robust: bool = False,
                 backend: str = DEFAULT_BACKEND, time_limit: float | None = None, gap: float | None = None,
                 clock: RunClock | None = None, probes: Probes | None = None) -> Plan:
    """The plan with each job's margin, and the robust plan when asked (`robust`, the problem's
    `robust`): what `solve` and `report` show beside the optimum. One Instance and one model
    (solver.probes.Probes) serve every margin probe and the robust plan: `probes`, the model
    the plan was solved on (`solve`: no build at all here), else one built here."""
    if probes is None:
        probes = Probes(problem, catalog, backend=backend, time_limit=time_limit, gap=gap, clock=clock)
    plan = mfu_margins(problem, catalog, plan, probes=probes)
    factor = robust_factor(problem, robust)
    if factor is None:
        return plan
    left = None if clock is None else clock.left()
    return plan.model_copy(update={"robust_plan": robust_plan(problem, catalog, plan, factor, backend=backend,
                                                              time_limit=time_limit, gap=gap, max_seconds=left,
                                                              probes=probes)})
