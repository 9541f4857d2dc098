"""`gpuplan catalog import-skypilot`: SkyPilot's vms.csv of both layouts into a catalog folder.

The real rows are those of catalogs/public-clouds-sample/skypilot-v7 (lambda and nebius: one row
per instance type and region; aws: one row per availability zone); the bad files are made here.
"""

from __future__ import annotations

import filecmp
import subprocess
import sys
from pathlib import Path

import pytest

from solver.errors import ProblemError
from solver.load import load_catalog
from solver.ingest.skypilot import ACCELERATORS, SkyPilotError, import_skypilot
from tests.builders import ROOT, catalog_folder

SAMPLE = ROOT / "catalogs" / "public-clouds-sample"
RAW = SAMPLE / "skypilot-v7"
BEIJING = ROOT / "catalogs" / "beijing-sample"
LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"
AWS_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone"


@pytest.fixture
def target(tmp_path) -> Path:
    """A catalog folder with the world sample's GPUs and Beijing's datacenters and offers."""
    return catalog_folder(tmp_path / "cat", SAMPLE / "gpus.csv", BEIJING / "datacenters.csv", BEIJING / "offers.csv")


def _cloud(tmp_path: Path, cloud: str, text: str) -> Path:
    folder = tmp_path / "v7"
    (folder / cloud).mkdir(parents=True, exist_ok=True)
    (folder / cloud / "vms.csv").write_text(text, encoding="utf-8")
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_both_layouts_of_real_rows(target):
    result = import_skypilot(RAW, target, clouds=["lambda", "aws"])
    cat = load_catalog(target)
    lam = cat.offers["lambda-us-east-1-gpu_8x_a100-hourly"]
    assert (lam.gpu, lam.price, lam.price_unit, lam.currency, lam.gpus_per_node, lam.mode) == (
        "A100-40G", 10.32, "per_node_hour", "USD", 8, "hourly")
    assert cat.offers["lambda-us-east-1-gpu_8x_a100_80gb_sxm4-hourly"].gpu == "A100-80G"
    assert cat.datacenters["lambda-us-east-1"].residency == ("us",)
    assert cat.datacenters["lambda-asia-northeast-1"].residency == ("apac",)
    by = {r.cloud: r for r in result.clouds}
    # lambda: 17 CPU rows skipped; every GPU row (18 types × 17 regions) an hourly offer; no spot market
    assert by["lambda"].cpu_rows == 17 and len(by["lambda"].offers) == 306
    assert not [o for o in cat.offers.values() if o.vendor == "lambda" and o.mode == "spot"]
    # aws: zones folded into regions, the highest zone price kept and the range noted
    spot = cat.offers["aws-us-east-1-p5.48xlarge-spot"]
    assert spot.price == 30.326 and "20.9934-30.326 over 6 zones" in spot.source
    assert spot.preemptions_per_day == 0.2 and cat.offers["aws-us-east-1-p5.48xlarge-hourly"].price == 98.32
    # empty SpotPrice in two of eu-north-1's three zones: the one quoted zone gives the spot offer
    assert cat.offers["aws-eu-north-1-p5.48xlarge-spot"].price == 28.528
    # p5e has no on-demand Price: spot offers only, the left-out hourly ones listed
    assert not [o for o in cat.offers if "p5e.48xlarge-hourly" in o]
    assert cat.offers["aws-us-east-2-p5e.48xlarge-spot"].price == 16.3895
    assert "p5e.48xlarge in us-east-2 (rows 34-35): no on-demand Price, a spot offer only" in by["aws"].notes
    assert by["aws"].skipped == {"neither Price nor SpotPrice": [30, 32, 33]}   # p5e where no price is quoted
    assert by["aws"].cpu_rows == 5
    # Beijing's rows are kept as they were
    assert len([o for o in cat.offers.values() if o.currency == "CNY"]) == len(load_catalog(BEIJING).offers)


def test_accelerator_table_names_gpus_of_the_sample():
    gpus = set(load_catalog(SAMPLE).gpus)
    for name in ("A100", "A100-80GB", "H100", "H200", "B200", "V100", "A6000", "A10", "RTX6000", "GH200", "L40S"):
        assert ACCELERATORS[name] in gpus, name
    assert ACCELERATORS["A100"] == "A100-40G" and ACCELERATORS["A100-80GB"] == "A100-80G"


def test_unknown_accelerators_are_reported_not_dropped(tmp_path, target):
    src = _cloud(tmp_path, "lambda", LAMBDA_HEADER + "\n"
                 "gpu_1x_mystery,MI999,1.0,8.0,32.0,1.5,us-east-1,,\n"
                 "gpu_8x_a100,A100,8.0,124.0,1800.0,10.32,us-east-1,,\n"
                 "gpu_2x_mystery,MI999,2.0,8.0,32.0,3.0,us-west-1,,\n")
    before = _snapshot(target)
    with pytest.raises(SkyPilotError) as exc:
        import_skypilot(src, target)
    assert "'MI999' (not in the mapping table): 2 rows of lambda, first row 2" in str(exc.value)
    assert _snapshot(target) == before
    result = import_skypilot(src, target, skip_unknown=True)
    assert result.clouds[0].skipped == {"accelerator MI999 has no GPU row": [2, 4]}
    assert [o.offer for o in result.clouds[0].offers] == ["lambda-us-east-1-gpu_8x_a100-hourly"]


