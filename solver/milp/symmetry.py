"""Symmetry breaking: hourly capacity in interchangeable periods is held early first.

Why: one node-day of an hourly offer costs and does the same on any day of a stretch
in which the same jobs are open, so a solver otherwise explores every permutation of
those days. Swapping all of one offer's variables (nodes, replicas, discount) between
two such periods keeps every row satisfied — Use and Availability are per offer and
period, Work sums over periods of equal hours, Site and Data rows are bounded by the
sum of their variables' own bounds — so sorting each offer's holdings in decreasing
order within a stretch loses no optimum. Offers whose draw counts against a power
quota are left out: their periods are tied to committed capacity through Power rows.
"""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp


def add_symmetry_breaking(milp: Milp) -> None:
    """N[o,t] ≥ N[o,t+1] for hourly/spot offer o when t, t+1 are interchangeable.

    N[o,t] = Σ over o's interconnect options of n[o,t]. Row `Order-<offer>-<t>`.
    """
    inst = milp.inst
    context = [_period_context(milp, t) for t in inst.periods]
    held: dict[str, dict[int, list[mb.Variable]]] = defaultdict(lambda: defaultdict(list))
    for (key, t), var in milp.nodes.items():
        offer = inst.configs[key].offer
        if not offer.committed and not offer.counts_power:
            held[offer.offer][t].append(var)
    for offer, by_t in held.items():
        for t in sorted(by_t):
            if t + 1 in by_t and context[t] == context[t + 1]:
                milp.add_row(f"Order-{offer}-{t}",
                             mb.LinearExpr.sum(by_t[t]) >= mb.LinearExpr.sum(by_t[t + 1]))


def _period_context(milp: Milp, t: int) -> tuple:
    """What distinguishes a period: its length and which jobs may run in it."""
    inst = milp.inst
    pd = inst.period_days
    start, end = t * pd, min((t + 1) * pd, inst.problem.horizon_days)
    jobs = tuple(j.name for j in inst.problem.jobs if start >= j.start_day and end <= j.deadline_days)
    return inst.hours[t], jobs
