"""Rented capacity: contracts paid by whole term, hourly by day held, lead time, max_nodes.

Prices (tests/builders.py): hourly 4 CNY/GPU-h = 768 CNY per 8-GPU node-day, 6 CNY/GPU-h
= 1 152 CNY per node-day; monthly 30 000 CNY per node for a 30-day term.
"""

import pytest

from tests.builders import catalog, gpu, hourly, job, monthly, offers_of, problem, solve
from solver.api import build
from solver.engine.solve import solve_milp
from solver.milp.build import build_milp
from solver.milp.instance import build_instance


def test_committed_contract_is_paid_for_its_whole_term():
    # 40 GPU-days by day 10 need one node for 5 days, but the only offer is monthly:
    # 1 contract × 30 000 = 30 000 CNY, although the term runs 20 days past the horizon.
    cat = catalog(monthly("M", 30_000))
    plan = solve(problem(job(days=40, deadline_days=10), horizon_days=10), cat)
    assert plan.total_cost == pytest.approx(30_000)
    assert [(c.offer, c.nodes) for c in plan.schedule.contracts] == [("M", 1)]
    assert plan.allocations[0].end_day - plan.allocations[0].start_day == 30


def test_hourly_is_paid_per_day_held():
    # 40 GPU-days on 8-GPU nodes: 5 node-days × 1 152 = 5 760 CNY.
    cat = catalog(hourly("H", 6))
    plan = solve(problem(job(days=40, deadline_days=10), horizon_days=10), cat)
    assert plan.total_cost == pytest.approx(5_760)
    assert sum(r.nodes for r in plan.schedule.rentals) == 5
    assert not plan.schedule.contracts


@pytest.mark.parametrize("days, horizon, winner, cost", [
    # 5 node-days: hourly 5 × 1 152 = 5 760 < one contract 30 000.
    (40, 10, "H", 5_760),
    # 30 node-days: hourly 30 × 1 152 = 34 560 > one contract 30 000.
    (240, 30, "M", 30_000),
])
def test_the_cheaper_of_hourly_and_monthly_wins(days, horizon, winner, cost):
    cat = catalog(monthly("M", 30_000), hourly("H", 6))
    plan = solve(problem(job(days=days, deadline_days=horizon), horizon_days=horizon), cat)
    assert plan.total_cost == pytest.approx(cost)
    assert offers_of(plan) == {winner}


def test_a_contract_base_with_hourly_on_top():
    # 280 GPU-days in 30 days = 35 node-days: 1 contract (30 node-days) + 5 hourly node-days
    # = 30 000 + 5 × 1 152 = 35 760, below 2 contracts (60 000) or all hourly (40 320).
    cat = catalog(monthly("M", 30_000), hourly("H", 6))
    plan = solve(problem(job(days=280, deadline_days=30), horizon_days=30), cat)
    assert plan.total_cost == pytest.approx(35_760)
    assert offers_of(plan) == {"M", "H"}


def test_lead_time_beyond_the_deadline_makes_the_cheap_offer_unusable():
    # Cheap offer ready on day 12, job due day 10: the dear one pays 5 × 1 152 = 5 760.
    cat = catalog(hourly("cheap", 4, lead_time_days=12), hourly("dear", 6))
    prob = problem(job(days=40, deadline_days=10), horizon_days=15)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(5_760)
    assert offers_of(plan) == {"dear"}
    inst, _ = build(prob, cat)
    assert any(why.config.startswith("cheap:") and why.code == "lead_time" for why in inst.excluded["j"])


@pytest.mark.parametrize("lead", [0, 5])
def test_lead_time_inside_the_window_does_not_bind(lead):
    # Ready by day 0 or 5, the cheap offer has ≥ 5 days left: 5 node-days × 768 = 3 840.
    cat = catalog(hourly("cheap", 4, lead_time_days=lead), hourly("dear", 6))
    plan = solve(problem(job(days=40, deadline_days=10), horizon_days=15), cat)
    assert plan.total_cost == pytest.approx(3_840)
    assert offers_of(plan) == {"cheap"}
    assert min(a.period for a in plan.schedule.assignments) >= lead