def test_a_mapped_gpu_missing_from_gpus_csv_is_named(tmp_path, target):
    (target / "gpus.csv").write_text(open(BEIJING / "gpus.csv", encoding="utf-8").read(), encoding="utf-8")
    with pytest.raises(SkyPilotError, match="'V100' \\(maps to V100-16G, which gpus.csv lacks\\): 17 rows"):
        import_skypilot(RAW, target, clouds=["lambda"])
    assert not [o for o in load_catalog(target).offers.values() if o.vendor == "lambda"]


def test_duplicate_zones_and_rows_are_folded_and_noted(tmp_path, target):
    row = "p5.48xlarge,H100,8.0,192.0,2048.0,,98.32,{spot},us-east-1,{zone}\n"
    src = _cloud(tmp_path, "aws", AWS_HEADER + "\n" + row.format(spot="30.1", zone="use1-az1")
                 + row.format(spot="20.5", zone="use1-az2") + row.format(spot="31.0", zone="use1-az1")
                 + "c3.2xlarge,,,8.0,15.0,,0.42,0.230600,us-east-1,use1-az2\n")
    result = import_skypilot(src, target)
    aws = result.clouds[0]
    assert aws.notes == ["row 4 repeats p5.48xlarge in us-east-1 zone use1-az1 (row 2): folded in"]
    offers = {o.offer: o for o in aws.offers}
    assert offers["aws-us-east-1-p5.48xlarge-spot"].price == 31.0 and aws.cpu_rows == 1
    assert "20.5-31 over 2 zones" in offers["aws-us-east-1-p5.48xlarge-spot"].source
    src = _cloud(tmp_path, "lambda", LAMBDA_HEADER + "\n" + "gpu_8x_a100,A100,8.0,124.0,1800.0,10.32,us-east-1,,\n" * 2)
    assert "row 3 repeats gpu_8x_a100 in us-east-1 (row 2)" in import_skypilot(src, target, clouds=["lambda"]).clouds[0].notes[0]


@pytest.mark.parametrize("rows, where", [
    ("gpu_8x_a100,A100,8.0,124.0,1800.0,ten,us-east-1,,\n", "row 2, column Price: not a number (got 'ten')"),
    ("gpu_8x_a100,A100,8.0,124.0,1800.0,10.32,us-east-1,,,\n", "row 2, column (row): 10 cells, the header has 9"),
    ("gpu_8x_a100,A100,,124.0,1800.0,10.32,us-east-1,,\n", "row 2, column AcceleratorCount: empty"),
    ("gpu_8x_a100,A100,8.0,124.0,1800.0,10.32,us-east-1,,-1\n", "row 2, column SpotPrice: must be a finite number"),
    ("gpu_8x_a100,A100,8.0,124.0,1800.0,10.32,,,\n", "row 2, column Region: empty"),
])
def test_malformed_rows_name_file_row_and_column_and_write_nothing(tmp_path, target, rows, where):
    src = _cloud(tmp_path, "lambda", LAMBDA_HEADER + "\ngpu_1x_a10,A10,1.0,30.0,200.0,0.75,us-east-1,,\n" + rows)
    before = _snapshot(target)
    with pytest.raises(SkyPilotError) as exc:
        import_skypilot(src, target)
    assert f"lambda/vms.csv, {where.replace('row 2', 'row 3')}" in str(exc.value)
    assert _snapshot(target) == before


