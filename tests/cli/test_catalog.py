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
from tests.builders import HANG_SECONDS, ROOT

CATALOG = ROOT / "catalogs" / "beijing-sample"


def gpuplan(*args: str, columns: str = "250") -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": columns}        # results are laid out for 100 columns at most
    return subprocess.run([sys.executable, "-m", "solver.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=HANG_SECONDS, cwd=ROOT, env=env)


def column(table: str, name: str) -> list[str]:
    with open(CATALOG / table, newline="", encoding="utf-8") as fh:
        return [row[name] for row in csv.DictReader(fh)]


COMMANDS = {                       # every CLI run of this module, started together
    "validate": ("catalog", "validate", "catalogs/beijing-sample"),
    "show": ("catalog", "show"),                                   # default folder, offers
    "show_gpus": ("catalog", "show", "--table", "gpus"),
    "show_bogus": ("catalog", "show", "--table", "bogus"),
    "show_datacenters": ("catalog", "show", "--table", "datacenters"),
}
AT_100 = ("offers", "gpus", "datacenters")           # `catalog show --table T` with COLUMNS=100


@pytest.fixture(scope="module")
def runs() -> dict[str, subprocess.CompletedProcess]:
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(gpuplan, *argv) for name, argv in COMMANDS.items()}
        futures.update({f"{t}@100": pool.submit(gpuplan, "catalog", "show", "--table", t, columns="100")
                        for t in AT_100})
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


def test_show_marks_a_gpu_that_needs_another_software_stack(runs):
    # Ascend 910B beside A100s: its offers' heading says CANN, the caption says what that means,
    # and the gpus table has the stack column (issue 24, item 9); the CUDA cards are not marked.
    offers = runs["offers@100"].stdout
    assert "Ascend-910B-64G (CANN)" in offers and "(CUDA)" not in offers
    assert "needs another software stack" in " ".join(offers.split())
    gpus = runs["gpus@100"].stdout
    assert "stack" in gpus and "cann" in gpus


def test_show_unknown_table_exits_2(runs):
    """Regression: an unknown --table used to print the offers table with exit 0."""
    run = runs["show_bogus"]
    assert run.returncode == 2, run.stdout[:300]
    assert "Traceback" not in run.stdout + run.stderr
    assert "bogus" in run.stderr


# --- within 100 columns, nothing dropped ---------------------------------------------------------

def rows(table: str) -> list[dict[str, str]]:
    with open(CATALOG / table, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


NAMES = {"offers": ("offer", "vendor", "datacenter", "gpu"), "gpus": ("gpu", "class", "confidence"),
         "datacenters": ("datacenter", "region", "link_group")}


@pytest.mark.parametrize("table", AT_100)
def test_show_fits_100_columns_and_keeps_names_and_sources(runs, table):
    """README: result tables stay within 100 columns. Names stay whole on one line (they are typed
    into --set edits); each row's date and source are numbered notes, none left out."""
    run = runs[f"{table}@100"]
    assert run.returncode == 0, run.stderr
    widest = max(len(line) for line in run.stdout.splitlines())
    assert widest <= 100, widest
    words = set(run.stdout.split())
    flat = " ".join(run.stdout.split())
    for row in rows(f"{table}.csv"):
        for column in NAMES[table]:
            value = row[column]
            assert value in (run.stdout if " " in value else words), (column, value)
        assert " ".join(f"{row['as_of']}: {row['source']}".split()) in flat, row["source"][:40]


@pytest.mark.parametrize("width", [100, 80, 60])
@pytest.mark.parametrize("table", AT_100)
def test_a_narrow_console_folds_cells_but_drops_no_column(table, width):
    from rich.console import Console

    from solver.report.catalog_table import render_table
    from solver.load import load_catalog

    console = Console(width=width, record=True, color_system=None, file=open(os.devnull, "w"))
    render_table(load_catalog(CATALOG), console, table)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    header = {"offers": "fabric", "gpus": "confidence", "datacenters": "residency"}[table]
    assert "src" in text and (header in text or width < 100)
    refs = [line.split()[-1] for line in text.splitlines() if line.strip() and line.split()[-1].isdigit()]
    assert refs, text                                   # the src column still carries its numbers


def test_show_ranks_offers_by_their_all_in_price(runs):
    """Rent 9.00 with an 8% platform fee bills 9.72 per GPU-hour, dearer than 9.50 with none:
    ranked by rent alone the first looked cheaper. Each fabric of an offer gets its own
    all-in price (a monthly node: (60,800 rent + 5,500 IB) / 8 GPUs / 720 h = 11.51)."""
    lines = runs["show"].stdout.splitlines()
    at = {name: next(i for i, line in enumerate(lines) if line.startswith(name + " "))
          for name in ("hwc-fs-a100-40-1x-hourly", "gpum-fs-a100-40-1x-hourly", "vnet-yz-a100-80-8x-monthly")}
    assert at["hwc-fs-a100-40-1x-hourly"] < at["gpum-fs-a100-40-1x-hourly"]
    assert "ethernet 9.72" in " ".join(lines[at["gpum-fs-a100-40-1x-hourly"]].split())
    monthly = " ".join(lines[at["vnet-yz-a100-80-8x-monthly"]].split())
    after = " ".join(lines[at["vnet-yz-a100-80-8x-monthly"] + 1].split())
    assert "ib_hdr 11.51" in monthly and after == "roce 11.04"


WORLD = ROOT / "catalogs" / "public-clouds-sample"


def _show_world(width: int = 100, **how) -> str:
    from rich.console import Console

    from solver.load import load_catalog
    from solver.report.catalog_table import OfferFilter, render_table

    console = Console(width=width, record=True, color_system=None, file=open(os.devnull, "w"))
    render_table(load_catalog(WORLD), console, "offers", OfferFilter(**how))
    return console.export_text()


def _ids(text: str) -> list[str]:
    from solver.load import load_catalog

    offers = set(load_catalog(WORLD).offers)
    return [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in offers]


def test_show_hundreds_of_offers_within_100_columns_ids_whole():
    """The world sample (183 offers, ids up to 60 characters): every line fits, every offer id is on
    one line with its site under it, and each GPU's offers are grouped by the currency of their prices."""
    text = _show_world()
    assert max(len(line) for line in text.splitlines()) <= 100
    assert len(_ids(text)) == 183
    assert "nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-hourly" in _ids(text)
    assert "H100-80G (prices in USD)" in text and "H100-80G (prices in CNY)" in text
    assert "give --rate USD=7.1" in " ".join(text.split())


def test_show_filters_and_top_n_per_gpu():
    from solver.load import load_catalog

    cat = load_catalog(WORLD)
    ids = _ids(_show_world(gpus=("H100-80G",), modes=("spot", "hourly"), top=3, rates=(("USD", 7.1),)))
    assert len(ids) == 3 and {cat.offers[i].gpu for i in ids} == {"H100-80G"}
    cheapest = sorted((o for o in cat.offers.values() if o.gpu == "H100-80G" and o.mode in ("spot", "hourly")),
                      key=lambda o: min(o.gpu_cost_per_hour(k) for k in range(len(o.interconnect)))
                      * (7.1 if o.currency == "USD" else 1))
    assert ids == [o.offer for o in cheapest[:3]]
    us = _ids(_show_world(regions=("us-east-1",), vendors=("aws", "lambda")))
    assert us and all(cat.datacenters[cat.offers[i].datacenter].region == "us-east-1" for i in us)
    assert {cat.offers[i].vendor for i in us} == {"aws", "lambda"}
    assert set(_ids(_show_world(regions=("Shunyi",), top=1))) <= {o.offer for o in cat.offers.values()
                                                                if o.datacenter == "Shunyi"}


def test_show_options_from_the_cli():
    run = gpuplan("catalog", "show", WORLD, "--gpu", "H200-141G", "--mode", "spot", "--top", "2", "--rate", "USD=7.1",
                  columns="100")
    assert run.returncode == 0, run.stderr
    assert max(len(line) for line in run.stdout.splitlines()) <= 100
    assert "all-in CNY/GPU-h" in " ".join(run.stdout.split()) and "other currencies at USD 7.1" in run.stdout
    bad = gpuplan("catalog", "show", WORLD, "--gpu", "H900")
    assert bad.returncode == 2 and "--gpu" in bad.stderr and "H900" in bad.stderr
