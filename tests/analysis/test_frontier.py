"""Frontiers: every point feasible, verified, non-dominated, monotone, and equal to an
independent solve with its ε applied; the CLI writes plots and plans and never overwrites.

The tiny instance (families.py): one job needing just under 40 GPU-days by day 10; a
cheap 8-GPU node (4 CNY/GPU-h → 768 per node-day, 1 node), a middle one (5 → 960, 1
node) and a dear one (6 → 1 152, 3 nodes). Finishing by day D uses the cheap node D
days, then the middle one, then the dear one, so by hand:
    D = 1: 8 + 8 + 24 GPU-days → 768 + 960 + 3 456 = 5 184
    D = 2: 16 + 16 + 8         → 1 536 + 1 920 + 1 152 = 4 608
    D = 3: 24 + 16             → 2 304 + 1 920 = 4 224
    D = 4: 32 + 8              → 3 072 + 960 = 4 032
    D ≥ 5: 40                  → 3 840 (finishing on day 5)
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from tests.builders import DATA, ROOT, catalog, hourly, job, monthly, problem
from typer.testing import CliRunner

from solver.analysis.edits import apply_edits
from solver.analysis.frontier import (
    Point,
    frontier,
    mark_knee,
    mix_label,
    non_dominated,
    spread,
)
from solver.analysis.min_time import min_time_plan
from solver.api import solve_problem
from solver.cli import app
from solver.errors import Infeasible, ProblemError
from solver.limits import constrain_to, finish_day, plan_vendors
from solver.model.plan import Plan
from solver.report.frontier_plans import write_plans
from solver.verify import check_plan

BY_HAND = {1: 5184.0, 2: 4608.0, 3: 4224.0, 4: 4032.0, 5: 3840.0}
REL = 1e-4  # the solvers' optimality gap


def three_tier(**job_kw):
    cat = catalog(hourly("cheap", 4.0, max_nodes=1), hourly("mid", 5.0, max_nodes=1),
                  hourly("dear", 6.0, max_nodes=3))
    return problem(job(days=40, deadline_days=10, **job_kw), horizon_days=10), cat


def assert_frontier(result, problem_, catalog_):
    """Verified, non-dominated, monotone: x strictly up, y strictly down."""
    assert result.points
    for p in result.points:
        check_plan(problem_, catalog_, p.plan)  # raises PlanRejected if it breaks a constraint
        assert p.plan.status == "optimal"
    for a in result.points:
        for b in result.points:
            if a is not b:
                assert not (a.x <= b.x and a.y <= b.y), f"{a.x, a.y} dominates {b.x, b.y}"
    xs, ys = [p.x for p in result.points], [p.y for p in result.points]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)
    assert all(y1 > y2 for y1, y2 in itertools.pairwise(ys))


def test_deadline_frontier_matches_the_hand_worked_costs():
    prob, cat = three_tier()
    result = frontier(prob, cat, "deadline", 10)
    assert_frontier(result, prob, cat)
    assert {p.finish_day: p.cost for p in result.points} == pytest.approx(BY_HAND, rel=REL)
    assert result.points[0].finish_day == 1  # the earliest feasible day
    assert any("day 5 at the earliest, before the latest deadline 10" in n for n in result.notes)
    assert sum(p.knee for p in result.points) == 1


def test_each_deadline_point_equals_an_independent_solve():
    """Same cost as solving the problem from scratch with the cap, by constrain and by edit."""
    prob, cat = three_tier()
    for p in frontier(prob, cat, "deadline", 10).points:
        by_hook = solve_problem(prob, cat, constrain=constrain_to(p.finish_day))
        edited, _, _ = apply_edits(prob, cat, [f"jobs[*].deadline_days={p.finish_day}"])
        by_edit = solve_problem(edited, cat)
        assert by_hook.total_cost == pytest.approx(p.cost, rel=REL)
        assert by_edit.total_cost == pytest.approx(p.cost, rel=REL)
        assert finish_day(by_hook) <= p.finish_day


def test_fewer_points_keep_both_ends():
    prob, cat = three_tier()
    result = frontier(prob, cat, "deadline", 2)
    assert [p.finish_day for p in result.points] == [1, 5]
    assert result.knee is None  # two points have no knee


def test_points_are_the_earliest_of_equally_cheap_plans():
    """One monthly node (23 040 for 30 days) does the 40 GPU-days (5 node-days) in 5 days, but
    may run on any 5 of the 10: the cheapest plan can finish on day 10. The frontier's point
    is the earliest of the equally cheap plans, (5, 23 040); (10, 23 040) would be dominated.
    Hourly nodes cost 5 760 a node-day (30 CNY/GPU-h, 3 nodes): 5 of them, 28 800, finish on
    day 2 — as cheap as monthly + 1 hourly node-day finishing on day 4, so that is dominated."""
    cat = catalog(monthly("m", 30 * 768.0, max_nodes=1), hourly("h", 30.0, max_nodes=3))
    prob = problem(job(days=40, deadline_days=10), horizon_days=30)
    for n in (2, 10):
        result = frontier(prob, cat, "deadline", n)
        assert_frontier(result, prob, cat)
        assert [(p.finish_day, p.cost) for p in result.points] == [(2, 28800.0), (5, 23040.0)]


def test_budget_frontier_is_the_earliest_finish_within_each_budget():
    prob, cat = three_tier()
    result = frontier(prob, cat, "budget", 5)
    assert_frontier(result, prob, cat)  # x = cost up, y = finishing day down
    for p in result.points:
        assert p.cost <= p.eps * (1 + 1e-9) + 0.01
        assert BY_HAND[p.finish_day] == pytest.approx(p.cost, rel=REL)  # a point of the same trade-off
        with_budget = prob.model_copy(update={"budget": p.eps})
        assert finish_day(min_time_plan(with_budget, cat)) == p.finish_day
    assert result.points[0].finish_day == 5 and result.points[-1].finish_day == 1  # x = cost ascending


def spot_instance():
    """An interruptible job: spot at 2 CNY/GPU-h (1 preemption a day) is cheapest per unit of work."""
    spot = hourly("spot", 2.0, mode="spot", price_unit="cny_per_gpu_hour", max_nodes=2, preemptions_per_day=1.0)
    cat = catalog(spot, hourly("od", 6.0, max_nodes=4))
    return problem(job(days=40, deadline_days=5, interruptible=True, single_site=False), horizon_days=5), cat


def test_spot_share_frontier():
    prob, cat = spot_instance()
    result = frontier(prob, cat, "spot_share", 5)
    assert_frontier(result, prob, cat)
    assert result.points[0].spot_share == pytest.approx(0.0, abs=1e-9)   # no spot at all: dearest
    assert result.points[-1].spot_share > 0.9                              # the cheapest plan is all spot
    for p in result.points:
        cap = constrain_to(spot=p.eps * _required(prob, cat)) if p.eps < 1 else None  # 100%: no cap
        capped = solve_problem(prob, cat, constrain=cap)
        assert capped.total_cost == pytest.approx(p.cost, rel=REL)
        assert p.spot_share <= p.eps + 1e-9


def _required(prob, cat) -> float:
    from solver.milp.instance import build_instance
    return sum(build_instance(prob, cat).required.values())


def test_vendor_frontier():
    """Cheap single nodes at two vendors; dear nodes at v1. Two vendors save money."""
    cat = catalog(hourly("a", 4.0, max_nodes=1), hourly("b", 4.0, max_nodes=1, vendor="v2"),
                  hourly("dear", 6.0, max_nodes=4))
    prob = problem(job(days=40, deadline_days=3, single_site=False), horizon_days=3)
    result = frontier(prob, cat, "vendors", 5)
    assert_frontier(result, prob, cat)
    assert [p.vendors for p in result.points] == [1, 2]
    for p in result.points:
        assert len(plan_vendors(p.plan)) == p.vendors
        capped = solve_problem(prob, cat, constrain=constrain_to(vendors=p.vendors))
        assert capped.total_cost == pytest.approx(p.cost, rel=REL)
    # by hand, 40 GPU-days in 3 days: one vendor (v1) 3 cheap + 2 dear node-days = 2 304 + 2 304;
    # two vendors 3 + 2 cheap node-days = 5 × 768; v2 alone has too few nodes
    assert [p.cost for p in result.points] == pytest.approx([4608.0, 3840.0], rel=REL)


def test_infeasible_problem_raises():
    prob, cat = three_tier()
    tight = prob.model_copy(update={"budget": 1000.0})
    with pytest.raises(Infeasible):
        frontier(tight, cat, "deadline", 3)


def test_bad_arguments():
    prob, cat = three_tier()
    with pytest.raises(ProblemError, match="axis"):
        frontier(prob, cat, "colour", 3)
    with pytest.raises(ProblemError, match="at least 1"):
        frontier(prob, cat, "deadline", 0)


# ----- pure helpers ------------------------------------------------------------------------------------
def _pt(x, y):
    return Point(eps=x, plan=None, cost=y, finish_day=int(x), spot_share=0.0, vendors=1, mix="", x=x, y=y)


def test_non_dominated_and_knee():
    pts = [_pt(1, 10), _pt(2, 5), _pt(3, 4), _pt(4, 3.9), _pt(2.5, 6), _pt(3, 4)]
    kept = non_dominated(pts)
    assert [(p.x, p.y) for p in kept] == [(1, 10), (2, 5), (3, 4), (4, 3.9)]
    assert mark_knee(kept).x == 2
    assert mark_knee([_pt(1, 3), _pt(2, 2), _pt(3, 1)]) is None  # a straight line has no knee


def test_spread():
    assert spread(list(range(1, 11)), 4) == [1, 4, 7, 10]
    assert spread([5, 1, 3], 10, descending=True) == [5, 3, 1]
    assert spread([1, 2, 3], 1) == [3]


def test_mix_label_counts_peak_nodes_at_once():
    prob, cat = three_tier()
    plan = solve_problem(prob, cat, constrain=constrain_to(2))
    assert mix_label(plan) == "3×8 G80 hourly ib_hdr @D1"  # cheap + mid + one dear node on day 1
    assert mix_label(plan, most=0).startswith("+1 more")


# ----- CLI ---------------------------------------------------------------------------------------------
PROBLEM = "problems/seed-7b-200b-30d.yaml"


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frontier")
    result = CliRunner().invoke(app, ["frontier", PROBLEM, "--points", "4", "--plot", str(folder / "f"),
                                      "--plans", str(folder / "plans"), "--json"])
    return folder, result


def test_cli_writes_plot_and_plans(cli_run):
    folder, result = cli_run
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (folder / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in (folder / "f.svg").read_bytes()[:2000]
    files = sorted((folder / "plans").glob("point-*.json"))
    assert len(files) == len(data["points"]) >= 2
    for point, path in zip(data["points"], files):
        plan = Plan.model_validate(json.loads(path.read_text()))
        assert plan.total_cost == pytest.approx(point["cost"])
        assert point["plan_file"] == str(path)
    costs = [p["cost"] for p in data["points"]]
    assert costs == sorted(costs, reverse=True)


def test_cli_refuses_to_overwrite_without_force(cli_run):
    folder, _ = cli_run
    runner = CliRunner()
    again = runner.invoke(app, ["frontier", PROBLEM, "--points", "2", "--plot", str(folder / "f")])
    assert again.exit_code == 2 and "--force" in again.output
    plans = runner.invoke(app, ["frontier", PROBLEM, "--points", "2", "--plans", str(folder / "plans")])
    assert plans.exit_code == 2 and "--force" in plans.output
    forced = runner.invoke(app, ["frontier", PROBLEM, "--points", "2", "--plot", str(folder / "f"),
                                 "--plans", str(folder / "plans"), "--force"])
    assert forced.exit_code == 0, forced.output
    assert len(list((folder / "plans").glob("point-*.json"))) == 2


def test_cli_table_marks_the_knee():
    result = CliRunner().invoke(app, ["frontier", PROBLEM, "--points", "5"])
    assert result.exit_code == 0, result.output
    assert "knee" in result.stdout and "A100-80G monthly" in result.stdout


def test_the_table_names_every_epsilon_it_tried():
    # A budget frontier on three_tier: 10 ε values, 5 plans; the other 5 gave a plan already
    # shown. Each ε tried is either a row or named below the table, as the column writes it.
    import io

    from rich.console import Console

    from solver.report.frontier import render_frontier
    prob, cat = three_tier()
    result = frontier(prob, cat, "budget", 10)
    out = io.StringIO()
    render_frontier(result, Console(file=out, width=100))
    text = out.getvalue()
    same = [e for e, outcome, _ in result.tried if outcome == "same plan"]
    assert same and len(result.points) + len(same) == len(result.tried)
    assert "the same plan as a point above: ε = " + "; ".join(f"{e:,.0f}" for e in same) in text


def test_max_seconds_keeps_the_points_found_before_it_ran_out(monkeypatch):
    # The run's time runs out after the third solve (made so by moving the session's stop
    # into the past): the frontier is the points found so far (the latest finishing days,
    # tried first), with a note; without the cap the same problem gives more points.
    from solver import session
    prob, cat = three_tier()
    full = frontier(prob, cat, "deadline", 10)
    real, calls = session.Session.solve, []

    def solve_then_spend(self):
        calls.append(1)
        if len(calls) == 3:
            self.clock.stop_at = 0.0
        return real(self)
    monkeypatch.setattr(session.Session, "solve", solve_then_spend)
    cut = frontier(prob, cat, "deadline", 10, max_seconds=3600)
    assert 1 <= len(cut.points) < len(full.points)
    assert {(p.finish_day, p.cost) for p in cut.points} < {(p.finish_day, p.cost) for p in full.points}
    assert any(n.startswith("stopped by the run's time (--max-seconds)") for n in cut.notes)


def test_max_seconds_with_no_point_found_is_not_proven_infeasible():
    prob, cat = three_tier()
    with pytest.raises(Infeasible) as caught:
        frontier(prob, cat, "deadline", 10, max_seconds=1e-6)
    assert not caught.value.proven and "--max-seconds" in str(caught.value)


def test_cli_frontier_max_seconds_must_be_positive():
    result = CliRunner().invoke(app, ["frontier", PROBLEM, "--max-seconds", "0"])
    assert result.exit_code == 2 and "give a number > 0" in " ".join(result.output.replace("│", " ").split())


def test_missing_matplotlib_says_how_to_install(monkeypatch, tmp_path):
    import sys

    from solver.report import frontier_plot
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib → ImportError
    with pytest.raises(ProblemError, match=r"pip install \.\[plot\]"):
        frontier_plot.require_matplotlib()
    result = CliRunner().invoke(app, ["frontier", PROBLEM, "--plot", str(tmp_path / "f")])
    assert result.exit_code == 2 and "pip install" in result.output


def test_plot_with_many_points_numbers_them_and_keys_the_mixes(monkeypatch, tmp_path):
    from solver.report import frontier_plot
    prob, cat = three_tier()
    result = frontier(prob, cat, "deadline", 10)
    monkeypatch.setattr(frontier_plot, "INLINE_LABELS", 2)  # five points: numbered, mixes in a key
    png, svg = frontier_plot.plot_frontier(result, tmp_path / "many")
    assert png.read_bytes()[:4] == b"\x89PNG"
    text = svg.read_text()
    assert "knee" in text and "G80 hourly ib_hdr @D1" in text  # matplotlib keeps each text as an SVG comment
    with pytest.raises(ProblemError, match="--force"):
        frontier_plot.plot_frontier(result, tmp_path / "many")
    assert frontier_plot.plot_frontier(result, tmp_path / "many", force=True) == [png, svg]


def test_every_epsilon_tried_is_a_row_or_named_when_a_row_is_tightened():
    # A reviewer's case: the deadline frontier tries 7, 6 and 3; the plan of 7 also meets 6,
    # so its row shows 6. Before, 7 was named nowhere and 6 twice (row and "same plan").
    import io
    from pathlib import Path

    from rich.console import Console

    from solver.report.frontier import render_frontier
    from solver.model.catalog import Catalog
    from solver.model.problem import Problem
    case = json.loads((DATA / "frontier_tightened_eps.json").read_text(encoding="utf-8"))
    result = frontier(Problem.model_validate(case["problem"]), Catalog.model_validate(case["catalog"]), "deadline", 10)
    tried = {e for e, _, _ in result.tried}
    out = io.StringIO()
    render_frontier(result, Console(file=out, width=100))
    text = " ".join(out.getvalue().split())
    rows = {p.eps for p in result.points}
    named = {e for e, outcome, _ in result.tried if outcome != "ok"}
    assert rows | named == tried and not rows & {e for e, o, _ in result.tried if o == "same plan"}
    for e in named:
        assert f"{e:g}" in text


def test_max_seconds_right_after_the_first_solve_keeps_that_plan(monkeypatch):
    # Out of time in the first earlier_at_same_cost: the cheapest plan was solved but not yet
    # recorded as a point; before, the frontier was "infeasible".
    from solver import session
    prob, cat = three_tier()
    real = session.Session.solve

    def solve_then_spend(self):
        plan = real(self)
        self.clock.stop_at = 0.0
        return plan
    monkeypatch.setattr(session.Session, "solve", solve_then_spend)
    cut = frontier(prob, cat, "deadline", 10, max_seconds=3600)
    assert len(cut.points) == 1 and cut.points[0].cost == pytest.approx(solve_problem(prob, cat).total_cost)
    assert any(n.startswith("stopped by the run's time (--max-seconds)") for n in cut.notes)
    # that plan was never checked for an equally cheap one finishing earlier, and the notes say so
    day = cut.points[0].x
    assert any(n.startswith("solved before the run's time ran out and not checked") and f"day {day:g}" in n
               for n in cut.notes), cut.notes


def test_an_all_spot_plan_has_a_spot_share_of_exactly_one():
    """Whole replicas do a little more work than the need: 37.3 GPU-days of need on spot alone
    used to read as a share above 100% (work on spot ÷ work needed)."""
    spot = hourly("spot", 2.0, mode="spot", price_unit="cny_per_gpu_hour", max_nodes=2, preemptions_per_day=1.0)
    prob = problem(job(days=37.3, deadline_days=5, interruptible=True, single_site=False), horizon_days=5)
    cat = catalog(spot, hourly("od", 6.0, max_nodes=4))
    result = frontier(prob, cat, "spot_share", 3)
    cheapest = result.points[-1]
    assert cheapest.plan.jobs[0].done_eflop > cheapest.plan.jobs[0].required_eflop * 1.001  # it overshoots
    assert cheapest.spot_share == pytest.approx(1.0)
    assert all(0 <= p.spot_share <= 1 + 1e-12 for p in result.points)


def test_mix_label_tells_apart_plans_that_differ_only_in_fabric():
    """Seed 000's deadline frontier has IB and RoCE points of the same GPUs, mode and site."""
    from solver.load import load_problem

    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    result = frontier(prob, cat, "deadline", 4)
    assert len({p.mix for p in result.points}) == len(result.points)
    assert {p.mix.split()[3] for p in result.points} == {"ib_hdr", "roce"}


