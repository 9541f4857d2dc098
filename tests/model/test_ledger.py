"""The plan's summaries for people who act on it (solver.model.ledger): which job runs on which
rental, GPU-days paid but idle, and what is paid in each month; the verifier re-adds them.

The recorded hybrid-burst plan (tests/data/golden/) is read, not solved: its yearly contract
runs to day 375 while the job ends on day 217, so the overhang must show as idle cost.
"""

from __future__ import annotations

import json
from datetime import date

import pytest

from tests.builders import DATA, ROOT

from solver.load import load_problem
from solver.model.ledger import blocks, cash_flow, job_rentals, rental_use
from solver.model.plan import Allocation, Assignment, Plan
from solver.verify import verify_plan

GOLDEN = DATA / "golden"


def recorded(name: str) -> tuple:
    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    data = json.loads((GOLDEN / f"solve-{name}.json").read_text(encoding="utf-8"))["output"]
    plan = Plan.model_validate({**data, "solve_seconds": 0.0})  # the recorded answers leave the clock out
    return prob, cat, plan


def line(offer="o", start=0, end=30, gpus=8, cost=3000.0, mode="monthly", vendor="v") -> Allocation:
    return Allocation(offer=offer, vendor=vendor, datacenter="dc", gpu="g", mode=mode, interconnect="ib_hdr",
                      nodes=gpus // 8, gpus=gpus, start_day=start, end_day=end, cost=cost)


def use(job="j", offer="o", period=0, replicas=1, group=8) -> Assignment:
    return Assignment(job=job, offer=offer, interconnect="ib_hdr", period=period, replicas=replicas, group_gpus=group)


def test_hybrid_burst_yearly_overhang_is_idle_and_priced():
    prob, cat, plan = recorded("hybrid-burst")
    yearly = next(u for u in plan.rental_use if u.mode == "yearly")
    alloc = plan.allocations[yearly.rental - 1]
    assert (alloc.start_day, alloc.end_day, alloc.gpus) == (10, 375, 96)
    assert yearly.gpu_days_paid == 96 * 365
    assert yearly.last_used_day == 217                     # the job's last day; the term runs to 375
    overhang = 96 * (375 - 217)
    assert yearly.idle_gpu_days >= overhang
    assert yearly.gpu_days_used == 19_840 <= 96 * (217 - 10)   # used from its start to the end (not all of it)
    assert yearly.idle_cost == pytest.approx(alloc.cost * yearly.idle_gpu_days / yearly.gpu_days_paid, abs=0.01)
    assert yearly.idle_cost > 3_000_000
    assert verify_plan(prob, cat, plan) == []


@pytest.mark.parametrize("name", ["hybrid-burst", "debug-then-train", "seed-13b-100b", "data-locality"])
def test_summaries_recompute_and_add_up(name):
    prob, cat, plan = recorded(name)
    width, horizon, done = plan.schedule.period_days, prob.horizon_days, plan.schedule.assignments
    assert job_rentals(plan.allocations, done, width, horizon) == plan.job_rentals
    assert rental_use(plan.allocations, done, width, horizon) == plan.rental_use
    assert cash_flow(plan.allocations, done, prob, cat, width) == plan.cash_flow
    assert sum(p.amount for p in plan.cash_flow) == pytest.approx(plan.total_cost, abs=0.01 * len(plan.cash_flow))
    for u in plan.rental_use:
        assert u.gpu_days_used + u.idle_gpu_days == pytest.approx(u.gpu_days_paid, abs=0.02)
        assert sum(jr.gpu_days for jr in plan.job_rentals if jr.rental == u.rental) == \
            pytest.approx(u.gpu_days_used, abs=0.05)


def test_overlapping_lines_of_one_offer_share_a_job_by_gpus():
    lines = [line(start=0, end=30, gpus=8), line(start=0, end=30, gpus=24)]
    got = job_rentals(lines, [use(period=0, replicas=2, group=8)], width=5, horizon_days=30)
    assert [(j.rental, j.gpu_days) for j in got] == [(1, 20.0), (2, 60.0)]      # 16 GPUs × 5 days = 80, 1 : 3


def test_idle_cost_is_the_unused_share_of_the_line():
    used = [use(period=p) for p in range(3)]                                    # 8 GPUs, days 0–14 of 30
    (u,) = rental_use([line(cost=3000.0)], used, width=5, horizon_days=30)
    assert (u.gpu_days_paid, u.gpu_days_used, u.idle_gpu_days, u.idle_cost, u.last_used_day) == \
        (240.0, 120.0, 120.0, 1500.0, 15)
    (never,) = rental_use([line(offer="x")], used, width=5, horizon_days=30)
    assert never.idle_cost == 3000.0 and never.last_used_day is None


def test_blocks_are_30_days_or_calendar_months():
    assert blocks(None, 10, 65) == [(0, "days 0–29", 0, 30), (1, "days 30–59", 30, 60), (2, "days 60–89", 60, 90)]
    # from 20 January 2027: January holds days 0–11, February days 12–39 (28 days), March from day 40
    assert blocks(date(2027, 1, 20), 0, 45) == [(0, "2027-01", 0, 12), (1, "2027-02", 12, 40), (2, "2027-03", 40, 71)]
    assert blocks(date(2026, 12, 1), 31, 32) == [(1, "2027-01", 31, 62)]        # across a year's end


def test_cash_flow_by_billing_rule():
    prob, cat, _ = recorded("seed-7b-200b-30d")
    offer = "vnet-yz-a100-80-8x-monthly"
    term = [line(offer=offer, start=10, end=40, gpus=40, cost=30000.0, vendor="21vianet")]
    monthly = cash_flow(term, [], prob, cat, 1)
    assert [(p.label, p.billing, p.amount) for p in monthly] == \
        [("days 0–29", "per month of term", 20000.0), ("days 30–59", "per month of term", 10000.0)]
    upfront = cat.model_copy(update={"offers": {**cat.offers, offer: cat.offers[offer].model_copy(
        update={"billing": "upfront"})}})
    assert [(p.label, p.billing, p.amount) for p in cash_flow(term, [], prob, upfront, 1)] == \
        [("days 0–29", "up front", 30000.0)]
    hourly = [line(offer="h", start=25, end=35, cost=1000.0, mode="hourly")]
    assert [(p.label, p.billing, p.amount) for p in cash_flow(hourly, [], prob, cat, 1)] == \
        [("days 0–29", "as used", 500.0), ("days 30–59", "as used", 500.0)]
    dated = prob.model_copy(update={"start_date": date(2027, 1, 20)})
    assert [(p.label, p.amount) for p in cash_flow(term, [], dated, cat, 1)] == \
        [("2027-01", 2 * 1000.0), ("2027-02", 28 * 1000.0)]                    # 30 Jan to 28 Feb


def test_verifier_rejects_summaries_that_do_not_add_up():
    prob, cat, plan = recorded("hybrid-burst")
    idle = [u.model_copy(update={"idle_gpu_days": 0.0, "gpu_days_used": u.gpu_days_paid}) for u in plan.rental_use]
    assert any("rental_use" in v for v in verify_plan(prob, cat, plan.model_copy(update={"rental_use": idle})))
    moved = [jr.model_copy(update={"gpu_days": jr.gpu_days + 100}) for jr in plan.job_rentals]
    assert any("job_rentals" in v for v in verify_plan(prob, cat, plan.model_copy(update={"job_rentals": moved})))
    cheap = plan.cash_flow[1:]
    assert any("cash_flow" in v for v in verify_plan(prob, cat, plan.model_copy(update={"cash_flow": cheap})))
