"""Soft preferences with a price (issue 24, item 5; solver/milp/prefer.py): prefer a vendor, a
mode ("a hosted base" as a share of GPU-hours), avoid spot for a job; each weighed by re-solving
with it imposed, kept when it costs at most up_to_pct % of the plan honouring it, and its
premium reported in Plan.preferences and the warnings. The old `{site, up_to_pct}` form is
tested in tests/milp/test_data_locality.py.

Numbers (tests/builders.py): 80 GPU-days by day 10 = one 8-GPU node for 10 days = 1 920
GPU-hours: 7 680 CNY at 4 CNY/GPU-h (vendor v1), 9 600 at 5 (v2): honouring "v2" costs 1 920,
20% of the plan honouring it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from tests.builders import ROOT, catalog, datacenter, hourly, job, monthly, problem, solve, write_catalog
from pydantic import ValidationError

from solver.errors import ProblemError
from solver.load import load_problem
from solver.model.problem import Prefer



def vendors(plan, cat, name="j"):
    return {cat.offers[a.offer].vendor for a in plan.schedule.assignments if a.job == name}


def two_vendors():
    return catalog(hourly("A", 4), hourly("B", 5, vendor="v2"))


@pytest.mark.parametrize("up_to, kept", [(25, True), (20, True), (19, False)])
def test_a_vendor_preference_is_kept_within_its_premium_and_not_beyond(up_to, kept):
    cat = two_vendors()
    plan = solve(problem(job(days=80, deadline_days=10, prefer=Prefer(vendor="v2", up_to_pct=up_to)), horizon_days=10), cat)
    (result,) = plan.preferences
    assert result.premium == pytest.approx(1_920) and result.premium_pct == pytest.approx(20)
    if kept:
        assert result.outcome == "kept" and vendors(plan, cat) == {"v2"}
        assert plan.total_cost == pytest.approx(9_600)
        assert "job j: only on v2 (prefer up to" in plan.warnings[-1] and "1,920 CNY (20.0%) more" in plan.warnings[-1]
    else:
        assert result.outcome == "declined" and vendors(plan, cat) == {"v1"}
        assert plan.total_cost == pytest.approx(7_680)
        assert "not honoured; honouring it would cost 1,920 CNY (20.0%) more" in plan.warnings[-1]


def test_a_preference_the_cheapest_plan_meets_costs_nothing_and_says_nothing():
    cat = two_vendors()
    plan = solve(problem(job(days=80, deadline_days=10, prefer=Prefer(vendor="v1", up_to_pct=5)), horizon_days=10), cat)
    (result,) = plan.preferences
    assert result.outcome == "met" and result.premium == 0 and plan.warnings == []


def test_avoid_spot_for_one_job_names_what_it_costs():
    # Spot at 1 CNY/GPU-h would carry the interruptible job; avoiding it sends it to A at 4.
    cat = catalog(hourly("A", 4), hourly("S", 1, vendor="v2", mode="spot", preemptions_per_day=0.1))
    free = solve(problem(job(days=80, deadline_days=10, interruptible=True), horizon_days=10), cat)
    assert vendors(free, cat) == {"v2"}
    avoid = Prefer(avoid=True, mode="spot", up_to_pct=100)
    plan = solve(problem(job(days=80, deadline_days=10, interruptible=True, prefer=avoid), horizon_days=10), cat)
    (result,) = plan.preferences
    assert result.outcome == "kept" and result.preference == "job j: avoid spot"
    assert {cat.offers[a.offer].mode for a in plan.schedule.assignments} == {"hourly"}
    assert result.premium == pytest.approx(plan.total_cost - free.total_cost)
    assert result.premium_pct == pytest.approx(100 * result.premium / plan.total_cost, abs=1e-3)


def test_a_hosted_base_as_a_share_of_gpu_hours_for_every_job():
    # Monthly nodes (30-day term, 25 000) cost more than 10 days of hourly (7 680 a node):
    # the cheapest plan rents none; "at least half the GPU-hours on monthly" rents one.
    cat = catalog(hourly("A", 4), monthly("M", 25_000, vendor="v2"), datacenters=(datacenter("D1"),))
    base = Prefer(mode="monthly", share_pct=50, up_to_pct=100)
    prob = problem(job("j", days=80, deadline_days=10), job("k", days=80, deadline_days=10), horizon_days=30, prefer=[base])
    plan = solve(prob, cat)
    (result,) = plan.preferences
    assert result.outcome == "kept" and result.job is None
    assert result.preference == "all jobs: at least 50% of GPU-hours on monthly"
    hours = {"monthly": 0.0, "hourly": 0.0}
    for a in plan.schedule.assignments:
        hours[cat.offers[a.offer].mode] += a.replicas * a.group_gpus
    assert hours["monthly"] >= hours["hourly"] > 0   # the share holds over both jobs, not one job each
    assert result.premium == pytest.approx(plan.total_cost - 2 * 7_680)


def test_a_problem_level_preference_names_its_job_and_an_impossible_one_is_dropped():
    cat = two_vendors()
    prob = problem(job("j", days=80, deadline_days=10), job("k", days=8, deadline_days=10),
                   horizon_days=10, prefer=[Prefer(job="k", vendor="v2", up_to_pct=30),
                                       Prefer(job="j", vendor="v2", gpu="G24", up_to_pct=50)])
    plan = solve(prob, cat)
    kept, impossible = plan.preferences
    assert kept.outcome == "kept" and kept.job == "k" and vendors(plan, cat, "k") == {"v2"}
    assert vendors(plan, cat, "j") == {"v1"}
    assert impossible.outcome == "impossible" and impossible.premium is None
    assert "no plan meets it" in impossible.text


def test_preferences_are_validated():
    with pytest.raises(ValidationError, match="at least one of site, vendor, mode, gpu"):
        Prefer(up_to_pct=5)
    with pytest.raises(ValidationError, match="share_pct is for a preference"):
        Prefer(avoid=True, mode="spot", share_pct=50, up_to_pct=5)
    with pytest.raises(ValidationError, match="no job named 'x'"):
        problem(job(days=1, deadline_days=10), horizon_days=10, prefer=[Prefer(job="x", vendor="v1", up_to_pct=5)])
    with pytest.raises(ValidationError, match="belongs in the problem's own prefer list"):
        job(days=1, deadline_days=10, prefer=Prefer(job="j", vendor="v1", up_to_pct=5))


PROBLEM = """name: prefs
catalog: cat
horizon_days: 10
redundancy: 0
jobs:
  - name: j
    model: {{params: 1.0e8, layers: 4, hidden: 512, heads: 4, seq_len: 512}}
    flops: {flops}
    deadline_days: 10
{extra}"""


def _write(tmp_path, extra: str) -> Path:
    write_catalog(two_vendors(), tmp_path / "cat")
    path = tmp_path / "p.yaml"
    path.write_text(PROBLEM.format(flops=80 * 4.32e18 * (1 - 1e-12), extra=extra))
    return path


def test_loader_names_an_unknown_vendor_with_its_key(tmp_path):
    with pytest.raises(ProblemError, match="unknown vendor 'v7'") as caught:
        load_problem(_write(tmp_path, "    prefer: [{vendor: v7, up_to_pct: 5}]\n"))
    assert caught.value.key == "jobs[0].prefer[0].vendor"
    with pytest.raises(ProblemError, match="unknown gpu") as caught:
        load_problem(_write(tmp_path, "prefer: [{gpu: B200, up_to_pct: 5}]\n"))
    assert caught.value.key == "prefer[0].gpu"


def test_cli_reports_each_preference_and_its_price(tmp_path):
    path = _write(tmp_path, "    prefer: [{vendor: v2, up_to_pct: 25}]\n")
    done = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(path), "--json"], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["total_cost"] == pytest.approx(9_600)
    assert data["preferences"] == [{"preference": "job j: only on v2", "job": "j", "up_to_pct": 25.0,
                                    "outcome": "kept", "premium": 1920.0, "premium_pct": 20.0,
                                    "text": data["warnings"][-1]}]
    table = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(path)], capture_output=True,
                           text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "100"})
    assert table.returncode == 0, table.stderr
    assert "only on v2" in table.stdout and "1,920 CNY (20.0%) more" in table.stdout
    met = subprocess.run([sys.executable, "-m", "solver.cli", "solve",
                          str(_write(tmp_path, "    prefer: [{vendor: v1, up_to_pct: 5}]\n"))],
                         capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "100"})
    assert "preference: job j: only on v1: met by the cheapest plan, at no extra cost" in met.stdout
    bad = subprocess.run([sys.executable, "-m", "solver.cli", "solve", str(_write(tmp_path, "prefer: [{up_to_pct: 5}]\n"))],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "prefer" in bad.stderr


def test_the_min_time_objective_says_it_does_not_weigh_preferences():
    from solver.analysis.min_time import min_time_plan

    cat = two_vendors()
    plan = min_time_plan(problem(job(days=80, deadline_days=10, prefer=Prefer(vendor="v2", up_to_pct=25)),
                                 horizon_days=10), cat)
    assert plan.preferences == []
    assert any("1 preference (prefer) not weighed" in w for w in plan.warnings)


def test_a_frontier_notes_that_it_does_not_weigh_preferences():
    from solver.analysis.frontier import frontier

    prob = problem(job(days=80, deadline_days=10, prefer=Prefer(vendor="v2", up_to_pct=25)), horizon_days=10)
    result = frontier(prob, two_vendors(), points=2)
    assert any("1 preference (prefer) not weighed" in n for n in result.notes)
