"""The probe engine (solver/probes/): a probe on the one built model gives what a re-solve of
the problem with the same change gives, undoes its change, starts only from plans that meet
the changed model, and answers a tightening probe without a solve only when the base plan
proves it."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest
from ortools.linear_solver.python import model_builder as mb

from solver import api
from solver.load import load_problem
from solver.milp.feasible import ModelNumbers
from solver.probes import AtLeast, Probes, RowBounds, VarBounds
from tests import builders as b

ROOT = Path(__file__).resolve().parents[1]


def _nodes(milp, offer):
    return [v for (key, _), v in milp.nodes.items() if milp.inst.configs[key].offer.offer == offer]


def force_offer(offer):
    """The old path's constrain function: a row asking one node of the offer, on a fresh build."""
    def constrain(milp):
        milp.add_row(f"Test-force-{offer}", mb.LinearExpr.sum(_nodes(milp, offer)) >= 1)
    return constrain


def exclude_offer(offer):
    def constrain(milp):
        nodes = _nodes(milp, offer)
        if nodes:
            milp.add_row(f"Test-exclude-{offer}", mb.LinearExpr.sum(nodes) <= 0)
    return constrain


def _two_offers():
    """A job that fits either of two offers: cheap A (4 nodes at most) and dearer B."""
    cat = b.catalog(b.hourly("A", 10.0, max_nodes=4), b.hourly("B", 14.0, max_nodes=10))
    prob = b.problem(b.job(deadline_days=10, days=200), horizon_days=10)
    return prob, cat


def _proto(milp) -> bytes:
    return milp.model.export_to_proto().SerializeToString()


def test_leave_out_and_force_equal_a_re_solve_of_the_problem():
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    base = eng.solve_base()
    assert base.total_cost == b.solve(prob, cat).total_cost
    for offer in ("A", "B"):
        without = eng.probe(eng.leave_out(offer))
        assert without.status == "optimal"
        assert without.cost == api.solve_problem(prob, cat, constrain=exclude_offer(offer)).total_cost
        forced = eng.probe(eng.force(offer))
        assert forced.cost == api.solve_problem(prob, cat, constrain=force_offer(offer)).total_cost


@pytest.mark.parametrize("path", ["problems/seed-13b-100b.yaml", "problems/seed-7b-200b-30d.yaml"])
def test_bundled_problems_probes_equal_re_solves(path):
    prob, cat = load_problem(ROOT / path)
    eng = Probes(prob, cat)
    base = eng.solve_base()
    assert base.total_cost == api.solve_problem(prob, cat).total_cost
    used = sorted({r.offer for r in base.schedule.rentals} | {c.offer for c in base.schedule.contracts})
    for offer in used[:2]:
        answer = eng.probe(eng.leave_out(offer))
        assert answer.status == "optimal"
        again = api.solve_problem(prob, cat, constrain=exclude_offer(offer))
        assert answer.cost == pytest.approx(again.total_cost, abs=0.01)


def test_a_probe_undoes_its_changes():
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    eng.solve_base()
    before = _proto(eng.milp)
    eng.probe(eng.leave_out("A"))
    eng.probe(eng.force("B"))  # adds its row once; switched off after
    eng.probe(RowBounds("budget", True, list(eng.milp.rows.values())[:1], upper=0.0))
    after = eng.milp.model.export_to_proto()
    forced = [c for c in after.constraint if c.name.startswith("Probe-force-")]
    assert forced and all(c.lower_bound == -math.inf for c in forced)
    del after.constraint[-len(forced):]
    assert after.SerializeToString() == before


def test_a_tightening_probe_the_base_plan_meets_needs_no_solve():
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    base = eng.solve_base()
    solves = eng.solves
    answer = eng.probe(eng.force("A"))  # the base plan rents A: forcing it changes nothing
    assert "A" in b.offers_of(base)
    assert answer.status == "optimal" and not answer.solved and eng.solves == solves
    assert answer.cost == base.total_cost


def test_a_probe_that_cuts_the_base_plan_is_solved_from_a_plan_that_meets_it():
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    base = eng.solve_base()
    without_a = eng.leave_out("A")
    undo = without_a.apply(eng.milp)
    try:
        assert not ModelNumbers.read(eng.milp.model).meets(eng.known[0])  # the base plan rents A
        assert eng._start() is None
    finally:
        undo()
    answer = eng.probe(without_a)
    assert answer.solved and answer.cost > base.total_cost
    assert b.offers_of(answer.plan) == {"B"}


def test_loosening_probes_are_not_bounded_by_the_base():
    """A change that is not a tightening (a bound raised) may make the optimum cheaper: the base
    bound must not be used, and the answer is the re-solve's."""
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    nodes_a = eng.offer_nodes("A")
    for v in nodes_a:  # the base model as built, with A held to one node
        v.upper_bound = 1.0
    eng.solve_base()
    cheaper = eng.probe(VarBounds("A back to its stock", False, nodes_a, upper=4.0))
    assert cheaper.cost == b.solve(prob, cat).total_cost
    assert cheaper.cost < eng.base.cost
    assert eng.probe().cost == eng.base.cost  # undone: A held to one node again


def test_an_infeasible_probe_says_so_and_leaves_the_engine_usable():
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    base = eng.solve_base()
    answer = eng.probe(eng.leave_out("A"), eng.leave_out("B"))
    assert answer.status == "infeasible" and answer.plan is None and answer.low == math.inf
    assert eng.probe().cost == base.total_cost


