"""The margin of a plan (issue 36, item 5; solver/analysis/margin.py, JobResult.mfu_margin).

The case: one job of just under 36 GPU-days at full rate, hourly 8-GPU nodes at 768 CNY a
node-day, up to 10 nodes, by day 10. The optimum rents 5 node-days (40 GPU-days, 3,840 CNY):
on those rentals the job may run at 36/40 = 0.9 of its MFU and no slower. With every MFU × 0.8 the job needs 45 GPU-days: 6 node-days, 4,608
CNY, 768 (20 %) over the optimum.
"""

from __future__ import annotations

import pytest

from tests.builders import catalog, hourly, job, problem, solve
from solver.analysis.margin import STEP, at_mfu, mfu_margins, robust_factor, robust_plan
from solver.api import pin_rentals, solve_problem
from solver.errors import Infeasible
from solver.model.problem import DEFAULT_MFU_FACTOR, Robust
from solver.verify import verify_plan


def _case(**kw):
    return problem(job("j", days=36, deadline_days=10), horizon_days=10, **kw), catalog(hourly("h", 4))


def test_the_margin_is_exact():
    prob, cat = _case()
    plan = mfu_margins(prob, cat, solve(prob, cat))
    (j,) = plan.jobs
    assert plan.total_cost == 3_840 and 0.9 <= j.mfu_margin <= 0.9 + STEP
    # on the plan's rentals: at the margin's MFU a schedule still meets the deadline; 1 % below, none
    pinned = pin_rentals(plan.schedule)
    assert solve_problem(*at_mfu(prob, cat, j.mfu_margin), constrain=pinned).total_cost == 3_840
    with pytest.raises(Infeasible):
        solve_problem(*at_mfu(prob, cat, j.mfu_margin * 0.99), constrain=pinned)


def test_idle_rented_capacity_counts_and_the_verifier_reads_the_same_rule():
    # Two jobs of 33 and 19 GPU-days take 7 hourly node-days (56 GPU-days): each may slow down
    # into the idle 4 GPU-days while the other runs as assumed: a 33/37, b 19/23.
    cat = catalog(hourly("h", 4))
    prob = problem(job("a", days=33, deadline_days=10), job("b", days=19, deadline_days=10), horizon_days=10)
    plan = mfu_margins(prob, cat, solve(prob, cat))
    assert plan.total_cost == 7 * 768
    margins = {j.name: j.mfu_margin for j in plan.jobs}
    assert 33 / 37 <= margins["a"] <= 33 / 37 + STEP and 19 / 23 <= margins["b"] <= 19 / 23 + STEP
    # the plan as scheduled, read at a slower MFU, fails the independent check's work rule
    assert any(m.startswith("work: job a") for m in verify_plan(*at_mfu(prob, cat, 0.99, jobs=["a"]), plan))


def test_the_robust_plan_and_its_premium():
    prob, cat = _case()
    optimum = solve(prob, cat)
    robust = robust_plan(prob, cat, optimum, 0.8)
    assert robust.status == "optimal" and robust.total_cost == 4_608
    assert (robust.premium, robust.premium_pct) == (768, 20.0)
    assert "4,608 CNY, 768 (+20.0 %) over the optimum" in robust.text


def test_no_plan_at_the_factor_is_said():
    prob, cat = problem(job("j", days=76, deadline_days=1), horizon_days=1), catalog(hourly("h", 4))
    optimum = solve(prob, cat)                         # 10 nodes × 8 GPUs for 1 day: 80 GPU-days
    robust = robust_plan(prob, cat, optimum, 0.8)       # needs 95: more than 80
    assert robust.status == "infeasible" and robust.total_cost is None and "no plan" in robust.text


def test_the_factor_asked_for():
    prob, _ = _case()
    assert robust_factor(prob, asked=False) is None
    assert robust_factor(prob, asked=True) == DEFAULT_MFU_FACTOR == 0.8
    assert robust_factor(_case(robust=Robust(mfu_factor=0.7))[0], asked=False) == 0.7
