"""Covering cuts (solver.milp.cover): valid for every plan, and they do tighten the LP.

Valid: a cut that removed a feasible plan could remove the optimum. Each bundled problem
is solved without the cuts once per choice of each synchronous job's fabric domain and
tier (forced), and every cut must hold at every one of those plans. The brute-force and
backend-agreement tests solve with the cuts in and check the optimum independently.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import event, given

from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp import cover
from solver.milp.build import build_milp
from solver.milp.instance import build_instance
from solver.milp.solution import NoSolution
from solver.milp.work import add_work_slack
from tests.builders import ROOT
from tests.milp.test_bruteforce import FAST as FEW_EXAMPLES, Knobs, instances

PROBLEMS = ROOT / "problems"
FAST = ["seed-7b-200b-30d.yaml", "data-locality.yaml", "hybrid-burst.yaml", "seed-13b-100b.yaml"]


def without_cuts(inst, monkeypatch):
    monkeypatch.setattr(cover, "add_cover_cuts", lambda milp: None)
    return build_milp(inst)


def cut_rows(milp) -> list[tuple[str, list[tuple[int, float]], float, float]]:
    """Every cover row as (name, [(variable index, coefficient)], lower bound, upper bound)
    (a row with variables on both sides is kept as ≤)."""
    proto = milp.model.export_to_proto()
    names = {name for rows in milp.cover.values() for name in rows}
    return [(c.name, list(zip(c.var_index, c.coefficient)), c.lower_bound, c.upper_bound)
            for c in proto.constraint if c.name in names]


def violated(cuts, values: dict[int, float]) -> list[str]:
    out = []
    for name, terms, lower, upper in cuts:
        value = sum(values[i] * a for i, a in terms)
        tol = 1e-6 * max([1.0, *(abs(b) for b in (lower, upper) if math.isfinite(b))])
        if value < lower - tol or value > upper + tol:
            out.append(name)
    return out


def test_a_cut_that_removes_a_plan_is_caught():
    """The check itself: a row asking one more unit than a plan has is reported."""
    cuts = [("ge", [(0, 1.0)], 3.0, math.inf), ("le", [(0, -1.0), (1, 3.0)], -math.inf, 0.0)]
    assert violated(cuts, {0: 2.0, 1: 1.0}) == ["ge", "le"]
    assert violated(cuts, {0: 3.0, 1: 1.0}) == []


@pytest.mark.parametrize("name", FAST)
def test_every_cut_holds_at_every_plan_of_the_uncut_model(name, monkeypatch):
    prob, cat = load_problem(PROBLEMS / name)
    inst = build_instance(prob, cat)
    cuts = cut_rows(build_milp(inst))
    assert cuts, "no cover cuts on a bundled problem"
    plain = without_cuts(inst, monkeypatch)
    forced = [(job, c.name) for job, choices in plain.choices.items() if len(choices) > 1 for c in choices]
    checked = 0
    for job, choice in [(None, None), *forced]:
        milp = build_milp(inst)  # add_cover_cuts is patched out: the plain model
        if job is not None:
            for c in milp.choices[job]:
                flag = milp.sites[job, c.name]
                flag.lower_bound = flag.upper_bound = float(c.name == choice)
        try:
            sol = solve_milp(milp, time_limit=60)
        except NoSolution:
            continue
        values = {v.index: sol.value(v) for v in milp.model.get_variables()}
        assert not violated(cuts, values), (job, choice)
        checked += 1
    assert checked >= 1 + len(forced) // 2


def lp_bound(milp) -> float:
    for var in milp.model.get_variables():
        var.is_integral = False
    return solve_milp(milp).objective


def test_the_cuts_close_the_seed_problems_lp_gap(monkeypatch):
    """Seed 000: the LP rents 4.8 monthly nodes where the plan needs 5; rounded, the LP
    bound is the optimum (295,824 → 307,180 CNY)."""
    prob, cat = load_problem(PROBLEMS / "seed-7b-200b-30d.yaml")
    inst = build_instance(prob, cat)
    with_cuts = lp_bound(build_milp(inst))
    plain = lp_bound(without_cuts(inst, monkeypatch))
    assert plain < 300_000 < with_cuts
    assert with_cuts == pytest.approx(307_180, rel=1e-6)


def test_work_slack_drops_the_jobs_cuts():
    """why's elastic model lets work go undone; a cut rounding the full need would forbid it."""
    prob, cat = load_problem(PROBLEMS / "seed-7b-200b-30d.yaml")
    milp = build_milp(build_instance(prob, cat))
    job = prob.jobs[0].name
    assert milp.cover[job]
    slack = milp.model.new_num_var(0, math.inf, "slack")
    add_work_slack(milp, job, slack)
    assert all(milp.rows[name].lower_bound == -math.inf and milp.rows[name].upper_bound == math.inf
               for name in milp.cover[job])
    # with nothing rented, the slack carries the whole need and the model stays feasible
    for var in [*milp.nodes.values(), *milp.contracts.values()]:
        var.upper_bound = 0
    milp.model.minimize(slack)
    assert solve_milp(milp).value(slack) == pytest.approx(milp.inst.required[job], rel=1e-9)


def test_mir_coefficients_round_up():
    f = 0.3
    assert cover._mir(2.0, f) == 2.0
    assert cover._mir(2.1, f) == pytest.approx(2 + math.ceil(1000 / 3) / 1000)
    assert cover._mir(2.5, f) == 3.0
    assert cover._mir(0.01, f) >= 0.01 / f


