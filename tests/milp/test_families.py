"""Which configurations a job may use (memory, fabric, spot, residency), and the systematic
row names every family leaves in the model.

Prices: 1-GPU nodes at 4 CNY/GPU-h = 96 per GPU-day, 2 CNY/GPU-h = 48; 8-GPU nodes at
4 CNY/GPU-h = 768 per node-day, 6 CNY/GPU-h = 1 152.
"""

import pytest

from tests.builders import BIG, MID, SMALL, catalog, datacenter, hourly, job, monthly, offers_of, problem, solve
from solver.api import build
from solver.model.catalog import Offer


# --- memory ---------------------------------------------------------------------------

def memory_case(model):
    # "C24": one cheap 24 GB card (1 CNY/GPU-h = 24 per GPU-day); "H80": 8 × 80 GB nodes.
    cheap24 = hourly("C24", 1, gpu="G24", gpus_per_node=1, max_nodes=1)
    return problem(job(days=5, deadline_days=10, model=model), horizon_days=10), catalog(cheap24, hourly("H80", 4))


def test_a_model_that_does_not_fit_24_gb_never_uses_it_even_when_cheapest():
    # 2e9 params = 32 GB of Adam states > 22 GB usable: one 80 GB node-day, 768 CNY.
    prob, cat = memory_case(MID)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(768)
    assert offers_of(plan) == {"H80"}
    inst, _ = build(prob, cat)
    assert any(why.config.startswith("C24:") and why.code == "memory" for why in inst.excluded["j"])


def test_a_model_that_fits_24_gb_uses_the_cheap_card():
    # 1e8 params fit one 24 GB card: 5 GPU-days × 24 = 120 CNY.
    plan = solve(*memory_case(SMALL))
    assert plan.total_cost == pytest.approx(120)
    assert offers_of(plan) == {"C24"}


# --- fabric ---------------------------------------------------------------------------

def fabric_case(model):
    # 1-GPU nodes: ethernet "E" at 48 per GPU-day, IB "I" at 96; 5 GPU-days by day 5.
    eth = hourly("E", 2, gpus_per_node=1, max_nodes=8, interconnect=("ethernet",))
    ib = hourly("I", 4, gpus_per_node=1, max_nodes=8)
    return problem(job(days=5, deadline_days=5, model=model), horizon_days=5), catalog(eth, ib)


def test_ethernet_cannot_carry_a_multi_node_model_parallel_group():
    # 8e9 params need 2 × 80 GB (PP2) across 1-GPU nodes: only IB can carry the group.
    # Whole groups of 2 GPUs: 3 replica-days = 6 GPU-days × 96 = 576 CNY.
    prob, cat = fabric_case(BIG)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(576)
    assert offers_of(plan) == {"I"}
    assert {a.group_gpus for a in plan.schedule.assignments} == {2}
    inst, _ = build(prob, cat)
    assert any(why.config.startswith("E:") and why.code == "fabric" for why in inst.excluded["j"])


def test_ethernet_is_fine_for_a_group_inside_one_node():
    # 1e8 params: 1-GPU group, one card for 5 days on ethernet: 5 × 48 = 240 CNY.
    plan = solve(*fabric_case(SMALL))
    assert plan.total_cost == pytest.approx(240)
    assert offers_of(plan) == {"E"}


# --- spot -----------------------------------------------------------------------------

SPOT = Offer(offer="S", vendor="v1", datacenter="D1", gpu="G80", mode="spot", price=2,
             price_unit="cny_per_gpu_hour", gpus_per_node=1, max_nodes=20, interconnect=("ib_hdr",),
             preemptions_per_day=1.6, perf_guarantee_pct=100, source="test")
"""1.6 pre-emptions a day × (1 h checkpoint / 2 + 0.25 h restart) / 24 h = 5 % of time lost."""


@pytest.mark.parametrize("interruptible, offer, cost", [
    (False, "H", 95 * 96),   # 95 GPU-days on demand: 9 120
    (True, "S", 100 * 48),   # 95 / 0.95 = 100 spot GPU-days × 48 = 4 800
])
def test_spot_only_for_interruptible_jobs(interruptible, offer, cost):
    cat = catalog(SPOT, hourly("H", 4, gpus_per_node=1, max_nodes=20))
    plan = solve(problem(job(days=95, deadline_days=10, interruptible=interruptible), horizon_days=10), cat)
    assert plan.total_cost == pytest.approx(cost)
    assert offers_of(plan) == {offer}


def test_spot_is_excluded_for_a_synchronous_non_interruptible_job_by_name():
    cat = catalog(SPOT, hourly("H", 4))
    inst, _ = build(problem(job(days=95, deadline_days=10), horizon_days=10), cat)
    assert any(why.config.startswith("S:") and why.code == "spot" and "interruptible" in why.text for why in inst.excluded["j"])


# --- residency ------------------------------------------------------------------------

@pytest.mark.parametrize("residency, site, cost", [
    ("cn-bj", "D2", 5 * 1_152),   # only D2 carries cn-bj: 5 760
    (None, "D1", 5 * 768),        # free to use the cheap D1: 3 840
])
def test_residency_tag_excludes_datacenters_without_it(residency, site, cost):
    cat = catalog(hourly("A", 4), hourly("B", 6, datacenter="D2"),
                  datacenters=(datacenter("D1"), datacenter("D2", residency=("cn", "cn-bj"))))
    plan = solve(problem(job(days=40, deadline_days=10, residency=residency), horizon_days=10), cat)
    assert plan.total_cost == pytest.approx(cost)
    assert plan.jobs[0].sites == [site]


# --- named rows -----------------------------------------------------------------------

def test_every_family_names_its_rows():
    hosted = Offer(offer="R", vendor="v1", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
                   price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=2, interconnect=("ib_hdr",),
                   counts_power=True, node_kw=10, storage_cny_per_tb_month=100, source="test")
    cat = catalog(hosted, monthly("M", 30_000, vendor="v2"),
                  hourly("H", 4, interconnect=("ib_hdr", "roce"), discount_from_gpus=16, discount_pct=5,
                         storage_cny_per_tb_month=100))
    prob = problem(job(days=80, deadline_days=5, storage_tb=1), horizon_days=5, budget=1e6)
    _, milp = build(prob, cat)
    rows = set(milp.rows)
    expected = {"Work-j", "Budget", "Power-D1-0", "Power-D1-4", "Use-H:ib_hdr-0", "Use-H:roce-4",
                "Use-M:ib_hdr-0", "Use-R:ib_hdr-2", "Availability-H-0", "Capacity-contract-M:ib_hdr-0",
                "Capacity-contract-R:ib_hdr-4", "Site-j-one", "Data-j-v1-D1",
                "Discount-H:ib_hdr-0-cap", "Discount-H:roce-3-min"}
    assert expected <= rows, sorted(expected - rows)
    families = {name.split("-")[0] for name in rows}
    assert families >= {"Work", "Budget", "Power", "Use", "Availability", "Capacity", "Site", "Data", "Discount"}
