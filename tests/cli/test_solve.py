"""End-to-end: `gpuplan solve` as a subprocess (real exit codes, real stdout/stderr).

The seed problem (seed 000's 7B × 200B tokens in 30 days) must come out at 5 monthly
nodes of 8 A100-80G, and the JSON must carry every contract key (docs/ARCHITECTURE.md, CLI and file contract).
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.builders import DATA, HANG_SECONDS, ROOT

SEED = ROOT / "problems" / "seed-7b-200b-30d.yaml"
DATA = DATA
CATALOG = ROOT / "catalogs" / "beijing-sample"

ALLOCATION_KEYS = {"offer", "vendor", "datacenter", "gpu", "mode", "interconnect", "nodes", "gpus",
                   "start_day", "end_day", "cost"}
JOB_KEYS = {"name", "finish_day", "gpus", "layout"}
TOP_KEYS = {"status", "total_cost", "currency", "allocations", "jobs", "cost_breakdown", "lower_bound",
            "gap", "solve_seconds"}


def gpuplan(*args: str, timeout: float = HANG_SECONDS) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "250"}          # wide, so rich does not wrap table cells
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT, env=env)


def offers() -> dict[str, dict]:
    with open(CATALOG / "offers.csv", newline="", encoding="utf-8") as fh:
        return {row["offer"]: row for row in csv.DictReader(fh)}


def commands(tmp: Path) -> dict[str, tuple]:
    """Every CLI run of this module; started together (each pays ~0.7 s of imports)."""
    return {
        "seed": ("solve", SEED, "--json"),                          # the one default-backend solve
        "seed_cp_sat": ("solve", SEED, "--json", "--backend", "cp_sat"),
        "table_mps": ("solve", SEED, "--backend", "cp_sat", "--export-mps", tmp / "seed.mps"),
        "small": ("solve", DATA / "small-storage-egress.yaml", "--json", "--backend", "cp_sat"),
        "infeasible": ("solve", DATA / "infeasible-lead-time.yaml", "--json", "--backend", "cp_sat"),
    }


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("solve")


@pytest.fixture(scope="module")
def runs(tmp) -> dict[str, subprocess.CompletedProcess]:
    cmds = commands(tmp)
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(gpuplan, *argv) for name, argv in cmds.items()}
        return {name: fut.result() for name, fut in futures.items()}


@pytest.fixture(scope="module")
def seed_run(runs) -> subprocess.CompletedProcess:
    return runs["seed"]


@pytest.fixture(scope="module")
def seed_plan(seed_run) -> dict:
    assert seed_run.returncode == 0, seed_run.stderr
    return json.loads(seed_run.stdout)


@pytest.fixture(scope="module")
def small_plan(runs) -> dict:
    run = runs["small"]
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


# --- the seed, JSON -------------------------------------------------------------------------

def test_seed_exit_zero_and_one_json_object(seed_run):
    assert seed_run.returncode == 0, seed_run.stderr
    assert "Traceback" not in seed_run.stdout + seed_run.stderr
    data = json.loads(seed_run.stdout)             # the whole of stdout is one JSON document
    assert isinstance(data, dict)


def test_seed_json_has_contract_keys(seed_plan):
    assert TOP_KEYS <= seed_plan.keys()
    assert seed_plan["status"] in ("optimal", "feasible")
    assert seed_plan["currency"] == "CNY"
    for key in ("total_cost", "lower_bound", "gap", "solve_seconds"):
        assert isinstance(seed_plan[key], (int, float)) and not isinstance(seed_plan[key], bool), key
    assert seed_plan["solve_seconds"] >= 0
    assert isinstance(seed_plan["cost_breakdown"], dict) and seed_plan["cost_breakdown"]
    assert seed_plan["allocations"], "a solved plan rents something"
    for alloc in seed_plan["allocations"]:
        assert ALLOCATION_KEYS <= alloc.keys(), ALLOCATION_KEYS - alloc.keys()
    assert [j["name"] for j in seed_plan["jobs"]] == ["pretrain-7b"]
    for job in seed_plan["jobs"]:
        assert JOB_KEYS <= job.keys(), JOB_KEYS - job.keys()


def test_seed_rents_five_monthly_nodes_of_eight_a100_80g(seed_plan):
    allocs = seed_plan["allocations"]
    assert {a["gpu"] for a in allocs} == {"A100-80G"}
    assert {a["mode"] for a in allocs} == {"monthly"}
    assert sum(a["nodes"] for a in allocs) == 5
    assert sum(a["gpus"] for a in allocs) == 40
    for a in allocs:
        assert a["gpus"] == 8 * a["nodes"]
    job = seed_plan["jobs"][0]
    assert job["gpus"] == 40
    assert 0 < job["finish_day"] <= 30


def test_seed_job_stays_on_one_fabric(seed_plan):
    """single_site: one vendor at one site on one fabric (IB and RoCE nodes share no fabric);
    the seed's answer is IB HDR."""
    allocs = seed_plan["allocations"]
    assert len({(a["vendor"], a["datacenter"], a["interconnect"]) for a in allocs}) == 1, allocs
    assert allocs[0]["interconnect"] == "ib_hdr"
    assert seed_plan["jobs"][0].get("sites", [allocs[0]["datacenter"]]) == [allocs[0]["datacenter"]]