def test_lead_time_delays_contract_starts():
    cat = catalog(monthly("M", 30_000, lead_time_days=3))
    _, milp = build(problem(job(days=40, deadline_days=10), horizon_days=10), cat)
    assert sorted(s for (_k, s) in milp.contracts) == list(range(3, 10))
    assert not any(t < 3 for (_k, t) in milp.nodes)


def test_max_nodes_binds_and_forces_a_second_offer():
    # 80 GPU-days in 5 days = 2 nodes a day; the cheap offer has 1 node:
    # 5 × 768 + 5 × 1 152 = 3 840 + 5 760 = 9 600.
    cat = catalog(hourly("cheap", 4, max_nodes=1), hourly("dear", 6))
    plan = solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)
    assert plan.total_cost == pytest.approx(9_600)
    assert offers_of(plan) == {"cheap", "dear"}


def test_max_nodes_does_not_bind_when_stock_suffices():
    # Two cheap nodes for 5 days: 10 × 768 = 7 680; the dear offer is never touched.
    cat = catalog(hourly("cheap", 4, max_nodes=2), hourly("dear", 6))
    plan = solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)
    assert plan.total_cost == pytest.approx(7_680)
    assert offers_of(plan) == {"cheap"}


def test_interconnect_options_of_one_offer_share_max_nodes():
    # One cheap node whether sold with IB or RoCE: the second node per day is the dear one,
    # 5 × 768 + 5 × 1 152 = 9 600 (not 7 680 as two 1-node offers would give).
    cheap = hourly("cheap", 4, max_nodes=1, interconnect=("ib_hdr", "roce"), interconnect_price=(0, 0))
    cat = catalog(cheap, hourly("dear", 6))
    # independent replicas may use both options of `cheap` (a synchronous job could not use
    # its RoCE option at all: one RoCE node cannot carry the whole job, so it is pruned)
    prob = problem(job(days=80, deadline_days=5, single_site=False), horizon_days=5)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(9_600)
    # exact pruning (solver.milp.prune) keeps one of the two equal twins, so the shared row is
    # read on the unpruned model, where both options stand
    unpruned = build_milp(build_instance(prob, cat, prune=False))
    assert {f"Availability-cheap-{t}" for t in range(5)} <= set(unpruned.rows)
    assert solve_milp(unpruned).objective == pytest.approx(9_600)
    assert plan.total_cost == pytest.approx(solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat).total_cost)


def test_two_separate_offers_do_not_share_max_nodes():
    # Control for the test above: two 1-node offers give 2 cheap nodes, 10 × 768 = 7 680.
    cat = catalog(hourly("cheap-a", 4, max_nodes=1), hourly("cheap-b", 4, max_nodes=1), hourly("dear", 6))
    plan = solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)
    assert plan.total_cost == pytest.approx(7_680)


def test_a_monthly_contract_never_holds_nodes_longer_than_its_term():
    # 280 GPU-days in 35 days on one 8-GPU node = 35 node-days; one 30-day contract holds at
    # most 30, so a second contract is needed: 2 × 30 000 = 60 000. The planner finds 30 000.
    # Two nodes in stock: the first contract still holds its node on days 28–29, where the
    # second, from period 4 (day 28), already runs (test below).
    cat = catalog(monthly("M", 30_000, max_nodes=2))
    plan = solve(problem(job(days=280, deadline_days=35), horizon_days=35, period_days=7), cat)
    assert plan.total_cost == pytest.approx(60_000)


def test_a_contract_holds_its_stock_to_the_last_day_of_its_term():
    # 56 node-days in 56 days, 7-day periods; the monthly offer has 1 node in stock.
    # Contracts in periods 0 and 4 (60 000) would do it, but the first holds its node to
    # day 30, inside period 4: both would hold a node on days 28 and 29. A contract from
    # period 5 could be used only in periods 5–7, 21 node-days for 30 000, dearer than
    # hourly (21 × 1 152 = 24 192). So: one contract and 28 node-days hourly, 62 256 (the
    # contract may start in any of periods 0–4: each covers four whole periods; from period
    # 4 it runs to day 58, past the horizon).
    from solver.milp.capacity import held_nodes

    cat = catalog(monthly("M", 30_000, max_nodes=1), hourly("H", 6))
    prob = problem(job(days=8 * 56, deadline_days=56), horizon_days=56, period_days=7)
    plan = solve(prob, cat)
    assert plan.total_cost == pytest.approx(30_000 + 28 * 1_152)
    (contract,) = plan.schedule.contracts
    assert contract.start_period in range(5)
    _, milp = build(prob, cat)
    held = held_nodes(milp)
    assert all(milp.contracts["M:ib_hdr", s] in held["M:ib_hdr", s + 4] for s in range(4))


