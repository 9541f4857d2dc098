"""Min-time objective: the earliest-finishing plan within the budget, ties broken by cost.

A plan's finishing time is the day its last job finishes. The search (a bisection over
caps on one built model, by feasibility probes) is solver.session.Session's.
"""

from __future__ import annotations

import time

from solver.api import DEFAULT_BACKEND
from solver.clock import OutOfTime
from solver.errors import Infeasible
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Probes
from solver.session import Session


def min_time_plan(problem: Problem, catalog: Catalog, *, backend: str = DEFAULT_BACKEND,
                  time_limit: float | None = None, gap: float | None = None,
                  max_seconds: float | None = None, probes: Probes | None = None) -> Plan:
    """The earliest-finishing verified plan within `problem.budget` (none: earliest possible);
    among plans finishing that day, the cheapest. Raises Infeasible when no plan meets the
    deadlines within the budget. `time_limit` and `gap` apply to each solve, `max_seconds`
    to all of them (Infeasible, not proven, when it runs out). `probes`: the command's probe
    engine for `problem` (its model and its clock, which then bounds the run), for the analyses
    after this one to reuse (one Instance and one model for the command)."""
    stop_at = None if max_seconds is None else time.perf_counter() + max_seconds
    session = Session(problem, catalog, backend=backend, time_limit=time_limit, gap=gap, stop_at=stop_at,
                      engine=probes)
    try:
        day = session.earliest_cap()
        session.set_cap(day)
        plan = session.solve()
    except OutOfTime:
        raise Infeasible("no earliest plan settled within the run's time (--max-seconds)",
                         reasons=["raise --max-seconds or --time-limit"], proven=False) from None
    if problem.preferences:  # said, not dropped in silence: the plan is earliest, not the preferred one
        plan = plan.model_copy(update={"warnings": [*plan.warnings, (
            f"{len(problem.preferences)} preference{'s' if len(problem.preferences) > 1 else ''} (prefer) "
            "not weighed: the earliest plan ignores them; solve without --objective min_time to weigh them")]})
    return plan
