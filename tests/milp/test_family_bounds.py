"""Each constraint family's bound on a built model (solver.milp.registry.Bound): what is set
is read back, and a model re-bounded in place has the optimum of the model rebuilt from the
edited problem.

Why: the frontiers, why's budget-free price and the probe engine re-bound one built model
instead of rebuilding it; a setter that moved the wrong rows, or fewer than the rebuild
would, would answer a different question in silence.
"""

from __future__ import annotations

import math

import pytest

from solver.api import (
    AVAILABILITY, BUDGET, DEADLINE, FAMILIES, POWER, SPOT, VENDORS, NoSolution, as_bounded, build, solve_built,
    solve_milp,
)
from solver.verify import verify_plan
from tests.builders import catalog, datacenter, gpu_day_flops, job, offer, problem, restrict

REL = 1e-6

# (target, a value the model then holds, the value after set_bound(None)) per family; a family
# added to FAMILIES without its case here, or a `ROUND_TRIP` in its own test
# (tests/milp/test_<family>.py: () → (problem, catalog, cases)), fails test_every_family_has_a_round_trip_case.
CASES = {
    "budget": [("", 12_345.5, None), ("budget", 9_000.0, None)],
    "power": [("A", 7.5, None)],
    "availability": [("s", 0, 1), ("a", 2, 3)],
    "deadline": [("j", 3, 4), ("", 2, 4)],
    "vendors": [("", 2, None), ("", 1, None)],
    "spot": [("", 0.5, None), ("", 0.0, None)],
}


def _catalog(quota: float = 100.0, spot_nodes: int = 1, a_nodes: int = 3):
    """One job's choices: a little cheap spot (v3), power-counted racks at A (v1), dear B (v2);
    the job needs more than the spot node does, so every limit below moves the optimum."""
    return catalog(
        offer("a", vendor="v1", datacenter="A", price=10.0, gpus_per_node=2, max_nodes=a_nodes, counts_power=True,
              node_kw=5),
        offer("b", vendor="v2", datacenter="B", price=14.0, gpus_per_node=2, max_nodes=3),
        offer("s", vendor="v3", datacenter="B", mode="spot", price=6.0, gpus_per_node=2, max_nodes=spot_nodes,
              preemptions_per_day=1.0),
        datacenters=[datacenter("A", power_quota_kw=quota), datacenter("B")])


def _problem(deadline: int = 4, **kw):
    return problem(job("j", flops=14 * gpu_day_flops(), deadline_days=deadline, interruptible=True,
                       single_site=False),
                   horizon_days=4, **kw)


def _optimum(prob, cat, edit=None) -> float | None:
    """The built model's optimum after `edit(milp)`; None when it has no plan (proven)."""
    _, milp = build(prob, cat)
    if edit is not None:
        edit(milp)
    try:
        return solve_milp(milp, backend="highs").objective
    except NoSolution as exc:
        assert exc.proven
        return None


def _round_trips() -> dict:
    """family → (problem, catalog, cases): CASES on this file's problem, or the family's own test's ROUND_TRIP."""
    import importlib

    out = {name: (_problem(), _catalog(), cases) for name, cases in CASES.items()}
    for fam in FAMILIES:
        if fam.name not in out:
            try:
                own = importlib.import_module(f"tests.milp.test_{fam.name}")
            except ModuleNotFoundError:
                continue
            if hasattr(own, "ROUND_TRIP"):
                out[fam.name] = own.ROUND_TRIP()
    return out


def test_every_family_has_a_round_trip_case():
    assert set(_round_trips()) == {fam.name for fam in FAMILIES}


@pytest.mark.parametrize("fam", FAMILIES, ids=lambda f: f.name)
def test_a_bound_set_on_a_built_model_is_read_back(fam):
    prob, cat, cases = _round_trips()[fam.name]
    for target, value, lifted in cases:
        _, milp = build(prob, cat)
        fam.set_bound(milp, target, value)
        assert fam.bound(milp, target) == pytest.approx(value), (fam.name, target)
        fam.set_bound(milp, target, None)
        assert fam.bound(milp, target) == lifted, (fam.name, target)
        fam.set_bound(milp, target, value)  # a second value moves the same rows: no second row
        assert fam.bound(milp, target) == pytest.approx(value), (fam.name, target)


