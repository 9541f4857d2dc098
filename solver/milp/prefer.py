"""Soft site preference (job.prefer = {site, up_to_pct}), made exact by solving again.

"Keep the job at its site unless elsewhere is more than up_to_pct cheaper" compares two
optima — the cheapest plan anywhere and the cheapest plan with the job at its site — so
no single linear objective states it exactly. solver.api.solve_problem therefore solves
as usual, and for each job with a preference (in the problem's order) whose plan leaves
its site, solves once more with the job pinned there (row `Prefer-<job>`: no replica of
the job at any other datacenter; earlier kept pins stay). The pinned plan is kept when

    cost(current plan) ≥ cost(pinned plan) × (1 − up_to_pct / 100)

i.e. unless the plan elsewhere is cheaper by more than up_to_pct % of the preferred
plan's cost. Costs are whole-plan costs (jobs share nodes, so a job's own cost is not
defined). A pin that makes the problem infeasible is dropped. Each re-solve costs one
more solve of the whole problem (the time limit applies to each). The plan's warnings say
what each preference did: its price when kept, the saving when not, or why it could not
be met — the plan alone reads "optimal", which it is only for the pinned problem.
"""

from __future__ import annotations

from collections.abc import Callable

from ortools.linear_solver.python import model_builder as mb

from solver.errors import Infeasible
from solver.milp.build import build_milp
from solver.milp.core import Milp
from solver.milp.instance import Instance
from solver.model.plan import Plan

TOL_REL = 1e-6


def pin(milp: Milp, job: str, site: str) -> None:
    """Row `Prefer-<job>`: the job's replicas at datacenters other than `site` sum to 0."""
    inst = milp.inst
    away = [var for (i, _t), var in milp.replicas.items()
            if inst.options[i].job == job and inst.configs[inst.options[i].config].offer.datacenter != site]
    if away:
        milp.add_row(f"Prefer-{job}", mb.LinearExpr.sum(away) <= 0)


def pinned_milp(inst: Instance, pins: list[str], constrain: Callable[[Milp], None] | None = None) -> Milp:
    """The model of inst with each named job pinned to its preferred site (and `constrain` applied)."""
    milp = build_milp(inst)
    if constrain is not None:
        constrain(milp)
    jobs = {j.name: j for j in inst.problem.jobs}
    for name in pins:
        prefer = jobs[name].prefer
        assert prefer is not None
        pin(milp, name, prefer.site)
    return milp


def keep_preferred(inst: Instance, plan: Plan, solve_pinned: Callable[[list[str]], Plan]) -> Plan:
    """The plan after honouring every job's preference in turn; solve_pinned(pins) solves with those pins."""
    pins: list[str] = []
    notes: list[str] = []  # what each preference did to the plan: the user reads its price here
    for job in inst.problem.jobs:
        if job.prefer is None:
            continue
        site, pct = job.prefer.site, job.prefer.up_to_pct
        sites = next((set(r.sites) for r in plan.jobs if r.name == job.name), set())
        if sites == {site}:
            pins.append(job.name)
            continue
        elsewhere = ", ".join(sorted(sites))
        try:
            candidate = solve_pinned([*pins, job.name])
        except Infeasible as exc:
            notes.append(f"job {job.name}'s preference for {site} was not weighed: the re-solve pinned there "
                         "found no plan in the time given (raise --time-limit or --max-seconds)" if not exc.proven
                         else f"job {job.name} runs at {elsewhere}, not at its preferred {site}: no plan runs it "
                         "there within the problem's limits and offers")
            continue
        extra = candidate.total_cost - plan.total_cost
        share = extra / candidate.total_cost if candidate.total_cost > 0 else 0.0
        if plan.total_cost >= candidate.total_cost * (1 - pct / 100) * (1 - TOL_REL):
            notes.append(f"job {job.name} kept at its preferred {site} (prefer up to {pct:g}%): "
                         f"{extra:,.0f} {candidate.currency} ({share:.1%}) more than running it at {elsewhere}")
            plan = candidate
            pins.append(job.name)
        else:
            notes.append(f"job {job.name} runs at {elsewhere}, not at its preferred {site}: that saves "
                         f"{extra:,.0f} {plan.currency} ({share:.1%}), more than prefer's {pct:g}%")
    return plan.model_copy(update={"warnings": [*plan.warnings, *notes]}) if notes else plan
