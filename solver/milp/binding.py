"""Which limits a solved plan runs into: budget, power quotas, availability caps, deadlines.

Why: "what binds" is the first question after "what does it cost" — it says which
negotiation (more kW, more nodes, more money, more time) could pay off. Read from the
solution's values against the named rows' own limits, so it names exactly what the
MILP enforced. A limit binds when less than one more unit of what it limits fits: one
more node of the offer, one more rack at the site; the budget when under 0.5 % is left.
Each reader is one family's part in solver.milp.registry, which asks them all in turn
(registry.binding_limits); they share the signature (solution, job results).
"""

from __future__ import annotations

from collections import defaultdict

from solver.milp.capacity import held_nodes
from solver.milp.solution import Solution
from solver.model.plan import Binding, JobResult

BUDGET_SLACK = 0.005


def budget_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    budget = sol.milp.inst.problem.budget
    if budget is None or sol.objective < budget * (1 - BUDGET_SLACK):
        return []
    horizon = sol.milp.inst.problem.horizon_days
    currency = sol.milp.inst.problem.currency
    return [Binding(kind="budget", name="budget", start_day=0, end_day=horizon, used=round(sol.objective, 2),
                    limit=budget, unit=currency, text=f"budget: {sol.objective:,.0f} of {budget:,.0f} {currency} used")]


def power_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    inst = sol.milp.inst
    used: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    smallest: dict[str, float] = {}
    for (key, t), variables in held_nodes(sol.milp).items():
        offer = inst.configs[key].offer
        if offer.counts_power:
            used[offer.datacenter][t] += offer.node_kw * sum(sol.count(var) for var in variables)
            smallest[offer.datacenter] = min(smallest.get(offer.datacenter, offer.node_kw), offer.node_kw)
    out = []
    for dc, by_t in used.items():
        quota = inst.catalog.datacenters[dc].power_quota_kw
        tight = [t for t, kw in by_t.items() if kw > quota - smallest[dc] + 1e-9]
        for first, last in _runs(tight):
            peak = max(by_t[t] for t in range(first, last + 1))
            start, end = _days(sol, first, last)
            out.append(Binding(kind="power", name=dc, start_day=start, end_day=end, used=round(peak, 3), limit=quota,
                               unit="kW", text=f"power at {dc}, days {start}–{end}: {peak:,.1f} of {quota:,.1f} kW"))
    return out


def availability_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    inst = sol.milp.inst
    held: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for (key, t), variables in held_nodes(sol.milp).items():
        held[inst.configs[key].offer.offer][t] += sum(sol.count(var) for var in variables)
    out = []
    for offer, by_t in held.items():
        cap = inst.catalog.offers[offer].max_nodes
        for first, last in _runs([t for t, n in by_t.items() if n >= cap]):
            start, end = _days(sol, first, last)
            out.append(Binding(kind="availability", name=offer, start_day=start, end_day=end, used=cap, limit=cap,
                               unit="nodes", text=f"availability of {offer}, days {start}–{end}: all {cap} nodes"))
    return out


def deadline_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    problem = sol.milp.inst.problem
    out = []
    for job, result in zip(problem.jobs, jobs):
        if result.finish_day >= job.deadline_days:
            out.append(Binding(kind="deadline", name=job.name, start_day=job.start_day, end_day=job.deadline_days,
                               used=result.finish_day, limit=job.deadline_days, unit="days",
                               text=f"deadline of {job.name}: runs until day {job.deadline_days}"))
    return out


def _runs(periods: list[int]) -> list[tuple[int, int]]:
    """Consecutive periods as (first, last) pairs."""
    out: list[tuple[int, int]] = []
    for t in sorted(periods):
        if out and t == out[-1][1] + 1:
            out[-1] = (out[-1][0], t)
        else:
            out.append((t, t))
    return out


def _days(sol: Solution, first: int, last: int) -> tuple[int, int]:
    inst = sol.milp.inst
    return inst.timeline.starts[first], inst.timeline.end(last)