# ----- issue 34: rows as they are determined, and a point the time did not settle as an interval -----
SEED_PATH = ROOT / "problems" / "seed-7b-200b-30d.yaml"


def test_each_epsilon_is_announced_as_it_is_determined():
    from solver.load import load_problem
    from solver.rows import ROWS

    heard = []
    ROWS.listener = lambda words, done, expected: heard.append((done, expected, words))
    try:
        result = frontier(*load_problem(SEED_PATH), "deadline", 4)
    finally:
        ROWS.listener = None
    assert [d for d, _, _ in heard] == list(range(1, len(result.tried) + 1))
    assert {e for _, e, _ in heard} == {len(result.tried)}  # the count was known before the first row
    # the rows as they came: each ε tried once (a row's ε is tightened later when a tighter one
    # gives the same plan), with the cost found under it
    assert {w.split(":")[0] for _, _, w in heard} == {f"finish by day {eps:g}" for eps, _, _ in result.tried}
    assert sorted(f"{cost:,.0f} CNY" for _, _, cost in result.tried) == sorted(
        w.split(": ")[1].split(", ")[0] for _, _, w in heard)


def test_a_point_the_time_did_not_settle_is_an_interval_from_bound_to_plan(monkeypatch):
    """Every MILP probe stopped 1,000 above its bound: each point's cost is shown from that bound
    to the plan's cost, in the table, the JSON and the announced row; never as proven."""
    from dataclasses import replace

    from solver.load import load_problem
    from solver.probes import Answer, Probes, Relaxed
    from solver.report.frontier import render_frontier
    from solver.rows import ROWS
    from rich.console import Console

    real = Probes.probe

    def unsettled(self, *changes, **kw):
        answer = real(self, *changes, **kw)
        if answer.solution is None or any(isinstance(c, Relaxed) for c in changes) or not answer.solved:
            return answer
        if type(changes[-1]).__name__ == "NoObjective":  # a feasibility probe: no cost to prove
            return answer
        sol = replace(answer.solution, bound=answer.solution.objective - 1000.0, status="feasible")
        return Answer("feasible", sol.bound, answer.plan, sol)
    monkeypatch.setattr(Probes, "probe", unsettled)
    heard = []
    ROWS.listener = lambda words, done, expected: heard.append(words)
    try:
        result = frontier(*load_problem(SEED_PATH), "deadline", 3)
    finally:
        ROWS.listener = None
    open_points = [p for p in result.points if not p.proven]
    assert open_points
    for p in open_points:
        assert p.cost - 1000.0 - 1e-6 <= p.low < p.cost
        shown = p.to_dict()
        assert shown["proven"] is False and shown["cost_low"] == p.low
        assert any(f"{p.low:,.0f} to {p.cost:,.0f} CNY (not proven)" in words for words in heard)
    console = Console(record=True, width=200)
    render_frontier(result, console)
    text = console.export_text()
    assert f"{open_points[0].low:,.0f} to {open_points[0].cost:,.0f}" in text and "not proven" in text


