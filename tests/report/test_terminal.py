"""`gpuplan solve`'s terminal tables for people who act on a plan: paid-but-idle, job × rental, cash
flow with its billing rules, and dates when the problem has a start_date; all within 100 columns."""

from __future__ import annotations

import io
import json
from datetime import date

from rich.console import Console

from solver.load import load_problem
from solver.model.ledger import cash_flow
from solver.model.plan import Plan
from solver.report.terminal import render_plan
from tests.builders import DATA, ROOT


def recorded(name: str):
    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    data = json.loads((DATA / "golden" / f"solve-{name}.json").read_text(encoding="utf-8"))["output"]
    return prob, cat, Plan.model_validate({**data, "solve_seconds": 0.0})


def shown(plan) -> list[str]:
    out = io.StringIO()
    render_plan(plan, Console(file=out, width=100, no_color=True))
    return out.getvalue().splitlines()


def row(lines: list[str], first: str) -> list[str]:
    line = next(line for line in lines if line.startswith(f"│ {first} ") or line.startswith(f"│{first} "))
    return [c.strip() for c in line.strip("│").split("│")]


def test_idle_job_rental_and_cash_flow_tables():
    _, _, plan = recorded("hybrid-burst")
    lines = shown(plan)
    assert max(map(len, lines)) <= 100
    idle = lines[next(i for i, line in enumerate(lines) if line.startswith("Paid but idle") or "Paid but idle" in line):]
    assert row(idle, "2")[:7] == ["2", "yearly", "35,040", "19,840", "15,200", "43%", "3,525,775"]
    assert any(line.startswith("│ 3 │ hosted") for line in idle[:8])      # used in full: its row too (issue 47, item 7)
    text = "\n".join(lines)
    assert "Which job runs on which rental" in text and "54,720" in text
    cash = lines[next(i for i, line in enumerate(lines) if "Cash flow" in line):]
    assert row(cash, "total")[-1] == "24,312,437" and row(cash, "360–389")[-1] == "334,021"
    assert "per month of term" in text and "on finish" in text


def test_dates_when_the_problem_has_a_start_date():
    prob, cat, plan = recorded("hybrid-burst")
    prob = prob.model_copy(update={"start_date": date(2027, 1, 20)})
    plan = plan.model_copy(update={"start_date": prob.start_date, "cash_flow": cash_flow(
        plan.allocations, plan.schedule.assignments, prob, cat, plan.schedule.period_days)})
    lines = shown(plan)
    assert max(map(len, lines)) <= 100
    yearly = row(lines, "2")
    assert "2027-01-30" in yearly and "2028-01-29" in yearly                 # first and last day held
    assert any("2027-08-24" in line for line in lines)                       # the job's last day
    assert row(lines, "2028-01")[-1] == "645,774" and "calendar month" in "\n".join(lines)


# ----- issue 47, item 5: a thin MFU margin warns under the headline and names --robust -----------------

def _with_margins(plan, *margins):
    jobs = [j.model_copy(update={"mfu_margin": m}) for j, m in zip(plan.jobs, margins)]
    return plan.model_copy(update={"jobs": jobs + plan.jobs[len(margins):]})


def _lines(plan, **kw) -> list[str]:
    out = io.StringIO()
    render_plan(plan, Console(file=out, width=100, no_color=True), **kw)
    return out.getvalue().splitlines()


def test_a_thin_margin_warns_under_the_headline_and_names_robust():
    _, _, plan = recorded("seed-7b-200b-30d")
    thin = _with_margins(plan, 0.97)                 # the job may run only 3 % slower
    lines = _lines(thin)
    warning = " ".join(lines[1:3])
    assert "thin MFU margin (below 10%)" in warning and f"{plan.jobs[0].name} 3.0%" in warning
    assert "--robust" in warning


def test_the_thin_margin_threshold_is_the_callers():
    _, _, plan = recorded("seed-7b-200b-30d")
    roomy = _with_margins(plan, 0.85)                # 15 % of room: not thin at the default 10 %
    assert not any("thin MFU margin" in line for line in _lines(roomy))
    assert any("thin MFU margin (below 20%)" in line for line in _lines(roomy, thin_margin=0.20))
    assert not any("thin MFU margin" in line for line in _lines(_with_margins(plan, 1.0), thin_margin=0.0))


def test_json_names_the_thin_margins_and_leaves_the_key_out_otherwise():
    from solver.report.terminal import solve_json

    _, _, plan = recorded("seed-7b-200b-30d")
    data = solve_json(_with_margins(plan, 0.94))
    assert data["thin_margin"]["threshold"] == 0.10
    assert data["thin_margin"]["jobs"] == [{"job": plan.jobs[0].name, "mfu_margin": 0.94, "headroom": 0.06}]
    assert "--robust" in data["thin_margin"]["text"]
    assert "thin_margin" not in solve_json(_with_margins(plan, 0.5))


def test_cli_solve_takes_the_thin_margin_threshold(tmp_path):
    from tests.builders import catalog, hourly, job, problem, run_cli, write_problem

    path = write_problem(tmp_path, problem(job(days=80, deadline_days=10), horizon_days=10), catalog(hourly("A", 4)))
    tight = run_cli("solve", str(path))             # one node for exactly the 10 days: no room at all
    assert tight.returncode == 0, tight.stderr[-2000:]
    assert "thin MFU margin" in tight.stdout and "--robust" in tight.stdout
    off = run_cli("solve", str(path), "--thin-margin", "0", "--json")
    assert off.returncode == 0 and "thin_margin" not in json.loads(off.stdout)


def test_baselines_say_optimum_saves_only_beside_a_proven_plan():
    """Issue 47, item 2's rule for every heading: against a plan its solve did not prove, the
    column is what the plan saves, not the optimum."""
    from solver.analysis.baselines import Baseline
    from solver.report.terminal import render_baselines

    _, _, plan = recorded("seed-7b-200b-30d")
    rows = [Baseline("all hourly", plan.total_cost * 2, "x", "feasible")]

    def text(p) -> str:
        out = io.StringIO()
        render_baselines(p, rows, Console(file=out, width=100, no_color=True))
        return " ".join(out.getvalue().split())
    assert "optimum saves" in text(plan)
    unproven = text(plan.model_copy(update={"status": "feasible", "lower_bound": plan.total_cost * 0.9}))
    assert "optimum" not in unproven and "plan saves" in unproven


def test_an_unproven_plan_says_another_run_may_differ_and_a_proven_one_does_not():
    _, _, plan = recorded("seed-7b-200b-30d")
    assert not any("another run" in line for line in _lines(plan))
    stopped = plan.model_copy(update={"status": "feasible", "lower_bound": plan.total_cost * 0.9, "gap": 0.1})
    assert "another run (or more time) may find a different plan" in " ".join(" ".join(_lines(stopped)).split())


def test_a_margin_search_cut_short_shows_its_headroom_as_an_interval():
    """A margin whose search the budget cut lies in (mfu_margin_low, mfu_margin]: its headroom is at
    least the proven end, and the warning says both ends."""
    from types import SimpleNamespace

    from solver.report.terminal import _headroom
    assert _headroom(SimpleNamespace(mfu_margin=0.988, mfu_margin_low=None)) == "1.2%"
    assert _headroom(SimpleNamespace(mfu_margin=0.988, mfu_margin_low=0.92)) == "1.2%–8.0%"
