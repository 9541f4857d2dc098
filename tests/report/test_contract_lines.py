"""Issue 47, item 8: one offer rented as two overlapping contracts reads as one contract line.

The plan rented one offer as 2 nodes days 14–44 and 1 node days 15–45 where a buyer signs one
3-node contract. The report joins such lines (`1+2`, nodes `2→3→1`) and says so under the table;
the schedule, the verifier and `--json` `allocations` keep the two lines.
"""

from __future__ import annotations

import io
import json

from rich.console import Console

from solver.i18n import language
from solver.load import load_problem
from solver.model.plan import Plan
from solver.report.contracts import contract_lines, nodes_text
from solver.report.html import render_html
from solver.report.terminal import render_plan, solve_json
from tests.builders import DATA, ROOT


def two_contracts_a_day_apart() -> tuple:
    """seed-7b-200b-30d's recorded plan with its one line replaced by the issue's two."""
    prob, cat = load_problem(ROOT / "problems" / "seed-7b-200b-30d.yaml")
    data = json.loads((DATA / "golden" / "solve-seed-7b-200b-30d.json").read_text(encoding="utf-8"))["output"]
    plan = Plan.model_validate({**data, "solve_seconds": 0.0})
    a = plan.allocations[0]
    one = a.model_copy(update={"nodes": 2, "gpus": 16, "start_day": 14, "end_day": 44, "cost": 120_000.0})
    two = a.model_copy(update={"nodes": 1, "gpus": 8, "start_day": 15, "end_day": 45, "cost": 60_000.0})
    return prob, cat, plan.model_copy(update={"allocations": [one, two]})


def test_overlapping_lines_of_one_offer_join_and_renewals_stay_apart():
    _p, _c, plan = two_contracts_a_day_apart()
    one, two = plan.allocations
    renewal = one.model_copy(update={"start_day": 45, "end_day": 75})
    other = two.model_copy(update={"offer": "another-offer"})
    lines = contract_lines([one, two, renewal, other])
    assert [line.numbers for line in lines] == [(1, 2), (3,), (4,)]
    assert lines[0].steps() == [(14, 15, 2), (15, 44, 3), (44, 45, 1)] and nodes_text(lines[0]) == "2→3→1"
    assert lines[0].cost == 180_000.0 and (lines[0].start_day, lines[0].end_day) == (14, 45)


def test_a_chain_of_overlaps_is_one_line():
    _p, _c, plan = two_contracts_a_day_apart()
    one, two = plan.allocations
    three = one.model_copy(update={"start_day": 40, "end_day": 70})
    assert [line.numbers for line in contract_lines([one, three, two])] == [(1, 2, 3)]


def test_the_terminal_shows_one_contract_line_with_its_nodes_over_time():
    _p, _c, plan = two_contracts_a_day_apart()
    out = io.StringIO()
    render_plan(plan, Console(file=out, width=100, color_system=None))
    text = out.getvalue()
    row = next(line for line in text.splitlines() if line.startswith("│ 1+2 "))
    assert "2→3→1" in row and "16→24→8" in row and "14–45" in row and "180,000" in row
    assert not any(line.startswith("│ 2 ") or line.startswith("│   2 ") for line in text.splitlines()[:12])
    note = " ".join(text.split())
    assert "1+2: one offer (vnet-yz-a100-80-8x-monthly) rented as overlapping contracts" in note
    assert "one contract of 3 nodes" in note


def test_json_allocations_keep_both_lines():
    _p, _c, plan = two_contracts_a_day_apart()
    assert [(a["nodes"], a["start_day"], a["end_day"]) for a in solve_json(plan)["allocations"]] == \
        [(2, 14, 44), (1, 15, 45)]


def test_the_html_report_shows_the_joined_line_and_its_note_in_both_languages():
    prob, cat, plan = two_contracts_a_day_apart()
    page = render_html(plan, prob, cat)
    table = page.split('class="allocations"', 1)[1].split("</table>", 1)[0]
    assert ">1+2<" in table and "2→3→1" in table and 'class="merged"' in page
    with language("zh-CN"):
        zh = render_html(plan, prob, cat)
    assert "2→3→1" in zh and "供应商可按一份 3 个节点的合同签署" in zh
