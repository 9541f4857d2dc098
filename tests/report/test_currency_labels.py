"""A problem in USD shows USD everywhere: every command's terminal tables, its --json (a
`currency` key beside the money), the HTML report, the workbook's number formats and the
infeasibility explanation. "CNY" may appear only where money really is CNY.

The problem is seed 000's (5 monthly A100 nodes, a few seconds a solve) over a copy of the
Beijing sample whose offers are quoted in USD (every amount × RATE, the currency column USD,
the `cny_` price units renamed): nothing is CNY, so no output may say CNY. One run more, over
the CNY catalog with `exchange_rates`, checks the converted plan states its rates.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import openpyxl
import pytest
import yaml
from tests.builders import DATA, HANG_SECONDS, ROOT

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"
CATALOG = ROOT / "catalogs" / "beijing-sample"
RATE = 0.14
"""USD for one CNY."""
MONEY_COLUMNS = ("price", "interconnect_price", "storage_per_tb_month", "egress_per_tb")


def usd_catalog(folder: Path) -> Path:
    """The Beijing sample with every offer quoted in USD."""
    folder.mkdir()
    for name in ("gpus.csv", "datacenters.csv"):
        (folder / name).write_text((CATALOG / name).read_text(encoding="utf-8"), encoding="utf-8")
    with open(CATALOG / "offers.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        fields, rows = reader.fieldnames, list(reader)
    for row in rows:
        for col in MONEY_COLUMNS:
            if row[col]:
                row[col] = "|".join(f"{float(v) * RATE:.6g}" for v in row[col].split("|"))
        row["currency"], row["price_unit"] = "USD", row["price_unit"].removeprefix("cny_")
    with open(folder / "offers.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    return folder


def write_problem(path: Path, **changes) -> Path:
    data = yaml.safe_load(SEED.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def gpuplan(*args) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "250"}          # wide, so rich does not fold a label
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=HANG_SECONDS, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("currency")


@pytest.fixture(scope="module")
def runs(tmp) -> dict[str, subprocess.CompletedProcess]:
    catalog = str(usd_catalog(tmp / "catalog"))
    usd = write_problem(tmp / "usd.yaml", catalog=catalog, currency="USD")
    tight = write_problem(tmp / "tight.yaml", catalog=catalog, currency="USD", budget=30000)
    rates = write_problem(tmp / "rates.yaml", catalog=str(CATALOG), currency="USD",
                          exchange_rates={"as_of": "2026-12-04", "source": "test", "rates": {"CNY": RATE}})
    (tmp / "grid.yaml").write_text('grid:\n  "jobs[*].deadline_days=": [28, 30]\n', encoding="utf-8")
    cmds = {
        "solve": ("solve", usd, "--baselines", "--why", "--html", tmp / "plan.html", "--xlsx", tmp / "plan.xlsx"),
        "solve_json": ("solve", usd, "--json"),
        "rates_json": ("solve", rates, "--json"),
        "infeasible": ("solve", tight),
        "infeasible_json": ("solve", tight, "--json"),
        "whatif": ("whatif", usd, "--set", "jobs.pretrain-7b.deadline_days=28"),
        "whatif_json": ("whatif", usd, "--set", "jobs.pretrain-7b.deadline_days=28", "--json"),
        "why_json": ("why", usd, "--json"),
        "frontier": ("frontier", usd, "-n", "2", "--xlsx", tmp / "frontier.xlsx", "--plot", tmp / "frontier"),
        "frontier_budget_json": ("frontier", usd, "-n", "2", "--x", "budget", "--json"),
        "sweep": ("sweep", usd, "--grid", tmp / "grid.yaml", "-j", "1", "-q", "-o", tmp / "sweep.xlsx"),
        "sweep_json": ("sweep", usd, "--grid", tmp / "grid.yaml", "-j", "1", "-q", "--json"),
        "negotiate": ("negotiate", usd, "--vendor", "21vianet", "--export-vendor", "21vianet", tmp / "v.csv"),
        "negotiate_json": ("negotiate", usd, "--vendor", "21vianet", "--json"),
        "report": ("report", usd, "-o", tmp / "report.html", "--frontier-points", "2"),
        "split_bill": ("split-bill", "--sacct", DATA / "sacct-shared-rack.txt", "--rack-cost", "1000",
                       "--currency", "USD"),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(gpuplan, *argv) for name, argv in cmds.items()}
        return {name: fut.result() for name, fut in futures.items()}


TEXT_RUNS = ["solve", "infeasible", "whatif", "frontier", "sweep", "negotiate", "report", "split_bill"]


@pytest.mark.parametrize("name", TEXT_RUNS)
def test_terminal_output_says_usd_never_cny(runs, name):
    run = runs[name]
    assert run.returncode == (1 if name == "infeasible" else 0), run.stderr
    text = run.stdout + run.stderr
    assert "USD" in text and "CNY" not in text and "¥" not in text, text


def test_each_table_of_solve_names_the_currency(runs):
    text = runs["solve"].stdout
    for title in ("cost in USD", "Cost breakdown (USD)", "idle cost in USD", "Cash flow (USD", "Against simpler plans (USD)",
                  "why seed-7b-200b-30d: optimum"):
        assert title in text
    assert "USD more budget" in runs["infeasible"].stdout + runs["infeasible"].stderr


JSON_RUNS = ["solve_json", "whatif_json", "why_json", "frontier_budget_json", "negotiate_json"]


@pytest.mark.parametrize("name", JSON_RUNS)
def test_json_says_its_currency(runs, name):
    run = runs[name]
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["currency"] == "USD" and "CNY" not in run.stdout
    if name == "frontier_budget_json":
        assert data["x"] == "cost (USD)" and data["eps"] == "budget (USD)"
    if name == "whatif_json":
        assert data["baseline"]["currency"] == data["scenario"]["currency"] == "USD"
    if name == "negotiate_json":
        assert {o["currency"] for o in data["offers"]} == {"USD"}


def test_sweep_rows_and_the_infeasibility_explanation_say_usd(runs):
    rows = json.loads(runs["sweep_json"].stdout)
    assert {r["currency"] for r in rows} == {"USD"}
    data = json.loads(runs["infeasible_json"].stdout)
    assert data["currency"] == "USD"
    assert "CNY" not in runs["infeasible_json"].stdout and "USD more budget" in runs["infeasible_json"].stdout, data


def test_a_converted_plan_states_its_currency_and_rates(runs):
    data = json.loads(runs["rates_json"].stdout)
    usd = json.loads(runs["solve_json"].stdout)
    assert data["currency"] == "USD" and data["exchange_rates"]["rates"] == {"CNY": RATE}
    assert data["total_cost"] == pytest.approx(usd["total_cost"], rel=1e-4)    # the same prices, converted


def test_html_reports_say_usd(runs, tmp):
    for name in ("plan.html", "report.html"):
        page = (tmp / name).read_text(encoding="utf-8")
        assert "USD" in page and "CNY" not in page and "¥" not in page, name
    assert "cost (USD)" in (tmp / "report.html").read_text(encoding="utf-8")     # the frontier's axis


def test_frontier_plot_axis_says_usd(runs, tmp):
    pytest.importorskip("matplotlib")
    svg = (tmp / "frontier.svg").read_text(encoding="utf-8")
    assert "cost (USD)" in svg and "CNY" not in svg


def test_workbooks_format_money_in_usd(runs, tmp):
    for name in ("plan.xlsx", "frontier.xlsx", "sweep.xlsx"):
        formats = {cell.number_format for sheet in openpyxl.load_workbook(tmp / name)
                   for row in sheet.iter_rows() for cell in row}
        assert '#,##0.00 "USD"' in formats and not any("CNY" in f for f in formats), (name, formats)
    with open(tmp / "v.csv", newline="", encoding="utf-8") as fh:
        assert {row["currency"] for row in csv.DictReader(fh)} == {"USD"}
