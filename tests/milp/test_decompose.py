"""Fixing and freeing a synchronous job's fabric choice (the handle min_time's search uses)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.api import build
from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp.decompose import choices_by_job, fix_choice
from solver.milp.solution import NoSolution
from tests.builders import ROOT

PROBLEMS = ROOT / "problems"


def test_fixing_a_choice_gives_the_optimum_of_that_choice_and_freeing_restores_the_model():
    prob, cat = load_problem(PROBLEMS / "seed-13b-100b.yaml")
    _, milp = build(prob, cat)
    full = solve_milp(milp, backend="highs").objective
    (job, flags), = choices_by_job(milp).items()
    per_choice = []
    for k in range(len(flags)):
        fix_choice(flags, k)
        try:
            per_choice.append(solve_milp(milp, backend="highs").objective)
        except NoSolution:
            continue
    fix_choice(flags, None)
    assert all((f.lower_bound, f.upper_bound) == (0.0, 1.0) for f in flags)
    assert min(per_choice) == pytest.approx(full, rel=1e-6)
    assert solve_milp(milp, backend="highs").objective == pytest.approx(full, rel=1e-9)


def test_lp_relaxation_value_is_the_solvers_own_not_a_rounded_plan():
    """min_time's choice search prunes with LP values: rounding discounts on an LP point would
    make them wrong in either direction, so a relaxed model reports the raw LP value."""
    from ortools.linear_solver.python import model_builder as mb

    from solver.milp.build import build_milp
    from solver.milp.instance import build_instance

    prob, cat = load_problem(PROBLEMS / "seed-13b-100b.yaml")
    relaxed = build_milp(build_instance(prob, cat), relax=True)
    ours = solve_milp(relaxed, backend="highs").objective
    raw = mb.Solver("highs")
    raw.set_solver_specific_parameters("output_flag=false")
    raw.solve(relaxed.model)
    assert ours == pytest.approx(raw.objective_value, rel=1e-9)
