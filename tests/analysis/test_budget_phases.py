"""Every phase after the solve lives inside the command's budget (issue 47 item 12): a run whose
time is over builds nothing more. The end of the time is given, not waited for (max_seconds=0:
over before the first line runs), so no assertion depends on the machine's speed."""

from __future__ import annotations

from solver.analysis.margin import robust_plan
from solver.api import solve_problem
from solver.load import load_problem
from solver.model.problem import Prefer
from tests.builders import ROOT, count_builds

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"


def test_a_robust_plan_asked_after_the_budget_builds_no_model(monkeypatch):
    """A problem with soft preferences solves its robust plan as a problem of its own
    (solver.api.solve_problem): with no time left it was still built (an Instance and a model:
    15 s for 40 jobs, past the budget) before the clock was looked at."""
    problem, catalog = load_problem(SEED)
    optimum = solve_problem(problem, catalog)
    preferring = problem.model_copy(update={"prefer": [Prefer(vendor="21vianet", up_to_pct=5)]})
    built = count_builds(monkeypatch)
    robust = robust_plan(preferring, catalog, optimum, 0.8, max_seconds=0.0)
    assert built == {"instance": 0, "model": 0}
    assert robust.status == "not solved" and "no plan found in the time given" in robust.text


def test_margins_asked_after_the_budget_start_no_probe_and_say_they_were_cut(monkeypatch):
    """Each job's margin search read its problem at a slower MFU (a copy of every job) and only then
    heard that no probe may start: 200 jobs ran on past the budget. Now a spent clock is a cut
    search at once: the margin the plan's own rentals prove, and 0 as the lowest known too low."""
    import solver.analysis.margin as margin
    from solver.clock import RunClock
    from solver.probes import Probes

    problem, catalog = load_problem(ROOT / "problems" / "debug-then-train.yaml")
    probes = Probes(problem, catalog)
    plan = probes.plan()
    probes.clock = RunClock(None, stop_at=0.0)   # the run's time is over
    read = []
    monkeypatch.setattr(margin, "at_mfu", lambda *a, **k: read.append(a) or (problem, catalog))
    solves = probes.solves
    cut = margin.mfu_margins(problem, catalog, plan, probes=probes)
    assert read == [] and probes.solves == solves
    for job in cut.jobs:
        assert job.mfu_margin_low == 0.0 and 0 < job.mfu_margin <= 1, job


def test_why_s_lever_model_is_not_built_after_the_budget(monkeypatch):
    """why's stock and deadline levers are probes of a second model, built at their first probe:
    with the run's time over it was still built (for 40 jobs, 15 s past the budget) only to say
    "not analysed"."""
    import pytest

    from solver.analysis import why
    from solver.api import DEADLINE
    from solver.clock import OutOfTime, RunClock
    from solver.probes import Probes

    problem, catalog = load_problem(SEED)
    base = Probes(problem, catalog)
    base.plan()
    base.clock = RunClock(None, stop_at=0.0)  # the run's time is over
    later = problem.model_copy(update={"jobs": [j.model_copy(update={"deadline_days": j.deadline_days + 1})
                                                for j in problem.jobs],
                                       "horizon_days": problem.horizon_days + 1})
    levers = why._LeverModel.plan(problem, catalog, {(DEADLINE.name, problem.jobs[0].name): (later, catalog)})
    built = count_builds(monkeypatch)
    with pytest.raises(OutOfTime) as stopped:
        levers.engine(base)
    assert not stopped.value.started
    assert built == {"instance": 0, "model": 0}


def test_the_explanation_builds_no_model_after_the_budget(monkeypatch):
    """The infeasibility explanation's two models (raised stock; every deadline later) were built
    with the run's time already over (two Instances and two models) only to say "not determined"."""
    from solver.analysis.explain import explain_infeasible

    prob, cat = load_problem(ROOT / "problems" / "infeasible" / "shunyi-racks-short.yaml")
    built = count_builds(monkeypatch)
    out = explain_infeasible(prob, cat, max_seconds=0.0)
    assert built == {"instance": 0, "model": 0}
    assert out.alone and all(not r.determined for r in out.alone)
