"""Independent check of a plan against its problem and catalog: the verifier, one package.

    rules.py    the rules of the schedule (rentals, assignments, capacity, memory, work, cost,
                summaries) and, through the constraint registry, each family's own check
    shown.py    every field the plan shows, re-derived from its schedule
    helpers.py  its readings of money, terms and FLOPs (one copy each)
    packing.py  whether groups fit on the nodes held

Why its own readings: a MILP can be mis-built in ways that still solve; the verifier
re-derives each rule in code of its own, so a plan is shown only when two readings agree.
Why it sits above the MILP: a limit's check belongs to its family (solver/milp/families/),
found through the registry; a check reads the plan through the verifier, never the model.
"""

from __future__ import annotations

from collections import defaultdict

from solver.errors import PlanRejected
from solver.model.catalog import Catalog
from solver.model.modes import MODES, UNIT_DAYS
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.verify.helpers import TOL_MONEY, TOL_REL
from solver.verify.rules import Verifier

__all__ = ["verify_plan", "check_plan", "vendors_rented", "spot_work", "Verifier", "DAYS_PER_UNIT",
           "TOL_MONEY", "TOL_REL"]

DAYS_PER_UNIT = UNIT_DAYS
"""Days in one price unit (solver.model.modes.UNIT_DAYS: the one table; this name as it always was)."""


def verify_plan(problem: Problem, catalog: Catalog, plan: Plan) -> list[str]:
    """Every violated rule, in words; an empty list means the plan is valid."""
    v = Verifier(problem, catalog, plan)
    v.run()
    return v.violations


def check_plan(problem: Problem, catalog: Catalog, plan: Plan) -> None:
    """Raise PlanRejected when the plan breaks any rule."""
    violations = verify_plan(problem, catalog, plan)
    if violations:
        raise PlanRejected(violations)


def vendors_rented(plan: Plan) -> set[str]:
    """Vendors the plan rents anything from: what a vendor-count limit (a frontier's ε,
    solver.milp.families.vendors) counts, read from the plan alone."""
    return {a.vendor for a in plan.allocations}


def spot_work(problem: Problem, catalog: Catalog, plan: Plan) -> tuple[float, float]:
    """(FLOPs the plan does on preemptible (spot) offers, FLOPs it does in all), read from the
    problem, the catalog and the schedule alone: what a spot-work limit (a frontier's ε,
    solver.milp.families.spot) bounds, as the verifier counts work."""
    v = Verifier(problem, catalog, plan)
    pieces: dict[tuple[str, int], list] = defaultdict(list)
    for a in plan.schedule.assignments:
        pieces[a.job, a.period].append(a)
    spot = total = 0.0
    for (name, _), group in pieces.items():
        for a in group:
            done = v._work(v.jobs[name], group, a)
            total += done
            spot += done if MODES[catalog.offers[a.offer].mode].preemptible else 0.0
    return spot, total