def test_answers_bound_the_optimum():
    """Every answer's interval holds the re-solved optimum (low ≤ exact ≤ cost)."""
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    eng.solve_base()
    for change in (eng.leave_out("A"), eng.force("B"), AtLeast("two B nodes", True, "Probe-two-B",
                                                               eng.offer_nodes("B"), 2.0)):
        answer = eng.probe(change)
        low, cost = answer.interval()
        assert low <= cost + 1e-6
        assert answer.proven


def test_model_numbers_reject_a_plan_off_a_bound_or_a_row():
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    eng.solve_base()
    numbers = ModelNumbers.read(eng.milp.model)
    plan = dict(eng.known[0])
    assert numbers.meets(plan)
    some_node = eng.offer_nodes("A")[0]
    assert not numbers.meets({**plan, some_node.index: some_node.upper_bound + 1})
    replicas = [v for v in eng.milp.replicas.values() if plan.get(v.index, 0) > 0]
    assert not numbers.meets({**plan, **{v.index: 0.0 for v in replicas}})  # the work row no longer met


def test_the_engine_builds_one_instance_and_one_model(monkeypatch):
    built = b.count_builds(monkeypatch)
    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    eng.solve_base()
    for offer in ("A", "B"):
        eng.probe(eng.leave_out(offer))
        eng.probe(eng.force(offer))
    assert built == {"instance": 1, "model": 1}


def _stack_cases():
    from tests.milp.test_stacks import _cheaper_cann, _two_stacks
    yield _two_stacks()
    yield _cheaper_cann()
    yield _cheaper_cann(stacks=["cuda"])
    for path in ("problems/seed-7b-200b-30d.yaml", "problems/hybrid-burst.yaml"):
        yield load_problem(ROOT / path)


@pytest.mark.parametrize("case", range(5))
def test_the_engine_plan_is_solve_problems_plan(case):
    """Probes.plan() (the solve command's path) returns what solver.api.solve_problem returns:
    same cost, schedule and stack-switch note, on problems with and without a switch of stack."""
    prob, cat = list(_stack_cases())[case]
    mine, theirs = Probes(prob, cat).plan(), api.solve_problem(prob, cat)
    assert mine.total_cost == theirs.total_cost
    assert mine.schedule == theirs.schedule
    assert mine.stack_switch == theirs.stack_switch


def test_a_relaxed_probe_is_the_lp_relaxation_and_puts_integrality_back():
    from solver.probes import Relaxed
    prob, cat = load_problem(ROOT / "problems" / "seed-13b-100b.yaml")
    eng = Probes(prob, cat)
    eng.solve_base()
    before = _proto(eng.milp)
    known = len(eng.known)
    lp = eng.probe(Relaxed("LP", False), verify=False, backend="highs")
    inst = api.build_instance(prob, cat)
    want = api.solve_milp(api.build_milp(inst, relax=True), backend="highs").objective
    assert lp.plan is None and lp.solution.objective == pytest.approx(want, rel=1e-9)
    assert lp.solution.objective <= eng.base.cost + 1e-6
    assert _proto(eng.milp) == before and len(eng.known) == known  # no LP point kept as a start


def test_a_probe_after_the_budget_reads_nothing_and_says_out_of_time(monkeypatch):
    """Spent: the probe neither looks for a start among the known plans (reading the model's numbers
    took ~0.1 s a probe on finetune-sprint-30d: why's hundred unsolved runners-up ran 10 s past the
    budget) nor solves; with time left the same probe is answered."""
    from solver.clock import OutOfTime

    prob, cat = _two_offers()
    eng = Probes(prob, cat)
    eng.solve_base()
    reads = []
    real = ModelNumbers.read
    monkeypatch.setattr(ModelNumbers, "read", classmethod(lambda cls, model: reads.append(1) or real(model)))
    eng.clock.stop_at = time.perf_counter() - 1.0
    with pytest.raises(OutOfTime):
        eng.probe(eng.leave_out("B"))
    assert reads == [] and eng.solves == 1
    eng.clock.stop_at = None
    assert eng.probe(eng.leave_out("B")).status == "optimal" and reads


def test_the_engine_and_solve_problem_say_no_plan_in_the_same_words(monkeypatch):
    """Issue 44: solve_problem and the engine's plan (what `solve` runs) each had their own stranded-job
    check and their own words for a solve that found no plan; both take solver.api's one copy now
    (carried, no_plan)."""
    from solver.errors import Infeasible

    def refusals(prob, cat, **kw) -> list[tuple[str, list[str], bool]]:
        said = []
        for run in (lambda: api.solve_problem(prob, cat, **kw), lambda: Probes(prob, cat, **kw).plan()):
            with pytest.raises(Infeasible) as caught:
                run()
            said.append((str(caught.value), caught.value.reasons, caught.value.proven))
        return said

    late = b.catalog(b.hourly("A", 10.0, lead_time_days=20))
    stranded = refusals(b.problem(b.job(deadline_days=10, days=20), horizon_days=10), late)
    assert stranded[0] == stranded[1] and stranded[0][0] == "no offer can carry job j" and stranded[0][2]
    assert any("lead_time" in reason for reason in stranded[0][1])

    def no_plan(*args, **kwargs):
        raise api.NoSolution("no plan found within 5 s (not proven infeasible)", proven=False)
    monkeypatch.setattr(api, "solve_milp", no_plan)
    prob, cat = _two_offers()
    unproven = refusals(prob, cat, time_limit=5.0)
    assert unproven[0] == unproven[1]
    assert unproven[0][0] == ("no plan found within 5 s (not proven infeasible): raise --time-limit, "
                              "or try another --backend") and not unproven[0][2]
