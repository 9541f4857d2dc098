"""The steps of a big time-limited solve that work on a plan before the whole model does
(solver.engine.big, solver.engine.repair): improving the first plan while the LP relaxation still runs, and
topping up the rentals of a plan whose single-node jobs do not fit their nodes."""

import time

import pytest

from tests.builders import catalog, hourly, job, problem
from solver.api import build
from solver.engine import big, repair, warmstart
from solver.engine import solve as solve_module
from solver.engine.backends import Incumbent
from solver.engine.export import to_mathopt
from solver.engine.run import solve_once
from solver.engine.warmstart import REPAIR_SECONDS
from solver.milp.extract import extract_plan
from solver.milp.packing import add_node_packing, occupied, unpacked
from solver.verify import verify_plan

PRICES = {"A": 10.0, "B": 9.0, "C": 8.0, "D": 7.0, "E": 6.0, "F": 5.0}   # CNY per GPU-hour, one vendor each


class Lp:
    """The LP relaxation's child as `_while_lp_runs` sees it: still running, or done."""

    def __init__(self, running: bool):
        self.running = running


def _five_vendors():
    cat = catalog(*(hourly(name, price, vendor=f"v{name}") for name, price in PRICES.items()))
    prob = problem(job("a", days=16, deadline_days=2), horizon_days=2)
    return prob, cat


def _dearest_plan(model, milp):
    """A plan of the whole model from the dearest vendor alone (a first plan gone wrong)."""
    keep = {i for i, opt in enumerate(milp.inst.options) if opt.config.startswith("A:")}
    return big._restricted_plan(model, milp, keep, time.perf_counter() + 30, None, False)


def test_the_first_plan_is_improved_while_the_lp_runs():
    # Target synthetic instance, seed 5, 60 s: the first plan was 8.07M CNY, the LP came too
    # late for the guided step, and the solve ended at 7.34M; now the wait for the LP is spent
    # on the first plan's cheapest domains and more.
    prob, cat = _five_vendors()
    _, milp = build(prob, cat)
    model = to_mathopt(milp.model)
    dear = _dearest_plan(model, milp)
    kept = []
    real = big._restricted_plan

    def restricted(model, milp, keep, *args):
        kept.append({milp.inst.options[i].config[0] for i in keep})
        return real(model, milp, keep, *args)

    until = time.perf_counter() + 30
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(big, "_restricted_plan", restricted)
        better = big._while_lp_runs(model, milp, Lp(running=True), dear, until, 60, None, False)
    assert better.cost == pytest.approx(dear.cost * PRICES["F"] / PRICES["A"])
    assert kept == [{"A", "C", "D", "E", "F"}]   # the four cheapest vendors and the plan's (not B)


def test_nothing_is_improved_once_the_lp_is_in_or_too_little_time_is_left():
    prob, cat = _five_vendors()
    _, milp = build(prob, cat)
    model = to_mathopt(milp.model)
    dear = _dearest_plan(model, milp)
    later = time.perf_counter() + 30
    assert big._while_lp_runs(model, milp, Lp(running=False), dear, later, 60, None, False) is dear
    soon = time.perf_counter() + warmstart.WIDER_MIN_SECONDS / 2
    assert big._while_lp_runs(model, milp, Lp(running=True), dear, soon, 60, None, False) is dear


def _three_single_node_jobs(max_nodes: int):
    """Jobs of 4, 6 and 6 GPUs, each inside one 8-GPU ethernet node for a day: 16 GPUs fit two
    nodes by count, but the bundles need three."""
    cat = catalog(hourly("H", 6, max_nodes=max_nodes, interconnect=("ethernet",)))
    prob = problem(job("a", days=4, deadline_days=1), job("b", days=6, deadline_days=1), job("c", days=6, deadline_days=1),
                   horizon_days=1)
    return prob, cat


def _unpacked_first_plan(prob, cat):
    _, milp = build(prob, cat)
    first = solve_once(milp, "highs", None, None, False, True)
    cells = unpacked(milp, first.value)
    assert cells   # two nodes by count
    add_node_packing(milp, occupied(milp, first.value))
    return milp, first, cells


def test_a_plan_that_does_not_pack_is_topped_up_where_it_failed():
    prob, cat = _three_single_node_jobs(max_nodes=3)
    milp, first, cells = _unpacked_first_plan(prob, cat)
    topped = repair._topped_up(milp, first, "highs", False, cells, time.perf_counter() + 10)
    assert topped is not None and not unpacked(milp, topped.value)
    assert topped.objective == pytest.approx(first.objective * 3 / 2)   # a third node, same replicas
    assert verify_plan(prob, cat, extract_plan(topped)) == []


def test_no_top_up_where_the_configuration_has_no_node_to_add():
    prob, cat = _three_single_node_jobs(max_nodes=2)
    milp, first, cells = _unpacked_first_plan(prob, cat)
    assert repair._topped_up(milp, first, "highs", False, cells, time.perf_counter() + 10) is None


