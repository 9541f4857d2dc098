"""End-to-end: `gpuplan catalog validate` and `gpuplan catalog show` as subprocesses."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "catalogs" / "beijing-sample"


def gpuplan(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "250"}          # wide enough that no offer id is wrapped
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env=env)


def column(table: str, name: str) -> list[str]:
    with open(CATALOG / table, newline="", encoding="utf-8") as fh:
        return [row[name] for row in csv.DictReader(fh)]


COMMANDS = {                       # every CLI run of this module, started together
    "validate": ("catalog", "validate", "catalogs/beijing-sample"),
    "show": ("catalog", "show"),                                   # default folder, offers
    "show_gpus": ("catalog", "show", "--table", "gpus"),
    "show_bogus": ("catalog", "show", "--table", "bogus"),
}


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess]:
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(gpuplan, *argv) for name, argv in COMMANDS.items()}
        return {name: fut.result() for name, fut in futures.items()}


def test_validate_sample_catalog_ok(runs):
    run = runs["validate"]
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert "ok" in run.stdout
    offers = column("offers.csv", "offer")
    counts = re.search(r"(\d+) GPUs, (\d+) datacenters, (\d+) offers from (\d+) vendors", run.stdout)
    assert counts, run.stdout
    assert int(counts[1]) == len(column("gpus.csv", "gpu"))
    assert int(counts[2]) == len(column("datacenters.csv", "datacenter"))
    assert int(counts[3]) == len(offers)
    assert int(counts[4]) == len(set(column("offers.csv", "vendor")))


def test_show_lists_every_offer(runs):
    run = runs["show"]
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert "CNY/GPU-h" in run.stdout
    for offer in column("offers.csv", "offer"):
        assert offer in run.stdout, offer


def test_show_gpus_table(runs):
    run = runs["show_gpus"]
    assert run.returncode == 0, run.stderr
    for gpu in column("gpus.csv", "gpu"):
        assert gpu in run.stdout, gpu
    assert "bce-yz-a100-80-8x-monthly" not in run.stdout


def test_show_unknown_table_exits_2(runs):
    """Regression: an unknown --table used to print the offers table with exit 0."""
    run = runs["show_bogus"]
    assert run.returncode == 2, run.stdout[:300]
    assert "Traceback" not in run.stdout + run.stderr
    assert "bogus" in run.stderr
