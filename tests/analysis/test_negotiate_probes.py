"""negotiate's probes (solver.analysis.negotiate_probes) answer what re-solving the edited problem
answers, and a negotiate run builds one Instance and one model.

The old answers are computed here the way negotiate computed them before issue 34: the whole
problem solved again through solver.api.solve_problem, at the price (with_price), with the offer
forced in or left out by a `constrain` row, the budget dropped for those two."""

from __future__ import annotations

import pytest
from ortools.linear_solver.python import model_builder as mb

from solver import api
from solver.analysis.negotiate import _reach, _stock, negotiate, node_days, reason_kinds
from solver.analysis.negotiate_probes import Asker, Setup, build_engine, with_price
from solver.clock import RunClock
from solver.errors import Infeasible
from solver.load import load_problem
from tests.builders import ROOT, catalog, count_builds, hourly, job, monthly, problem

GAP = 1e-7


def force_offer(offer: str):
    def constrain(milp) -> None:
        nodes = [v for (key, _), v in milp.nodes.items() if milp.inst.configs[key].offer.offer == offer]
        milp.add_row(f"Negotiate-force-{offer}", mb.LinearExpr.sum(nodes) >= 1)
    return constrain


def exclude_offer(offer: str):
    def constrain(milp) -> None:
        nodes = [v for (key, _), v in milp.nodes.items() if milp.inst.configs[key].offer.offer == offer]
        if nodes:
            milp.add_row(f"Negotiate-exclude-{offer}", mb.LinearExpr.sum(nodes) <= 0)
    return constrain


def old_answer(prob, cat, offer: str, price: float, how: str):
    """negotiate's Session.at before issue 34: a whole solve of the edited problem (its plan)."""
    constrain = {"free": None, "forced": force_offer(offer), "without": exclude_offer(offer)}[how]
    if how != "free":
        prob = prob.model_copy(update={"budget": None})
    try:
        return api.solve_problem(prob, with_price(cat, offer, price), constrain=constrain, gap=GAP)
    except Infeasible:
        return None


CASES = [  # bundled problems and offers: one in the plan, one not; problems with a budget
    ("problems/seed-7b-200b-30d.yaml", ["vnet-yz-a100-80-8x-monthly", "bce-yz-a100-80-8x-monthly"]),
    # the larger two re-solve tens of times the old way (100 s together): `-m slow`
    pytest.param("problems/bench/startup-launch-60d.yaml", None, marks=pytest.mark.slow),
    pytest.param("problems/seed-13b-100b.yaml", ["bce-yz-a100-80-8x-hourly", "vnet-yz-a100-80-8x-monthly"],
                 marks=pytest.mark.slow),
]


def _engine(prob, cat):
    setup = Setup(prob, cat, reach=_reach(prob, list(cat.offers.values()), 7),
                  stock=_stock(prob, cat, list(cat.offers.values()), 2), forced=tuple(sorted(cat.offers)), gap=GAP)
    probes, shut = build_engine(setup, RunClock(None, None, least=0.0))
    asker = Asker(probes, setup, shut)
    probes.solve_base()
    asker.adopt_base(probes.base)
    return asker


@pytest.mark.parametrize("path, offers", CASES)
def test_probe_answers_equal_the_old_re_solves(path, offers):
    prob, cat = load_problem(ROOT / path)
    asker = _engine(prob, cat)
    base = asker.probes.base.plan
    assert base.total_cost == pytest.approx(api.solve_problem(prob, cat, gap=GAP).total_cost, rel=1e-9)
    used = sorted({a.offer for a in base.allocations})
    if offers is None:  # one offer in the plan, one other some job can use
        others = sorted({asker.probes.inst.configs[o.config].offer.offer for o in asker.probes.inst.options} - set(used))
        offers = [used[0], others[0]]
    for offer in offers:
        price = cat.offers[offer].price
        for how, p in (("without", price), ("forced", price * 0.9), ("free", price * 0.8), ("free", price * 1.1)):
            asker.fresh()
            new = asker.at(offer, p, how)
            old = old_answer(prob, cat, offer, p, how)
            assert (new is None) == (old is None), (offer, how, p)
            if new is not None:
                assert new.cost == pytest.approx(old.total_cost, rel=1e-7, abs=0.01), (offer, how, p)
            if new is not None and how != "forced":   # what replaces it, the volume taken: the same plan
                horizon = prob.horizon_days
                assert node_days(new.plan, cat, horizon) == pytest.approx(node_days(old, cat, horizon)), (offer, how)


def test_a_negotiation_builds_one_instance_and_one_model(monkeypatch):
    """Issue 34: one Instance and one model per command, every question a probe on them (a lever
    included: power, lead time and stock levers are deltas on the one model)."""
    counts = count_builds(monkeypatch)
    prob = problem(job("j", days=100, deadline_days=10, single_site=False), horizon_days=10)
    cat = catalog(hourly("a", 4.0, max_nodes=1), hourly("b", 6.0, vendor="v2", max_nodes=1, lead_time_days=3),
                  monthly("m", 9000.0, vendor="v3", max_nodes=1))
    result = negotiate(prob, cat, lead_days=2, nodes=1, jobs=1)
    assert {lv.kind for lv in result.levers} >= {"availability", "lead_time"}
    assert {t.offer: t.status for t in result.offers} == {"a": "in_plan", "b": "in_plan", "m": "not_in_plan"}
    assert result.solves > 5
    assert counts == {"instance": 1, "model": 1}


def _old_usability(prob, cat):
    """Which offers some job can use, and why not, as negotiate read them before issue 34: from an
    Instance of the written problem."""
    from collections import defaultdict
    inst = api.build_instance(prob, cat)
    usable = {inst.configs[o.config].offer.offer for o in inst.options}
    reasons = defaultdict(dict)
    for job, exclusions in inst.excluded.items():
        for reason in exclusions:
            reasons[inst.configs[reason.config].offer.offer].setdefault(reason.kind, f"{job}: {reason.text}")
    why = {name: "; ".join(reasons[name].values()) or "no job can use it"
           for name in cat.offers if name not in usable and name in {c.offer.offer for c in inst.configs.values()}}
    return usable, why


@pytest.mark.parametrize("path", ["problems/hybrid-burst.yaml", "problems/bench/finetune-sprint-30d.yaml"])
def test_the_offers_a_job_can_use_are_read_as_written(path):
    """The engine is built with the levers' extra stock (where no job's layout changes with it) and
    shorter lead times; which offers a job can use, and why the others cannot, are still those of
    the written catalog."""
    from solver.analysis.negotiate import _usability
    prob, cat = load_problem(ROOT / path)
    setup = Setup(prob, cat, reach=_reach(prob, list(cat.offers.values()), 7),
                  stock=_stock(prob, cat, list(cat.offers.values()), 2), gap=GAP)
    probes, shut = build_engine(setup, RunClock(None, None, least=0.0))
    usable, why, _ = _usability(Asker(probes, setup, shut))
    old_usable, old_why = _old_usability(prob, cat)
    assert usable == old_usable
    assert set(why) >= set(old_why)
    for offer, words in old_why.items():
        assert reason_kinds(why[offer]) == reason_kinds(words), offer
        if "capacity" not in words:   # a domain's capacity is worded from the stock the model was built with:
            assert why[offer] == words   # "does at most X EFLOP" stays true, X an upper bound of the written one