def test_the_model_as_built_reads_its_written_limits():
    _, milp = build(_problem(budget=50_000), _catalog(quota=12.5))
    assert BUDGET.bound(milp) == 50_000
    assert POWER.bound(milp, "A") == 12.5
    assert POWER.bound(milp, "B") is None            # no capacity at B counts power: no row, no quota
    assert AVAILABILITY.bound(milp, "s") == 1 and AVAILABILITY.bound(milp, "a") == 3
    assert DEADLINE.bound(milp, "j") == 4 and DEADLINE.bound(milp) == 4
    assert VENDORS.bound(milp) is None and SPOT.bound(milp) is None
    assert VENDORS.rows.prefixes[0] not in " ".join(milp.rows)  # rows added on demand only
    assert "Frontier-Spot" not in milp.rows


def test_the_budget_is_one_keyed_row_however_it_is_set():
    _, milp = build(_problem(), _catalog())
    BUDGET.set_bound(milp, "", None)
    assert "Budget" not in milp.rows                  # None on a model without a budget adds nothing
    BUDGET.set_bound(milp, "", 1_000.0)
    BUDGET.set_bound(milp, "budget", 2_000.0)
    assert [name for name in milp.rows if name.startswith(("Budget", "Frontier-Budget"))] == ["Budget"]
    assert list(milp.family_rows("budget")) and BUDGET.bound(milp) == 2_000


def test_what_a_built_model_cannot_hold_is_refused():
    """More stock than the catalog's, a day after the deadline: no variables for it in the model."""
    _, milp = build(_problem(), _catalog())
    with pytest.raises(ValueError, match="above the catalog"):
        AVAILABILITY.set_bound(milp, "s", 2)
    with pytest.raises(ValueError, match="after j's deadline"):
        DEADLINE.set_bound(milp, "j", 5)
    with pytest.raises(ValueError, match="after the latest deadline"):
        DEADLINE.set_bound(milp, "", 5)
    with pytest.raises(KeyError):
        DEADLINE.set_bound(milp, "nobody", 2)
    assert AVAILABILITY.bound(milp, "s") == 1 and DEADLINE.bound(milp) == 4  # left as they were


def test_targets_a_family_does_not_have_are_refused():
    _, milp = build(_problem(), _catalog())
    for fam in (BUDGET, VENDORS, SPOT):
        with pytest.raises(KeyError):
            fam.set_bound(milp, "nonsense", 1.0)


# --- the same optimum as the edited problem rebuilt -------------------------------------------

def test_dropping_the_budget_on_the_built_model_is_the_problem_without_one():
    free = _optimum(_problem(), _catalog())
    assert free is not None
    tight = _problem(budget=free * 0.9)
    assert _optimum(tight, _catalog()) is None
    assert _optimum(tight, _catalog(), lambda m: BUDGET.set_bound(m, "", None)) == pytest.approx(free, rel=REL)
    assert _optimum(_problem(), _catalog(), lambda m: BUDGET.set_bound(m, "", free * 0.9)) is None


def test_power_set_on_the_built_model_is_the_rebuilt_quota():
    costs = {}
    for kw in (0.0, 5.0, 10.0):
        costs[kw] = _optimum(_problem(), _catalog(quota=kw))
        assert _optimum(_problem(), _catalog(), lambda m, kw=kw: POWER.set_bound(m, "A", kw)) \
            == pytest.approx(costs[kw], rel=REL), kw
    assert costs[0.0] > costs[5.0]  # the quota moves the optimum
    assert _optimum(_problem(), _catalog(quota=0.0), lambda m: POWER.set_bound(m, "A", None)) \
        == pytest.approx(_optimum(_problem(), _catalog(quota=1e6)), rel=REL)


def test_stock_lowered_on_the_built_model_is_the_rebuilt_catalog():
    for nodes in (1, 2):
        rebuilt = _optimum(_problem(), _catalog(a_nodes=nodes))
        assert _optimum(_problem(), _catalog(), lambda m, n=nodes: AVAILABILITY.set_bound(m, "a", n)) \
            == pytest.approx(rebuilt, rel=REL), nodes
    no_spot = _optimum(_problem(restrict=restrict(modes=["hourly"])), _catalog())  # a catalog cannot say 0 nodes
    assert no_spot > _optimum(_problem(), _catalog())
    assert _optimum(_problem(), _catalog(), lambda m: AVAILABILITY.set_bound(m, "s", 0)) \
        == pytest.approx(no_spot, rel=REL)


