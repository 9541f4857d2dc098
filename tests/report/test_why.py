"""`why`'s terminal heading: "optimum" only for a plan whose solve proved it (issue 47, item 2)."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from solver.analysis.why import why
from solver.report.why import render_why
from tests.builders import catalog, hourly, job, problem, solve


def _text(result) -> str:
    out = io.StringIO()
    render_why(result, Console(file=out, width=200, no_color=True))
    return " ".join(out.getvalue().split())


def _two_vendors():
    # 80 GPU-days by day 10: one node for 10 days, 7,680 CNY at 4 CNY/GPU-h vs 11,520 at 6
    return problem(job(days=80, deadline_days=10), horizon_days=10), catalog(hourly("A", 4), hourly("B", 6, vendor="v2"))


def test_an_unproven_plan_is_the_best_found_with_its_bound_never_the_optimum():
    prob, cat = _two_vendors()
    plan = solve(prob, cat)
    stopped = plan.model_copy(update={"status": "feasible", "lower_bound": plan.total_cost - 1_000,
                                      "gap": 1_000 / plan.total_cost})
    result = why(prob, cat, k=1, plan=stopped)
    text = _text(result)
    assert "optimum" not in text.split(";")[0]
    assert f"best plan found {plan.total_cost:,.0f} CNY (proven bound {plan.total_cost - 1_000:,.0f}" in text
    data = json.loads(json.dumps(result.to_dict()))
    assert data["status"] == "feasible" and data["lower_bound"] == pytest.approx(plan.total_cost - 1_000)


def test_a_proven_plan_is_the_optimum():
    prob, cat = _two_vendors()
    result = why(prob, cat, k=1)
    assert result.status == "optimal"
    assert f"optimum {result.cost:,.0f} CNY" in _text(result)


def test_a_runner_up_below_an_unproven_plan_is_cheaper_not_a_tie():
    """A plan the time limit stopped can cost more than a forced runner-up: that is no tie, and
    no optimum was picked first."""
    prob, cat = _two_vendors()
    plan = solve(prob, cat)
    dear = plan.model_copy(update={"status": "feasible", "total_cost": 12_000.0, "lower_bound": 7_000.0})
    result = why(prob, cat, k=2, plan=dear)
    texts = [a.text for j in result.jobs for a in j.alternatives]
    assert any(t.startswith("cheaper than the plan by 480 CNY") for t in texts), texts
    assert not any("optimum" in t for t in texts)


def test_no_binding_limit_names_every_family_that_can_bind_in_either_language():
    """The line for a plan that runs into nothing lists the registry's limits (no list of its own)."""
    from solver.api import FAMILIES, NotApplicable
    from solver.i18n import language
    from solver.report.why import _bound_limits, _either

    can_bind = [f for f in FAMILIES if not isinstance(f.binding, NotApplicable)]
    assert _bound_limits() == [f.labels.name for f in can_bind]
    assert _either(["a", "b", "c"]) == "a, b or c" and _either(["a"]) == "a"
    with language("zh-CN"):
        assert _either(["甲", "乙", "丙"]) == "甲、乙、丙"
        assert "budget" not in _either(_bound_limits())
