"""Exact pruning (solver.milp.prune): a dominated configuration goes, the optimum stays.

The brute force here is the unpruned model itself: on random tiny instances built so that
the dominance rule fires (offers with several interconnect options at random prices,
independent jobs beside synchronous ones, volume discounts, hourly and monthly terms), the
pruned and unpruned models must reach the same optimum, each plan passing the verifier.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from solver.api import solve_built
from solver.errors import Infeasible
from solver.milp.build import build_milp
from solver.milp.instance import build_instance

from tests.builders import SMALL, catalog, hourly, job, monthly, problem

FAST = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
FABRICS = ("ib_hdr", "roce", "ethernet")


def _cost(prob, cat, prune: bool) -> float | None:
    """The verified optimum's cost (solve_built runs the verifier), None when infeasible."""
    inst = build_instance(prob, cat, prune=prune)
    try:
        plan = solve_built(inst, build_milp(inst), backend="highs", time_limit=60)
    except Infeasible as exc:
        assert exc.proven
        return None
    assert plan.status == "optimal"
    return plan.total_cost


def test_cheaper_fabric_of_one_offer_replaces_the_dearer_for_independent_replicas():
    cat = catalog(hourly("h", 4.0, interconnect=("ib_hdr", "roce"), interconnect_price=(3.0, 1.0)))
    prob = problem(job("sweep", days=20, deadline_days=5, single_site=False), horizon_days=5)
    inst = build_instance(prob, cat)
    assert {o.config for o in inst.options} == {"h:roce"}
    (reason,) = [e for e in inst.excluded["sweep"] if e.code == "dominated"]
    assert reason.config == "h:ib_hdr" and "h:roce" in reason.text


def test_a_synchronous_job_on_the_dearer_fabric_keeps_it():
    cat = catalog(hourly("h", 4.0, interconnect=("ib_hdr", "roce"), interconnect_price=(3.0, 1.0)))
    prob = problem(job("sweep", days=20, deadline_days=5, single_site=False),
                   job("train", days=20, deadline_days=5), horizon_days=5)
    inst = build_instance(prob, cat)
    assert {o.config for o in inst.options} == {"h:ib_hdr", "h:roce"}
    assert not any(e.code == "dominated" for reasons in inst.excluded.values() for e in reasons)


def test_no_dominance_across_offers_whose_stock_differs():
    cat = catalog(hourly("cheap", 3.0, max_nodes=1), hourly("dear", 4.0, max_nodes=1))
    prob = problem(job("sweep", days=14, deadline_days=1, single_site=False), horizon_days=1)
    inst = build_instance(prob, cat)
    assert {o.config for o in inst.options} == {"cheap:ib_hdr", "dear:ib_hdr"}
    assert _cost(prob, cat, prune=True) == pytest.approx(8 * 24 * 7.0)


@st.composite
def instances(draw):
    """A few offers of 1–3 fabrics at random interconnect prices; 1–3 jobs, some independent."""
    offers = []
    for i in range(draw(st.integers(1, 3))):
        k = draw(st.integers(1, 3))
        fabrics = FABRICS[:k] if draw(st.booleans()) else FABRICS[3 - k:]
        extra = dict(interconnect=fabrics, max_nodes=draw(st.integers(1, 3)),
                     interconnect_price=tuple(float(draw(st.sampled_from((0, 1, 2, 5)))) for _ in fabrics))
        if draw(st.booleans()):
            extra.update(discount_from_gpus=16, discount_pct=10)
        if draw(st.booleans()):
            offers.append(hourly(f"h{i}", float(draw(st.sampled_from((3, 4, 5)))), **extra))
        else:
            extra["interconnect_price"] = tuple(300.0 * p for p in extra["interconnect_price"])
            offers.append(monthly(f"m{i}", float(draw(st.sampled_from((12_000, 15_000)))),
                                  lead_time_days=draw(st.integers(0, 2)), **extra))
    horizon = draw(st.integers(2, 4))
    jobs = [job(f"j{n}", days=draw(st.integers(4, 40)), deadline_days=draw(st.integers(1, horizon)),
                single_site=draw(st.booleans()), model=SMALL) for n in range(draw(st.integers(1, 3)))]
    return problem(*jobs, horizon_days=horizon), catalog(*offers)


@FAST
@given(instances())
def test_pruning_never_removes_the_optimum(case):
    prob, cat = case
    pruned = build_instance(prob, cat)
    dropped = sum(e.code == "dominated" for reasons in pruned.excluded.values() for e in reasons)
    event("pruned" if dropped else "nothing pruned")
    with_pruning, without = _cost(prob, cat, prune=True), _cost(prob, cat, prune=False)
    assert (with_pruning is None) == (without is None)
    if without is not None:
        assert with_pruning == pytest.approx(without, rel=1e-9, abs=1e-6)


def test_the_random_instances_do_exercise_pruning():
    """The property above is only worth something if pruning fires on some of its instances."""
    seen = []

    @settings(max_examples=25, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(instances())
    def count(case):
        inst = build_instance(*case)
        seen.append(any(e.code == "dominated" for reasons in inst.excluded.values() for e in reasons))

    count()
    assert sum(seen) >= 5