def test_the_verifier_counts_stock_day_by_day_over_the_whole_term():
    from solver.verify import verify_plan

    cat = catalog(monthly("M", 30_000, max_nodes=1), hourly("H", 6))
    prob = problem(job(days=8 * 56, deadline_days=56), horizon_days=56, period_days=7)
    plan = solve(prob, cat)
    first = plan.schedule.contracts[0]
    overlapping = [first.model_copy(update={"start_period": 0}), first.model_copy(update={"start_period": 4})]
    broken = plan.model_copy(update={"schedule": plan.schedule.model_copy(
        update={"contracts": overlapping, "rentals": []})})
    found = verify_plan(prob, cat, broken)
    assert "availability: 2 nodes of M on day 28, max_nodes is 1" in found
    assert "availability: 2 nodes of M on day 29, max_nodes is 1" in found
    assert not any("day 30," in v for v in found if v.startswith("availability"))


def test_a_job_that_fits_its_window_exactly_is_planned():
    # 116 GPU-days on the only GPU over days 2–118: an exact fit, 116 × 240 = 27 840.
    # In floating point the domain's capacity came out a hair short and it was dropped.
    from tests.builders import GPU_DAY, SMALL
    from solver.model.problem import Job

    cat = catalog(hourly("H", 10, gpus_per_node=1, max_nodes=1))
    exact = Job(name="j", model=SMALL, flops=116 * GPU_DAY, start_day=2, deadline_days=118)
    plan = solve(problem(exact, horizon_days=120), cat)
    assert plan.total_cost == pytest.approx(116 * 240)


def test_a_short_last_period_inside_the_term_is_covered():
    # 7-day periods over 30 days: the last period is days 28–30, inside a 30-day contract
    # from day 0. One node all month: 30 000, no hourly top-up for days 28–30 (2 × 1 152).
    cat = catalog(monthly("M", 30_000, max_nodes=1), hourly("H", 6))
    plan = solve(problem(job(days=8 * 30, deadline_days=30), horizon_days=30, period_days=7), cat)
    assert plan.total_cost == pytest.approx(30_000)
    assert not plan.schedule.rentals


def test_a_model_parallel_group_does_not_straddle_two_nodes():
    # A 1B model on 10 GB GPUs needs 4-GPU groups (tensor parallel inside a node). 6-GPU
    # nodes hold one such group each, not 1.5: 12 GPU-days in a day need 3 groups, so 3
    # nodes (3 × 24 h × 60 = 4 320), not 2 nodes with a group split across them (2 880): the
    # verifier counts 3 groups as 18 GPUs of nodes, more than 2 nodes hold.
    from tests.builders import GPU_DAY
    from solver.model.problem import Job, ModelSpec
    from solver.verify import verify_plan

    one_b = ModelSpec(params=1e9, layers=16, hidden=2048, heads=16, seq_len=2048)
    cat = catalog(hourly("six", 60, price_unit="cny_per_node_hour", gpus_per_node=6, max_nodes=3, gpu="G10"),
                  gpus=(gpu("G10", 10),))
    prob = problem(Job(name="j", model=one_b, flops=12 * GPU_DAY, deadline_days=1, single_site=False), horizon_days=1)
    plan = solve(prob, cat)
    assert {a.group_gpus for a in plan.schedule.assignments} == {4}
    assert plan.total_cost == pytest.approx(4_320)
    (rental,) = plan.schedule.rentals
    squeezed = plan.schedule.model_copy(update={"rentals": [rental.model_copy(update={"nodes": 2})]})
    found = verify_plan(prob, cat, plan.model_copy(update={"schedule": squeezed}))
    assert any(v.startswith("capacity: 18 GPUs of six/ib_hdr taken in period 0") for v in found), found
