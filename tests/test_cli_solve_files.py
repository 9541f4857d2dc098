"""`gpuplan solve --html/--xlsx/--csv`: files checked before solving, written after, never replaced without --force."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
HYBRID = ROOT / "problems" / "hybrid-burst.yaml"


def gpuplan(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver.cli", "--quiet", *map(str, args)], capture_output=True,
                          text=True, cwd=ROOT)


def test_solve_writes_report_workbook_and_csv_tables(tmp_path):
    run = gpuplan("solve", HYBRID, "--html", tmp_path / "p.html", "--xlsx", tmp_path / "p.xlsx",
                  "--csv", tmp_path / "tables")
    assert run.returncode == 0, run.stderr
    assert "<svg id=\"gantt\"" in (tmp_path / "p.html").read_text(encoding="utf-8")
    sheets = pd.read_excel(tmp_path / "p.xlsx", sheet_name=None)
    assert {"allocations", "jobs", "cost_breakdown", "assumptions"} <= set(sheets)
    csv = pd.read_csv(tmp_path / "tables" / "cost_breakdown.csv")
    assert len(csv) == len(sheets["cost_breakdown"])


def test_an_existing_file_is_refused_before_solving_and_replaced_with_force(tmp_path):
    target = tmp_path / "p.html"
    target.write_text("mine", encoding="utf-8")
    run = gpuplan("solve", HYBRID, "--html", target)
    assert run.returncode == 2 and "--force" in run.stderr and target.read_text(encoding="utf-8") == "mine"
    assert gpuplan("solve", HYBRID, "--html", target, "--force").returncode == 0
    assert target.read_text(encoding="utf-8") != "mine"


def test_frontier_and_sweep_tables_as_workbooks(tmp_path):
    grid = tmp_path / "grid.yaml"
    grid.write_text('grid:\n  "datacenters.Shunyi.power_quota_kw=": [250, 400]\n', encoding="utf-8")
    run = gpuplan("sweep", HYBRID, "--grid", grid, "-j", "1", "-o", tmp_path / "sweep.xlsx")
    assert run.returncode == 0, run.stderr
    sweep = pd.read_excel(tmp_path / "sweep.xlsx", sheet_name="sweep")
    assert len(sweep) == 2 and set(sweep["status"]) == {"optimal"}
    run = gpuplan("frontier", HYBRID, "--points", "3", "--xlsx", tmp_path / "frontier.xlsx")
    assert run.returncode == 0, run.stderr
    points = pd.read_excel(tmp_path / "frontier.xlsx", sheet_name="frontier")
    assert len(points) >= 1 and "point" in points.columns


def test_solve_why_in_json_and_in_the_html_report(tmp_path):
    import json

    run = gpuplan("solve", HYBRID, "--why", "--why-k", "2", "--json", "--html", tmp_path / "p.html")
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    alternatives = data["why"]["jobs"][0]["alternatives"]
    assert len(alternatives) == 2 and all(a["cost"] >= data["total_cost"] for a in alternatives)
    assert all(a["code"] == "price" for a in alternatives)          # both are dearer, feasible plans
    page = (tmp_path / "p.html").read_text(encoding="utf-8")
    assert "Why this plan" in page and alternatives[0]["label"].split(" @")[0] in page
