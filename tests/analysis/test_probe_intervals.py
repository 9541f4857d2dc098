"""Every figure a what-if probe gives is an interval that holds the exact optimum (issue 34).

The exact optimum comes from tests/milp/test_bruteforce.py's enumeration (written from the
catalog's semantics, no solver). The probes' solves are stopped early without a clock: HiGHS
gets a branch-and-bound node limit of 1 (solver.engine.backends.mathopt_once), so a probe
often ends with a plan and a bound apart, the case the interval [low, cost] is for, and the
same search stops at the same place on every run. The edits are bounds of the built model
(solver.probes.bound_changes): the deadline one day earlier (a tightening, bounded below by
the base's bound) and a budget around the optimum (tightening or loosening). A second way of
stopping: every solve after the base's stops at once without a plan of its own, so the answer
is the plan in hand that meets the probe (its MIP start) as the cost, and the base's bound.
"""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from ortools.math_opt.python import mathopt

from solver import api
from solver.engine import run as engine_run
from solver.engine import solve as engine_solve
from solver.errors import Infeasible
from solver.probes import Probes, ReadAs, bound_changes
from tests.milp.test_bruteforce import Knobs, instances, robust_brute_force

SOME = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       ])


def _stopped_early(monkeypatch) -> None:
    """HiGHS stops at its first plan (MathOpt's solution limit 1) and after one node."""
    real = mathopt.solve

    def first_plan(model, solver_type, *, params=None, **kw):
        params.solution_limit = 1
        return real(model, solver_type, params=params, **kw)
    monkeypatch.setattr(mathopt, "solve", first_plan)
    monkeypatch.setattr(engine_run, "mathopt_once", functools.partial(engine_run.mathopt_once, node_limit=1))


def _edited(prob, draw_budget: float | None, earlier: bool):
    (j,) = prob.jobs
    jobs = [j.model_copy(update={"deadline_days": j.deadline_days - 1})] if earlier else [j]
    update = {"jobs": jobs}
    if draw_budget is not None:
        update["budget"] = draw_budget
    return prob.model_copy(update=update)


def _stopped_at_once(monkeypatch) -> None:
    """Every solve stops before it finds a plan of its own (not proven): the probe's answer is
    the plan it started from, if any, and the bound it had (the base's, for a tightening)."""
    def stopped(*a, **kw):
        raise api.NoSolution("stopped at once (a test)", proven=False)
    monkeypatch.setattr(engine_solve, "solve_once", stopped)


@SOME
@given(instances(Knobs(extras=True)), st.booleans(), st.sampled_from([None, 0.9, 1.05, 1.3]),
       st.sampled_from(["first plan", "at once"]))
def test_a_probe_stopped_early_brackets_the_exact_optimum(inst, earlier, budget_share, stop):
    prob, cat = inst
    (j,) = prob.jobs
    assume(not earlier or j.deadline_days - 1 > j.start_day)
    base = robust_brute_force(prob, cat)
    assume(base is not None)
    with pytest.MonkeyPatch.context() as patch:  # undone after each example
        _bracket(prob, cat, base, earlier, budget_share, stop, patch)


def _bracket(prob, cat, base: float, earlier: bool, budget_share: float | None, stop: str, patch) -> None:
    if stop == "first plan":
        _stopped_early(patch)
    try:
        probes = Probes(prob, cat)
        probes.solve_base()
    except Infeasible:
        pytest.fail("the brute force has a plan")
    if stop == "at once":
        _stopped_at_once(patch)
    budget = None if budget_share is None else round(base * budget_share, 2)
    edited = _edited(prob, budget, earlier)
    changes = bound_changes(probes, edited, cat)
    assert changes is not None                                  # these edits are bounds of the model
    exact = robust_brute_force(edited, cat)
    answer = probes.probe(*changes, ReadAs("edited", problem=edited, catalog=cat), problem=edited, catalog=cat)
    event(f"{stop}: {answer.status}, {'solved' if answer.solved else 'answered from the base'}")
    if answer.status == "infeasible":
        assert exact is None
        return
    if answer.plan is not None:
        assert exact is not None and answer.low <= exact + 0.01 and exact <= answer.cost + 0.01
    elif exact is not None:
        assert answer.low <= exact + 0.01


def test_a_tightening_probe_stopped_at_once_is_the_interval_from_the_base_bound_to_the_plan_in_hand():
    """Deadline 30 → 28 solved, then 30 → 29 with every solve stopped at once: the answer is the
    28-day plan (it meets the 29-day model) and the base optimum's bound, and the exact optimum
    of the 29-day problem lies between them, strictly inside on this case."""
    from solver.api import solve_problem
    from tests.analysis.test_whatif import power_case

    prob, cat = power_case()
    probes = Probes(prob, cat)
    probes.solve_base()

    def earlier(days: int):
        (j,) = prob.jobs
        return prob.model_copy(update={"jobs": [j.model_copy(update={"deadline_days": days})]})
    at_28 = probes.probe(*bound_changes(probes, earlier(28), cat), problem=earlier(28), catalog=cat)
    assert at_28.status == "optimal"
    with pytest.MonkeyPatch.context() as patch:
        _stopped_at_once(patch)
        at_29 = probes.probe(*bound_changes(probes, earlier(29), cat), problem=earlier(29), catalog=cat)
    exact = solve_problem(earlier(29), cat).total_cost
    assert at_29.status == "feasible" and at_29.cost == at_28.cost and at_29.low == probes.base.low
    assert at_29.low < exact < at_29.cost
