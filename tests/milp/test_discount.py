"""Volume discount: from `discount_from_gpus` GPUs in one rental period (or one contract) on,
the GPU rent (and the platform fee on it) falls by `discount_pct`; below it, nothing.

Offer "D": 1-GPU nodes at 4 CNY/GPU-h = 96 CNY per GPU-day, 5 % off from 10 GPUs.
The job runs in a 1-day window, so GPUs held = GPU-days needed.
"""

import pytest

from tests.builders import ROOT, catalog, hourly, job, monthly, problem, solve


def discount_offer(**kw):
    fields = dict(gpus_per_node=1, max_nodes=20, discount_from_gpus=10, discount_pct=5)
    fields.update(kw)
    return catalog(hourly("D", 4, **fields))


@pytest.mark.parametrize("gpus, cost, discounted", [
    (9, 9 * 96, False),             # 864; 10 discounted GPUs would cost 912, so no padding
    (10, 10 * 96 * 0.95, True),     # 912: exactly at the threshold
    (11, 11 * 96 * 0.95, True),     # 1 003.2
])
def test_discount_applies_from_the_threshold_and_not_below(gpus, cost, discounted):
    plan = solve(problem(job(days=gpus, deadline_days=1), horizon_days=1), discount_offer())
    assert plan.total_cost == pytest.approx(cost)
    assert [r.discounted for r in plan.schedule.rentals] == [discounted]


def test_padding_up_to_the_threshold_when_that_is_cheaper():
    # 20 % off: 10 discounted GPUs (10 × 76.8 = 768) beat 9 at full price (864).
    plan = solve(problem(job(days=9, deadline_days=1), horizon_days=1), discount_offer(discount_pct=20))
    assert plan.total_cost == pytest.approx(768)
    assert plan.schedule.rentals[0].nodes == 10


@pytest.mark.parametrize("gpus, cost", [
    # rent 96/GPU-day, link 1 CNY/node-hour = 24/day, 10 % platform fee on both:
    (9, (9 * 96 + 9 * 24) * 1.1),            # 1 188: no discount
    (10, (10 * 96 * 0.95 + 10 * 24) * 1.1),  # 1 267.2: discount on rent only, not the link
])
def test_discount_is_on_rent_not_interconnect_and_before_the_fee(gpus, cost):
    cat = discount_offer(interconnect_price=(1,), platform_fee_pct=10)
    plan = solve(problem(job(days=gpus, deadline_days=1), horizon_days=1), cat)
    assert plan.total_cost == pytest.approx(cost)


@pytest.mark.parametrize("days, cost", [
    (240, 30_000),            # one 8-GPU node: below 16 GPUs, full price
    (480, 2 * 30_000 * 0.9),  # two nodes in one contract: 16 GPUs, 10 % off = 54 000
])
def test_committed_discount_counts_the_nodes_of_one_contract(days, cost):
    cat = catalog(monthly("M", 30_000, discount_from_gpus=16, discount_pct=10))
    plan = solve(problem(job(days=days, deadline_days=30), horizon_days=30), cat)
    assert plan.total_cost == pytest.approx(cost)


def test_every_feasible_solution_extracts_to_a_plan_the_verifier_accepts():
    from solver.api import build
    from solver.engine.solve import solve_milp
    from solver.milp.extract import extract_plan
    from solver.verify import verify_plan

    prob, cat = problem(job(days=10, deadline_days=1), horizon_days=1), discount_offer()
    _, milp = build(prob, cat)
    for flag in milp.discount_flag.values():   # an incumbent that has not found the discount yet
        flag.upper_bound = 0
    plan = extract_plan(solve_milp(milp))
    assert verify_plan(prob, cat, plan) == []


@pytest.mark.parametrize("name", ["debug-then-train", "seed-13b-100b", "hybrid-burst"])
def test_no_variable_lowers_the_cost(name):
    """Every variable's cost coefficient, its terms summed, is ≥ 0 (solver.milp.capacity writes
    the discount with the nodes at full price). What it protects: with a negative one (the
    discounted nodes w, −d·price), HiGHS' objective propagation could not bound any node
    variable by an incumbent's cost, and debug-then-train took 4.1 s instead of 1.5 (tests/bench/HISTORY.md)."""
    from collections import defaultdict
    from pathlib import Path

    from solver.api import build
    from solver.load import load_problem

    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    _, milp = build(prob, cat)
    assert milp.cost["volume_discount"], "the problem should have volume discounts"
    net: dict[int, float] = defaultdict(float)
    for terms in milp.cost.values():
        for var, coef in terms:
            net[var.index] += coef
    assert min(net.values()) >= 0


@pytest.mark.parametrize("nodes", [2, 3, 5, 16])
def test_the_discount_stays_exact_where_why_raises_the_stock(nodes):
    """`why` raises every node bound above the catalog's max_nodes (here 2) and puts the cap
    back through a slack; the discount must then still be exact: 3 and 4 nodes were forced
    to take it and 5 or more were infeasible before `widen_discount` (v ≥ x − X̄·y with X̄ = 2)."""
    from solver.analysis.why import STOCK_RAISE
    from solver.api import build
    from solver.engine.solve import solve_milp
    from solver.milp.families.stock import stock_slacks

    cat = catalog(hourly("B", 5, max_nodes=2, discount_from_gpus=8, discount_pct=5))
    _, milp = build(problem(job("j", days=10, deadline_days=10), horizon_days=10), cat)
    stock_slacks(milp, factor=STOCK_RAISE)
    first = min(milp.nodes, key=lambda key: key[1])
    milp.nodes[first].lower_bound = nodes
    sol = solve_milp(milp, backend="highs")
    assert sol.objective == pytest.approx(nodes * 960 * 0.95)   # 8 GPUs × 5 CNY × 24 h, 5% off
    assert round(sol.value(milp.discount_flag[first])) == 1
