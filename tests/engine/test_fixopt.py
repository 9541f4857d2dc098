"""LP-guided fix-and-optimize (solver.engine.experimental.fixopt): its plans are plans, and it never claims a proof.

What must hold: the plan from the LP's choices passes the independent verifier and is no
cheaper than the optimum, the LP's bound no dearer; a solve with the switch on ends at the
same optimal cost as with it off (random tiny problems, and bundled ones); and when HiGHS,
handed the plan, stops without proving anything, the solve says "feasible" with the plan's
cost and a bound no higher than the optimum. No answer here depends on how long a solve ran:
every solve either has no time limit or one it never reaches.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hypothesis import given
from ortools.math_opt.python import mathopt

from solver.api import build
from solver.engine import run, switches, warmstart
from solver.engine.experimental import fixopt
from solver.engine.export import to_mathopt
from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp.extract import extract_plan
from solver.milp.solution import Solution
from solver.verify import check_plan

from tests.builders import ROOT, catalog, hourly, job, monthly, problem
from tests.engine.test_rcfix import FAST, instances
from tests.engine.test_rcfix import _cost as rcfix_cost

BUNDLED = [ROOT / "problems" / name for name in ("seed-7b-200b-30d.yaml", "data-locality.yaml")]


def two_jobs_one_cheap_node():
    """Cheap vendor A has one node, B and C more; two synchronous jobs each need a node for the
    whole window: the LP shares A between them, the integer plan cannot."""
    cat = catalog(hourly("A", 4, vendor="vA", max_nodes=1), hourly("B", 6, vendor="vB"),
                  monthly("C", 9_000, vendor="vC", max_nodes=2))
    prob = problem(job("j1", days=39, deadline_days=5), job("j2", days=30, deadline_days=5), horizon_days=5)
    return prob, cat


def heuristic(milp):
    """The LP relaxation and the LP-guided plan of `milp`, as solver.engine.experimental.fixopt makes them."""
    model = to_mathopt(milp.model)
    lp = fixopt.lp_relaxation(model, None)
    assert lp is not None
    return lp, fixopt.lp_plan(model, milp, lp, math.inf, None, False)


def verified_cost(prob, cat, milp, values) -> float:
    """Polish the plan's bookkeeping as every solve does, check it with the verifier, return its cost."""
    values = dict(values)
    run.polish(milp, values)
    sol = Solution(milp, "feasible", math.nan, math.nan, 0.0, "highs", values)
    sol.objective = sum(sol.cost_parts().values())
    check_plan(prob, cat, extract_plan(sol))
    return sol.objective


@pytest.mark.parametrize("case", [two_jobs_one_cheap_node(), *(load_problem(p) for p in BUNDLED)],
                         ids=["two-jobs", *(p.stem for p in BUNDLED)])
def test_the_lp_guided_plan_is_verified_and_between_the_lp_bound_and_the_optimum(case):
    prob, cat = case
    _, milp = build(prob, cat)
    optimum = solve_milp(milp).objective
    lp, plan = heuristic(milp)
    assert plan is not None
    assert lp.bound <= optimum + 1e-6
    assert verified_cost(prob, cat, milp, plan.values) >= optimum - 1e-6


def test_a_restriction_to_the_lp_choices_with_no_plan_is_widened(monkeypatch):
    prob, cat = two_jobs_one_cheap_node()
    _, milp = build(prob, cat)
    monkeypatch.setattr(fixopt, "lp_choices", lambda milp, values: set())   # nothing may run: no plan
    monkeypatch.setattr(warmstart, "shortlist", lambda milp, per_job: set())
    lp, plan = heuristic(milp)
    assert plan is not None
    verified_cost(prob, cat, milp, plan.values)


def _cost(prob, cat, on: bool, monkeypatch) -> float | None:
    """The optimum's cost with the switch on or off, its plan verified (test_rcfix's, unfixed)."""
    if on:
        monkeypatch.setenv(switches.ENV, "fixopt")
    else:
        monkeypatch.delenv(switches.ENV, raising=False)
    return rcfix_cost(prob, cat, fixing=False)


@FAST
@given(instances())
def test_the_optimum_with_the_heuristic_equals_the_optimum_without(case):
    prob, cat = case
    with pytest.MonkeyPatch.context() as mp:
        on, off = _cost(prob, cat, True, mp), _cost(prob, cat, False, mp)
    assert (on is None) == (off is None)
    if off is not None:
        assert on == pytest.approx(off, rel=1e-9, abs=1e-6)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.stem)
def test_a_bundled_problem_has_the_same_optimum_with_the_heuristic(path, monkeypatch):
    prob, cat = load_problem(path)
    assert _cost(prob, cat, True, monkeypatch) == pytest.approx(_cost(prob, cat, False, monkeypatch), rel=1e-9)


def test_the_heuristic_runs_only_when_switched_on_and_only_for_integer_models(monkeypatch):
    calls = []
    real = fixopt.run_fix_and_optimize
    monkeypatch.setattr(fixopt, "run_fix_and_optimize", lambda *a: calls.append(1) or real(*a))
    prob, cat = two_jobs_one_cheap_node()
    solve_milp(build(prob, cat)[1])
    assert not calls
    monkeypatch.setenv(switches.ENV, "fixopt")
    solve_milp(build(prob, cat)[1], warm_start=False)
    assert not calls
    solve_milp(build(prob, cat)[1])
    assert calls


class Stopped:
    """What HiGHS returns when a limit stops it before it finds a plan of its own or any bound."""

    termination = SimpleNamespace(reason=mathopt.TerminationReason.NO_SOLUTION_FOUND,
                                  objective_bounds=SimpleNamespace(dual_bound=-math.inf))

    def has_primal_feasible_solution(self):
        return False


def test_a_plan_handed_to_highs_is_not_called_optimal_unless_highs_proves_it(monkeypatch):
    prob, cat = two_jobs_one_cheap_node()
    _, milp = build(prob, cat)
    optimum = solve_milp(milp).objective
    made = []
    real_plan = fixopt.lp_plan
    monkeypatch.setattr(fixopt, "lp_plan", lambda *a: made.append((a[2], real_plan(*a))) or made[-1][1])
    monkeypatch.setattr(fixopt, "mathopt_once", lambda model, *a, **k: Stopped())   # the whole-model solve
    monkeypatch.setenv(switches.ENV, "fixopt")
    _, milp = build(prob, cat)
    sol = solve_milp(milp, time_limit=600)
    (lp, plan), = made
    assert plan is not None and lp.bound < optimum * (1 - 1e-3)   # a real gap: nothing proves the plan
    assert sol.status == "feasible"
    assert sol.objective == pytest.approx(plan.cost, rel=1e-9)
    assert sol.bound == pytest.approx(lp.bound, rel=1e-9) and sol.bound <= optimum + 1e-6
    check_plan(prob, cat, extract_plan(sol))
