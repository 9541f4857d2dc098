"""Plans as spreadsheet tables (`solve --xlsx FILE` / `--csv DIR`): sheets, per-period rows, files."""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from solver.errors import ProblemError
from solver.load import load_problem
from solver.report.tables import (PLAN_SHEETS, check_csv_target, check_xlsx_target, frontier_tables, plan_tables,
                                  sweep_tables, write_csv_dir, write_xlsx)
from tests.builders import ROOT
from tests.bundled import bundled_plan



def _solved(path: Path):
    problem, catalog = load_problem(path)
    return bundled_plan(path), problem, catalog


@pytest.fixture(scope="module")
def hybrid():
    """Contracts only, weekly periods, a yearly term running past the horizon."""
    return _solved(ROOT / "problems" / "hybrid-burst.yaml")


@pytest.fixture(scope="module")
def hourly():
    """Hourly rentals only, daily periods."""
    return _solved(ROOT / "tests" / "data" / "small-storage-egress.yaml")


def plan_gpu_days(plan) -> int:
    return sum(a.gpus * (a.end_day - a.start_day) for a in plan.allocations)


def test_sheets_and_gpu_days(hybrid):
    plan, problem, catalog = hybrid
    tables = plan_tables(plan, problem, catalog, "period")
    assert list(tables) == list(PLAN_SHEETS)
    alloc = tables["allocations"]
    assert alloc["gpu_days"].sum() == plan_gpu_days(plan)
    assert (alloc["gpus"] * alloc["days"] == alloc["gpu_days"]).all()
    # every rental line is cut into rows that tile it exactly
    for number, a in enumerate(plan.allocations, start=1):
        rows = alloc[alloc["rental"] == number].sort_values("start_day")
        assert rows["start_day"].iloc[0] == a.start_day and rows["end_day"].iloc[-1] == a.end_day
        assert list(rows["start_day"].iloc[1:]) == list(rows["end_day"].iloc[:-1])
    inside = alloc[alloc["in_horizon"]]
    width = plan.schedule.period_days
    assert (inside["days"] <= width).all() and (inside["end_day"] <= problem.horizon_days).all()
    assert (inside["start_day"] // width == inside["period"]).all()
    after = alloc[~alloc["in_horizon"]]
    assert len(after) == sum(a.end_day > problem.horizon_days for a in plan.allocations) > 0
    assert after["period"].isna().all() and (after["start_day"] == problem.horizon_days).all()
    assert tables["rentals"]["cost_cny"].sum() == pytest.approx(plan.total_cost - plan.cost_breakdown["storage"]
                                                                - plan.cost_breakdown["egress"], abs=1)


def test_per_period_nodes_match_the_schedule(hourly):
    plan, problem, catalog = hourly
    alloc = plan_tables(plan, problem, catalog, "period")["allocations"]
    assert len(plan.schedule.rentals) > 0
    held = defaultdict(int)
    for row in alloc.itertuples():
        held[row.offer, row.interconnect, row.period] += row.nodes
    assert dict(held) == {(r.offer, r.interconnect, r.period): r.nodes for r in plan.schedule.rentals}


def test_jobs_costs_binding_assumptions(hybrid):
    plan, problem, catalog = hybrid
    tables = plan_tables(plan, problem, catalog)
    jobs = tables["jobs"]
    assert list(jobs["job"]) == [j.name for j in problem.jobs]
    assert jobs["finish_day"].tolist() == [j.finish_day for j in plan.jobs]
    costs = tables["cost_breakdown"].set_index("part")["cost_cny"]
    assert costs["total"] == plan.total_cost
    assert costs.drop("total").sum() == pytest.approx(plan.total_cost, abs=1)
    assert len(tables["binding"]) == len(plan.binding)
    facts = tables["assumptions"]
    named = {(s, n): v for s, n, v in zip(facts["section"], facts["name"], facts["value"])}
    assert named["problem", "redundancy"] == problem.redundancy
    assert named["problem", "horizon_days"] == problem.horizon_days
    for gpu in {a.gpu for a in plan.allocations}:
        assert named["mfu", gpu] == catalog.gpus[gpu].default_mfu
    offers = facts[facts["section"] == "offer"].set_index("name")
    assert set(offers.index) == {a.offer for a in plan.allocations}
    for offer_id, row in offers.iterrows():
        offer = catalog.offers[offer_id]
        assert (row["source"], row["as_of"], row["illustrative"]) == (offer.source, offer.as_of, offer.illustrative)


def test_write_xlsx(hybrid, tmp_path):
    plan, problem, catalog = hybrid
    tables = plan_tables(plan, problem, catalog)
    path = write_xlsx(tables, tmp_path / "plan.xlsx", currency="CNY")
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == list(PLAN_SHEETS)
    sheet = book["allocations"]
    assert all(c.font.bold for c in sheet[1]) and sheet.freeze_panes == "A2"
    assert sheet.column_dimensions["G"].width >= len("Yizhuang")
    back = pd.read_excel(path, sheet_name=None)
    data = back["allocations"].iloc[:-1]                               # the last row is the totals row
    assert data["GPU-days"].sum() == plan_gpu_days(plan)
    assert back["allocations"].iloc[-1, 0] == "total"
    assert "Site" in back["allocations"].columns and "datacenter" not in back["allocations"].columns
    before = path.read_bytes()
    with pytest.raises(ProblemError, match="already exists"):
        write_xlsx(tables, path, currency="CNY")
    assert path.read_bytes() == before
    write_xlsx({"only": tables["jobs"]}, path, currency="CNY", force=True)
    assert openpyxl.load_workbook(path).sheetnames == ["only"]
    with pytest.raises(ProblemError, match=r"\*\.xlsx"):
        check_xlsx_target(tmp_path / "plan.xls")


def test_write_csv_dir(hybrid, tmp_path):
    plan, problem, catalog = hybrid
    tables = plan_tables(plan, problem, catalog)
    folder = tmp_path / "plan"                  # made if new
    written = write_csv_dir(tables, folder)
    assert sorted(p.name for p in written) == sorted(f"{n}.csv" for n in PLAN_SHEETS)
    alloc = pd.read_csv(folder / "allocations.csv")
    assert alloc["gpu_days"].sum() == plan_gpu_days(plan)               # CSV: column names, no totals row
    assert list(alloc.columns) == list(tables["allocations"].columns)
    assert (~alloc["in_horizon"]).sum() == (~tables["allocations"]["in_horizon"]).sum() > 0
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ProblemError, match=r"allocations\.csv: --csv: already exists \(and \d+ more files"):
        write_csv_dir(tables, folder)
    write_csv_dir(tables, folder, force=True)
    assert (folder / "notes.txt").read_text() == "mine"           # other files are left alone
    with pytest.raises(ProblemError, match="folder does not exist"):
        check_csv_target(tmp_path / "no" / "such")
    (tmp_path / "file").write_text("")
    with pytest.raises(ProblemError, match="is not a folder"):
        check_csv_target(tmp_path / "file")


