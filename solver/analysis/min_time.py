"""Min-time objective: the earliest-finishing plan within the budget, ties broken by cost.

A plan's finishing time is the day its last job finishes. The search (a bisection over
caps on one built model, by feasibility probes) is solver.session.Session's.
"""

from __future__ import annotations

import time

from solver.api import DEFAULT_BACKEND
from solver.clock import OutOfTime, ctrl_c_or, fix_for_time
from solver.errors import Infeasible
from solver.limits import finish_day
from solver.model.catalog import Catalog
from solver.model.plan import Plan
from solver.model.problem import Problem
from solver.probes import Probes
from solver.rows import ROWS
from solver.session import Session


def min_time_plan(problem: Problem, catalog: Catalog, *, backend: str = DEFAULT_BACKEND,
                  time_limit: float | None = None, gap: float | None = None,
                  max_seconds: float | None = None, probes: Probes | None = None) -> Plan:
    """The earliest-finishing verified plan within `problem.budget` (none: earliest possible);
    among plans finishing that day, the cheapest. Raises Infeasible when no plan meets the
    deadlines within the budget. `time_limit` and `gap` apply to each solve, `max_seconds`
    to all of them: when it runs out, the earliest plan found so far, with a warning naming the
    days the earliest finish may still lie between (Infeasible, not proven, when none was found,
    and when the problem is proven to have none within the budget). `probes`: the command's probe
    engine for `problem` (its model and its clock, which then bounds the run), for the analyses
    after this one to reuse (one Instance and one model for the command)."""
    stop_at = None if max_seconds is None else time.perf_counter() + max_seconds
    session = Session(problem, catalog, backend=backend, time_limit=time_limit, gap=gap, stop_at=stop_at,
                      engine=probes)
    ROWS.expect(None)  # a bisection: how many days it probes is known when it ends
    try:
        day = session.earliest_cap(on_step=_announce_step)
        session.set_cap(day)
        plan = session.solve()
    except OutOfTime:
        plan = _unsettled(session)
    ROWS.announce(f"earliest finish: day {finish_day(plan)}, {_cost_words(plan, problem.currency)}")
    if problem.preferences:  # said, not dropped in silence: the plan is earliest, not the preferred one
        plan = plan.model_copy(update={"warnings": [*plan.warnings, (
            f"{len(problem.preferences)} preference{'s' if len(problem.preferences) > 1 else ''} (prefer) "
            "not weighed: the earliest plan ignores them; solve without --objective min_time to weigh them")]})
    return plan


def _announce_step(day: int, found: bool) -> None:
    """One bisection step as a row: what it settled about the earliest finish."""
    ROWS.announce(f"finish by day {day}: " + ("a plan exists" if found else "no plan"))


def _cost_words(plan: Plan, currency: str) -> str:
    """The cost, or the interval from its proven bound when the time did not settle it."""
    if plan.status == "optimal":
        return f"{plan.total_cost:,.0f} {currency}"
    return f"{plan.lower_bound:,.0f} to {plan.total_cost:,.0f} {currency} (not proven)"


def _unsettled(session: Session) -> Plan:
    """What the search knows when the run's time ends: the earliest plan found, with the days
    the earliest finish may still lie between, or Infeasible (not proven) when none was found.
    Why not nothing: a min-time search stopped half-way still holds a plan that meets every
    deadline and the budget, and the days it has ruled out (issue 34: never silent)."""
    if session.bracket is None:
        raise Infeasible(ctrl_c_or("no earliest plan settled within the run's time (--max-seconds)",
                                   "no earliest plan settled before Ctrl-C stopped the run"),
                         reasons=fix_for_time("raise --max-seconds or --time-limit"), proven=False) from None
    low, high, sol = session.bracket  # (a min-cost solve stopped with a plan returns it: no OutOfTime)
    plan = session.unminimised(sol)
    settled = (f"the earliest finish is day {high}, but its cheapest plan was not proven" if low == high else
               f"the earliest finish lies between day {low} and day {high}: the days before {high} were "
               "not all ruled out")
    when = ctrl_c_or("within the run's time (--max-seconds)", "before Ctrl-C stopped the run")
    return plan.model_copy(update={"warnings": [*plan.warnings, (
        f"not settled {when}: {settled}; this plan finishes on day "
        f"{finish_day(plan)} and costs {plan.total_cost:,.2f}, at least {plan.lower_bound:,.2f}")]})
