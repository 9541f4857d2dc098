"""The LP relaxation in a child process (solver.engine.relaxation), and what big solves do with it.

What must hold: the child's value is the LP relaxation's optimum, solved independently
here through the model builder; its bound never exceeds an integer plan's cost; a child
out of time gives nothing rather than a wrong number; stopping kills the child and
removes its files; the plan of a big time-limited solve carries the LP's bound; the LP's
domains restrict the guided plan; on one core no child is started.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from tests.builders import ROOT, catalog, hourly, job, problem
from ortools.linear_solver.python import model_builder as mb
from tests.engine.test_warmstart import restricted_solve, two_jobs_one_cheap_node

from solver.api import build
from solver.engine import big as big_module
from solver.engine import warmstart
from solver.engine.backends import Incumbent
from solver.engine.relaxation import BOUND_SLACK, BackgroundRelaxation, full_discount
from solver.engine.solve import solve_milp
from solver.load import load_problem
from solver.milp.build import build_milp
from solver.milp.capacity import discount_table
from solver.milp.extract import extract_plan
from solver.milp.solution import NoSolution
from solver.verify import check_plan

BUNDLED = ROOT / "problems"


def lp_value(inst) -> float:
    """The LP relaxation's optimum, solved in this process by dual simplex (no child, no IPM)."""
    return solve_milp(build_milp(inst, relax=True)).objective


def test_the_child_solves_the_lp_relaxation():
    prob, cat = load_problem(BUNDLED / "seed-13b-100b.yaml")
    inst, milp = build(prob, cat)
    with BackgroundRelaxation(milp.model, 60) as lp:
        relax = lp.wait(60)
    assert relax is not None
    assert relax.value == pytest.approx(lp_value(inst), rel=1e-6)
    assert len(relax.values) == milp.model.num_variables
    optimum = solve_milp(milp).objective
    assert relax.bound <= optimum
    assert relax.bound == pytest.approx(relax.value * (1 - BOUND_SLACK))


def large_synthetic():
    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    from bench_milp import generate, parse_sizes

    return generate(parse_sizes("large")[0], 1)


def test_a_child_out_of_time_gives_no_relaxation():
    """The large synthetic instance's LP takes about 6 s; 2 s is not enough, and under a
    second the child does not even try."""
    _, milp = build(*large_synthetic())
    for seconds in (2.0, 0.5):
        with BackgroundRelaxation(milp.model, seconds) as lp:
            assert lp.wait(60) is None


def test_stop_kills_the_child_and_removes_its_files():
    prob, cat = load_problem(BUNDLED / "debug-then-train.yaml")
    _, milp = build(prob, cat)
    lp = BackgroundRelaxation(milp.model, 60)
    folder = Path(lp._dir.name)
    assert (folder / "model.pb").exists()
    lp.stop()
    assert lp._proc.poll() is not None
    assert not folder.exists()


def test_the_lp_shortlist_holds_the_domains_the_lp_uses_and_the_plans():
    prob, cat = two_jobs_one_cheap_node()
    _, milp = build(prob, cat)
    with BackgroundRelaxation(milp.model, 60) as lp:
        relax = lp.wait(60)
    vendors = lambda keep: {milp.inst.configs[milp.inst.options[i].config].offer.vendor for i in keep}
    keep = warmstart.lp_shortlist(milp, relax.values)
    assert vendors(keep) == {"vA", "vB"}
    with pytest.raises(NoSolution):  # one domain per job, ranked by price alone: both on A
        restricted_solve(milp, warmstart.shortlist(milp, 1))
    assert restricted_solve(milp, keep).objective == pytest.approx(solve_milp(milp).objective)
    on_c = solve_with_only(milp, "vC").values
    assert vendors(warmstart.lp_shortlist(milp, relax.values, on_c)) == {"vA", "vB", "vC"}


def solve_with_only(milp, vendor):
    """The cheapest plan that runs every job on `vendor` (a Solution)."""
    keep = {i for i, opt in enumerate(milp.inst.options)
            if milp.inst.configs[opt.config].offer.vendor == vendor}
    return restricted_solve(milp, keep)


@pytest.fixture
def big(monkeypatch):
    """Every model counts as big enough for the LP-guided plan; the whole-model step is
    skipped, so the bound can come only from the LP (restricted solves never report theirs)."""
    monkeypatch.setattr(warmstart, "WARM_START_VARIABLES", 0)
    monkeypatch.setattr(warmstart, "GUIDED_VARIABLES", 0)
    monkeypatch.setattr(warmstart, "FINAL_SHARE", 2.0)


def test_a_big_solve_without_a_whole_model_step_has_the_lp_bound(big):
    prob, cat = load_problem(BUNDLED / "seed-13b-100b.yaml")
    inst, milp = build(prob, cat)
    sol = solve_milp(milp, time_limit=60)
    check_plan(prob, cat, extract_plan(sol))
    assert sol.bound == pytest.approx(lp_value(inst) * (1 - BOUND_SLACK), rel=1e-6)
    assert sol.bound <= sol.objective