def test_plans_of_an_earlier_run_are_deleted_under_the_journal(tmp_path, monkeypatch):
    """Issue 47, item 16: `frontier --plans` killed after the swap and before the old extra points were
    deleted left point-01 of one run beside 02–06 of another, with no journal to repair it."""
    import os
    from types import SimpleNamespace

    from solver import files

    plans = tmp_path / "plans"
    plans.mkdir()
    for i in range(1, 7):
        (plans / f"point-0{i}.json").write_text('{"run": "old"}\n', encoding="utf-8")
    plan = SimpleNamespace(model_dump=lambda mode: {"run": "new"})
    result = SimpleNamespace(points=[SimpleNamespace(plan=plan), SimpleNamespace(plan=plan)])
    real = os.unlink

    def killed(path, *args, **kwargs):
        if Path(path).name.startswith("point-"):
            raise KeyboardInterrupt   # stands for SIGKILL between the swap and the deletions
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files.os, "unlink", killed)
    with pytest.raises(KeyboardInterrupt):
        write_plans(result, plans, force=True)
    monkeypatch.setattr(files.os, "unlink", real)
    files.finish_interrupted(plans)   # what the next write of the folder does first
    assert sorted(p.name for p in plans.iterdir()) == ["point-01.json", "point-02.json"]
    assert all(json.loads(p.read_text(encoding="utf-8")) == {"run": "new"} for p in plans.iterdir())


def test_the_check_for_an_earlier_plan_at_the_same_cost_stops_at_nodes_not_at_a_time(monkeypatch):
    """Its limit was a share of the solve's time: on a busy machine seed-7b-200b-30d's checks (each
    settled at the root) ran out of it, and the golden frontier gained an 'not settled' note. Now
    every HiGHS solve of the check stops at session.EARLIER_NODES nodes, with no time limit of its
    own, and the checks of this problem settle (no earlier plan costs as little)."""
    from solver import session
    from solver.engine import child
    from solver.load import load_problem

    s = session.Session(*load_problem(SEED_PATH))
    cheapest = s.solve()
    asked = []
    real = child.highs_parameters
    monkeypatch.setattr(child, "highs_parameters", lambda **kw: asked.append(kw) or real(**kw))
    assert s.earlier_at_same_cost() is None and s.unsettled == []
    assert asked and all(kw["node_limit"] == session.EARLIER_NODES and kw["time_limit"] is None for kw in asked)
    assert finish_day(cheapest) == 30 and session.PROGRESS.node_limit is None   # put back after the check
