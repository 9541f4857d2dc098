"""Min-time objective: the earliest finishing day D within the budget is feasible, D − 1 is
not (independent solves), and the plan is the cheapest one finishing by D.

Instance as in tests/analysis/test_frontier.py (three hourly tiers, 40 GPU-days by day 10):
the cheapest plan finishing by day D costs 5 184, 4 608, 4 224, 4 032, 3 840 for D = 1..5.
"""

from __future__ import annotations

import pytest
from tests.builders import catalog, hourly, job, monthly, problem

from solver.analysis.edits import apply_edits
from solver.analysis.min_time import min_time_plan
from solver.limits import constrain_to, finish_day
from solver.session import Session
from solver.api import solve_problem
from solver.errors import Infeasible
from solver.load import load_problem
from solver.verify import check_plan

REL = 1e-4


def three_tier(budget=None):
    cat = catalog(hourly("cheap", 4.0, max_nodes=1), hourly("mid", 5.0, max_nodes=1),
                  hourly("dear", 6.0, max_nodes=3))
    return problem(job(days=40, deadline_days=10), horizon_days=10, budget=budget), cat


def capped(prob, cat, day):
    """Independent solve with every deadline moved to `day` (by the edit language)."""
    edited, _, _ = apply_edits(prob, cat, [f"jobs[*].deadline_days={day}"])
    return solve_problem(edited, cat)


@pytest.mark.parametrize("budget, day, cost", [(None, 1, 5184.0), (5000.0, 2, 4608.0), (4300.0, 3, 4224.0),
                                               (4032.0, 4, 4032.0), (3900.0, 5, 3840.0)])
def test_earliest_day_within_the_budget(budget, day, cost):
    prob, cat = three_tier(budget)
    plan = min_time_plan(prob, cat)
    check_plan(prob, cat, plan)
    assert finish_day(plan) == day
    assert plan.total_cost == pytest.approx(cost, rel=REL)
    assert plan.total_cost <= (budget or float("inf"))
    assert capped(prob, cat, day).total_cost == pytest.approx(plan.total_cost, rel=REL)  # ties broken by cost
    if day > 1:
        with pytest.raises(Infeasible):
            capped(prob, cat, day - 1)


def test_budget_below_the_cheapest_plan_is_infeasible():
    prob, cat = three_tier(3000.0)
    with pytest.raises(Infeasible, match="within 3,000"):
        min_time_plan(prob, cat)


def test_ties_broken_by_cost():
    """40 GPU-days (5 node-days) on at most 2 monthly + 2 hourly nodes: day 1 holds 4
    node-days at most, so day 2 is the earliest. Finishing by day 2 takes 1 monthly node
    (23 040) + 3 hourly node-days (3 × 1 152) = 26 496, or 2 monthly + 1 hourly = 47 232:
    among the plans finishing that day, the cheaper one is returned."""
    cat = catalog(monthly("m", 30 * 768.0, max_nodes=2), hourly("h", 6.0, max_nodes=2))
    prob = problem(job(days=40, deadline_days=10), horizon_days=30)
    plan = min_time_plan(prob, cat)
    assert finish_day(plan) == 2
    assert plan.total_cost == pytest.approx(26496.0, rel=REL)
    assert solve_problem(prob, cat, constrain=constrain_to(2)).total_cost == pytest.approx(26496.0, rel=REL)
    with pytest.raises(Infeasible):
        solve_problem(prob, cat, constrain=constrain_to(1))


def test_bundled_problem_earliest_day():
    """seed-7b-200b-30d (A100 monthly nodes only): D feasible, D − 1 not, cost = min-cost at D."""
    prob, cat = load_problem("problems/seed-7b-200b-30d.yaml")
    plan = min_time_plan(prob, cat)
    day = finish_day(plan)
    assert day < 30
    assert capped(prob, cat, day).total_cost == pytest.approx(plan.total_cost, rel=REL)
    with pytest.raises(Infeasible):
        capped(prob, cat, day - 1)


def test_session_reuses_a_plan_that_meets_a_tighter_cap():
    """Solved at cap 10 the cheapest plan ends on day 5; cap 7 needs no new MILP."""
    prob, cat = three_tier()
    session = Session(prob, cat)
    first = session.solve()
    solves = session.milp_solves
    session.set_cap(7)
    again = session.solve()
    assert finish_day(first) == 5 and again.total_cost == first.total_cost
    assert session.milp_solves == solves and session.reused == 1
    session.set_cap(None)  # loosening forgets what the Session learnt per choice ...
    answered = session.answered_without_solve
    assert session.solve().total_cost == first.total_cost
    # ... and asks the engine again, which answers from the plan it keeps: it costs the problem's
    # proven bound (solver.probes), so no MILP runs
    assert session.milp_solves == solves and session.answered_without_solve == answered + 1


def test_max_seconds_spent_gives_an_unproven_infeasible_not_a_wrong_plan():
    prob = problem(job("j", days=4, deadline_days=4), horizon_days=4)
    cat = catalog(hourly("h", 10.0, max_nodes=1))
    assert min_time_plan(prob, cat, max_seconds=600) is not None
    with pytest.raises(Infeasible) as caught:
        min_time_plan(prob, cat, max_seconds=1e-6)
    assert not caught.value.proven and "--max-seconds" in str(caught.value)


def test_a_search_the_time_stopped_returns_its_earliest_plan_with_the_days_left_open(monkeypatch):
    """The run's time ends after the first feasibility probe: the plan that probe found (verified,
    within every deadline), not proven, with the days the earliest finish may still lie between;
    each step was announced as it came (solver.rows)."""
    from solver.clock import OutOfTime
    from solver.rows import ROWS

    prob, cat = three_tier()
    real, calls = Session.probe, []

    def second_runs_out(self, *a, **k):
        calls.append(self.limits.cap)
        if len(calls) > 1:
            raise OutOfTime("the run's time is spent")
        return real(self, *a, **k)
    monkeypatch.setattr(Session, "probe", second_runs_out)
    heard = []
    ROWS.listener = lambda words, done, expected: heard.append(words)
    try:
        plan = min_time_plan(prob, cat)
    finally:
        ROWS.listener = None
    check_plan(prob, cat, plan)
    assert plan.status == "feasible" and plan.lower_bound <= plan.total_cost
    day = finish_day(plan)
    assert 1 < day <= 10 and calls[0] == 10
    assert any(f"lies between day 1 and day {day}" in w for w in plan.warnings)
    assert heard[0] == "finish by day 10: a plan exists"
    assert heard[-1].startswith(f"earliest finish: day {day}, ") and heard[-1].endswith("(not proven)")


def test_every_limit_is_a_change_undone_after_its_probe():
    """The Session's limits live in its probes, not on the model: after solves under a cap and a
    budget the engine's model holds the problem as built (solver.probes: changes undone)."""
    from solver.milp.registry import BUDGET, DEADLINE

    prob, cat = three_tier()
    session = Session(prob, cat)
    built = DEADLINE.bound(session.milp, ""), BUDGET.bound(session.milp, "")
    cheapest = session.solve()
    session.set_cap(session.earliest_cap())
    session.set_budget(cheapest.total_cost * 10)
    capped = session.solve()
    assert finish_day(capped) < finish_day(cheapest)
    assert (DEADLINE.bound(session.milp, ""), BUDGET.bound(session.milp, "")) == built
    assert session.engine.solves >= session.milp_solves + session.probes
