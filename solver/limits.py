"""The ε limits a Session solves under (finishing day, budget, spot work, vendors), the rows
and bounds that impose them on a built model, and the plan readers that check them.

Why apart from solver.session: the same handles also serve a plain solve
(`constrain_to`, a solver.api.solve_problem hook) that checks a frontier point independently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp
from solver.milp.vendors import add_vendor_count, vendor_nodes
from solver.milp.work import replica_work
from solver.model.plan import Plan
from solver.verify import vendors_rented

INF = math.inf


def constrain_to(cap: int | None = None, *, budget: float | None = None, spot: float | None = None,
                 vendors: int | None = None):
    """A `constrain=` hook for solver.api.solve_problem applying the same limits a Session does:
    every job done by day `cap`, cost ≤ budget, ≤ `spot` EFLOP on spot nodes, ≤ `vendors` vendors.
    For checking a frontier point by an independent solve."""
    def apply(milp: Milp) -> None:
        problem = milp.inst.problem
        ends = [milp.inst.timeline.end(t) for t in milp.inst.periods]
        latest = max(j.deadline_days for j in problem.jobs)
        handles = Handles(milp, spot=spot is not None, vendors=vendors is not None, relaxed=False)
        handles.apply(Limits(latest if cap is None else cap, budget, spot, vendors), ends)
    return apply


def finish_day(plan: Plan) -> int:
    """The day the plan's last job finishes."""
    return max((j.finish_day for j in plan.jobs), default=0)


@dataclass(frozen=True)
class Limits:
    """The ε limits a Session solves under (None: no limit)."""

    cap: int                       # every job done by this day
    budget: float | None = None    # total cost (the problem's own budget, or tighter)
    spot: float | None = None      # EFLOP done on spot nodes
    vendors: int | None = None     # vendors rented from

    def within(self, other: Limits) -> bool:
        """Every plan meeting self meets other (self is the same or tighter)."""
        return (self.cap <= other.cap and _le(self.budget, other.budget) and _le(self.spot, other.spot)
                and _le(self.vendors, other.vendors))


def _le(a: float | None, b: float | None) -> bool:
    return b is None or (a is not None and a <= b)


class Handles:
    """The ε handles of one built model (the MILP, or its LP relaxation for bounds)."""

    def __init__(self, milp: Milp, *, spot: bool, vendors: bool, relaxed: bool) -> None:
        inst = milp.inst
        self.milp = milp
        self.ub = {key: var.upper_bound for key, var in milp.replicas.items()}
        self.budget_row = milp.rows.get("Budget")
        self.spot_terms = [(var, replica_work(milp, i, t)) for (i, t), var in milp.replicas.items()
                           if inst.configs[inst.options[i].config].offer.mode == "spot"]
        self.vendor_of = vendor_nodes(milp)
        self.spot_row = self.vendor_row = None
        if spot:
            lhs = mb.LinearExpr.weighted_sum([v for v, _ in self.spot_terms], [w for _, w in self.spot_terms])
            milp.add_row("Frontier-Spot", lhs <= INF)
            self.spot_row = milp.rows["Frontier-Spot"]
        if vendors:
            self.vendor_row = add_vendor_count(milp, self.vendor_of, integral=not relaxed)

    def apply(self, limits: Limits, ends: list[int]) -> None:
        """Bound the model to `limits` (None: the problem's own); `ends`: each period's last day."""
        for (i, t), var in self.milp.replicas.items():
            var.upper_bound = 0.0 if ends[t] > limits.cap else self.ub[i, t]
        if limits.budget is not None and self.budget_row is None:
            self.milp.add_row("Frontier-Budget", self.milp.total_cost() <= INF)
            self.budget_row = self.milp.rows["Frontier-Budget"]
        if self.budget_row is not None:
            budget = limits.budget if limits.budget is not None else self.milp.inst.problem.budget
            self.budget_row.upper_bound = INF if budget is None else budget
        if self.spot_row is not None:
            self.spot_row.upper_bound = INF if limits.spot is None else limits.spot
        if self.vendor_row is not None:
            self.vendor_row.upper_bound = INF if limits.vendors is None else limits.vendors


def plan_vendors(plan: Plan) -> set[str]:
    """Vendors the plan rents anything from (solver.verify.vendors_rented)."""
    return vendors_rented(plan)
