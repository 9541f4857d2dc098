"""Data locality (issue 5, item 3): a job's dataset lives at data.site; training at another
datacenter pays dataset_tb × the egress price once per (vendor, datacenter) and starts only
after the transfer, ceil(TB × 8000 Gbit ÷ Gbit/s ÷ 86 400 s) days after the job's start
(none inside the data site's link group; 10 Gbit/s when wan_gbps is blank). A soft
preference keeps the job at its site unless elsewhere is more than up_to_pct cheaper.

Numbers (tests/builders.py): one 8-GPU node-day costs 8 × 24 × price; 40 GPU-days = 5
node-days: 3 840 CNY at 4 CNY/GPU-h (D1), 3 744 at 3.9 (D2, saves 96).
"""

import pytest

from tests.builders import catalog, datacenter, hourly, job, problem, solve, write_catalog
from solver.errors import Infeasible, ProblemError
from solver.load import load_problem
from solver.milp.instance import build_instance, transfer_days
from solver.model.problem import DataSpec, Prefer
from solver.verify import verify_plan


def two_sites(d2_price: float = 3.9, **d2):
    return catalog(hourly("A", 4, egress_per_tb=500), hourly("B", d2_price, datacenter="D2", **d2),
                   datacenters=(datacenter("D1"), datacenter("D2")))


def sites_of(plan, cat, name="j"):
    return {cat.offers[a.offer].datacenter for a in plan.schedule.assignments if a.job == name}


@pytest.mark.parametrize("egress, moves", [(500, True), (10, False)])
def test_moving_the_dataset_moves_the_plan_only_when_egress_outweighs_the_price_difference(egress, moves):
    # 1 TB dataset. Egress 500 > the 96 D2 saves: the plan follows the data.
    # Egress 10 < 96: D2 wins wherever the data is (3 744 + 10 at most).
    cat = two_sites()
    where = {}
    for site in ("D1", "D2"):
        data = DataSpec(site=site, dataset_tb=1, egress_per_tb=egress)
        plan = solve(problem(job(days=40, deadline_days=15, data=data), horizon_days=15), cat)
        where[site] = sites_of(plan, cat)
        if where[site] == {site}:
            assert plan.total_cost == pytest.approx(3_840 if site == "D1" else 3_744)
        else:
            assert plan.total_cost == pytest.approx(3_744 + egress)
            assert plan.cost_breakdown["egress"] == pytest.approx(egress)
    if moves:
        assert where == {"D1": {"D1"}, "D2": {"D2"}}
    else:
        assert where == {"D1": {"D2"}, "D2": {"D2"}}


def test_egress_price_defaults_to_the_data_sites_vendor():
    # No price on the job: D1's vendor charges 500/TB → 2 TB cost 1 000 > 96, so D1 is kept;
    # a D2 cheaper by 1 920 (2 CNY/GPU-h: 1 920) is worth the 1 000.
    data = DataSpec(site="D1", dataset_tb=2)
    assert sites_of(solve(problem(job(days=40, deadline_days=15, data=data), horizon_days=15), two_sites()), two_sites()) == {"D1"}
    cheap = two_sites(2.0)
    plan = solve(problem(job(days=40, deadline_days=15, data=data), horizon_days=15), cheap)
    assert sites_of(plan, cheap) == {"D2"}
    assert plan.total_cost == pytest.approx(1_920 + 1_000)


def tight_transfer(tb: float, *, link_group: str | None = None, wan_gbps: float | None = None, days: int = 7):
    """Only D2 can train (one 8-GPU node); the data sits at D1. The job needs `days` node-days by day 10."""
    d1 = datacenter("D1")
    d2 = datacenter("D2", link_group=link_group)
    if wan_gbps is not None:
        d1, d2 = d1.model_copy(update={"wan_gbps": wan_gbps}), d2.model_copy(update={"wan_gbps": wan_gbps})
    cat = catalog(hourly("B", 4, datacenter="D2", max_nodes=1), datacenters=(d1, d2))
    data = DataSpec(site="D1", dataset_tb=tb, egress_per_tb=0)
    return problem(job(days=8 * days, deadline_days=10, data=data), horizon_days=10), cat


