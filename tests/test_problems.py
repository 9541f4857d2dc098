"""The bundled example problems solve, verify, and show what their comments say they show."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.api import solve_problem
from solver.load import load_problem
from solver.verify import verify_plan
from tests.builders import ROOT

PROBLEMS = ROOT / "problems"


def solve(name: str):
    problem, catalog = load_problem(PROBLEMS / f"{name}.yaml")
    return problem, catalog, solve_problem(problem, catalog, backend="highs", time_limit=120)


def test_every_problem_directly_under_problems_is_meant_to_solve():
    names = sorted(p.stem for p in PROBLEMS.glob("*.yaml"))
    assert names == ["data-locality", "debug-then-train", "hybrid-burst", "seed-13b-100b", "seed-7b-200b-30d"]


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
