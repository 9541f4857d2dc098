"""Event buckets (`periods: events`, solver.milp.periods): where they are cut, and that they
give the daily model's optimum where the module docstring says they are exact."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ortools.linear_solver.python import model_builder as mb

from solver.api import solve_problem
from solver.errors import Infeasible
from solver.milp import build
from solver.milp.instance import build_instance
from solver.milp.periods import closed_cuts, event_periods, pieces, uniform_periods
from solver.model.problem import DataSpec
from solver.verify import verify_plan

from tests.builders import SLACK, catalog, datacenter, gpu_day_flops, job, monthly, offer, problem

SMALL_RUNS = settings(max_examples=25, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow])


# ---------------------------------------------------------------------------------------
# Cuts and pieces
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("days", range(0, 40))
def test_pieces_sum_to_the_stretch_and_make_every_count_of_days(days: int) -> None:
    lengths = pieces(days)
    sums = {0}
    for n in lengths:
        sums |= {s + n for s in sums}
    assert sum(lengths) == days
    assert set(range(days + 1)) <= sums


def test_pieces_are_few() -> None:
    assert pieces(10) == [1, 2, 4, 3]
    assert pieces(60) == [1, 2, 4, 8, 16, 29]


def test_cuts_are_the_events_and_their_term_shifts_inside_the_horizon() -> None:
    assert closed_cuts([12, 5, 99, -3], [], 40) == [0, 5, 12, 40]
    assert closed_cuts([12], [30], 40) == [0, 10, 12, 30, 40]   # 0+30, 40−30, 12 (42 is past the horizon)
    assert closed_cuts([], [50], 40) == [0, 40]                 # a term past the horizon adds nothing


def test_two_terms_close_under_each_other() -> None:
    cuts = closed_cuts([], [4, 6], 12)
    assert cuts == [0, 2, 4, 6, 8, 10, 12]


def test_event_periods_split_each_stretch_in_pieces() -> None:
    timeline = event_periods([3], [], 10)
    assert timeline.starts == (0, 1, 3, 4, 6)       # [0,3) as 1+2, [3,10) as 1+2+4
    assert timeline.hours() == [24.0, 48.0, 24.0, 48.0, 96.0]
    assert [list(timeline.grains(t)) for t in (1, 4)] == [[1, 2], [6, 7, 8, 9]]
    assert timeline.period_of(7) == 4


def test_uniform_periods_are_as_before() -> None:
    timeline = uniform_periods(5, 12)
    assert timeline.starts == (0, 5, 10)
    assert timeline.hours() == [120.0, 120.0, 48.0]
    assert list(timeline.grains(2)) == [2]
    assert timeline.grain_hours(2) == 48.0


def test_instance_cuts_at_windows_lead_times_transfers_and_terms() -> None:
    cat = catalog(offer("a", lead_time_days=2, datacenter="far"), monthly("m", 9000, datacenter="near"),
                  datacenters=[datacenter("near"), datacenter("far")])
    moved = job("j", days=1, deadline_days=37, start_day=4, data=DataSpec(site="near", dataset_tb=200))
    inst = build_instance(problem(moved, horizon_days=50, periods="events"), cat)
    # lead 2, start 4, start + 2-day transfer to "far" 6, deadline 37, horizon 50; ±30 (the term): 7, 20, 30, …
    cuts = [0, 2, 4, 6, 7, 20, 30, 32, 34, 36, 37, 50]
    assert inst.timeline.starts == event_periods(cuts, [], 50).starts
    assert set(cuts[:-1]) <= set(inst.timeline.starts)


def test_periods_events_and_period_days_together_is_an_error() -> None:
    with pytest.raises(ValueError, match="periods: events"):
        problem(job("j", days=1, deadline_days=5), horizon_days=5, periods="events", period_days=1)


# ---------------------------------------------------------------------------------------
# The same optimum as the daily model, and a daily plan the verifier accepts
# ---------------------------------------------------------------------------------------

@st.composite
def exact_instances(draw):
    """Tiny problems inside the exactness conditions of solver.milp.periods: offers paid by the
    hour (hourly, spot), one-GPU nodes and one-GPU groups, no storage, no discount, power
    quotas that never bind; windows, lead times and dataset transfers drawn freely."""
    horizon = draw(st.integers(3, 12))
    spot = draw(st.booleans())
    sites = [datacenter("dc0", link_group="lg0"), datacenter("dc1", link_group=draw(st.sampled_from(["lg0", "lg1"])))]
    offers = []
    for i in range(draw(st.integers(1, 3))):
        mode = "spot" if spot and draw(st.booleans()) else "hourly"
        vendor = draw(st.sampled_from(["v1", "v2"]))
        offers.append(offer(f"o{i}", vendor=vendor, mode=mode, datacenter=draw(st.sampled_from(["dc0", "dc1"])),
                            price=draw(st.sampled_from([2.0, 3.0, 5.5])), max_nodes=draw(st.integers(1, 3)),
                            lead_time_days=draw(st.integers(0, 3)), egress=40.0 if vendor == "v2" else 0.0,
                            **({"preemptions_per_day": 0.5} if mode == "spot" else {})))
    jobs = []
    for k in range(draw(st.integers(1, 2))):
        start = draw(st.integers(0, horizon - 2))
        deadline = draw(st.integers(start + 1, horizon))
        data = DataSpec(site="dc0", dataset_tb=draw(st.sampled_from([50, 150, 250]))) if draw(st.booleans()) else None
        work = draw(st.integers(1, 3 * (deadline - start))) * gpu_day_flops() * SLACK
        jobs.append(job(f"j{k}", flops=work, start_day=start, deadline_days=deadline, interruptible=spot,
                        single_site=draw(st.booleans()), data=data))
    return problem(*jobs, horizon_days=horizon), catalog(*offers, datacenters=sites)


def _cost(prob, cat) -> float | None:
    """The optimum's cost, the plan checked by the verifier (solve_problem runs it); None: infeasible."""
    try:
        plan = solve_problem(prob, cat, time_limit=30)
    except Infeasible:
        return None
    assert plan.status == "optimal"
    assert plan.schedule.period_days == 1
    assert verify_plan(prob, cat, plan) == []
    return plan.total_cost


