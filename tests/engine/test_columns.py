"""The column bound (solver.engine.experimental.columns): what must hold.

It is a lower bound (never above the optimum of the built model, proven by HiGHS on tiny
instances with storage on every job), at least the plain LP bound once the generation has
converged, valid when two jobs share one contract (the rentals of an offer two jobs can use
are one block, paid once), stronger than the LP where a configuration only one job can use
must be rented for a whole term; price-and-branch plans pass the independent verifier.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from ortools.linear_solver.python import model_builder as mb

from solver.engine.experimental import columns, lagrange
from solver.engine.solve import solve_milp
from solver.milp.build import build_milp
from solver.milp.extract import extract_plan
from solver.milp.instance import build_instance
from solver.milp.solution import NoSolution, Solution
from solver.model.catalog import Catalog
from solver.verify import check_plan
from tests.builders import catalog, hourly, job, monthly, problem
from tests.milp.test_monotone import DCS, GPUS, MODELS, offers_st

TINY = settings(max_examples=12, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SECONDS = 300.0
"""A budget tiny instances never use up (each converges in well under a second); not a timing assertion."""


def tol(value: float) -> float:
    return 1e-5 * abs(value) + 1e-4


@st.composite
def two_jobs_with_storage(draw):
    """(problem, catalog): 2 jobs, each keeping 1 TB at its site, on 2–3 offers over 3–6 days."""
    horizon = draw(st.integers(3, 6))
    site_prices = {(v, d.datacenter): (draw(st.sampled_from([300.0, 900.0])), draw(st.sampled_from([0.0, 90.0])))
                   for v in ("v0", "v1") for d in DCS}
    offers = [draw(offers_st(f"o{i}", site_prices, False)) for i in range(draw(st.integers(2, 3)))]
    cat = Catalog(gpus=GPUS, datacenters={d.datacenter: d for d in DCS}, offers={o.offer: o for o in offers})
    gpu_day = 100e12 * 0.5 * 0.9 * 86400
    jobs = []
    for i in range(2):
        start = draw(st.integers(0, 1))
        deadline = draw(st.integers(start + 1, horizon))
        gpus = draw(st.integers(1, 4)) + draw(st.floats(0.1, 0.9))
        jobs.append(job(f"j{i}", flops=gpus * (deadline - start) * gpu_day * 0.5, deadline_days=deadline,
                        start_day=start, single_site=draw(st.booleans()), storage_tb=1.0,
                        model=MODELS[draw(st.sampled_from(["1b", "3b"]))]))
    return problem(*jobs, horizon_days=horizon), cat


def optimum(milp) -> float:
    """The built model's optimum, proven by HiGHS (within its 1e-4 gap: the bound is compared to the plan)."""
    solution = solve_milp(milp)
    assert solution.status == "optimal"
    return solution.objective


def lp_value(inst) -> float:
    return solve_milp(build_milp(inst, relax=True)).objective


@TINY
@given(two_jobs_with_storage(), st.sampled_from([columns.PRIVATE, columns.POOLED]))
def test_column_bound_is_between_the_lp_and_the_optimum(case, ownership):
    prob, cat = case
    inst = build_instance(prob, cat)
    assume(all(any(o.job == j.name for o in inst.options) for j in prob.jobs))
    try:
        best = optimum(build_milp(inst))
    except NoSolution:
        assume(False)
    bound, _gen = columns.column_bound(build_milp(inst), SECONDS, ownership=ownership)
    assert bound.converged
    assert bound.bound <= best + tol(best)
    assert bound.bound >= lp_value(inst) - tol(best)
    assert bound.master == pytest.approx(bound.bound, rel=1e-5, abs=1e-4)


def shared_contract():
    """Jobs a (days 0-5) and b (days 5-10), each needing 40 GPU-days: one 30-day monthly node
    (15,000 CNY) serves both one after the other; an hourly node costs 10 CNY a GPU-hour
    (9,600 for a 5-day job). Alone each job takes the hourly node; together they share the
    contract. Storage 300 CNY per TB-month at the one site."""
    cat = catalog(hourly("h", 10.0, storage_per_tb_month=300), monthly("m", 15_000, max_nodes=1,
                                                                         storage_per_tb_month=300))
    prob = problem(job("a", days=39, deadline_days=5, storage_tb=1.0),
                   job("b", days=39, deadline_days=10, start_day=5, storage_tb=1.0), horizon_days=10)
    return prob, cat


