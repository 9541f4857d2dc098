"""Words and numbers a finance reader trips on (issue 36, item 6): cost shares that add up and
never exceed 100 % (discounts apart), the catalog's fabric syntax in words, the layout glossed,
DP the data-parallel degree in JSON and the workbook, a cash flow that adds up to the cent, and
no "unchanged" against a baseline without a plan."""

from __future__ import annotations

from rich.console import Console

from tests.builders import catalog, hourly, job, monthly, problem, solve
from solver.model.ledger import _to_cents
from solver.report.charts import cost_shares
from solver.report.html import render_html
from solver.report.words import LAYOUT_GLOSS
from solver.report.tables import plan_tables


def test_shares_add_up_and_discounts_stand_apart():
    shares = cost_shares({"gpu_rent": 1_000.0, "interconnect": 333.33, "platform_fee": 66.67,
                          "volume_discount": -150.0})
    assert sum(shares.values()) == 1.0 and min(shares.values()) >= 0   # so none exceeds 100 %
    assert "volume_discount" not in shares and shares["gpu_rent"] == 0.714
    assert cost_shares({"gpu_rent": 1.0, "a": 1.0, "b": 1.0}) == {"gpu_rent": 0.334, "a": 0.333, "b": 0.333}


def test_cents_add_up_to_the_total():
    amounts = [100 / 3] * 3 + [0.125] * 8
    cents = _to_cents(amounts, round(sum(amounts), 2))
    assert round(sum(cents) * 100) == round(sum(amounts) * 100)
    assert all(abs(c - a) < 0.01 for c, a in zip(cents, amounts))


def test_html_and_workbook_words(tmp_path):
    cat = catalog(monthly("m", 15_000, interconnect=("ib_ndr", "roce"), interconnect_price=(9_000.0, 3_000.0)))
    prob = problem(job("j", days=300, deadline_days=10), horizon_days=10)
    plan = solve(prob, cat)
    page = render_html(plan, prob, cat)
    assert "ib_ndr|roce" not in page and "9000|3000" not in page
    assert "InfiniBand NDR / RoCE at 9,000 / 3,000 CNY/node-month extra" in page
    assert LAYOUT_GLOSS.split(";")[0] in page
    (j,) = plan.jobs
    assert j.layout["dp"] == j.layout["replicas"] * j.layout["zero_shards"] and f"(DP{j.layout['dp']})" in j.layout_text
    sheets = plan_tables(plan, prob, cat)
    assert sheets["jobs"]["dp"].tolist() == [j.layout["dp"]]
    assert LAYOUT_GLOSS in sheets["assumptions"]["source"].tolist()
    assert round(sum(p.amount for p in plan.cash_flow), 2) == round(plan.total_cost, 2)


def test_whatif_says_no_unchanged_against_no_baseline():
    from solver.analysis.whatif import Outcome, WhatIf
    from solver.report.whatif import render_whatif

    plan = solve(problem(job("j", days=8, deadline_days=10), horizon_days=10), catalog(hourly("h", 4)))
    result = WhatIf(baseline=Outcome(plan=None, infeasible="no plan"), scenario=Outcome(plan=plan), changes=[],
                    currency="CNY")
    console = Console(record=True, width=100)
    render_whatif(result, console)
    text = console.export_text()
    assert "unchanged" not in text and "binding limits (the baseline has no plan)" in text
