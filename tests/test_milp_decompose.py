"""The search over one job's fabric choice finds the same optimum as the full MILP."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver.api import build
from solver.load import load_problem
from solver.milp.decompose import choices_by_job, solve_by_choice, worth_decomposing
from solver.milp.solve import NoSolution, solve_milp
from tiny import catalog, gpu_day_flops, job, offer, problem

PROBLEMS = Path(__file__).resolve().parent.parent / "problems"


@pytest.mark.parametrize("name", ["seed-7b-200b-30d", "seed-13b-100b", "hybrid-burst"])
def test_bundled_problem_same_optimum_as_full_milp(name):
    prob, cat = load_problem(PROBLEMS / f"{name}.yaml")
    _, milp = build(prob, cat)
    assert worth_decomposing(milp)
    full = solve_milp(milp, backend="highs", time_limit=120)
    _, milp = build(prob, cat)
    searched = solve_by_choice(milp, backend="highs", time_limit=120, gap=None)
    assert searched.status == full.status == "optimal"
    assert searched.objective == pytest.approx(full.objective, rel=1e-6)
    assert searched.bound <= searched.objective + 1e-6


def test_choices_are_freed_after_the_search():
    prob, cat = load_problem(PROBLEMS / "seed-13b-100b.yaml")
    _, milp = build(prob, cat)
    solve_by_choice(milp, backend="highs", time_limit=120, gap=None)
    flags = [f for fs in choices_by_job(milp).values() for f in fs]
    assert flags and all((f.lower_bound, f.upper_bound) == (0.0, 1.0) for f in flags)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(prices=st.lists(st.integers(5, 30), min_size=3, max_size=3),
       vendors=st.lists(st.sampled_from(["v0", "v1", "v2"]), min_size=3, max_size=3),
       nodes=st.lists(st.integers(1, 3), min_size=3, max_size=3),
       gpus=st.lists(st.sampled_from([1, 2, 4]), min_size=3, max_size=3),
       work=st.floats(2, 20), deadline=st.integers(2, 5))
def test_random_instances_same_optimum_as_full_milp(prices, vendors, nodes, gpus, work, deadline):
    offers = [offer(f"o{i}", vendor=v, price=p, max_nodes=n, gpus_per_node=g, mode="hourly",
                    interconnect=("ib_hdr", "roce"), interconnect_price=(2.0, 1.0))
              for i, (p, v, n, g) in enumerate(zip(prices, vendors, nodes, gpus))]
    prob = problem([job("j", flops=work * gpu_day_flops(), deadline_days=deadline)],
                   horizon_days=deadline, redundancy=0.0)
    _, milp = build(prob, catalog(offers))
    try:
        full = solve_milp(milp, backend="highs").objective
    except NoSolution:
        full = None
    _, milp = build(prob, catalog(offers))
    if not worth_decomposing(milp):
        return
    try:
        searched = solve_by_choice(milp, backend="highs", time_limit=None, gap=None).objective
    except NoSolution:
        searched = None
    assert (full is None) == (searched is None)
    if full is not None:
        assert searched == pytest.approx(full, rel=1e-6, abs=1e-6)


def test_a_fixed_instance_with_three_fabrics_is_searched_and_agrees():
    # three vendors, each able to carry the job alone: three choices to search
    offers = [offer(f"o{i}", vendor=f"v{i}", price=p, max_nodes=2, gpus_per_node=4)
              for i, p in enumerate((12, 9, 15))]
    prob = problem([job("j", flops=10 * gpu_day_flops(), deadline_days=3)], horizon_days=3, redundancy=0.0)
    _, milp = build(prob, catalog(offers))
    assert worth_decomposing(milp) and len(choices_by_job(milp)["j"]) >= 3
    searched = solve_by_choice(milp, backend="highs", time_limit=None, gap=None).objective
    _, milp = build(prob, catalog(offers))
    assert searched == pytest.approx(solve_milp(milp, backend="highs").objective, rel=1e-9)


def test_lp_relaxation_value_is_the_solvers_own_not_a_rounded_plan():
    """The choice search prunes with LP values: rounding discounts on an LP point would
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
