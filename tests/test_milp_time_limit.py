"""Time-limited HiGHS solves go through MathOpt, which keeps the incumbent and its bound.

The plan read back must be the same plan (values mapped to the right variables even
when an analysis added unnamed variables), and a solve stopped early must still
return a verified plan with an honest gap.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from families import catalog, hourly, job, monthly, problem
from solver.api import build
from solver.milp.extract import extract_plan
from solver.milp.solve import solve_milp
from solver.verify import check_plan

sys.path.insert(0, str(Path(__file__).resolve().parent / "bench"))


def two_offers():
    prob = problem(job(days=100, deadline=20), horizon=20)
    return prob, catalog(hourly("H", 4), monthly("M", 15_000))


def test_time_limited_highs_gives_the_same_optimum_and_plan():
    prob, cat = two_offers()
    _, milp = build(prob, cat)
    free = solve_milp(milp, backend="highs")
    limited = solve_milp(milp, backend="highs", time_limit=30)
    assert limited.status == free.status == "optimal"
    assert limited.objective == pytest.approx(free.objective)
    plan = extract_plan(limited)
    check_plan(prob, cat, plan)
    assert plan.total_cost == pytest.approx(free.objective)


def test_values_map_back_to_their_variables_when_unnamed_ones_were_added():
    prob, cat = two_offers()
    _, milp = build(prob, cat)
    extra = milp.model.new_num_var(0, 7, "")          # unnamed: MPS would move it to the end
    milp.model.add(extra >= 3)
    milp.model.minimize(milp.total_cost() + 1e-3 * extra)
    limited = solve_milp(milp, backend="highs", time_limit=30)
    assert limited.value(extra) == pytest.approx(3)
    free = solve_milp(milp, backend="highs")
    for var in milp.model.get_variables():
        if var.is_integral:
            assert limited.value(var) == pytest.approx(free.value(var), abs=1e-6) or var.name.startswith(("y[", "w["))


def test_a_gap_limited_solve_returns_a_verified_plan_with_an_honest_bound():
    from bench_milp import generate, parse_sizes
    prob, cat = generate(parse_sizes("small")[0], 3)
    inst, milp = build(prob, cat)
    sol = solve_milp(milp, backend="highs", time_limit=60, gap=0.5)
    plan = extract_plan(sol)
    check_plan(prob, cat, plan)
    assert sol.bound <= sol.objective + 1e-6 and plan.gap <= 0.5
    exact = solve_milp(milp, backend="highs")
    assert sol.bound <= exact.objective + 1e-6 <= sol.objective + 1e-6