def test_a_watcher_hears_the_lp_bound_and_keeps_the_best_of_each(big):
    """The spinner's listener hears the LP's bound when it arrives, and the restricted
    solves' plans after it do not wipe it; plans only fall and bounds only rise."""
    from solver.engine.progress import PROGRESS

    prob, cat = load_problem(BUNDLED / "seed-13b-100b.yaml")
    inst, milp = build(prob, cat)
    heard = []
    PROGRESS.listener = lambda plan, bound: heard.append((plan, bound))
    try:
        sol = solve_milp(milp, time_limit=60)
    finally:
        PROGRESS.listener = None
    bounds = [b for _, b in heard if b is not None]
    plans = [p for p, _ in heard if p is not None]
    assert bounds and bounds[-1] == pytest.approx(sol.bound, rel=1e-9)
    assert sol.bound == pytest.approx(lp_value(inst) * (1 - BOUND_SLACK), rel=1e-6)
    assert bounds == sorted(bounds) and plans == sorted(plans, reverse=True)
    first = next(i for i, (_, b) in enumerate(heard) if b is not None)
    assert all(b is not None for _, b in heard[first:])
    assert plans[-1] >= sol.objective - 1e-6


def test_gpuplan_solve_reports_the_lp_bound_of_a_big_model(big, tmp_path):
    """End to end through the CLI: the JSON's lower bound is the LP relaxation's value."""
    from typer.testing import CliRunner

    from solver.cli import app

    path = BUNDLED / "seed-13b-100b.yaml"
    prob, cat = load_problem(path)
    inst, _ = build(prob, cat)
    result = CliRunner().invoke(app, ["solve", str(path), "--time-limit", "60", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["lower_bound"] == pytest.approx(lp_value(inst), rel=1e-5)
    assert plan["lower_bound"] <= plan["total_cost"]


def test_the_guided_plan_is_the_cheaper_of_the_two(big, monkeypatch):
    """A first plan on the dearest vendor only; the LP-guided solve must improve on it."""
    prob, cat = two_jobs_one_cheap_node()
    _, milp = build(prob, cat)
    optimum = solve_milp(milp).objective
    dear = solve_with_only(milp, "vC")
    monkeypatch.setattr(big_module, "first_plan", lambda *a: Incumbent(dear.values, dear.objective))
    sol = solve_milp(milp, time_limit=60)
    assert sol.objective == pytest.approx(optimum)
    check_plan(prob, cat, extract_plan(sol))


def test_on_one_core_no_child_is_started(big, monkeypatch):
    prob, cat = two_jobs_one_cheap_node()
    _, milp = build(prob, cat)

    def no_child(*a, **k):
        raise AssertionError("a child was started on one core")

    monkeypatch.setattr(big_module, "cores", lambda: 1)
    monkeypatch.setattr(big_module, "BackgroundRelaxation", no_child)
    sol = solve_milp(milp, time_limit=30)
    assert sol.objective == pytest.approx(solve_milp(milp).objective)


def lp_of_proto(proto, folder: Path) -> float:
    model = mb.Model()
    path = folder / "m.pb"
    path.write_bytes(proto.SerializeToString())
    assert model.import_from_proto_file(str(path))
    for var in model.get_variables():
        var.is_integral = False
    solver = mb.Solver("highs")
    assert solver.solve(model) == mb.SolveStatus.OPTIMAL
    return solver.objective_value


def test_the_full_discount_keeps_the_lp_value_with_a_budget_row(tmp_path):
    """debug-then-train with a budget: the nodes at full price v sit in the Budget row too
    (cost ≤ B), where lowering them to 0 can only help; the row itself is left as it is."""
    prob, cat = load_problem(BUNDLED / "debug-then-train.yaml")
    inst, milp = build(prob.model_copy(update={"budget": 250_000}), cat)
    table = discount_table(milp)
    assert len(table) > 0
    proto = milp.model.export_to_proto()
    budget = proto.constraint[milp.rows["Budget"].index]
    assert any(k in set(table[:, 0]) for k in budget.var_index)
    before = dict(zip(budget.var_index, budget.coefficient))
    assert full_discount(proto, table)
    for v, _x, y, _le, cap, _least in table:
        assert proto.variable[int(v)].upper_bound == 0 and proto.variable[int(y)].upper_bound == 0
        assert math.isinf(proto.constraint[int(cap)].lower_bound)  # v ≥ x − X̄·y is gone
    assert dict(zip(budget.var_index, budget.coefficient)) == before
    assert lp_of_proto(proto, tmp_path) == pytest.approx(lp_value(inst), rel=1e-7)


def test_the_full_discount_is_refused_where_a_row_could_break():
    """A row that a larger w could violate (here: the discount total at most 100 CNY) makes
    the substitution unsafe: the proto is left as it was."""
    prob, cat = load_problem(BUNDLED / "debug-then-train.yaml")
    _, milp = build(prob, cat)
    terms = milp.cost["volume_discount"]
    milp.add_row("Cap-discount", mb.LinearExpr.weighted_sum([v for v, _ in terms], [-c for _, c in terms]) <= 100)
    proto = milp.model.export_to_proto()
    before = proto.SerializeToString()
    assert not full_discount(proto, discount_table(milp))
    assert proto.SerializeToString() == before


def test_a_big_model_proven_infeasible_by_its_lp_says_so(big):
    """Three jobs that each need a whole node for all five days, and two nodes in the catalog:
    each job alone fits (so the model is built), no restriction finds a plan and the whole
    model is never tried, but the LP relaxation proves there is none."""
    cat = catalog(hourly("A", 4, vendor="vA", max_nodes=1), hourly("B", 6, vendor="vB", max_nodes=1))
    prob = problem(*(job(f"j{k}", days=39, deadline_days=5) for k in range(3)), horizon_days=5)
    _, milp = build(prob, cat)
    assert milp.model.num_variables > 0
    with pytest.raises(NoSolution) as caught:
        solve_milp(milp, time_limit=20)
    assert caught.value.proven


def test_a_maximised_model_gets_no_bound():
    """Its LP value would bound plans from above, and every caller reads the bound from below."""
    model = mb.Model()
    x = model.new_int_var(0, 10, "x")
    model.add(2 * x <= 7)
    model.maximize(x)
    with BackgroundRelaxation(model, 60) as lp:
        assert lp.wait(60) is None
    model.minimize(-x)
    with BackgroundRelaxation(model, 60) as lp:
        assert lp.wait(60).value == pytest.approx(-3.5)


def test_time_left_after_the_guided_plan_goes_to_the_whole_model(monkeypatch):
    """With a limit long enough, the guided plan does not end the solve: HiGHS then gets the
    whole model from it and proves the optimum (the LP alone could not)."""
    monkeypatch.setattr(warmstart, "WARM_START_VARIABLES", 0)
    monkeypatch.setattr(warmstart, "GUIDED_VARIABLES", 0)
    guided = []
    real = big_module._guided_plan
    monkeypatch.setattr(big_module, "_guided_plan", lambda *a: guided.append(real(*a)) or guided[-1])
    prob, cat = load_problem(BUNDLED / "seed-13b-100b.yaml")
    inst, milp = build(prob, cat)
    sol = solve_milp(milp, time_limit=60)
    assert guided and guided[0] is not None, "the guided plan was not made"
    assert sol.status == "optimal"
    assert sol.bound > lp_value(inst) * 1.01


def test_the_child_runs_without_the_presolve_rule_the_milp_leaves_off(monkeypatch, tmp_path):
    """The child's "infeasible" ends a big solve as proof, so its HiGHS runs with the same
    presolve rules off as every MILP solve (solver.engine.highs_options)."""
    from solver.engine import relaxation
    from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF

    seen: list[str] = []
    original = mb.Solver.set_solver_specific_parameters
    monkeypatch.setattr(mb.Solver, "set_solver_specific_parameters",
                        lambda self, text: (seen.append(text), original(self, text))[1])
    prob, cat = load_problem(BUNDLED / "seed-7b-200b-30d.yaml")
    _, milp = build(prob, cat)
    model_path = tmp_path / "model.pb"
    model_path.write_bytes(milp.model.export_to_proto().SerializeToString())
    import numpy as np
    np.save(tmp_path / "discounts.npy", discount_table(milp))
    assert relaxation.solve_relaxation(str(model_path), str(tmp_path / "out.npz"), 30) == 0
    assert seen and f"presolve_rule_off={HIGHS_PRESOLVE_RULES_OFF}" in seen[-1].splitlines()


def test_waiting_for_the_lp_hears_the_commands_stop(monkeypatch, tmp_path):
    """The wait for the LP child is taken in steps of at most 0.2 s, each followed by a look at the
    command's stop: Ctrl-C during a big model's solve (user-like seed 11, why) waited for the LP to
    the budget's end, 21 s. A fake child that never finishes; the command stopped after 3 steps."""
    import subprocess

    from solver import clock
    from solver.engine.relaxation import BackgroundRelaxation

    asked: list[float] = []

    class NeverDone:
        returncode = None

        def wait(self, timeout=None):
            asked.append(timeout)
            if len(asked) == 3:
                clock.stop_command("signal")
            raise subprocess.TimeoutExpired("lp", timeout)

    lp = object.__new__(BackgroundRelaxation)
    lp._result, lp._proc, lp._out = None, NeverDone(), tmp_path / "none.npz"
    try:
        assert lp.wait(3600.0) is None
    finally:
        clock.end_command()
    assert len(asked) == 3 and max(asked) <= 0.2