def test_missing_openpyxl_says_how_to_install(hybrid, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    with pytest.raises(ProblemError, match=r"pip install \.\[excel\]"):
        write_xlsx({"x": pd.DataFrame({"a": [1]})}, tmp_path / "x.xlsx", currency="CNY")
    assert not (tmp_path / "x.xlsx").exists()


def test_frontier_and_sweep_tables():
    class FakeFrontier:
        def to_dict(self):
            return {"problem": "p", "axis": "deadline", "x": "finish day", "y": "cost (CNY)",
                    "points": [{"eps": 30, "x": 30, "y": 2e6, "cost": 2e6, "knee": False},
                               {"eps": 40, "x": 40, "y": 1.5e6, "cost": 1.5e6, "knee": True}],
                    "tried": [{"eps": 30, "outcome": "ok", "cost": 2e6}], "notes": ["a", "b"]}

    tables = frontier_tables(FakeFrontier())
    assert list(tables) == ["frontier", "tried", "summary"]
    assert list(tables["frontier"]["point"]) == [1, 2]
    assert list(tables["frontier"].columns) == ["point", "eps", "cost", "knee"]   # x, y repeated cost: dropped
    assert "a; b" in tables["summary"]["value"].tolist()
    frame = pd.DataFrame({"scenario": ["s1"], "cost": [1.0]})
    assert sweep_tables(frame)["sweep"] is frame


# ---------------------------------------------------------------- sheets finance can audit (issue 24)

from openpyxl.utils import column_index_from_string, get_column_letter  # noqa: E402

_REF = re.compile(r"\b([A-Z]{1,2})(\d+)\b")


def evaluate(sheet, formula: str) -> float:
    """A formula of the workbook (arithmetic, IF, SUM over a column range) computed from the sheet's cells."""
    expr = formula.lstrip("=")
    expr = re.sub(r"SUM\(([A-Z]+)(\d+):\1(\d+)\)",
                  lambda m: repr(sum(float(evaluate(sheet, v) if isinstance(v := sheet[f"{m[1]}{r}"].value, str)
                                           and v.startswith("=") else v or 0)
                                     for r in range(int(m[2]), int(m[3]) + 1))), expr)
    expr = re.sub(r"SUM\(([A-Z]+)(\d+):([A-Z]+)\2\)",                      # across one row
                  lambda m: repr(sum(float(sheet[f"{get_column_letter(c)}{m[2]}"].value or 0)
                                     for c in range(column_index_from_string(m[1]),
                                                    column_index_from_string(m[3]) + 1))), expr)
    expr = re.sub(r"IF\(([^,]+),([^,]+),([^)]+)\)", r"((\2) if (\1) else (\3))", expr)
    expr = _REF.sub(lambda m: repr(sheet[f"{m[1]}{m[2]}"].value), expr)
    return float(eval(expr.replace("=", "=="), {}))  # noqa: S307 - our own formulas only


def test_cash_by_month_grid_adds_up_across_and_down(hybrid, tmp_path):
    plan, problem, catalog = hybrid
    grid = plan_tables(plan, problem, catalog)["cash_by_month"]
    assert list(grid.columns) == ["month", "21vianet monthly", "21vianet yearly", "21vianet hosted",
                                  "21vianet storage", "21vianet egress", "total_cny"]
    assert len(grid) == 13 and grid["total_cny"].sum() == pytest.approx(plan.total_cost, abs=0.05)
    sheet = openpyxl.load_workbook(write_xlsx({"cash_by_month": grid}, tmp_path / "c.xlsx",
                                              currency="CNY"))["cash_by_month"]
    for row in range(2, len(grid) + 2):
        assert sheet[f"G{row}"].value.startswith("=SUM(B")
        assert evaluate(sheet, sheet[f"G{row}"].value) == pytest.approx(grid["total_cny"].iloc[row - 2], abs=0.01)
    last = len(grid) + 2
    assert sheet[f"A{last}"].value == "total" and sheet[f"C{last}"].number_format == '#,##0.00 "CNY"'
    assert evaluate(sheet, sheet[f"C{last}"].value) == pytest.approx(8_127_840, abs=0.05)   # the yearly term


def cells(sheet) -> dict[str, int]:
    return {c.value: c.column_letter for c in sheet[1]}


@pytest.mark.parametrize("which", ["hybrid", "hourly"])
def test_xlsx_formats_formulas_and_totals(which, hybrid, hourly, tmp_path):
    plan, problem, catalog = {"hybrid": hybrid, "hourly": hourly}[which]
    book = openpyxl.load_workbook(write_xlsx(plan_tables(plan, problem, catalog), tmp_path / "p.xlsx",
                                             currency=plan.currency))
    rentals = book["rentals"]
    col = cells(rentals)
    assert {"Unit price", "Units billed per node", "Platform fee %", "Cost"} <= set(col)
    for row, a in enumerate(plan.allocations, start=2):
        cost = rentals[f"{col['Cost']}{row}"]
        assert cost.value.startswith("=") and col["Unit price"] in cost.value      # a formula of the prices beside it
        assert evaluate(rentals, cost.value) == pytest.approx(a.cost, abs=0.01)
        assert cost.number_format == f'#,##0.00 "{plan.currency}"'
    total_row = len(plan.allocations) + 2
    assert rentals[f"A{total_row}"].value == "total"
    assert evaluate(rentals, rentals[f"{col['Cost']}{total_row}"].value) == \
        pytest.approx(sum(a.cost for a in plan.allocations), abs=0.05)
    assert rentals[f"{col['GPU-days']}2"].number_format == "#,##0"
    costs = book["cost_breakdown"]
    last = costs.max_row
    assert costs[f"A{last}"].value == "total" and costs[f"B{last}"].value.startswith("=SUM(")
    assert evaluate(costs, costs[f"B{last}"].value) == pytest.approx(plan.total_cost, abs=0.05)
    cash = book["cash_flow"]
    amount = cells(cash)["Amount"]
    assert evaluate(cash, cash[f"{amount}{cash.max_row}"].value) == pytest.approx(plan.total_cost, abs=0.05)
    idle = book["idle"]
    icol = cells(idle)
    for row, u in enumerate(plan.rental_use, start=2):
        assert evaluate(idle, idle[f"{icol['Idle cost']}{row}"].value) == pytest.approx(u.idle_cost, abs=0.01)


def test_allocations_per_month_by_default_per_day_on_request(hybrid):
    plan, problem, catalog = hybrid
    month = plan_tables(plan, problem, catalog)["allocations"]
    assert list(month.columns[:1]) == ["month"] and month["month"].iloc[0] == "days 0–29"
    for number, a in enumerate(plan.allocations, start=1):
        rows = month[month["rental"] == number].sort_values("start_day")
        assert rows["start_day"].iloc[0] == a.start_day and rows["end_day"].iloc[-1] == a.end_day
        assert list(rows["start_day"].iloc[1:]) == list(rows["end_day"].iloc[:-1])    # tiles the line
        assert rows["cost_cny"].sum() == pytest.approx(a.cost, abs=0.01 * len(rows))
        assert (rows["days"] <= 30).all()
    yearly = month[month["mode"] == "yearly"]
    assert len(yearly) == 14 and (~yearly["in_horizon"]).sum() == 6      # days 10–375; cut at the horizon, 217
    day = plan_tables(plan, problem, catalog, "day")["allocations"]
    assert len(day) == sum(a.end_day - a.start_day for a in plan.allocations) and (day["days"] == 1).all()
    with pytest.raises(ProblemError, match="--sheet-detail"):
        plan_tables(plan, problem, catalog, "week")


def test_dated_sheets_carry_calendar_dates(hybrid, tmp_path):
    from datetime import date, datetime

    from solver.model.ledger import cash_flow
    plan, problem, catalog = hybrid
    problem = problem.model_copy(update={"start_date": date(2027, 1, 20)})
    plan = plan.model_copy(update={"start_date": problem.start_date, "cash_flow": cash_flow(
        plan.allocations, plan.schedule.assignments, problem, catalog, plan.schedule.period_days)})
    tables = plan_tables(plan, problem, catalog)
    assert tables["allocations"]["month"].iloc[0] == "2027-01"
    book = openpyxl.load_workbook(write_xlsx(tables, tmp_path / "dated.xlsx", currency="CNY"))
    rentals = book["rentals"]
    col = cells(rentals)
    yearly = next(n for n, a in enumerate(plan.allocations, start=2) if a.mode == "yearly")
    assert rentals[f"{col['From']}{yearly}"].value == datetime(2027, 1, 30)
    assert rentals[f"{col['To (last day)']}{yearly}"].value == datetime(2028, 1, 29)
    assert rentals[f"{col['From']}{yearly}"].number_format == "yyyy-mm-dd"
    jobs = book["jobs"]
    assert jobs[f"{cells(jobs)['Last day worked']}2"].value == datetime(2027, 8, 24)
