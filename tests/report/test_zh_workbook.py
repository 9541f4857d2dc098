"""Issue 47, item 7: the zh-CN workbook and HTML report read right.

The zh-CN workbook kept English values (`gpu_rent`, `total`, `days 0–29`, `monthly`) and capitalised
vendor names in headers; the allocations sheet totalled 392,999.99 against 393,000 in the rentals
sheet; the cost bar's zh-CN label was clipped at the drawing's edge; the HTML listed rentals 1, 3, 2;
the terminal's idle table of a 3-rental plan showed only line 3.
"""

from __future__ import annotations

import io
import json
import re
from datetime import date

import pytest
from rich.console import Console

from solver.i18n import language
from solver.load import load_problem
from solver.model.ledger import cash_flow
from solver.model.plan import Plan
from solver.report.charts import WIDTH, cost_svg, label_px
from solver.report.html import render_html
from solver.report.tables import allocation_rows, plan_tables, write_xlsx
from solver.report.terminal import render_plan
from tests.builders import DATA, ROOT

RECORDED = ("data-locality", "debug-then-train", "hybrid-burst", "seed-13b-100b", "seed-7b-200b-30d")
TECHNICAL = {"GPU", "GPUs", "TP", "PP", "DP", "ZeRO", "MFU", "EFLOP", "GB", "FLOPs", "LoRA", "QLoRA", "highs",
             "gpus", "csv", "default_mfu", "kW", "TB"}
"""Words a Chinese reader of a GPU plan reads as they are: units, parallelism names, the solver's name,
the catalog file and column a note names."""


def recorded(name: str, start: date | None = None):
    """A bundled problem's recorded plan (tests/data/golden), as if it started on `start`."""
    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    data = json.loads((DATA / "golden" / f"solve-{name}.json").read_text(encoding="utf-8"))["output"]
    plan = Plan.model_validate({**data, "solve_seconds": 0.0})
    if start is not None:
        prob = prob.model_copy(update={"start_date": start})
        plan = plan.model_copy(update={"start_date": start, "cash_flow": cash_flow(
            plan.allocations, plan.schedule.assignments, prob, cat, plan.schedule.period_days)})
    return prob, cat, plan


def catalog_words(prob, cat, plan) -> set[str]:
    """Ids and names that come from the catalog or the problem, and the texts the catalog quotes."""
    names = {prob.name, str(cat.path), str(prob.catalog), *(j.name for j in prob.jobs)}
    for o in cat.offers.values():
        names |= {o.offer, o.vendor, o.datacenter, o.gpu, o.price_unit, o.currency, str(o.source or ""),
                  *o.interconnect, f"{o.currency} {o.price_unit}"}
    names |= set(cat.gpus) | set(cat.datacenters) | {d.region for d in cat.datacenters.values()}
    return {n for n in names if n}


def english_left(text: str, allowed: set[str]) -> list[str]:
    """The English words of a cell once the catalog's names and the technical words are taken out."""
    for name in sorted(allowed, key=len, reverse=True):
        text = text.replace(name, " ")
    return [w for w in re.findall(r"[A-Za-z][A-Za-z_'-]+", text) if w not in TECHNICAL]


@pytest.mark.parametrize("name,start", [(n, None) for n in RECORDED] + [("hybrid-burst", date(2027, 1, 20))])
def test_the_zh_workbook_has_no_english_values_but_ids_and_catalog_names(tmp_path, name, start):
    openpyxl = pytest.importorskip("openpyxl")
    prob, cat, plan = recorded(name, start)
    with language("zh-CN"):
        write_xlsx(plan_tables(plan, prob, cat), tmp_path / "zh.xlsx", currency=plan.currency, plan=plan)
    allowed = catalog_words(prob, cat, plan)
    found = [(ws.title, c.coordinate, c.value) for ws in openpyxl.load_workbook(tmp_path / "zh.xlsx").worksheets
             for row in ws.iter_rows() for c in row
             if isinstance(c.value, str) and not c.value.startswith("=") and english_left(c.value, allowed)]
    assert found == []


