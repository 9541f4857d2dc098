"""One fabric for a synchronous job: one vendor within one link group.

Cheap "A" (4 CNY/GPU-h = 768 per node-day, 1 node) and dear "B" (6 CNY/GPU-h = 1 152,
10 nodes); the job needs 80 GPU-days in 5 days = 2 nodes a day.
"""

import pytest

from tests.builders import catalog, datacenter, hourly, job, problem, solve, vendors_of
from solver.api import build
from solver.errors import Infeasible

SPLIT = 5 * 768 + 5 * 1_152      # 9 600: one cheap node + one dear node each day
DEAR_ONLY = 10 * 1_152           # 11 520: both nodes from the dear offer


def two_vendors():
    return catalog(hourly("A", 4, vendor="vA", max_nodes=1), hourly("B", 6, vendor="vB"))


def two_link_groups(same_group: bool):
    east = datacenter("D1", link_group="east")
    other = datacenter("D2", link_group="east" if same_group else "west")
    return catalog(hourly("A", 4, max_nodes=1), hourly("B", 6, datacenter="D2"), datacenters=(east, other))


def test_a_synchronous_job_never_spans_two_vendors():
    cat = two_vendors()
    plan = solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)
    assert plan.total_cost == pytest.approx(DEAR_ONLY)
    assert vendors_of(plan, cat) == {"vB"}


def test_a_job_without_single_site_may_span_vendors():
    cat = two_vendors()
    plan = solve(problem(job(days=80, deadline_days=5, single_site=False), horizon_days=5), cat)
    assert plan.total_cost == pytest.approx(SPLIT)
    assert vendors_of(plan, cat) == {"vA", "vB"}


def test_a_synchronous_job_never_spans_two_link_groups():
    plan = solve(problem(job(days=80, deadline_days=5), horizon_days=5), two_link_groups(same_group=False))
    assert plan.total_cost == pytest.approx(DEAR_ONLY)
    assert plan.jobs[0].sites == ["D2"]


def test_datacenters_joined_in_one_link_group_are_one_site():
    plan = solve(problem(job(days=80, deadline_days=5), horizon_days=5), two_link_groups(same_group=True))
    assert plan.total_cost == pytest.approx(SPLIT)
    assert plan.jobs[0].sites == ["D1", "D2"]


def test_site_rows_exist_only_where_a_choice_exists():
    prob = problem(job(days=80, deadline_days=5), horizon_days=5)
    both_able = catalog(hourly("A", 4, vendor="vA", max_nodes=3), hourly("B", 6, vendor="vB"))
    _, milp = build(prob, both_able)
    assert "Site-j-one" in milp.rows
    per_domain = [name for name in milp.rows if name.startswith("Site-j-") and name != "Site-j-one"]
    assert any("vA@" in name for name in per_domain) and any("vB@" in name for name in per_domain)
    _, milp = build(prob, catalog(hourly("A", 4), hourly("B", 6)))   # one vendor, one group
    assert not any(name.startswith("Site-") for name in milp.rows)
    _, milp = build(problem(job(days=80, deadline_days=5, single_site=False), horizon_days=5), two_vendors())
    assert not any(name.startswith("Site-") for name in milp.rows)


def test_a_fabric_that_cannot_carry_the_whole_job_alone_is_not_a_choice():
    # vA's one node gives 8 GPUs × 5 days = 40 GPU-days < 80 needed: a synchronous job
    # cannot use it at all, so only vB is left and no choice row is needed
    inst, milp = build(problem(job(days=80, deadline_days=5), horizon_days=5), two_vendors())
    assert {o.config.split(":")[0] for o in inst.options} == {"B"}
    assert any(why.code == "capacity" for why in inst.excluded["j"])
    assert "Site-j-one" not in milp.rows


def test_one_multi_node_ethernet_allocation_pays_the_fabric_derating():
    # Control for the xfail below: 2 ethernet nodes of one offer run at 0.6 across nodes,
    # 16 GPUs × 5 days × 0.6 = 48 < 80 GPU-days: infeasible.
    cat = catalog(hourly("A", 4, interconnect=("ethernet",), max_nodes=2))
    with pytest.raises(Infeasible):
        solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)


def test_a_synchronous_job_split_over_two_offers_is_still_multi_node():
    # Same 16 ethernet GPUs as above, now as two 1-node offers: must still be infeasible.
    cat = catalog(hourly("A", 4, interconnect=("ethernet",), max_nodes=1),
                  hourly("B", 4, interconnect=("ethernet",), max_nodes=1))
    with pytest.raises(Infeasible):
        solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)


def test_ib_and_roce_nodes_are_two_fabrics_for_a_synchronous_job():
    # IB "I" (1 node) and RoCE "R" at the same vendor and site, both 768 per node-day.
    # Synchronous: RoCE alone, across nodes at 0.95: 10 node-days give 80 × 0.95 = 76 < 80,
    # so 11 node-days × 768 = 8 448. Free to split: 1 IB + 1 RoCE node a day, 10 × 768 = 7 680.
    cat = catalog(hourly("I", 4, max_nodes=1), hourly("R", 4, interconnect=("roce",)))
    sync = solve(problem(job(days=80, deadline_days=5), horizon_days=5), cat)
    assert sync.total_cost == pytest.approx(11 * 768)
    assert {a.interconnect for a in sync.schedule.assignments} == {"roce"}
    loose = solve(problem(job(days=80, deadline_days=5, single_site=False), horizon_days=5), cat)
    assert loose.total_cost == pytest.approx(10 * 768)