def test_a_plan_that_does_not_pack_must_be_cheaper_by_the_margin(monkeypatch):
    # Target synthetic instance, seed 4, 60 s: a wider step's 2,046,668 CNY that did not pack
    # replaced a first plan of 2,051,952 that did, and its repair cost 2,153,502.
    plain, loose = Incumbent({}, 100.0), Incumbent({1: 1.0}, 0.0)
    monkeypatch.setattr(big, "_unpacked_plan", lambda milp, plan: 1 in plan.values)
    margin = big.UNPACKED_MARGIN
    loose.cost = 100.0 * (1 - margin / 2)
    assert big._cheaper(None, loose, plain) is plain
    loose.cost = 100.0 * (1 - 2 * margin)
    assert big._cheaper(None, loose, plain) is loose
    assert big._cheaper(None, None, loose) is loose and big._cheaper(None, plain, None) is plain


def test_the_repair_frees_every_rental_when_the_top_up_finds_nothing(monkeypatch):
    prob, cat = _three_single_node_jobs(max_nodes=3)
    milp, first, cells = _unpacked_first_plan(prob, cat)
    monkeypatch.setattr(repair, "_topped_up", lambda *args: None)
    repaired = repair.repair_plan(milp, first, "highs", first.bound, False, 0.0, cells)
    assert repaired is not None and not unpacked(milp, repaired.value)
    assert repaired.objective == pytest.approx(first.objective * 3 / 2)


def test_a_big_solve_improves_its_first_plan_while_the_lp_runs(monkeypatch):
    # Through the whole solve (solver.api.solve_built → big.run_big): the first plan is the dearest
    # vendor's, the LP never comes, and the step between them is what finds the cheapest.
    from solver.api import solve_built

    monkeypatch.setattr(warmstart, "WARM_START_VARIABLES", 0)
    monkeypatch.setattr(warmstart, "GUIDED_VARIABLES", 0)

    class OutLp:
        """An LP relaxation that is still running and has nothing when asked."""

        def __init__(self, model, seconds, **kwargs):
            pass

        running, infeasible = True, False

        def wait(self, seconds):
            return None

        def stop(self):
            pass

    steps = []
    real_step = big._while_lp_runs

    def step(model, milp, lp, hint, until, *args):
        steps.append((hint.cost, until - time.perf_counter()))
        return real_step(model, milp, lp, hint, until, *args)

    prob, cat = _five_vendors()
    inst, milp = build(prob, cat)
    monkeypatch.setattr(big, "first_plan", lambda model, milp, *a: _dearest_plan(model, milp))
    monkeypatch.setattr(big, "BackgroundRelaxation", OutLp)
    monkeypatch.setattr(big, "_while_lp_runs", step)
    monkeypatch.setattr(big, "cores", lambda: 2)
    limit = 30
    plan = solve_built(inst, milp, time_limit=limit)
    (dear, left), = steps
    assert dear == pytest.approx(plan.total_cost * PRICES["A"] / PRICES["F"])   # the first plan went in
    assert left <= limit - REPAIR_SECONDS   # the repair's time is kept back
    assert verify_plan(prob, cat, plan) == []


def _rounds_after_a_repair_late_in_the_limit(guided_variables: int) -> list[float]:
    """Solve the three single-node jobs (their first plan does not pack) with a 100-s limit
    whose first round appears to take 95 s; the time limit of every solve, in order."""
    from types import SimpleNamespace

    from solver.api import solve_built

    calls, jump = [], [0.0]

    def once(milp, backend, time_limit, *args, **kwargs):
        calls.append(time_limit)
        solution = solve_once(milp, backend, time_limit, *args, **kwargs)
        jump[0] = 95.0
        return solution

    clock = SimpleNamespace(perf_counter=lambda: time.perf_counter() + jump[0])
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(warmstart, "GUIDED_VARIABLES", guided_variables)
        for module in (solve_module, repair):   # the solve's rounds and the repair's solves
            mp.setattr(module, "solve_once", once)
            mp.setattr(module, "time", clock)
        prob, cat = _three_single_node_jobs(max_nodes=3)
        inst, milp = build(prob, cat)
        plan = solve_built(inst, milp, time_limit=100)
    assert plan.total_cost > 0 and verify_plan(prob, cat, plan) == []
    return calls


def test_no_whole_model_round_of_a_big_model_after_a_late_repair():
    # Target synthetic instance, seed 3, 60 s: the round after the repair, given 4.5 s, took 19 s.
    small = _rounds_after_a_repair_late_in_the_limit(guided_variables=10**9)
    big = _rounds_after_a_repair_late_in_the_limit(guided_variables=0)
    assert len(big) == len(small) - 1     # the same first round and repair, without the last round
    assert big == pytest.approx(small[:-1], abs=0.5)
    assert small[-1] < 100 * warmstart.FINAL_SHARE   # that round had under a tenth of the limit
