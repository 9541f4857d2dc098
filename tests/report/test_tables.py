"""Plans as spreadsheet tables (`solve --xlsx FILE` / `--csv DIR`): sheets, per-period rows, files."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from solver.api import solve_problem
from solver.errors import ProblemError
from solver.load import load_problem
from solver.report.tables import (PLAN_SHEETS, check_csv_target, check_xlsx_target, frontier_tables, plan_tables,
                                  sweep_tables, write_csv_dir, write_xlsx)
from tests.builders import ROOT



def _solved(path: Path):
    problem, catalog = load_problem(path)
    return solve_problem(problem, catalog), problem, catalog


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
    tables = plan_tables(plan, problem, catalog)
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
    alloc = plan_tables(plan, problem, catalog)["allocations"]
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
    path = write_xlsx(tables, tmp_path / "plan.xlsx")
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == list(PLAN_SHEETS)
    sheet = book["allocations"]
    assert all(c.font.bold for c in sheet[1]) and sheet.freeze_panes == "A2"
    assert sheet.column_dimensions["E"].width >= len("datacenter")
    back = pd.read_excel(path, sheet_name=None)
    assert back["allocations"]["gpu_days"].sum() == plan_gpu_days(plan)
    assert list(back["allocations"].columns) == list(tables["allocations"].columns)
    assert back["cost_breakdown"]["cost_cny"].iloc[-1] == plan.total_cost
    before = path.read_bytes()
    with pytest.raises(ProblemError, match="not overwritten"):
        write_xlsx(tables, path)
    assert path.read_bytes() == before
    write_xlsx({"only": tables["jobs"]}, path, force=True)
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
    assert alloc["gpu_days"].sum() == plan_gpu_days(plan)
    assert alloc["period"].isna().sum() == (~tables["allocations"]["in_horizon"]).sum()
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ProblemError, match="allocations.csv.*nothing written"):
        write_csv_dir(tables, folder)
    write_csv_dir(tables, folder, force=True)
    assert (folder / "notes.txt").read_text() == "mine"           # other files are left alone
    with pytest.raises(ProblemError, match="parent"):
        check_csv_target(tmp_path / "no" / "such")
    (tmp_path / "file").write_text("")
    with pytest.raises(ProblemError, match="not a folder"):
        check_csv_target(tmp_path / "file")


def test_missing_openpyxl_says_how_to_install(hybrid, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openpyxl", None)
    with pytest.raises(ProblemError, match=r"pip install \.\[excel\]"):
        write_xlsx({"x": pd.DataFrame({"a": [1]})}, tmp_path / "x.xlsx")
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
    assert list(tables["frontier"]["point"]) == [1, 2] and "finish day" in tables["frontier"].columns
    assert "a; b" in tables["summary"]["value"].tolist()
    frame = pd.DataFrame({"scenario": ["s1"], "cost": [1.0]})
    assert sweep_tables(frame)["sweep"] is frame