def test_missing_column_and_cli_exit_2(tmp_path, target):
    src = _cloud(tmp_path, "lambda", "InstanceType,AcceleratorName,AcceleratorCount,Region,SpotPrice\n"
                 "gpu_8x_a100,A100,8.0,us-east-1,\n")
    before = _snapshot(target)
    run = subprocess.run([sys.executable, "-m", "solver.cli", "catalog", "import-skypilot", str(src), "--into",
                          str(target)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 2
    assert "row 1, column Price: column missing" in run.stderr and "Traceback" not in run.stderr
    assert _snapshot(target) == before


def test_reimport_replaces_only_that_clouds_rows_and_keeps_a_backup(tmp_path, target):
    import_skypilot(RAW, target, clouds=["nebius"])
    first = load_catalog(target)
    with pytest.raises(ProblemError, match="already holds 21 offers of nebius"):
        import_skypilot(RAW, target, clouds=["nebius"], regions=["eu-north1"])
    result = import_skypilot(RAW, target, clouds=["nebius"], regions=["eu-north1"], force=True)
    again = load_catalog(target)
    assert {o.datacenter for o in again.offers.values() if o.vendor == "nebius"} == {"nebius-eu-north1"}
    assert "nebius-us-central1" not in again.datacenters
    assert {k: o for k, o in again.offers.items() if o.vendor != "nebius"} == {
        k: o for k, o in first.offers.items() if o.vendor != "nebius"}
    assert {b.name for b in result.backups} == {"offers.csv.bak2", "datacenters.csv.bak2"}  # .bak: the first import
    assert len(load_catalog_offers(target / "offers.csv.bak2")) == len(first.offers)


def load_catalog_offers(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines()[1:] if line]


def test_overlay_sets_what_the_catalog_lacks(tmp_path, target):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("""
clouds:
  nebius: {max_nodes: 2, preemptions_per_day: 1.5, egress_per_tb: 10, residency: {eu-north1: [eu, fi]}}
instances:
  - {cloud: nebius, instance_type: gpu-h100-sxm_8gpu-128vcpu-1600gb, interconnect: [infiniband, none],
     interconnect_price: [1.5, 0], max_nodes: 16, lead_time_days: 2}
reserved:
  - {cloud: nebius, region: eu-north1, instance_type: gpu-h100-sxm_8gpu-128vcpu-1600gb, name: 1yr,
     mode: yearly, price: 130000, min_term_days: 365, source: quote Q-1, illustrative: false}
""", encoding="utf-8")
    import_skypilot(RAW, target, clouds=["nebius"], overlay=overlay)
    cat = load_catalog(target)
    h100 = cat.offers["nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-hourly"]
    assert (h100.interconnect, h100.interconnect_price, h100.max_nodes, h100.lead_time_days) == (
        ("ib_ndr", "ethernet"), (1.5, 0.0), 16, 2)
    assert cat.offers["nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-spot"].preemptions_per_day == 1.5
    assert cat.offers["nebius-eu-north1-gpu-h200-sxm_1gpu-16vcpu-200gb-hourly"].max_nodes == 2
    assert cat.datacenters["nebius-eu-north1"].residency == ("eu", "fi")
    year = cat.offers["nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-1yr"]
    assert (year.mode, year.price, year.price_unit, year.term_days, year.illustrative) == (
        "yearly", 130000, "per_node_year", 365, False)
    overlay.write_text("clouds: {nebius: {max_node: 2}}\n", encoding="utf-8")
    with pytest.raises(ProblemError, match="clouds.nebius.max_node"):
        import_skypilot(RAW, target, clouds=["nebius"], overlay=overlay, force=True)


def test_the_bundled_world_sample_is_what_the_importer_writes(tmp_path, target):
    """catalogs/public-clouds-sample/README.md's command, on Beijing's tables, gives the bundled files."""
    import_skypilot(RAW, target, overlay=SAMPLE / "skypilot-overlay.yaml",
                    regions="us-east-1,europe-central-1,us-west-1,eu-north1,eu-west1,us-central1,us-east-2,"
                            "us-west-2,ap-southeast-3".split(","))
    for name in ("offers.csv", "datacenters.csv"):
        assert filecmp.cmp(target / name, SAMPLE / name, shallow=False), name


def test_filters_and_the_spot_rate_override(target):
    result = import_skypilot(RAW, target, gpus=["H200"], regions=["eu-north1", "us-central1"], preemptions_per_day=2)
    offers = [o for c in result.clouds for o in c.offers]
    assert offers and {o.gpu for o in offers} == {"H200-141G"}
    assert {o.datacenter for o in offers} == {"nebius-eu-north1", "nebius-us-central1"}
    assert {o.preemptions_per_day for o in offers if o.mode == "spot"} == {2}
    assert sum(c.filtered for c in result.clouds) > 300          # counted, not silently dropped


def test_the_default_folder_is_skypilots_own(monkeypatch, tmp_path, target):
    import solver.ingest.skypilot as skypilot

    monkeypatch.setattr(skypilot, "DEFAULT_DIR", tmp_path / "nowhere")
    with pytest.raises(ProblemError, match="no SkyPilot catalogs found"):
        import_skypilot(None, target)
    monkeypatch.setattr(skypilot, "DEFAULT_DIR", RAW)
    assert {c.cloud for c in import_skypilot(None, target, clouds=["nebius"]).clouds} == {"nebius"}


def test_a_vms_csv_that_is_not_utf8_is_named(tmp_path, target):
    """A price list saved in a local encoding is a ProblemError naming the file (solver.ingest.readers.csv_rows)."""
    folder = _cloud(tmp_path, "aws", "")
    (folder / "aws" / "vms.csv").write_bytes((AWS_HEADER + "\np5.48xlarge,H100,8,192,2048,,98.32,30.3,东京,\n")
                                             .encode("gbk"))
    before = _snapshot(target)
    with pytest.raises(ProblemError, match="not a readable CSV file") as err:
        import_skypilot(folder, target, clouds=["aws"])
    assert err.value.file.endswith("vms.csv") and "vms.csv as it is" in err.value.fix
    assert _snapshot(target) == before
