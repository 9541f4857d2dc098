"""`negotiate`'s heading says "optimum" only for a base plan its solve proved (issue 47, item 2's
rule for every heading); otherwise the best plan found, with its proven bound."""

from __future__ import annotations

import io

from rich.console import Console

from solver.analysis.negotiate import Negotiation
from solver.report.negotiate import render_negotiation


def _heading(status: str, low: float | None) -> str:
    result = Negotiation(problem="p", currency="CNY", base_cost=10_000.0, base_status=status, margin=0.05,
                         gap=1e-4, vendors=None, offers=[], levers=[], solves=3, seconds=1.0, base_low=low)
    out = io.StringIO()
    render_negotiation(result, Console(file=out, width=200, no_color=True))
    return out.getvalue().splitlines()[0]


def test_an_unproven_base_is_the_best_plan_found_with_its_bound():
    line = _heading("feasible", 9_000.0)
    assert "optimum" not in line
    assert "best plan found 10,000 CNY (proven bound 9,000; not proven optimal)" in line


def test_a_proven_base_is_the_optimum():
    assert "p: optimum 10,000 CNY (optimal)" in _heading("optimal", 10_000.0)
