"""The bundled catalog (catalogs/beijing-sample) meets the issue's data requirements.

Read straight from the CSV files with the csv module (not through solver.load), and prices
converted here, so a wrong row or a wrong conversion in the package cannot hide the other.
Per-GPU prices: `price` per GPU or per node (`gpus_per_node`), per hour or per month
(month = 30 days, year = 365 days, as in catalogs/beijing-sample/README.md).
"""

from __future__ import annotations

import csv
import itertools
from collections import defaultdict
from datetime import date
from pathlib import Path

import pytest
from tests.builders import ROOT

CATALOG = ROOT / "catalogs" / "beijing-sample"
HOURS = {"hour": 1, "month": 30 * 24, "year": 365 * 24}

EXPECTED_TFLOPS = {                                # dense BF16, no sparsity
    "A100-40G": 312, "A100-80G": 312, "A800-80G": 312, "H100-80G": 989.4, "H800-80G": 989.4,
    "H20-96G": 148, "H200-141G": 989.4, "L40S-48G": 362.05, "RTX4090-24G": 165.2,
}
MODES = {"hourly", "monthly", "yearly", "hosted", "spot"}
INTERCONNECTS = {"ib_ndr", "ib_hdr", "roce", "ethernet"}


def read(table: str) -> list[dict[str, str]]:
    with open(CATALOG / table, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


GPUS = {row["gpu"]: row for row in read("gpus.csv")}
DATACENTERS = {row["datacenter"]: row for row in read("datacenters.csv")}
OFFERS = read("offers.csv")


def per_gpu(offer: dict, unit: str) -> float:
    """List rent of one GPU per `unit` (hour or month), from the offer's own price_unit."""
    price = float(offer["price"])
    _, _, what, per = offer["price_unit"].split("_")         # cny_per_gpu_hour -> gpu, hour
    if what == "node":
        price /= int(offer["gpus_per_node"])
    return price / HOURS[per] * HOURS[unit]


def per_gpu_paid(offer: dict) -> float:
    """Per GPU-hour including the platform fee (what is paid for the card itself)."""
    return per_gpu(offer, "hour") * (1 + float(offer["platform_fee_pct"] or 0) / 100)


def by_gpu(mode: str, size: int | None = None) -> dict[str, list[dict]]:
    out = defaultdict(list)
    for o in OFFERS:
        if o["mode"] == mode and (size is None or int(o["gpus_per_node"]) == size):
            out[o["gpu"]].append(o)
    return out


# --- GPUs, datacenters, breadth -------------------------------------------------------------

@pytest.mark.parametrize("gpu, tflops", sorted(EXPECTED_TFLOPS.items()))
def test_gpu_dense_bf16_tflops(gpu, tflops):
    assert gpu in GPUS
    assert float(GPUS[gpu]["bf16_tflops"]) == pytest.approx(tflops, rel=1e-6)
    assert GPUS[gpu]["source"].strip()


def test_ascend_910b():
    row = GPUS["Ascend-910B-64G"]
    assert float(row["bf16_tflops"]) == pytest.approx(313, rel=0.05)
    assert float(row["memory_gb"]) == 64
    assert row["source"].strip()


def test_datacenters_present():
    assert {"Yizhuang", "Shunyi", "Fangshan"} <= set(DATACENTERS)
    for row in DATACENTERS.values():
        assert float(row["power_quota_kw"]) > 0
        assert row["source"].strip()


def test_offer_breadth():
    assert len(OFFERS) >= 30
    assert len({o["vendor"] for o in OFFERS}) >= 4
    assert len({o["offer"] for o in OFFERS}) == len(OFFERS)             # ids unique


def test_all_modes_and_interconnects_present():
    assert {o["mode"] for o in OFFERS} == MODES
    fabrics = {ic for o in OFFERS for ic in o["interconnect"].split("|")}
    assert fabrics == INTERCONNECTS


def test_offers_reference_known_gpus_and_sites():
    for o in OFFERS:
        assert o["gpu"] in GPUS, o["offer"]
        assert o["datacenter"] in DATACENTERS, o["offer"]


# --- provenance ------------------------------------------------------------------------------

@pytest.mark.parametrize("table", ["gpus.csv", "datacenters.csv", "offers.csv"])
def test_every_row_has_as_of_date_and_source(table):
    for row in read(table):
        assert date.fromisoformat(row["as_of"]) <= date(2030, 1, 1), row
        assert row["source"].strip(), row


def test_every_offer_is_illustrative():
    assert {o["illustrative"].strip().lower() for o in OFFERS} == {"true"}
    for o in OFFERS:
        assert "illustrative" in o["source"].lower(), o["offer"]


# --- price consistency (seed rules) -----------------------------------------------------------

def test_monthly_is_400_to_600_times_hourly_per_gpu():
    """Seed 003 Q1: per-GPU monthly price ≈ 400-600 × per-GPU on-demand hourly, every pair."""
    hourly, monthly = by_gpu("hourly"), by_gpu("monthly")
    pairs = 0
    for gpu in set(hourly) & set(monthly):
        for m, h in itertools.product(monthly[gpu], hourly[gpu]):
            ratio = per_gpu(m, "month") / per_gpu(h, "hour")
            assert 400 <= ratio <= 600, (m["offer"], h["offer"], round(ratio, 1))
            pairs += 1
    assert len(set(hourly) & set(monthly)) >= 6 and pairs >= 15


def test_spot_is_about_30_percent_of_on_demand():
    """Seed 002: spot ≈ 30% of on-demand hourly (25-35%) for the same GPU, every pair."""
    spot, hourly = by_gpu("spot"), by_gpu("hourly")
    assert spot
    for gpu, spots in spot.items():
        assert hourly[gpu], f"{gpu}: spot without an on-demand offer to compare"
        for s, h in itertools.product(spots, hourly[gpu]):
            share = per_gpu(s, "hour") / per_gpu(h, "hour")
            assert 0.25 <= share <= 0.35, (s["offer"], h["offer"], round(share, 3))


def test_spot_offers_have_preemptions():
    for o in OFFERS:
        assert (float(o["preemptions_per_day"] or 0) > 0) == (o["mode"] == "spot"), o["offer"]


def test_hosted_is_cheapest_per_card_for_its_gpu():
    """Seed 002: whole-rack hosting is the cheapest per card (spot aside), fee included."""
    hosted = by_gpu("hosted")
    assert len(hosted) >= 3
    for gpu, racks in hosted.items():
        others = [o for o in OFFERS if o["gpu"] == gpu and o["mode"] not in ("hosted", "spot")]
        assert others, gpu
        for rack in racks:
            for o in others:
                assert per_gpu(rack, "hour") < per_gpu(o, "hour"), (rack["offer"], o["offer"])
                assert per_gpu_paid(rack) < per_gpu_paid(o), (rack["offer"], o["offer"])


def test_hosted_has_the_longest_lead_time_for_its_gpu():
    for gpu, racks in by_gpu("hosted").items():
        others = [o for o in OFFERS if o["gpu"] == gpu and o["mode"] != "hosted"]
        for rack in racks:
            assert 30 <= int(rack["lead_time_days"]) <= 45, rack["offer"]
            for o in others:
                assert int(rack["lead_time_days"]) > int(o["lead_time_days"]), (rack["offer"], o["offer"])


def test_counts_power_true_exactly_for_hosted():
    for o in OFFERS:
        assert (o["counts_power"].strip().lower() == "true") == (o["mode"] == "hosted"), o["offer"]
        if o["mode"] == "hosted":
            assert float(o["node_kw"]) > 0, o["offer"]


def test_one_card_instance_dearer_per_card_than_eight_card_node():
    """Seed 000: small instances cost more per card than 8-card nodes (same GPU and mode)."""
    pairs = 0
    for mode in MODES:
        singles, nodes = by_gpu(mode, 1), by_gpu(mode, 8)
        for gpu in set(singles) & set(nodes):
            for one, eight in itertools.product(singles[gpu], nodes[gpu]):
                assert per_gpu(one, "hour") > per_gpu(eight, "hour"), (one["offer"], eight["offer"])
                pairs += 1
    assert pairs >= 3


def test_yearly_cheaper_than_monthly_per_30_days():
    """Seed 002: a yearly node costs less per month than a monthly one (same GPU)."""
    yearly, monthly = by_gpu("yearly"), by_gpu("monthly")
    common = set(yearly) & set(monthly)
    assert common
    for gpu in common:
        for y, m in itertools.product(yearly[gpu], monthly[gpu]):
            assert per_gpu(y, "month") < per_gpu(m, "month"), (y["offer"], m["offer"])


def test_price_units_fit_modes():
    unit_of = {"hourly": "hour", "spot": "hour", "monthly": "month", "hosted": "month", "yearly": "year"}
    for o in OFFERS:
        assert o["price_unit"].endswith("_" + unit_of[o["mode"]]), o["offer"]
        assert float(o["price"]) > 0
