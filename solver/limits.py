"""The ε limits a Session solves under (finishing day, budget, spot work, vendors), imposed on
a built model through the constraint families' bounds (solver.milp.registry: each family
owns its rows and their right-hand side), and the plan readers that check them.

Why apart from solver.session: the same limits also serve a plain solve
(`constrain_to`, a solver.api.solve_problem hook) that checks a frontier point independently.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver.milp.core import Milp
from solver.milp.registry import BUDGET, DEADLINE, SPOT, VENDORS
from solver.model.plan import Plan
from solver.probes import Limit
from solver.verify import vendors_rented


def constrain_to(cap: int | None = None, *, budget: float | None = None, spot: float | None = None,
                 vendors: int | None = None):
    """A `constrain=` hook for solver.api.solve_problem applying the same limits a Session does:
    every job done by day `cap`, cost ≤ budget, ≤ `spot` EFLOP on spot nodes, ≤ `vendors` vendors.
    For checking a frontier point by an independent solve."""
    def apply(milp: Milp) -> None:
        problem = milp.inst.problem
        latest = max(j.deadline_days for j in problem.jobs)
        Limits(latest if cap is None else cap, problem.budget if budget is None else budget, spot,
               vendors).impose(milp)
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

    def changes(self, base: Limits) -> list[Limit]:
        """These limits as probe changes (solver.probes.Limit, each through its family's bound) of
        a model that holds `base`: one per limit that differs. Each is tightening when these
        limits are within base (a frontier's ε only tighten the problem as written)."""
        tightens = self.within(base)
        out = []
        for fam, name, value, was in ((DEADLINE, "every job done by day", self.cap, base.cap),
                                      (BUDGET, "budget", self.budget, base.budget),
                                      (SPOT, "EFLOP on spot at most", self.spot, base.spot),
                                      (VENDORS, "vendors at most", self.vendors, base.vendors)):
            if value != was:
                out.append(Limit(f"{name} {value:g}" if value is not None else f"no {name}", tightens,
                                 fam, "", value))
        return out

    def impose(self, milp: Milp) -> None:
        """Bound the built model (the MILP, or its LP relaxation) to these limits, each through
        its family's bound: a row added on a first finite value stays, later values move it."""
        DEADLINE.set_bound(milp, "", self.cap)
        BUDGET.set_bound(milp, "", self.budget)
        SPOT.set_bound(milp, "", self.spot)
        VENDORS.set_bound(milp, "", self.vendors)


def _le(a: float | None, b: float | None) -> bool:
    return b is None or (a is not None and a <= b)


def plan_vendors(plan: Plan) -> set[str]:
    """Vendors the plan rents anything from (solver.verify.vendors_rented)."""
    return vendors_rented(plan)
