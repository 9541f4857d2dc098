"""The Lagrangian bound (solver.engine.experimental.lagrange): what must hold.

Its value never exceeds the optimum (weak duality), checked on random tiny instances solved
exactly; the rows tying jobs to nodes are the ones dualized, one block per job and one of
the rentals; at the start prices each job pays its GPUs at list price, without rounding to
whole nodes; the child process answers like the LP's, and a big solve with it ends with a
verified plan and the child's bound.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings

from solver.api import build
from solver.engine import switches, warmstart
from solver.engine.experimental import lagrange
from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp.build import build_milp
from solver.milp.extract import extract_plan
from solver.milp.instance import build_instance
from solver.milp.solution import NoSolution
from solver.verify import check_plan
from tests.builders import ROOT, catalog, hourly, job, monthly, problem
from tests.milp.test_monotone import instances


@settings(max_examples=20, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(instances())
def test_lagrangian_bound_never_exceeds_the_optimum(inst):
    prob, cat, *_ = inst
    instance = build_instance(prob, cat)
    try:
        optimum = solve_milp(build_milp(instance)).objective
    except NoSolution:
        assume(False)
    dual = lagrange.lagrangian_bound(build_milp(instance), seconds=60, steps=4)
    assert dual is not None
    assert dual.bound <= optimum + 1e-6 * abs(optimum) + 1e-6


def two_jobs():
    """Two jobs (4 and 7 GPUs a day for 10 days) on 8-GPU nodes: one monthly node and hourly ones."""
    cat = catalog(hourly("h", 4.0), monthly("m", 15_000, max_nodes=1))
    prob = problem(job("a", days=40, deadline_days=10), job("b", days=70, deadline_days=10), horizon_days=10)
    return build_milp(build_instance(prob, cat))


def test_use_rows_are_dualized_and_each_job_is_a_block():
    milp = two_jobs()
    parts = lagrange.split(milp.model.export_to_proto(), lagrange.owners(milp))
    use_rows = [name for name in milp.rows if name.startswith("Use-")]
    assert len(parts.h) == len(use_rows)
    assert len(parts.blocks) == 3  # job a, job b, the rentals
    replicas = {var.index for var in milp.replicas.values()}
    nodes = {var.index for var in milp.nodes.values()}
    for cols in parts.blocks:
        assert not (set(cols.tolist()) & replicas and set(cols.tolist()) & nodes)


def test_start_prices_charge_each_gpu_at_list_price():
    """Hourly, 4 CNY a GPU-hour is 96 a GPU-day; the monthly node's 30-day term is paid whole in a
    10-day horizon: 15,000 ÷ (8 GPUs × 10 days) = 187.5. So the first bound is 110 GPU-days at
    96, below the optimum, which rents whole nodes."""
    milp = two_jobs()
    dual = lagrange.lagrangian_bound(milp, seconds=30, steps=1)
    per_gpu_day = min(4.0 * 24, 15_000 / (8 * 10))
    assert dual.bound == pytest.approx(110 * per_gpu_day, rel=1e-4)
    assert dual.bound < solve_milp(two_jobs()).objective


@pytest.mark.slow   # the child runs its 30-s budget out (experimental, off by default)
def test_the_child_answers_with_a_bound_and_the_blocks_solutions():
    milp = two_jobs()
    optimum = solve_milp(two_jobs()).objective
    with lagrange.BackgroundLagrangian(milp, 30) as child:
        child.tell_upper(optimum)
        answer = child.wait(60)
    assert answer is not None
    assert 0 < answer.bound <= optimum
    assert len(answer.values) == milp.model.num_variables


@pytest.mark.slow  # a 60-s big solve (about 50 s): the Lagrangian is off by default
def test_a_big_solve_with_the_lagrangian_child_has_its_bound_and_a_verified_plan(monkeypatch):
    """solver.engine.big with the Lagrangian in place of the LP (as bench_milp's highs-lagrange):
    the plan passes the verifier and its bound is the child's, at most the plan's cost."""
    for name, value in (("WARM_START_VARIABLES", 0), ("GUIDED_VARIABLES", 0), ("FINAL_SHARE", 2.0)):
        monkeypatch.setattr(warmstart, name, value)
    monkeypatch.setenv(switches.ENV, "lagrange")
    prob, cat = load_problem(ROOT / "problems" / "seed-13b-100b.yaml")
    _inst, milp = build(prob, cat)
    sol = solve_milp(milp, time_limit=60)
    check_plan(prob, cat, extract_plan(sol))
    assert 0 < sol.bound <= sol.objective


def test_a_block_priced_again_with_a_zero_cost_forgets_the_old_one():
    """OR-Tools' set_objective_coefficients skips zero coefficients, so a multiplier that fell to 0
    kept its old cost: the block's minimum read -5 where it is 0, a wrong Lagrangian bound."""
    import numpy as np
    from ortools.linear_solver.python import model_builder as mb

    from solver.engine.experimental.lagrange import solve_block

    model = mb.Model()
    x, y = model.new_num_var(0, 1, "x"), model.new_num_var(0, 1, "y")
    model.add(x + y >= 1)
    assert solve_block(model, np.array([-5.0, 1.0]), 5)[0] == -5.0
    assert solve_block(model, np.array([0.0, 1.0]), 5)[0] == 0.0