def test_seed_allocations_match_catalog_rows(seed_plan):
    rows = offers()
    for a in seed_plan["allocations"]:
        row = rows[a["offer"]]
        assert (a["vendor"], a["datacenter"], a["gpu"], a["mode"]) == \
               (row["vendor"], row["datacenter"], row["gpu"], row["mode"])
        assert a["interconnect"] in row["interconnect"].split("|")
        assert a["start_day"] >= int(row["lead_time_days"])       # nothing before the lead time
        assert a["end_day"] > a["start_day"]
        assert a["cost"] > 0


def test_seed_costs_add_up(seed_plan):
    total = seed_plan["total_cost"]
    parts = seed_plan["cost_breakdown"]
    assert sum(parts.values()) == pytest.approx(total, abs=0.01)
    rent = sum(a["cost"] for a in seed_plan["allocations"])
    assert rent + parts.get("storage", 0) + parts.get("egress", 0) == pytest.approx(total, abs=0.01)
    assert seed_plan["lower_bound"] <= total + 0.01
    assert 0 <= seed_plan["gap"] <= 1e-6 or seed_plan["status"] == "feasible"


def test_cp_sat_backend_agrees_with_default(runs, seed_plan):
    run = runs["seed_cp_sat"]
    assert run.returncode == 0, run.stderr
    other = json.loads(run.stdout)
    assert other["status"] == "optimal" and seed_plan["status"] == "optimal"
    assert other["total_cost"] == pytest.approx(seed_plan["total_cost"], rel=1e-6)
    assert sum(a["gpus"] for a in other["allocations"]) == 40


# --- a small problem with storage and egress ----------------------------------------------

def test_storage_and_egress_are_charged_per_site_used(small_plan):
    rows = offers()
    sites = {(a["vendor"], a["datacenter"]) for a in small_plan["allocations"]}
    assert sites, "the plan rents something"

    def site_price(column):
        return sum(float(next(r[column] for r in rows.values() if (r["vendor"], r["datacenter"]) == s))
                   for s in sites)
    parts = small_plan["cost_breakdown"]
    # storage_tb 3 from day 0 until the job finishes (a month is 30 days); egress_tb 2 once
    days = small_plan["jobs"][0]["finish_day"]
    assert days < 10   # it finishes before its deadline, and storage stops then
    assert parts["storage"] == pytest.approx(3 * site_price("storage_per_tb_month") * days / 30, abs=0.01)
    assert parts["egress"] == pytest.approx(2 * site_price("egress_per_tb"), abs=0.01)
    assert parts["storage"] > 0 and parts["egress"] > 0


def test_small_problem_costs_add_up(small_plan):
    total = small_plan["total_cost"]
    parts = small_plan["cost_breakdown"]
    assert sum(parts.values()) == pytest.approx(total, abs=0.01)
    rent = sum(a["cost"] for a in small_plan["allocations"])
    assert rent + parts["storage"] + parts["egress"] == pytest.approx(total, abs=0.01)
    assert {a["gpu"] for a in small_plan["allocations"]} == {"A100-80G"}
    assert {a["mode"] for a in small_plan["allocations"]} == {"hourly"}
    assert all(a["end_day"] <= 10 for a in small_plan["allocations"])
    assert small_plan["jobs"][0]["finish_day"] <= 10


# --- rich output and MPS export -------------------------------------------------------------

def test_table_output_and_mps_export(runs, tmp):
    mps = tmp / "seed.mps"
    run = runs["table_mps"]
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert "pretrain-7b" in run.stdout
    assert "total" in run.stdout.lower()
    assert "A100-80G" in run.stdout
    with pytest.raises(json.JSONDecodeError):       # without --json the output is a table, not JSON
        json.loads(run.stdout)

    assert mps.is_file()
    lines = [ln for ln in mps.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("*")]
    assert lines[0].split()[0] == "NAME"
    assert lines[1].strip() == "ROWS"
    sections = [ln.split()[0] for ln in lines if not ln[0].isspace()]
    for section in ("COLUMNS", "RHS", "ENDATA"):
        assert section in sections
    assert sections[-1] == "ENDATA"


# --- infeasible -----------------------------------------------------------------------------

def test_infeasible_exits_one_with_explanation(runs):
    run = runs["infeasible"]
    assert run.returncode == 1, (run.stdout, run.stderr)
    assert "Traceback" not in run.stdout + run.stderr
    if "--json" in run.args:                        # no plan on stdout: the status and the explanation
        assert json.loads(run.stdout)["status"] == "infeasible"
    else:
        assert run.stdout.strip() == "" or "Plan" not in run.stdout
    assert "infeasible" in run.stderr.lower()
    assert "pretrain-7b" in run.stderr and "lead" in run.stderr