def test_the_zh_cash_grid_keeps_vendor_names_as_written(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    prob, cat, plan = recorded("seed-13b-100b")
    with language("zh-CN"):
        write_xlsx(plan_tables(plan, prob, cat), tmp_path / "zh.xlsx", currency=plan.currency, plan=plan)
    sheet = openpyxl.load_workbook(tmp_path / "zh.xlsx")["月度现金流"]
    heads = [c.value for c in sheet[1]][1:-1]
    assert heads and all(h.startswith("baidu-ai-cloud ") for h in heads), heads


@pytest.mark.parametrize("name", RECORDED)
@pytest.mark.parametrize("detail", ["month", "day", "period"])
def test_the_allocations_pieces_add_up_to_each_rentals_cost_to_the_cent(name, detail):
    prob, _cat, plan = recorded(name)
    rows = allocation_rows(plan, prob.horizon_days, detail)
    for n, a in enumerate(plan.allocations, start=1):
        assert round(rows[rows["rental"] == n]["cost_cny"].sum(), 2) == round(a.cost, 2), (n, detail)


def test_a_cost_split_in_thirds_adds_up():
    """393,000 over 30 + 30 + 3 days: three pieces rounded to the cent each totalled 393,000.01."""
    prob, _cat, plan = recorded("seed-7b-200b-30d")
    line = plan.allocations[0].model_copy(update={"cost": 393_000.0, "start_day": 0, "end_day": 63})
    plan = plan.model_copy(update={"allocations": [line]})
    rows = allocation_rows(plan, 63, "month")
    assert len(rows) == 3 and round(rows["cost_cny"].sum(), 2) == 393_000.0


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("name", RECORDED)
def test_every_cost_label_fits_inside_the_drawing(name, lang):
    _p, _c, plan = recorded(name)
    with language(lang):
        svg = cost_svg(plan)
    for x, anchor, body in re.findall(r'<text x="([\d.]+)" y="[\d.]+"(?: text-anchor="(\w+)")?[^>]*>(.*?)</text>', svg):
        text = re.sub(r"<[^>]+>", "", body)
        if anchor == "end":
            assert float(x) - label_px(text) >= 0, text
        else:
            assert float(x) + label_px(text) <= WIDTH, (lang, text)


def test_the_zh_cost_label_of_a_91_percent_part_fits():
    """The label the issue saw clipped: "384,000 (占折扣前费用的 91.0%)"."""
    _p, _c, plan = recorded("seed-7b-200b-30d")
    plan = plan.model_copy(update={"cost_breakdown": {"gpu_rent": 384_000.0, "interconnect": 38_000.0},
                                   "total_cost": 422_000.0})
    with language("zh-CN"):
        svg = cost_svg(plan)
    x = float(re.search(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="start">384,000', svg).group(1))
    assert "91.0%" in svg and x + label_px("384,000 (占折扣前费用的 91.0%)") <= WIDTH


def test_the_html_lists_rentals_in_number_order():
    prob, cat, plan = recorded("hybrid-burst")
    page = render_html(plan, prob, cat)
    table = page.split('class="allocations"', 1)[1].split("</table>", 1)[0]
    numbers = [int(n) for n in re.findall(r"<tr><td[^>]*>(\d+)</td>", table)]
    assert numbers == list(range(1, len(plan.allocations) + 1))


def test_the_idle_table_shows_every_rental_line():
    """A 3-rental plan's idle table showed only line 3 (1 and 2 were fully used)."""
    _p, _c, plan = recorded("hybrid-burst")
    out = io.StringIO()
    render_plan(plan, Console(file=out, width=100, color_system=None))
    lines = out.getvalue().splitlines()
    idle = lines[next(i for i, line in enumerate(lines) if "Paid but idle" in line):]
    idle = idle[:next(i for i, line in enumerate(idle) if line.startswith("└"))]
    shown = [int(m.group(1)) for line in idle for m in [re.match(r"│\s*(\d+)\s*│", line)] if m]
    assert shown == [u.rental for u in plan.rental_use] == list(range(1, len(plan.allocations) + 1))
