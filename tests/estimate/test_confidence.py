"""`confidence:` plans with the throughput a run reaches with that probability, and every plan says
how likely each job is in time (issue 48, items 3-4; solver.estimate.spread)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from solver.analysis.margin import with_margins
from solver.estimate.spread import PUBLISHED, Spread
from solver.model.problem import Job, Problem
from tests.builders import catalog, hourly, job, problem, run_cli, solve, write_problem

CAT = catalog(hourly("h", 4))


def _problem(**kw) -> Problem:
    job_kw = kw.pop("job", {})
    return problem(job("j", days=36, deadline_days=10, **job_kw), horizon_days=10, **kw)


def _plan(prob: Problem):
    return with_margins(prob, CAT, solve(prob, CAT))


def test_the_problem_s_confidence_reaches_its_jobs_and_a_job_s_own_wins():
    prob = problem(job("a", days=1, deadline_days=5), job("b", days=1, deadline_days=5, confidence=0.5),
                   horizon_days=5, confidence=0.9)
    assert [j.planned_confidence for j in prob.jobs] == [0.9, 0.5]
    again = Problem.model_validate(prob.model_dump())
    assert [j.planned_confidence for j in again.jobs] == [0.9, 0.5]
    assert "_problem_confidence" not in json.dumps(prob.model_dump())
    alone = problem(prob.jobs[0], horizon_days=5)       # the same Job in another problem: that problem's
    assert alone.jobs[0].planned_confidence is None and prob.jobs[0].planned_confidence == 0.9


@pytest.mark.parametrize("bad", [0, 1, 1.5, -0.1])
def test_confidence_is_a_probability(bad):
    with pytest.raises(ValidationError):
        _problem(confidence=bad)
    with pytest.raises(ValidationError):
        _problem(job={"confidence": bad})


def test_a_measured_mfu_needs_the_mfu():
    with pytest.raises(ValidationError, match="mfu_measured"):
        _problem(job={"mfu_measured": True})
    assert _problem(job={"mfu": 0.4, "mfu_measured": True}).jobs[0].mfu_measured


def test_higher_confidence_never_costs_less_and_keeps_at_least_the_default_s_throughput_margin():
    plans = {c: _plan(_problem(confidence=c) if c else _problem()) for c in (None, 0.5, 0.9)}
    costs = [plans[c].total_cost for c in (None, 0.5, 0.9)]
    assert costs == sorted(costs) and costs[2] > costs[0]
    # the share of the estimate the plan's rentals still carry the job at: lower is more headroom
    carried = {c: p.jobs[0].mfu_margin * p.jobs[0].planned_factor for c, p in plans.items()}
    assert carried[0.9] <= carried[None] + 1e-9
    assert plans[0.9].jobs[0].planned_factor == pytest.approx(PUBLISHED.throughput_factor(0.9), abs=1e-4)
    assert plans[None].jobs[0].planned_factor == 1.0


def test_a_plan_at_a_confidence_meets_its_deadline_at_least_that_likely():
    for c in (0.6, 0.9):
        j = _plan(_problem(confidence=c)).jobs[0]
        assert j.deadline_probability >= c - 1e-3 and j.throughput_spread == "published"


def test_the_probability_shown_rises_with_the_margin():
    shown = []
    for c in (None, 0.6, 0.8, 0.9, 0.95):
        j = _plan(_problem(confidence=c) if c else _problem()).jobs[0]
        shown.append((j.mfu_margin * j.planned_factor, j.deadline_probability))
        assert j.deadline_probability == pytest.approx(PUBLISHED.meets_probability(shown[-1][0]), abs=1e-4)
    shown.sort()
    assert [p for _, p in shown] == sorted((p for _, p in shown), reverse=True)


def test_a_calibrated_job_reads_its_measurement_s_spread():
    j = _plan(_problem(job={"mfu": 0.4, "mfu_measured": True}, confidence=0.9)).jobs[0]
    measured = Spread.measured()
    assert j.throughput_spread == "measured"
    assert j.planned_factor == pytest.approx(measured.throughput_factor(0.9), abs=1e-4)
    assert j.deadline_probability == pytest.approx(measured.meets_probability(j.mfu_margin * j.planned_factor), abs=1e-4)


def test_solve_shows_it_in_the_terminal_json_and_html_in_both_languages(tmp_path):
    path = write_problem(tmp_path, _problem(confidence=0.9), CAT)
    data = json.loads(run_cli("solve", str(path), "--json").stdout)
    job_out = data["jobs"][0]
    assert {"deadline_probability", "planned_factor", "throughput_spread"} <= set(job_out)
    assert job_out["deadline_probability"] >= 0.9 - 1e-3
    page = tmp_path / "r.html"
    text = run_cli("solve", str(path), "--robust", "--html", str(page))
    flat = " ".join(text.stdout.split())
    assert f"in time {job_out['deadline_probability']:.0%}" in flat and "planned at" in flat
    assert "of published runs" in flat                      # --robust's factor as a quantile
    html = page.read_text(encoding="utf-8")
    assert "in time" in html and "of published runs" in html
    zh = run_cli("solve", str(path), "--robust", "--lang", "zh-CN")
    assert "按时概率" in zh.stdout and "公开训练记录" in zh.stdout


def test_a_job_planned_at_a_confidence_is_not_warned_thin():
    from solver.report.terminal import thin_margins
    plain, sure = _plan(_problem()), _plan(_problem(confidence=0.9))
    assert thin_margins(plain, 0.5) and not thin_margins(sure, 0.5)   # both margins are under 50 % headroom
    assert 1 - sure.jobs[0].mfu_margin < 0.5


def test_calibrate_marks_the_job_measured(tmp_path):
    from solver.tools.calibrate import set_job_key, set_job_mfu
    text = "name: p\njobs:\n- name: a\n  tokens: 1e9\n"
    out = set_job_key(set_job_mfu(text, "a", 0.45), "a", "mfu_measured", "true")
    assert "  mfu: 0.450\n" in out and "  mfu_measured: true\n" in out
    assert set_job_key(out, "a", "mfu_measured", "true") == out          # set again: no second line