def test_big_models_get_no_cuts(monkeypatch):
    """At BIG_MODEL_VARIABLES (solver.milp.core) or more the rows slowed the first plans; they are left out."""
    prob, cat = load_problem(PROBLEMS / "seed-7b-200b-30d.yaml")
    inst = build_instance(prob, cat)
    assert build_milp(inst).cover
    monkeypatch.setattr(cover, "BIG_MODEL_VARIABLES", 100)
    milp = build_milp(inst)
    assert not milp.cover and not any(name.startswith("Cover-") for name in milp.rows)


# --------------------------------------------------------------------------------------
# Volume discounts lift the cuts (issue 33)
# --------------------------------------------------------------------------------------

def _discount_case(nodes_needed: float):
    """One job needing `nodes_needed` monthly nodes for its 10 days, on an offer whose
    discount starts at 4 nodes (32 GPUs), beside a dearer hourly offer."""
    from tests.builders import catalog, job, offer, problem
    cat = catalog(offer("m", mode="monthly", per="node", price=30_000, gpus_per_node=8, max_nodes=8,
                        discount_from_gpus=32, discount_pct=20),
                  offer("h", price=120.0, gpus_per_node=8, max_nodes=8))
    prob = problem(job("j", days=nodes_needed * 8 * 10, deadline_days=10),
                   horizon_days=10, redundancy=0)
    return prob, cat


def without_lift(inst, monkeypatch):
    monkeypatch.setattr(cover, "LIFT_DISCOUNTS", False)
    milp = build_milp(inst)
    monkeypatch.setattr(cover, "LIFT_DISCOUNTS", True)
    return milp


def test_the_lift_closes_the_discounts_gap_and_keeps_the_optimum(monkeypatch):
    """3 nodes needed (2.5 nodes' work), discount from 4 at 20 %: the plain cut lets the LP take 3 discounted
    nodes at y = 0.75 (72,000); the lifted rows are the hull here (x ≥ 3 + y, v ≥ 3·(1 − y)), so the LP bound is
    the optimum, 3 nodes at full price (90,000) against 4 discounted ones (96,000)."""
    prob, cat = _discount_case(2.5)
    inst = build_instance(prob, cat)
    monkeypatch.setattr(cover, "LIFT_DISCOUNTS", False)
    plain_lp, plain_opt = lp_bound(build_milp(inst)), solve_milp(build_milp(inst)).objective
    monkeypatch.setattr(cover, "LIFT_DISCOUNTS", True)
    lifted_lp, lifted_opt = lp_bound(build_milp(inst)), solve_milp(build_milp(inst)).objective
    assert plain_opt == pytest.approx(lifted_opt, rel=1e-9) == pytest.approx(90_000, rel=1e-6)
    assert plain_lp == pytest.approx(72_000, rel=1e-6)
    assert lifted_lp == pytest.approx(90_000, rel=1e-6)


@pytest.mark.parametrize("needed", [0.5, 2.2, 3.5, 3.99, 4.0, 4.3, 7.6])
def test_lifted_cuts_hold_at_every_integer_plan_of_one_configuration(needed, monkeypatch):
    """Every plan of the uncut model with x contracts (0..8 at day 0) and the discount flag
    as the rows allow: each lifted cut holds wherever the plan does the work."""
    prob, cat = _discount_case(needed)
    inst = build_instance(prob, cat)
    monkeypatch.setattr(cover, "LIFT_DISCOUNTS", True)
    cuts = cut_rows(build_milp(inst))
    assert len(cuts) > len(cut_rows(without_lift(inst, monkeypatch))) or needed >= 4
    plain = without_cuts(inst, monkeypatch)
    x = plain.contracts["m:ib_hdr", 0]
    y, v = plain.discount_flag["m:ib_hdr", 0], plain.full_price["m:ib_hdr", 0]
    checked = 0
    for nodes in range(9):
        for flag in (0, 1):
            if flag and nodes < 4:
                continue
            for var, value in ((x, nodes), (y, flag), (v, 0 if flag else nodes)):
                var.lower_bound = var.upper_bound = value
            try:
                sol = solve_milp(plain)
            except NoSolution:
                continue
            values = {var.index: sol.value(var) for var in plain.model.get_variables()}
            assert not violated(cuts, values), (nodes, flag)
            checked += 1
    assert checked >= 2


@FEW_EXAMPLES
@given(instances(Knobs(discount=True, extras=True)))
def test_lifted_cuts_keep_the_optimum_of_small_generated_problems(inst):
    """With the lift on, the optimum is the unlifted model's (monthly contracts of 1-3 nodes,
    discounts from 1-4 GPUs on 1-2-GPU nodes: lifts where a contract alone can cover the need).
    Against the model without the cut, not test_bruteforce's enumeration: that one bills
    storage from the job's start, the model from its first GPU day at a site."""
    prob, cat = inst
    built = build_instance(prob, cat)
    costs, rows = [], []
    for lift in (False, True):
        cover.LIFT_DISCOUNTS = lift
        try:
            milp = build_milp(built)
            rows.append(len(cut_rows(milp)))
            costs.append(solve_milp(milp).objective)
        except NoSolution:
            costs.append(None)
        finally:
            cover.LIFT_DISCOUNTS = False
    event("lifted" if rows[1] > rows[0] else "nothing to lift")
    assert (costs[0] is None) == (costs[1] is None)
    if costs[0] is not None:
        assert costs[1] == pytest.approx(costs[0], rel=1e-6, abs=0.01)
