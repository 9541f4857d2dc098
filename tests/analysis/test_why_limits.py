"""why's levers on a budget or a power quota move the family's bound on the one built model
(solver.milp.registry: `set_bound`, a probe's `Limit` change) and cost what the edited
problem, solved anew, costs; the levers the built model cannot hold (more stock than the
catalog's, a later deadline) are probes of one second model built with all of them (why's
`_LeverModel`), and cost what their edited problems, solved anew, cost.
"""

from __future__ import annotations

import pytest

from solver import api
from solver.analysis.edits import apply_edits
from solver.analysis.why import why
from solver.model.catalog import Offer
from tests.builders import count_builds, catalog, datacenter, hourly, job, problem

RACK = Offer(offer="R", vendor="v1", datacenter="D1", gpu="G80", mode="hosted", price=20_000,
             price_unit="cny_per_node_month", gpus_per_node=8, max_nodes=10, min_term_days=30,
             interconnect=("ib_hdr",), counts_power=True, node_kw=10, perf_guarantee_pct=100, source="test")


def _counted(monkeypatch) -> dict[str, int]:
    return count_builds(monkeypatch)


def _edited_cost(prob, cat, edits) -> float:
    prob, cat, _ = apply_edits(prob, cat, edits)
    return api.solve_problem(prob, cat).total_cost


def test_a_power_lever_is_a_probe_with_the_rebuilt_answer(monkeypatch):
    cat = catalog(RACK, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=10),))
    prob = problem(job(days=480, deadline_days=30), horizon_days=30)
    counts = _counted(monkeypatch)
    result = why(prob, cat, k=1)
    power = next(b for b in result.binding if b.kind == "power")
    levers_model = any(b.kind in ("deadline", "availability") for b in result.binding)  # one model for those
    assert counts["instance"] == counts["model"] == 1 + levers_model  # the power lever built nothing: a bound moved
    assert power.cost == pytest.approx(_edited_cost(prob, cat, power.edits))


def test_a_budget_lever_is_a_probe_with_the_rebuilt_answer(monkeypatch):
    cat = catalog(RACK, hourly("C", 6), datacenters=(datacenter("D1", power_quota_kw=10),))
    free = api.solve_problem(problem(job(days=480, deadline_days=30), horizon_days=30), cat).total_cost
    prob = problem(job(days=480, deadline_days=30), horizon_days=30, budget=free * 1.002)  # within 0.5 %: binds
    counts = _counted(monkeypatch)
    result = why(prob, cat, k=1)
    budget = next(b for b in result.binding if b.kind == "budget")
    levers_model = any(b.kind in ("deadline", "availability") for b in result.binding)
    assert counts["instance"] == counts["model"] == 1 + levers_model  # the budget lever built nothing
    assert budget.cost == pytest.approx(_edited_cost(prob, cat, budget.edits))


def test_a_stock_lever_the_built_model_cannot_hold_is_the_edited_problem(monkeypatch):
    # A (4 CNY) has 1 node; the job needs 2 nodes × 10 days: 1 of A + 1 of B. +1 node of A is
    # above the catalog's stock: the availability setter refuses it, so it is a probe of the
    # levers' model, built with A's and B's stock + 1 and the deadline + 1 day (horizon 10 → 11),
    # each held back while another is asked: the stock levers' 10 days are its first periods.
    cat = catalog(hourly("A", 4, max_nodes=1), hourly("B", 6))
    prob = problem(job(days=160, deadline_days=10), horizon_days=10)
    counts = _counted(monkeypatch)
    result = why(prob, cat, k=1)
    assert sorted((b.kind, b.name) for b in result.binding) == [("availability", "A"), ("availability", "B"),
                                                                ("deadline", "j")]
    assert counts == {"instance": 2, "model": 2}   # the base, the levers' model
    for lever in result.binding:
        assert lever.cost == pytest.approx(_edited_cost(prob, cat, lever.edits))
    stock = next(b for b in result.binding if b.name == "A")
    assert stock.cost < result.cost


@pytest.mark.parametrize("horizon", [30, 125])
def test_levers_on_a_longer_horizon_cost_what_their_edited_problems_cost(horizon):
    # Monthly A (1 node, paid for its whole term) and hourly B; two jobs, one due at the horizon:
    # its deadline lever moves the horizon (on 5-day periods past 120 days), so the stock levers
    # and the other job's deadline lever are probes of a model with a longer horizon, held back.
    from tests.builders import monthly

    cat = catalog(monthly("A", 15_000, max_nodes=1), hourly("B", 6, max_nodes=2), hourly("C", 9))
    step = 5 if horizon > 120 else 1
    prob = problem(job("j", days=16 * horizon, deadline_days=horizon),
                   job("k", days=8 * (horizon - 2 * step), deadline_days=horizon - 2 * step), horizon_days=horizon)
    result = why(prob, cat, k=1)
    kinds = {b.kind for b in result.binding}
    assert {"availability", "deadline"} <= kinds
    for lever in result.binding:
        assert lever.determined and lever.cost == pytest.approx(_edited_cost(prob, cat, lever.edits)), lever.relax
