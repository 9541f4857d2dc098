"""The bundled example problems solve, verify, and show what their comments say they show."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.api import solve_problem
from solver.load import load_problem
from solver.verify import verify_plan
from tests.builders import ROOT
from tests.bundled import bundled_plan

PROBLEMS = ROOT / "problems"


def solve(name: str):
    problem, catalog = load_problem(PROBLEMS / f"{name}.yaml")
    plan = bundled_plan(PROBLEMS / f"{name}.yaml")   # HiGHS, no time limit: the costs asserted are optima
    assert plan.status == "optimal"
    return problem, catalog, plan


def test_every_problem_directly_under_problems_is_meant_to_solve():
    names = sorted(p.stem for p in PROBLEMS.glob("*.yaml"))
    assert names == ["data-locality", "debug-then-train", "global-burst", "global-burst-residency", "hybrid-burst",
                     "seed-13b-100b", "seed-7b-200b-30d"]


def test_seed_000_example_is_five_nodes_of_eight_a100_on_ib_hdr():
    problem, catalog, plan = solve("seed-7b-200b-30d")
    assert plan.status == "optimal"
    assert sum(a.gpus for a in plan.allocations) == 40
    assert {(a.gpu, a.mode, a.interconnect, a.nodes) for a in plan.allocations} == {("A100-80G", "monthly", "ib_hdr", 5)}
    assert plan.jobs[0].finish_day <= 30
    assert verify_plan(problem, catalog, plan) == []


def test_seed_002_example_needs_the_seed_work_on_a100():
    problem, catalog, plan = solve("seed-13b-100b")
    # 7.8e21 FLOPs × 1.3 redundancy = 10,140 EFLOP (seed 002: 13B × 100B tokens)
    assert plan.jobs[0].required_eflop == pytest.approx(10140)
    assert plan.jobs[0].gpu_types == ["A100-80G"]
    assert plan.cost_breakdown["storage"] > 0 and plan.cost_breakdown["egress"] > 0
    assert verify_plan(problem, catalog, plan) == []


def test_debug_runs_on_hourly_and_training_on_committed_capacity():
    problem, catalog, plan = solve("debug-then-train")
    modes = {j.name: set() for j in plan.jobs}
    offers = {o.offer: o for o in catalog.offers.values()}
    for a in plan.schedule.assignments:
        modes[a.job].add(offers[a.offer].mode)
    assert modes["debug-7b"] == {"hourly"}
    assert modes["train-7b"] <= {"monthly", "yearly", "hosted"}
    assert verify_plan(problem, catalog, plan) == []


def test_hybrid_plan_is_hosted_base_plus_cloud_burst():
    problem, catalog, plan = solve("hybrid-burst")
    modes = {a.mode for a in plan.allocations}
    assert "hosted" in modes and modes - {"hosted"}, modes
    hosted = [a for a in plan.allocations if a.mode == "hosted"]
    # the racks arrive after their 30-day lead time, so the first month runs on cloud capacity
    assert min(a.start_day for a in hosted) >= 30
    assert min(a.start_day for a in plan.allocations) < 30
    assert verify_plan(problem, catalog, plan) == []


def test_data_locality_keeps_the_job_at_its_datasets_site():
    problem, catalog, plan = solve("data-locality")
    assert {a.datacenter for a in plan.allocations} == {"Yizhuang"}
    assert plan.total_cost == pytest.approx(39_254.40)
    assert plan.cost_breakdown["egress"] == 0
    # without the dataset Fangshan is cheaper: the egress (28,000 CNY) is what keeps it
    free = problem.model_copy(update={"jobs": [problem.jobs[0].model_copy(update={"data": None})]})
    elsewhere = solve_problem(free, catalog, backend="highs", time_limit=120)
    assert {a.datacenter for a in elsewhere.allocations} == {"Fangshan"}
    assert elsewhere.total_cost == pytest.approx(38_551.68)
    assert verify_plan(problem, catalog, plan) == []


def test_global_burst_is_a_beijing_base_with_public_cloud_burst_and_residency_forbids_the_burst():
    """The world catalog's USD offers (SkyPilot imports) are converted at the problem's rate;
    the free team bursts to public clouds, the residency variant uses none of their offers
    and pays more. Both plans pass the verifier, which converts the USD prices on its own."""
    problem, catalog, plan = solve("global-burst")
    public = {o.offer for o in catalog.offers.values() if o.currency == "USD"}
    assert len(public) > 100 and {o.vendor for o in catalog.offers.values() if o.offer in public} >= {
        "aws", "lambda", "nebius"}
    used = {a.offer for a in plan.schedule.assignments}
    assert used & public
    assert {a.mode for a in plan.allocations if a.offer not in public} == {"hosted"}
    assert {a.datacenter for a in plan.allocations if a.offer not in public} <= {"Shunyi", "Yizhuang", "Fangshan"}
    assert plan.currency == "CNY" and plan.exchange_rates.rates == {"USD": 7.1}
    assert plan.total_cost == pytest.approx(2_542_477, abs=1)   # storage 57,000 from each job's first GPU day (76,000 from day 0 before)
    assert verify_plan(problem, catalog, plan) == []

    strict, strict_catalog, kept = solve("global-burst-residency")
    assert not {a.offer for a in kept.schedule.assignments} & public
    assert not {a.offer for a in kept.allocations} & public
    assert all("cn" in strict_catalog.datacenters[a.datacenter].residency for a in kept.allocations)
    assert kept.total_cost == pytest.approx(2_559_324, abs=1)
    assert kept.total_cost > plan.total_cost
    assert verify_plan(strict, strict_catalog, kept) == []