def test_a_fractional_choice_asks_each_domain_its_share_of_the_work():
    """Need rows: with the choice flags at ½ each (an LP point), each domain must do at least
    half of the job's need, the dear one included: without them the LP relaxation moves
    the dear domain's share, up to the surplus its work row allows, to the cheap one."""
    from ortools.linear_solver.python import model_builder as mb

    from solver.milp.build import build_milp
    from solver.milp.work import work_coefficients

    prob = problem(job(days=80, deadline_days=5), horizon_days=5)
    inst, _ = build(prob, catalog(hourly("A", 4, vendor="vA", max_nodes=3), hourly("B", 6, vendor="vB")))
    milp = build_milp(inst, relax=True)
    for flag in milp.sites.values():
        flag.lower_bound = flag.upper_bound = 0.5
    solver = mb.Solver("highs")
    assert solver.solve(milp.model) == mb.SolveStatus.OPTIMAL
    done = {"A": 0.0, "B": 0.0}
    for (i, t), coef in work_coefficients(milp).items():
        done[inst.options[i].config.split(":")[0]] += coef * solver.value(milp.replicas[i, t])
    need = inst.required["j"]
    assert sum(name.endswith("-need") for name in milp.rows) == 2
    assert done["B"] >= need / 2 - 1e-6
    assert done["A"] >= need / 2 - 1e-6


def test_per_period_size_rows_only_where_a_tier_bound_can_bind():
    """A domain whose smallest tier holds all its GPUs needs no per-period size row (the
    domain's work row already keeps a job out of an unchosen domain: see the next test);
    one that can grow past a tier bound keeps one row per period."""
    prob = problem(job(days=80, deadline_days=5), horizon_days=5)
    cat = catalog(hourly("A", 4, vendor="vA", max_nodes=3), hourly("B", 6, vendor="vB", max_nodes=40))
    _, milp = build(prob, cat)
    periodic = [n for n in milp.rows if n.startswith("Site-j-") and n.rsplit("-", 1)[1].isdigit()]
    assert periodic and all("vB@" in n for n in periodic)      # B: 320 GPUs, IB tiers 256 and 320
    assert {c.bound_gpus for c in milp.choices["j"] if "vB@" in c.domain} == {256, 320}
    assert len(periodic) == 5


def test_an_unchosen_domain_stays_empty_without_per_period_rows():
    """81 GPU-days in 5 days: 11 node-days of the cheap 8-GPU offer (8,448 CNY), or 10 of
    them plus one GPU-day of the dearer 1-GPU offer (7,800 CNY) if the job could split.
    Neither domain can pass its tier bound, so no per-period row exists: the domain rows
    (`-work` empties an unchosen domain, `-need` asks the chosen one for all the work)
    must keep the synchronous job on one vendor; without both it splits (checked)."""
    cat = catalog(hourly("A", 4, vendor="vA", max_nodes=3),
                  hourly("B", 5, vendor="vB", gpus_per_node=1, max_nodes=40))
    _, milp = build(problem(job(days=81, deadline_days=5), horizon_days=5), cat)
    assert not [n for n in milp.rows if n.startswith("Site-j-") and n.rsplit("-", 1)[1].isdigit()]
    sync = solve(problem(job(days=81, deadline_days=5), horizon_days=5), cat)
    assert vendors_of(sync, cat) == {"vA"}
    assert sync.total_cost == pytest.approx(11 * 768)
    loose = solve(problem(job(days=81, deadline_days=5, single_site=False), horizon_days=5), cat)
    assert loose.total_cost == pytest.approx(10 * 768 + 5 * 24)


def test_a_synchronous_job_runs_all_on_spot_or_none():
    # A reclaimed spot node stalls every GPU of a synchronous job, so its loss cannot be
    # charged to the spot GPUs alone: spot and on-demand nodes are separate domains. Cheap
    # spot (1 node) cannot do the job alone, so the plan is the all-hourly one, exactly.
    spot = hourly("sp", 1, mode="spot", preemptions_per_day=10, max_nodes=1)
    on_demand = hourly("hr", 10, max_nodes=2)
    prob = problem(job(days=120, deadline_days=10, interruptible=True), horizon_days=10)
    plan = solve(prob, catalog(on_demand, spot))
    assert {a.offer for a in plan.schedule.assignments} == {"hr"}
    assert plan.total_cost == pytest.approx(solve(prob, catalog(on_demand)).total_cost)

    from solver.verify import verify_plan

    a = plan.schedule.assignments[0]
    r = next(r for r in plan.schedule.rentals if r.period == a.period)
    mixed = plan.schedule.model_copy(update={
        "assignments": [*plan.schedule.assignments, a.model_copy(update={"offer": "sp", "replicas": 1})],
        "rentals": [*plan.schedule.rentals, r.model_copy(update={"offer": "sp", "nodes": 1})]})
    found = verify_plan(prob, catalog(on_demand, spot), plan.model_copy(update={"schedule": mixed}))
    assert any("(spot)" in v for v in found), found
