"""Power: hosted racks count their node_kw against the site's quota; cloud nodes do not.

Hosted "R": 20 000 CNY per node-month, 10 kW a node. Cloud "C" at the same site:
6 CNY/GPU-h = 1 152 CNY per node-day, 34 560 per node for 30 days. The job needs
480 GPU-days in 30 days = 2 nodes all month.
"""

import pytest

from tests.builders import catalog, datacenter, hourly, job, offers_of, problem, solve
from solver.api import build
from solver.model.catalog import Offer

HOSTED = Offer(offer="R", vendor="v1", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
               price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10, min_term_days=30,
               interconnect=("ib_hdr",), counts_power=True, node_kw=10, perf_guarantee_pct=100,
               source="test")


def power_case(quota_kw):
    cat = catalog(HOSTED, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=quota_kw),))
    return problem(job(days=480, deadline_days=30), horizon_days=30), cat


def test_a_binding_quota_forces_a_cloud_burst():
    # 10 kW fits one 10 kW rack: 1 hosted node (20 000) + 1 cloud node for 30 days (34 560).
    prob, cat = power_case(10)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(54_560)
    assert offers_of(plan) == {"R", "C"}
    assert [c.nodes for c in plan.schedule.contracts] == [1]


def test_a_large_quota_does_not_bind():
    # 100 kW: both nodes hosted, 2 × 20 000 = 40 000.
    prob, cat = power_case(100)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(40_000)
    assert offers_of(plan) == {"R"}


def test_no_quota_at_all_leaves_only_cloud():
    # 0 kW: 2 cloud nodes × 30 days × 1 152 = 69 120.
    prob, cat = power_case(0)
    assert solve(prob, cat).total_cost == pytest.approx(69_120)


def test_power_rows_cover_every_period_of_the_site_and_only_counting_offers():
    prob, cat = power_case(10)
    _, milp = build(prob, cat)
    power = {name for name in milp.rows if name.startswith("Power-")}
    assert power == {f"Power-D1-{t}" for t in range(30)}
    cloud_only = catalog(hourly("C", 6))
    _, milp = build(prob, cloud_only)
    assert not any(name.startswith("Power-") for name in milp.rows)


def test_a_rack_draws_power_to_the_last_day_of_its_term():
    # 10 kW holds one rack at a time; 56 node-days in 56 days, 7-day periods. A rack from
    # day 0 is used in periods 0–3 but draws power to day 30, inside period 4, so the next
    # rack starts in period 5 (used in periods 5–7: 20 000 beats 21 cloud node-days at
    # 24 192) and period 4 runs on the cloud: 2 × 20 000 + 7 × 1 152 = 48 064. Racks in
    # periods 0 and 4 (40 000) would draw 20 kW on days 28 and 29; the verifier says so.
    from solver.verify import verify_plan

    cat = catalog(HOSTED, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=10),))
    prob = problem(job(days=8 * 56, deadline_days=56), horizon_days=56, period_days=7)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(48_064)
    assert sorted(c.start_period for c in plan.schedule.contracts) == [0, 5]
    rack = plan.schedule.contracts[0]
    overlapping = [rack.model_copy(update={"start_period": 0}), rack.model_copy(update={"start_period": 4})]
    broken = plan.model_copy(update={"schedule": plan.schedule.model_copy(update={"contracts": overlapping})})
    found = verify_plan(prob, cat, broken)
    assert "power: 20.0 kW at D1 on day 28 exceeds the quota of 10.0 kW" in found
    assert not any("on day 30 " in v for v in found)