@SMALL_RUNS
@given(exact_instances())
def test_event_buckets_give_the_daily_optimum(instance) -> None:
    prob, cat = instance
    daily = _cost(prob.model_copy(update={"period_days": 1}), cat)
    buckets = _cost(prob.model_copy(update={"periods": "events"}), cat)
    if daily is None:
        assert buckets is None
    else:
        assert buckets == pytest.approx(daily, abs=0.011)


def test_contracts_on_event_buckets_give_a_daily_plan_the_verifier_accepts() -> None:
    """Outside the MILP's exactness conditions (contracts) a bucket plan may cost more, never
    less, and it is still a valid daily schedule."""
    cat = catalog(monthly("m", 9000, lead_time_days=3), offer("h", price=2.0, max_nodes=2))
    prob = problem(job("a", days=20, deadline_days=25, start_day=2), job("b", days=30, deadline_days=60,
                   start_day=20), horizon_days=60)
    daily = _cost(prob.model_copy(update={"period_days": 1}), cat)
    buckets = _cost(prob.model_copy(update={"periods": "events"}), cat)
    assert daily is not None and buckets is not None
    assert buckets >= daily - 0.01


@st.composite
def contract_instances(draw):
    """Tiny problems with monthly contracts (any lead time), an hourly offer beside them or not."""
    horizon = draw(st.integers(20, 70))
    offers = [monthly(f"m{i}", draw(st.sampled_from([9000, 12000])), lead_time_days=draw(st.integers(0, 5)),
                      max_nodes=draw(st.integers(1, 3))) for i in range(draw(st.integers(1, 2)))]
    if draw(st.booleans()):
        offers.append(offer("h", price=draw(st.sampled_from([2.0, 6.0])), max_nodes=2,
                            lead_time_days=draw(st.integers(0, 4))))
    jobs = []
    for k in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, horizon - 5))
        deadline = draw(st.integers(start + 3, horizon))
        work = draw(st.integers(1, 8 * (deadline - start))) * gpu_day_flops() * SLACK
        jobs.append(job(f"j{k}", flops=work, start_day=start, deadline_days=deadline))
    return problem(*jobs, horizon_days=horizon), catalog(*offers)


def _lp(prob, cat) -> float | None:
    relaxed = build.build_milp(build_instance(prob, cat), relax=True)
    solver = mb.Solver("highs")
    solver.enable_output(False)
    return solver.objective_value if solver.solve(relaxed.model) == mb.SolveStatus.OPTIMAL else None


@SMALL_RUNS
@given(contract_instances())
def test_event_buckets_keep_the_daily_lp_with_contracts(instance) -> None:
    """The LP of the rows is exact with contracts started on any day (the covering cuts aside,
    which round to whole nodes per period; with them the bucket LP is tighter)."""
    prob, cat = instance
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build.cover, "add_cover_cuts", lambda milp: None)
        daily = _lp(prob.model_copy(update={"period_days": 1}), cat)
        buckets = _lp(prob.model_copy(update={"periods": "events"}), cat)
    if daily is None:
        assert buckets is None
    else:
        assert buckets == pytest.approx(daily, rel=1e-7, abs=1e-6)


def test_a_contract_started_on_a_cut_ends_on_one() -> None:
    """Two back-to-back 30-day contracts from the lead time (day 1) fill the window [1, 61):
    without the ±term closure day 31 is inside a piece ([16, 32)) and the first contract
    would count only its days up to 16."""
    cat = catalog(monthly("m", 9000, lead_time_days=1, max_nodes=2))
    prob = problem(job("a", days=8 * 60, start_day=1, deadline_days=61), horizon_days=70)
    assert 31 in build_instance(prob.model_copy(update={"periods": "events"}), cat).timeline.starts
    assert _cost(prob.model_copy(update={"periods": "events"}), cat) == _cost(prob, cat) == 18_000