def test_a_deadline_set_on_the_built_model_is_the_rebuilt_deadline():
    costs = {}
    for day in (2, 3):
        costs[day] = _optimum(_problem(deadline=day), _catalog())
        for target in ("j", ""):
            assert _optimum(_problem(), _catalog(), lambda m, d=day, t=target: DEADLINE.set_bound(m, t, d)) \
                == pytest.approx(costs[day], rel=REL), (day, target)
    assert costs[2] > costs[3] > _optimum(_problem(), _catalog())  # each day earlier costs more
    assert _optimum(_problem(deadline=1), _catalog()) is None
    assert _optimum(_problem(), _catalog(), lambda m: DEADLINE.set_bound(m, "j", 1)) is None
    assert _optimum(_problem(deadline=2), _catalog(), lambda m: DEADLINE.set_bound(m, "j", None)) \
        == pytest.approx(costs[2], rel=REL)  # None: the job's own deadline, not a later one


def test_no_spot_work_on_the_built_model_is_the_problem_without_spot():
    without = _optimum(_problem(restrict=restrict(modes=["hourly"])), _catalog())
    with_spot = _optimum(_problem(), _catalog())
    assert with_spot < without  # spot is what the free plan uses
    assert _optimum(_problem(), _catalog(), lambda m: SPOT.set_bound(m, "", 0.0)) == pytest.approx(without, rel=REL)
    assert _optimum(_problem(), _catalog(), lambda m: SPOT.set_bound(m, "", math.inf)) \
        == pytest.approx(with_spot, rel=REL)


def test_a_vendor_count_on_the_built_model_is_the_best_restricted_problem():
    def best(k: int) -> float:
        subsets = [["v1"], ["v2"], ["v3"]] if k == 1 else [["v1", "v2"], ["v1", "v3"], ["v2", "v3"]]
        costs = [_optimum(_problem(restrict=restrict(vendors=v)), _catalog()) for v in subsets]
        return min(c for c in costs if c is not None)

    assert best(1) > best(2)  # the count moves the optimum
    for k in (1, 2):
        assert _optimum(_problem(), _catalog(), lambda m, k=k: VENDORS.set_bound(m, "", k)) \
            == pytest.approx(best(k), rel=REL), k


def test_a_plan_of_a_loosened_model_is_checked_against_the_limits_it_was_solved_under():
    """No budget and no quota at A on the built model: its plan breaks both written limits, and the
    verifier reads them as the model holds them (registry.as_bounded), generated from the model."""
    free = _optimum(_problem(), _catalog())
    prob, cat = _problem(budget=free * 0.9), _catalog(quota=0.0)
    inst, milp = build(prob, cat)
    BUDGET.set_bound(milp, "", None)
    POWER.set_bound(milp, "A", None)
    plan = solve_built(inst, milp)
    assert plan.total_cost == pytest.approx(free, rel=REL)
    broken = verify_plan(prob, cat, plan)
    assert any(v.startswith("power:") for v in broken) and any("budget" in v for v in broken)
    held_problem, held_catalog = as_bounded(milp, prob, cat)
    assert held_problem.budget is None and held_catalog.datacenters["A"].power_quota_kw == math.inf
    assert verify_plan(held_problem, held_catalog, plan) == []
    assert as_bounded(build(prob, cat)[1], prob, cat) == (prob, cat)  # as built: the written ones, unchanged


@pytest.mark.parametrize("fam, target, value", [(BUDGET, "", None), (POWER, "A", 0.0), (POWER, "A", None),
                                                 (AVAILABILITY, "s", 0), (DEADLINE, "j", 2)],
                         ids=lambda v: getattr(v, "name", repr(v)))
def test_a_limit_probe_equals_the_re_bounded_model_and_is_undone(fam, target, value):
    """solver.probes.Limit: the family's bound set for one probe, put back after (the model as it was)."""
    from solver.probes import Limit, Probes

    free = _optimum(_problem(), _catalog())
    prob, cat = _problem(budget=free * 1.5), _catalog()
    eng = Probes(prob, cat)
    eng.solve_base()
    before = eng.milp.model.export_to_proto().SerializeToString()
    answer = eng.probe(Limit(f"{fam.name} {target} {value}", False, fam, target, value))
    assert answer.cost == pytest.approx(_optimum(prob, cat, lambda m: fam.set_bound(m, target, value)), rel=REL)
    assert answer.plan is not None  # verified against the limits the model held (as_bounded)
    assert eng.milp.model.export_to_proto().SerializeToString() == before