def first_period(plan):
    return min(a.period for a in plan.schedule.assignments)


def test_the_transfer_delays_the_start_by_whole_days():
    # 250 TB × 8 000 Gbit ÷ 10 Gbit/s = 200 000 s = 2.3 days → 3 days: periods 3..9 exactly
    prob, cat = tight_transfer(250)
    assert transfer_days(prob.jobs[0], "D2", cat) == 3
    assert first_period(solve(prob, cat)) == 3
    # a day more of work no longer fits after the transfer
    prob8, cat8 = tight_transfer(250, days=8)
    with pytest.raises(Infeasible):
        solve(prob8, cat8)


def test_faster_lines_and_one_link_group_shorten_the_wait():
    prob, cat = tight_transfer(250, wan_gbps=100)        # 20 000 s → 1 day
    assert transfer_days(prob.jobs[0], "D2", cat) == 1
    prob, cat = tight_transfer(250, link_group="D1")     # same link group: no wait
    assert transfer_days(prob.jobs[0], "D2", cat) == 0
    prob, cat = tight_transfer(250, link_group="D1", days=10)
    assert first_period(solve(prob, cat)) == 0


def test_a_transfer_longer_than_the_window_excludes_the_site_with_a_reason():
    prob, cat = tight_transfer(1_200)                     # 11.1 days → 12 > deadline 10
    excluded = build_instance(prob, cat).excluded["j"]
    assert any(why.code == "lead_time" and "dataset" in why.detail for why in excluded)
    with pytest.raises(Infeasible):
        solve(prob, cat)


def test_the_verifier_recomputes_the_egress_and_the_wait():
    cat = two_sites()
    data = DataSpec(site="D1", dataset_tb=1, egress_per_tb=10)
    prob = problem(job(days=40, deadline_days=15, data=data), horizon_days=15)
    plan = solve(prob, cat)
    assert sites_of(plan, cat) == {"D2"} and verify_plan(prob, cat, plan) == []
    parts = dict(plan.cost_breakdown, egress=0.0)
    cheat = plan.model_copy(update={"total_cost": plan.total_cost - 10, "cost_breakdown": parts})
    assert any(v.startswith("cost:") for v in verify_plan(prob, cat, cheat))
    # the same schedule with the data at D2 owes no egress: the honest plan is now over-charged
    moved = prob.model_copy(update={"jobs": [prob.jobs[0].model_copy(update={"data": DataSpec(site="D2", dataset_tb=1)})]})
    # nor does its cash flow pay for the dataset's move (else the payments exceed the total)
    paid = [p for p in plan.cash_flow if p.billing != "on start"]
    assert len(paid) == len(plan.cash_flow) - 1
    assert verify_plan(moved, cat, cheat.model_copy(update={"cash_flow": paid})) == []
    # a plan that starts before the dataset arrives is rejected
    prob, cat = tight_transfer(250)
    plan = solve(prob, cat)
    early = plan.model_copy(update={"schedule": plan.schedule.model_copy(update={
        "assignments": [a.model_copy(update={"period": a.period - 3}) for a in plan.schedule.assignments],
        "rentals": [r.model_copy(update={"period": r.period - 3}) for r in plan.schedule.rentals]})})
    assert any(v.startswith("data:") for v in verify_plan(prob, cat, early))


@pytest.mark.parametrize("d2_price, stays", [(3.84, True), (3.7, False)])
def test_a_preference_keeps_the_job_within_up_to_pct_and_not_beyond(d2_price, stays):
    # D1 3 840; D2 at 3.84 costs 3 686.40 (4 % cheaper) → stay; at 3.7 costs 3 552 (7.5 %) → leave
    cat = two_sites(d2_price)
    free = solve(problem(job(days=40, deadline_days=15), horizon_days=15), cat)
    assert sites_of(free, cat) == {"D2"}
    plan = solve(problem(job(days=40, deadline_days=15, prefer=Prefer(site="D1", up_to_pct=5)), horizon_days=15), cat)
    assert sites_of(plan, cat) == ({"D1"} if stays else {"D2"})
    assert plan.total_cost == pytest.approx(3_840 if stays else free.total_cost)
    (note,) = plan.warnings  # what the preference cost, or saved, is said (the plan alone reads "optimal")
    extra = 3_840 - free.total_cost
    assert (f"kept at its preferred D1 (prefer up to 5%): {extra:,.0f} CNY ({extra / 3_840:.1%}) more than "
            "running it at D2" if stays else
            f"runs at D2, not at its preferred D1: that saves {extra:,.0f} CNY ({extra / 3_840:.1%})") in note


