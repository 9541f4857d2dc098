"""Time-limited HiGHS solves go through MathOpt, which keeps the incumbent and its bound.

The plan read back must be the same plan (values mapped to the right variables even
when an analysis added unnamed variables), and a solve stopped early must still
return a verified plan with an honest gap.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.builders import ROOT, catalog, hourly, job, monthly, problem
from solver.api import build
from solver.engine.solve import solve_milp
from solver.milp.extract import extract_plan
from solver.verify import check_plan

sys.path.insert(0, str(ROOT / "tests" / "bench"))


def two_offers():
    prob = problem(job(days=100, deadline_days=20), horizon_days=20)
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
            assert limited.value(var) == pytest.approx(free.value(var), abs=1e-6) or var.name.startswith(("y[", "v["))


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


def test_exported_mps_keeps_every_digit_and_solves_to_the_same_optimum(tmp_path):
    from ortools.linear_solver.python import model_builder as mb

    from solver.engine.export import write_mps

    prob, cat = two_offers()
    _, milp = build(prob, cat)
    odd = 1.2345678901234567
    extra = milp.model.new_num_var(0, 5, "")                 # unnamed, continuous, between integer columns
    milp.model.add(extra * odd >= 3.1415926535897931, name="odd row")
    milp.model.minimize(milp.total_cost() + extra)
    path = tmp_path / "model.mps"
    write_mps(milp.model, path)
    assert repr(odd) in path.read_text()
    back = mb.Model()
    assert back.import_from_mps_file(str(path))
    exported, original = mb.Solver("highs"), mb.Solver("highs")
    exported.solve(back)
    original.solve(milp.model)
    assert exported.objective_value == pytest.approx(original.objective_value, rel=1e-12)
    ints = [v for v in back.get_variables() if v.is_integral]
    assert len(ints) == sum(v.is_integral for v in milp.model.get_variables())


def test_a_watched_solve_reports_incumbent_and_bound_and_ends_at_the_same_optimum():
    from solver.engine.progress import PROGRESS

    heard = []
    prob, cat = two_offers()
    _, milp = build(prob, cat)
    plain = solve_milp(milp, backend="highs")
    PROGRESS.listener = lambda incumbent, bound: heard.append((incumbent, bound))
    try:
        watched = solve_milp(milp, backend="highs")
    finally:
        PROGRESS.listener = None
    assert watched.objective == pytest.approx(plain.objective) and watched.status == "optimal"
    assert heard and all(b is None or i is None or b <= i + 1e-6 for i, b in heard)


def test_a_solver_bound_below_zero_is_reported_as_zero():
    """HiGHS stopped before its root LP reports its trivial bound (−1.5e9 CNY on the target
    synthetic instance); no plan costs less than nothing, so the plan says 0 and a 100 % gap."""
    from dataclasses import replace
    prob, cat = two_offers()
    _, milp = build(prob, cat)
    sol = solve_milp(milp, backend="highs", time_limit=30)
    plan = extract_plan(replace(sol, bound=-1.5e9, status="feasible"))
    assert plan.lower_bound == 0
    assert plan.gap == pytest.approx(1.0)
    assert extract_plan(sol).lower_bound == pytest.approx(sol.bound, abs=0.01)


@pytest.mark.parametrize("backend", ["highs", "scip", "cp_sat"])
def test_a_solve_stopped_by_its_gap_reports_a_true_bound(backend):
    """`--gap 0.05` without a time limit: the bound must be a bound (≤ the optimum), and
    the plan is called optimal only if its gap is within the optimality tolerance.
    Through the model builder HiGHS stopped at its gap reported the plan's cost as bound."""
    from solver.load import load_problem

    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    _, milp = build(prob, cat)
    best = solve_milp(milp, backend="highs").objective
    stopped = solve_milp(milp, backend=backend, gap=0.05)
    assert stopped.bound <= best + 1e-6
    assert stopped.objective >= best - 1e-6
    assert (stopped.status == "optimal") == (stopped.gap <= 1e-4)
    check_plan(prob, cat, extract_plan(stopped))


def test_gpuplan_solve_with_a_gap_prints_a_true_lower_bound():
    import json

    from typer.testing import CliRunner

    from solver.cli import app

    path = ROOT / "problems" / "seed-7b-200b-30d.yaml"
    result = CliRunner().invoke(app, ["solve", str(path), "--gap", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["lower_bound"] <= 307_180 + 1e-6  # the proven optimum (README, seed 000)
    assert plan["status"] == ("optimal" if plan["total_cost"] - plan["lower_bound"] <= 1e-4 * plan["total_cost"]
                              else "feasible")


def _no_plan_in_time(monkeypatch):
    """Every solve stops out of time with no plan, the way a too-short limit ends."""
    from solver import api
    from solver.milp.solution import NoSolution

    def out_of_time(milp, **options):
        raise NoSolution(f"no plan found within {options['time_limit']:.3g} s (not proven infeasible)", proven=False)
    monkeypatch.setattr(api, "solve_milp", out_of_time)


@pytest.mark.parametrize("options, more", [(["--time-limit", "5"], "raise --time-limit"),
                                           (["--time-limit", "30", "--max-seconds", "5"], "raise --max-seconds")])
def test_out_of_time_without_a_plan_is_not_called_infeasible(monkeypatch, options, more):
    """Exit 1 as for an infeasible problem, but the words say nothing was ruled out and which
    option would have given the solve more time; --json keeps proven: false."""
    from typer.testing import CliRunner

    from solver.cli import app
    _no_plan_in_time(monkeypatch)
    seed = ROOT / "problems" / "seed-7b-200b-30d.yaml"
    run = CliRunner().invoke(app, ["solve", str(seed), *options], env={"COLUMNS": "200"})
    assert run.exit_code == 1
    text = run.output.replace("\n", " ")
    assert text.startswith("no plan:") and "infeasible:" not in text
    assert more in text and "not proven infeasible" in text
    data = CliRunner().invoke(app, ["solve", str(seed), *options, "--json"], env={"COLUMNS": "200"})
    assert data.exit_code == 1
    assert '"proven": false' in data.stdout
