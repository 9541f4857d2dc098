"""Symmetry breaking (solver.milp.symmetry) must never cut off the cheapest plan.

Two cases a review found where ordering one hourly offer's nodes early-first did:
a job that waits for its dataset can use the offer only from a later day, and a
synchronous job's per-period domain bound shared with another offer. Prices: hourly
CNY per GPU-hour × 24 h; 1-GPU nodes unless said otherwise; every job's group is 1 GPU.
"""

from __future__ import annotations

import pytest

from tests.builders import catalog, datacenter, hourly, job, problem, solve
from solver.api import build


def test_a_job_waiting_for_its_dataset_does_not_share_the_ordering():
    # A (0.1 GPU-day) may run on any day at D2; B (16 GPU-days) waits one day for its 1 TB
    # from D1 (other link group, 10 Gbit/s). Cheapest: A on 1 node on day 0 (240), B on 4
    # nodes on days 1–4 (3 840) = 4 080. Ordering D2's nodes early-first across days 0–4
    # forces 4 nodes on day 0 as well: 4 800.
    cat = catalog(hourly("o2", 10, gpus_per_node=1, max_nodes=4, interconnect=("ethernet",), datacenter="D2"),
                  hourly("o1", 30, gpus_per_node=1, max_nodes=4, interconnect=("ethernet",), datacenter="D1"),
                  datacenters=(datacenter("D1", link_group="lg1"), datacenter("D2", link_group="lg2")))
    a = job("A", days=0.1, deadline_days=5, single_site=False)
    b = job("B", days=16, deadline_days=5, single_site=False,
            data={"site": "D1", "dataset_tb": 1, "egress_per_tb": 0})
    plan = solve(problem(a, b, horizon_days=5), cat)
    assert plan.total_cost == pytest.approx(4_080)


def test_an_offer_sharing_a_bounded_domain_with_another_is_not_ordered():
    # One synchronous job, 12 GPU-days by day 2 on Ethernet (factor 0.6 up to 16 GPUs, so
    # 20 raw GPU-days), one vendor at one site: A = 8-GPU nodes at 10 CNY/GPU-h, 50 % off
    # from 16 GPUs; B = 1-GPU nodes at 6.25. Cheapest: day 0 two A nodes at the discount
    # (16 × 120 = 1 920), day 1 four B GPUs (600) = 2 520. Ordering A early-first with B
    # left in place breaks the 16-GPU domain bound on one of the days: 3 000 (B only).
    cat = catalog(hourly("A", 10, gpus_per_node=8, max_nodes=2, interconnect=("ethernet",),
                         discount_from_gpus=16, discount_pct=50),
                  hourly("B", 6.25, gpus_per_node=1, max_nodes=16, interconnect=("ethernet",)))
    prob = problem(job("J", days=12, deadline_days=2), horizon_days=2)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(2_520)
    _, milp = build(prob, cat)
    assert not any(name.startswith("Order-") for name in milp.rows)


def test_an_offer_alone_in_its_periods_is_still_ordered():
    """The symmetry rows stay where they are valid: one offer, one job, interchangeable days."""
    cat = catalog(hourly("H", 6))
    prob = problem(job(days=40, deadline_days=10), horizon_days=10)
    _, milp = build(prob, cat)
    assert sum(name.startswith("Order-H-") for name in milp.rows) == 9
    assert solve(prob, cat).total_cost == pytest.approx(5_760)


@pytest.mark.parametrize("lead", [2, 1, 0])
def test_an_offer_at_a_site_storing_the_job_data_is_not_ordered(lead):
    # 8-GPU nodes, one each; the job needs just under 12 GPU-days by day 4 and keeps 1 TB at
    # D1 (3 000 CNY/TB-month = 100 a day) from its first GPU day there to its finish.
    # Cheapest: A (1 920/day) and B (960/day, only from day 3) both on day 3: 2 880 + 100 =
    # 2 980, whatever A's lead time. Ordering A early-first put its node on its first day
    # (day `lead`), storing from then on: 3 280 with lead 0, 3 180 with 1, 3 080 with 2, so a
    # shorter lead time raised the optimum (tests/milp/test_monotone.py found it).
    cat = catalog(hourly("A", 10, max_nodes=1, lead_time_days=lead, storage_per_tb_month=3_000),
                  hourly("B", 5, max_nodes=1, lead_time_days=3, storage_per_tb_month=3_000))
    prob = problem(job(days=12, deadline_days=4, storage_tb=1), horizon_days=4)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(2_980)
    assert plan.cost_breakdown["storage"] == pytest.approx(100)
    _, milp = build(prob, cat)
    assert not any(name.startswith("Order-A-") for name in milp.rows)