def test_a_preference_that_cannot_be_met_is_dropped():
    cat = two_sites(3.9)
    pinned = job(days=40, deadline_days=15, prefer=Prefer(site="D1", up_to_pct=50), restrict={"datacenters": ["D2"]})
    plan = solve(problem(pinned, horizon_days=15), cat)
    assert sites_of(plan, cat) == {"D2"}
    (note,) = plan.warnings  # not dropped in silence
    assert "runs at D2, not at its preferred D1: no plan runs it there" in note


def _write(tmp_path, cat, job_yaml: str):
    write_catalog(cat, tmp_path / "cat")
    path = tmp_path / "p.yaml"
    path.write_text("name: t\ncatalog: cat\nhorizon_days: 15\nredundancy: 0\njobs:\n  - name: j\n"
                    "    model: {params: 1e8}\n    flops: 1e20\n    deadline_days: 15\n" + job_yaml)
    return path


def test_loader_checks_sites_and_the_egress_price(tmp_path):
    cat = two_sites()
    problem_, _ = load_problem(_write(tmp_path, cat, "    data: {site: D1, dataset_tb: 3}\n"
                                                     "    prefer: {site: D2, up_to_pct: 5}\n"))
    assert problem_.jobs[0].data.site == "D1" and problem_.jobs[0].prefer.up_to_pct == 5
    with pytest.raises(ProblemError, match="unknown datacenter 'Nowhere'"):
        load_problem(_write(tmp_path, cat, "    data: {site: Nowhere, dataset_tb: 3}\n"))
    with pytest.raises(ProblemError, match="unknown datacenter"):
        load_problem(_write(tmp_path, cat, "    prefer: {site: D9, up_to_pct: 5}\n"))
    # two vendors at D1 pricing egress differently: the job must say which price applies
    split = catalog(hourly("A", 4, egress_per_tb=500), hourly("A2", 4, vendor="v2", egress_per_tb=300),
                    datacenters=(datacenter("D1"),))
    with pytest.raises(ProblemError, match="egress price"):
        load_problem(_write(tmp_path, split, "    data: {site: D1, dataset_tb: 3}\n"))
    load_problem(_write(tmp_path, split, "    data: {site: D1, dataset_tb: 3, egress_per_tb: 400}\n"))


def test_a_preference_the_run_had_no_time_to_weigh_is_a_warning(monkeypatch):
    # --max-seconds spent by the first solve: the re-solve pinned to D1 is not started (it
    # used to get the whole limit again, running the command past its budget) and the plan
    # says the preference was not weighed, instead of dropping it in silence.
    import solver.api as api
    import solver.clock as clock
    from solver.api import solve_problem
    cat = two_sites(3.84)
    prob = problem(job(days=40, deadline_days=15, prefer=Prefer(site="D1", up_to_pct=5)), horizon_days=15)
    real, calls = api.solve_built, []

    def first_solve_spends_the_run(*args, **kwargs):
        calls.append(kwargs.get("time_limit"))
        plan = real(*args, **kwargs)
        monkeypatch.setattr(clock.time, "perf_counter", lambda: 1e12)
        return plan
    monkeypatch.setattr(api, "solve_built", first_solve_spends_the_run)
    plan = solve_problem(prob, cat, max_seconds=600)
    assert len(calls) == 1 and 0 < calls[0] <= 600
    assert sites_of(plan, cat) == {"D2"}
    (warning,) = plan.warnings
    assert "j's preference for D1 was not weighed" in warning
