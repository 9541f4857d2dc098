"""Work: Σ GPUs × hours × rate ≥ (1 + redundancy) × FLOPs, inside the job's window.

One GPU does GPU_DAY = 4.32e18 FLOPs a day at full rate (100 TFLOPS × MFU 0.5, 100 %
performance clause). The 1-GPU offer "G1" costs 4 CNY/GPU-h = 96 CNY per GPU-day.
"""

import pytest

from tests.builders import GPU_DAY, SLACK, SMALL, catalog, gpu_days, hourly, job, monthly, peak_gpus, problem, solve
from solver.api import build
from solver.model.problem import Job


def one_gpu_nodes(**kw):
    return catalog(hourly("G1", 4, gpus_per_node=1, max_nodes=20, **kw))


@pytest.mark.parametrize("deadline, contracts, gpus", [
    (10, 1, 8),   # 80 GPU-days over 10 days: 1 node × 10 days; 1 × 30 000
    (5, 2, 16),   # the same work in 5 days: 2 nodes; 2 × 30 000
])
def test_a_later_deadline_lets_fewer_gpus_do_the_job(deadline, contracts, gpus):
    cat = catalog(monthly("M", 30_000))
    plan = solve(problem(job(days=80, deadline_days=deadline), horizon_days=10), cat)
    assert plan.total_cost == pytest.approx(contracts * 30_000)
    assert peak_gpus(plan) == gpus
    assert plan.jobs[0].finish_day <= deadline


def test_nothing_runs_after_the_deadline_or_before_the_start():
    cat = one_gpu_nodes()
    prob = problem(job(days=20, deadline_days=8, start_day=3), horizon_days=10)
    plan = solve(prob, cat)
    assert {a.period for a in plan.schedule.assignments} <= set(range(3, 8))
    _, milp = build(prob, cat)
    assert {t for (_i, t) in milp.replicas} == set(range(3, 8))


@pytest.mark.parametrize("redundancy, cost", [
    (0.0, 100 * 96),    # 100 GPU-days × 96 = 9 600
    (0.3, 130 * 96),    # 130 GPU-days × 96 = 12 480
])
def test_redundancy_raises_the_needed_work(redundancy, cost):
    plan = solve(problem(job(days=100, deadline_days=10), horizon_days=10, redundancy=redundancy), one_gpu_nodes())
    assert plan.total_cost == pytest.approx(cost)


def test_redundancy_raises_the_work_row_by_exactly_30_percent():
    cat = one_gpu_nodes()
    rows = {}
    for r in (0.0, 0.3):
        inst, milp = build(problem(job(days=100, deadline_days=10), horizon_days=10, redundancy=r), cat)
        rows[r] = milp.rows["Work-j"].lower_bound
        assert rows[r] == pytest.approx(inst.required["j"], rel=1e-12)
    assert rows[0.3] / rows[0.0] == pytest.approx(1.3, rel=1e-12)
    assert rows[0.0] == pytest.approx(100 * GPU_DAY * SLACK / 1e18, rel=1e-12)  # in EFLOP


def test_mfu_override_replaces_the_gpu_default():
    # MFU 0.25 instead of the GPU's 0.5 halves the rate: 200 GPU-days × 96 = 19 200.
    slow = job(days=100, deadline_days=10, mfu=0.25)
    assert solve(problem(slow, horizon_days=10), one_gpu_nodes()).total_cost == pytest.approx(19_200)
    assert solve(problem(job(days=100, deadline_days=10), horizon_days=10), one_gpu_nodes()).total_cost == \
        pytest.approx(9_600)


@pytest.mark.parametrize("guarantee, cost", [
    (None, 100 * 96),  # no clause: 0.90 of rated speed, 90 / 0.90 = 100 GPU-days → 9 600
    (95, 95 * 96),     # ≥ 95 % clause: 90 / 0.95 = 94.7 → 95 GPU-days → 9 120
    (100, 90 * 96),    # full speed: 90 GPU-days → 8 640
])
def test_performance_clause_scales_the_rate(guarantee, cost):
    cat = one_gpu_nodes(perf_guarantee_pct=guarantee)
    plan = solve(problem(job(days=90, deadline_days=10), horizon_days=10), cat)
    assert plan.total_cost == pytest.approx(cost)


def test_a_preprocess_job_with_given_flops_is_planned():
    prep = Job(name="j", kind="preprocess", model=SMALL, flops=gpu_days(40), deadline_days=10)
    plan = solve(problem(prep, horizon_days=10), catalog(hourly("H", 4)))
    assert plan.jobs[0].done_eflop >= plan.jobs[0].required_eflop


def test_work_slack_reaches_every_row_asking_the_work():
    """A job choosing among fabric domains is asked its work by `Work-<job>` and by each
    domain's need row; slack added through add_work_slack (as why's elastic re-solve
    does) must loosen all of them, on the right side of each (the model keeps a need row
    as need − work ≤ 0), so enough slack lets the job do nothing at all."""
    import math

    from ortools.linear_solver.python import model_builder as mb

    from solver.engine.solve import solve_milp
    from solver.milp.work import add_work_slack, work_rows

    prob = problem(job(days=80, deadline_days=5), horizon_days=5)
    cat = catalog(hourly("A", 4, vendor="vA", max_nodes=3), hourly("B", 6, vendor="vB"))
    _, milp = build(prob, cat)
    rows = work_rows(milp, "j")
    assert rows[0] == "Work-j" and len(rows) == 3 and all(r.endswith("-need") for r in rows[1:])
    slack = milp.model.new_num_var(0, math.inf, "slack")
    add_work_slack(milp, "j", slack)
    milp.model.minimize(milp.total_cost() + mb.LinearExpr.weighted_sum([slack], [1e-9]))
    assert solve_milp(milp, backend="highs").objective == pytest.approx(0.0, abs=1e-3)


@pytest.mark.parametrize("backend", ["highs", "scip", "cp_sat"])
@pytest.mark.parametrize("offers", [
    lambda: catalog(hourly("H", 4)),                                               # one way to run
    lambda: catalog(hourly("A", 4, vendor="vA"), hourly("B", 6, vendor="vB")),     # choosing a domain
], ids=["one domain", "two domains"])
def test_a_job_asking_less_than_the_solver_tolerance_still_gets_its_work(backend, offers):
    """1e10 FLOPs is 1e-8 EFLOP, under the solvers' feasibility tolerance: HiGHS read zero
    work as enough and the verifier withheld the plan (exit 3 on `tokens: 1`). Its cheapest
    plan costs what a job of a tenth of a GPU-day costs: one replica for one day."""
    from solver.api import solve_problem

    tiny = Job(name="j", model=SMALL, flops=1e10, deadline_days=5)
    plan = solve_problem(problem(tiny, horizon_days=5), offers(), backend=backend, time_limit=30)
    assert plan.jobs[0].done_eflop > 0
    assert plan.total_cost == pytest.approx(solve(problem(job(days=0.1, deadline_days=5), horizon_days=5), offers()).total_cost)


def test_asked_work_is_the_requirement_for_a_job_of_any_size():
    """asked_work raises only what no replica-period could do less than: a job of 80 GPU-days
    is asked exactly its work."""
    from solver.milp.work import asked_work

    inst, milp = build(problem(job(days=80, deadline_days=10), horizon_days=10), one_gpu_nodes())
    assert asked_work(milp, "j") == inst.required["j"]
    assert milp.rows["Work-j"].lower_bound == pytest.approx(inst.required["j"])