def test_a_contract_two_jobs_share_is_paid_once_in_the_bound():
    """Per-job columns that rented their own contract would count it twice (the sum of the
    two jobs' solo optima is above the shared optimum): the bound must not."""
    prob, cat = shared_contract()
    inst = build_instance(prob, cat)
    best = optimum(build_milp(inst))
    solo = sum(optimum(build_milp(build_instance(prob.model_copy(update={"jobs": [j]}), cat))) for j in prob.jobs)
    assert best < solo - 1.0  # sharing the contract helps
    milp = build_milp(inst)
    owner = columns.column_owners(milp)
    contracts = [var.index for var in milp.contracts.values()]
    assert contracts and all(owner[k] == lagrange.RENTAL for k in contracts)  # both jobs may use it: pooled
    bound, _gen = columns.column_bound(milp, SECONDS)
    assert bound.converged
    assert bound.bound <= best + tol(best)


def private_term():
    """Job a needs 3 node-days by day 10; only it may use the monthly node (lead time 4 days: job b
    is due by day 3), so its whole 30-day term (9,000) is a's to pay; hourly costs 10 CNY a
    GPU-hour (1,920 a node-day). The LP pays the contract by the day it is used; a's column whole."""
    cat = catalog(hourly("h", 10.0, max_nodes=1), monthly("m", 9_000, max_nodes=1, lead_time_days=4))
    prob = problem(job("a", days=23, deadline_days=10), job("b", days=7, deadline_days=3), horizon_days=10)
    return prob, cat


def test_a_configuration_one_job_can_use_is_priced_whole_in_its_column():
    prob, cat = private_term()
    inst = build_instance(prob, cat)
    milp = build_milp(inst)
    owner = columns.column_owners(milp)
    assert all(owner[var.index] == 1 for var in milp.contracts.values())  # job a's
    assert all(owner[var.index] == lagrange.RENTAL for (key, _t), var in milp.nodes.items() if key.startswith("h:"))
    best, lp = optimum(build_milp(inst)), lp_value(inst)
    private, _ = columns.column_bound(milp, SECONDS)
    pooled, _ = columns.column_bound(build_milp(inst), SECONDS, ownership=columns.POOLED)
    assert private.converged and pooled.converged
    assert lp - tol(lp) <= pooled.bound <= private.bound + tol(best)
    assert private.bound <= best + tol(best)
    assert private.bound > lp + 100  # the whole term, or the hourly nodes it would take instead


@pytest.mark.parametrize("case", [shared_contract, private_term])
def test_price_and_branch_plans_pass_the_verifier(case):
    prob, cat = case()
    inst = build_instance(prob, cat)
    milp = build_milp(inst)
    bound, gen = columns.column_bound(milp, SECONDS)
    picked = gen.price_and_branch(SECONDS)
    assert picked is not None
    cost, x = picked
    assert cost >= bound.bound - tol(cost)
    assert cost == pytest.approx(float(np.asarray(gen.parts.cost) @ x) + gen.parts.offset)
    solution = Solution(milp, "feasible", cost, bound.bound, 0.0, "columns", dict(enumerate(x.tolist())))
    plan = extract_plan(solution)
    check_plan(prob, cat, plan)  # raises PlanRejected
    assert plan.total_cost == pytest.approx(cost, abs=0.01)


def test_a_plan_given_as_start_is_a_column_and_bounds_price_and_branch():
    """With the optimal plan as its first columns, price-and-branch returns a plan no dearer."""
    prob, cat = shared_contract()
    inst = build_instance(prob, cat)
    milp = build_milp(inst)
    solution = solve_milp(build_milp(inst))
    start = np.zeros(milp.model.num_variables)
    for k, v in solution.values.items():
        start[k] = v
    bound, gen = columns.column_bound(milp, SECONDS, start=start)
    cost, _x = gen.price_and_branch(SECONDS)
    assert bound.bound <= cost + tol(cost) and cost <= solution.objective + tol(cost)


def test_a_pricing_cost_set_back_to_zero_is_zero():
    """The model builder's set_objective_coefficients skips zeros (OR-Tools 9.15): a block priced
    at −1 then 0 for one variable must not keep the −1."""
    model = mb.Model()
    x, y = model.new_int_var(0, 10, "x"), model.new_int_var(0, 10, "y")
    model.add(x + y <= 5)
    columns._solve_block(model, np.array([-1.0, 0.0]), 10)
    low, values = columns._solve_block(model, np.array([0.0, -1.0]), 10)
    assert low == pytest.approx(-5.0, abs=1e-6) and values.tolist() == [0.0, 5.0]
