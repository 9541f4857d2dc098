"""Power: hosted racks count their node_kw against the site's quota; cloud nodes do not.

Hosted "R": 20 000 CNY per node-month, 10 kW a node. Cloud "C" at the same site:
6 CNY/GPU-h = 1 152 CNY per node-day, 34 560 per node for 30 days. The job needs
480 GPU-days in 30 days = 2 nodes all month.
"""

import pytest

from families import catalog, dc, hourly, job, offers_of, problem, solve
from solver.api import build
from solver.model.catalog import Offer

HOSTED = Offer(offer="R", vendor="v1", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
               price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10, min_term_days=30,
               interconnect=("ib_hdr",), counts_power=True, node_kw=10, perf_guarantee_pct=100,
               source="test")


def power_case(quota_kw):
    cat = catalog(HOSTED, hourly("C", 6), datacenters=(dc("D1", quota_kw=quota_kw),))
    return problem(job(days=480, deadline=30), horizon=30), cat


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
