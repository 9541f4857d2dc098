"""`catalog import-skypilot` on real rows of every cloud layout SkyPilot ships (tests/data/skypilot-v7,
sources in its README; aws, lambda and nebius from the bundled world sample): the card each row
rents, GCP's machine types, regions and residency, stock per GPU box, price checks, re-imports."""

from __future__ import annotations

import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from solver.load import load_catalog
from solver.ingest.skypilot import SkyPilotError, import_skypilot
from solver.ingest.skypilot_gpus import identify
from tests.builders import ONE_B, ROOT, catalog_folder

CLOUDS = ROOT / "tests" / "data" / "skypilot-v7"
SAMPLE = ROOT / "catalogs" / "public-clouds-sample"
LAMBDA_HEADER = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice"


@pytest.fixture
def target(tmp_path) -> Path:
    """A catalog folder holding only the world sample's GPUs (no offers: every price is USD)."""
    return catalog_folder(tmp_path / "cat", SAMPLE / "gpus.csv")


def _import(cloud: str, target: Path, **kw):
    source = SAMPLE / "skypilot-v7" if cloud in ("aws", "lambda", "nebius") else CLOUDS
    result = import_skypilot(source, target, clouds=[cloud], skip_unknown=True, **kw)
    return result.clouds[0], load_catalog(target)


def _offer(cat, offer_id: str):
    return cat.offers[offer_id]


# (cloud, offers written, {offer id: (gpu, GPUs per node, price)}, {datacenter: residency})
LAYOUTS = [
    ("aws", 34, {"aws-us-east-1-p5.48xlarge-hourly": ("H100-80G", 8, 98.32)}, {"aws-eu-north-1": ("eu",)}),
    ("lambda", 306, {"lambda-us-east-1-gpu_1x_h100_pcie-hourly": ("H100-PCIe-80G", 1, 2.49),
                     "lambda-us-east-1-gpu_8x_a100_80gb_sxm4-hourly": ("A100-80G", 8, 14.32)},
     {"lambda-asia-northeast-1": ("apac",)}),
    ("nebius", 21, {"nebius-eu-north1-gpu-h100-sxm_8gpu-128vcpu-1600gb-hourly": ("H100-80G", 8, 23.6)},
     {"nebius-eu-north1": ("eu",)}),
    ("gcp", 26, {"gcp-us-central1-a2-highgpu-8g-hourly": ("A100-40G", 8, 29.38708),
                 "gcp-us-central1-a3-megagpu-8g-hourly": ("H100-80G", 8, 92.21427),
                 "gcp-us-central1-n1-standard-8-8xV100-hourly": ("V100-16G", 8, 20.22)},
     {"gcp-europe-west4": ("eu",), "gcp-asia-northeast1": ("apac",)}),
    ("cudo", 19, {"cudo-no-kristiansand-1-epyc-genoa-a100-pcie_1x2v4gb-hourly": ("A100-80G-PCIe", 1, 1.5294),
                  "cudo-au-melbourne-1-epyc-genoa-h100-nvl-pcie_4x32v64gb-hourly": ("H100-NVL-94G", 4, 10.3504)},
     {"cudo-za-centurion-1": ("af", "za"), "cudo-no-kristiansand-1": ("eu", "no")}),
    ("runpod", 27, {"runpod-US-1x_H100_SECURE-hourly": ("H100-PCIe-80G", 1, 2.39),
                    "runpod-US-8x_H100-SXM_SECURE-hourly": ("H100-80G", 8, 23.92)},
     {"runpod-SE": ("eu", "se"), "runpod-US": ("us",)}),
    ("vast", 46, {"vast-California-US-NA-4x-H100_NVL-32-65536-hourly": ("H100-NVL-94G", 4, 9.07),
                  "vast-Texas-US-NA-4x-H100_SXM-32-65536-hourly": ("H100-80G", 4, 7.2)},
     {"vast-Hong-Kong-HK-AS": ("apac", "hk"), "vast-St.-Petersburg-RU-EU": ("ru",)}),
    ("azure", 34, {"azure-eastus-Standard_NC24ads_A100_v4-hourly": ("A100-80G-PCIe", 1, 3.673),
                   "azure-eastus-Standard_ND96amsr_A100_v4-hourly": ("A100-80G", 8, 32.77),
                   "azure-eastus-Standard_NC40ads_H100_v5-hourly": ("H100-NVL-94G", 1, 6.98)},
     {"azure-eastus": ("us",)}),
    ("oci", 16, {"oci-eu-amsterdam-1-BM.GPU4.8-hourly": ("A100-40G", 8, 24.4),
                 "oci-eu-amsterdam-1-BM.GPU.A100-v2.8-hourly": ("A100-80G", 8, 32.0)},
     {"oci-me-abudhabi-1": ("me",)}),
]


@pytest.mark.parametrize("cloud, count, offers, residency", LAYOUTS, ids=[c[0] for c in LAYOUTS])
def test_each_cloud_layout_imports_its_real_rows(target, cloud, count, offers, residency):
    result, cat = _import(cloud, target)
    assert len(result.offers) == count
    for offer_id, (gpu, per_node, price) in offers.items():
        o = _offer(cat, offer_id)
        assert (o.gpu, o.gpus_per_node, o.price, o.currency) == (gpu, per_node, price, "USD"), offer_id
    for dc, tags in residency.items():
        assert cat.datacenters[dc].residency == tags, dc
    assert not [n for n in result.notes if "no residency tag" in n]


@pytest.mark.parametrize("cloud, instance, accel, count, gpu_info, gpu", [
    ("cudo", "epyc-genoa-a100-pcie_1x2v4gb", "A100", 1, "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}",
     "A100-80G-PCIe"),
    ("cudo", "epyc-genoa-h100-nvl-pcie_1x2v4gb", "H100", 1, "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 96256}}]}",
     "H100-NVL-94G"),
    ("runpod", "1x_H100_SECURE", "H100", 1, "H100", "H100-PCIe-80G"),
    ("runpod", "1x_A100-80GB_SECURE", "A100-80GB", 1, "A100-80GB", "A100-80G-PCIe"),
    ("runpod", "1x_H100-SXM_SECURE", "H100-SXM", 1, "H100-SXM", "H100-80G"),
    ("runpod", "1x_A100-80GB-SXM_SECURE", "A100-80GB-SXM", 1, "A100-80GB-SXM", "A100-80G"),
    ("runpod", "1x_H200-SXM_SECURE", "H200-SXM", 1, "H200-SXM", "H200-141G"),
    ("runpod", "1x_H100-NVL_SECURE", "H100-NVL", 1, "H100-NVL", "H100-NVL-94G"),
    ("cudo", "intel-ice-lake-a800-pci_1x2v4gb", "A800", 1, "", "A800-80G-PCIe"),
    ("cudo", "ice-lake-rtx-a6000_1x2v4gb", "RTXA6000", 1, "", "A6000-48G"),
    ("vast", "2x-H100_NVL-32-65536", "H100", 2, "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 191660}}]}", "H100-NVL-94G"),
    ("aws", "g6.xlarge", "L4", 1, "", "L4-24G"),
    ("aws", "g5.xlarge", "A10G", 1, "", "A10G-24G"),
])
def test_variants_map_to_rows_of_the_right_memory_and_form(cloud, instance, accel, count, gpu_info, gpu):
    found = identify(cloud, instance, accel, count, gpu_info)
    assert found.gpu == gpu, found.why
    row = load_catalog(SAMPLE).gpus[gpu]
    forms = {"A100-80G-PCIe": ("pcie", 80), "H100-NVL-94G": ("pcie", 94), "H100-PCIe-80G": ("pcie", 80),
             "H100-80G": ("sxm", 80), "A100-80G": ("sxm", 80), "H200-141G": ("sxm", 141),
             "A800-80G-PCIe": ("pcie", 80), "A6000-48G": ("pcie", 48), "L4-24G": ("pcie", 24), "A10G-24G": ("pcie", 24)}
    assert (row.form, row.memory_gb) == forms[gpu]


def test_an_unknown_or_ambiguous_card_is_reported_never_guessed(tmp_path, target):
    assert identify("x", "box", "A100", 1, "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 81920}}]}").why.startswith(
        "ambiguous: 80 GiB per GPU fits A100-80G and A100-80G-PCIe")
    assert "no card of that name fits 48 GiB" in identify("vast", "2x-RTX_4090-32-65536", "RTX4090", 2,
                                                          "{'Gpus': [{'MemoryInfo': {'SizeInMiB': 98280}}]}").why
    with pytest.raises(SkyPilotError) as exc:
        import_skypilot(CLOUDS, target, clouds=["runpod", "cudo"])
    text = str(exc.value)    # several clouds at once: each line names its file
    assert "'RTX4000-Ada' (not in the mapping table): 1 row of runpod, first row 39 of runpod/vms.csv" in text
    assert "'RTXA5000' (not in the mapping table): 1 row of cudo, first row 6 of cudo/vms.csv" in text
    assert not (target / "offers.csv").exists()


def test_gcp_machine_types_import_with_their_gpus_per_node(target):
    result, cat = _import("gcp", target)
    per_node = {o.offer.removeprefix("gcp-us-central1-").removesuffix("-hourly"): o.gpus_per_node
                for o in cat.offers.values() if o.datacenter == "gcp-us-central1" and o.mode == "hourly"}
    assert per_node == {"a2-highgpu-1g": 1, "a2-highgpu-8g": 8, "a2-megagpu-16g": 16, "a2-ultragpu-8g": 8,
                        "a3-edgegpu-8g": 8, "a3-highgpu-1g": 1, "a3-highgpu-8g": 8, "a3-megagpu-8g": 8,
                        "a3-ultragpu-8g": 8, "n1-standard-8-1xV100": 1, "n1-standard-8-8xV100": 8}
    a2 = _offer(cat, "gcp-us-central1-a2-highgpu-1g-hourly")   # host 0.73948 + one A100 2.93391
    assert a2.price == pytest.approx(3.67339) and "rows 4-7,43-46" in a2.source and "(host)" in a2.source
    assert _offer(cat, "gcp-us-central1-a3-ultragpu-8g-spot").price == pytest.approx(2.82111 + 29.7976)
    assert "a3-edgegpu-8g-nolssd" in _offer(cat, "gcp-us-central1-a3-edgegpu-8g-hourly").source   # one box
    assert "host n1-standard-8 (assumed" in _offer(cat, "gcp-us-central1-n1-standard-8-1xV100-hourly").source
    assert result.cpu_rows == 7 and result.skipped["a TPU, not a GPU"] == [76]
    assert result.skipped["a machine type with GPUs whose H100 x8 accelerator price is not in its zone (its "
                          "Price is the host's only)"] == [26, 27]


def test_regions_zones_and_stock_per_box(target):
    runpod, cat = _import("runpod", target)
    assert "runpod-NO" not in cat.datacenters          # EU-SE-1 under NO and SE: one datacenter, SE
    assert runpod.notes.count("zone EU-SE-1 is listed under regions NO, SE: kept once, under SE") == 1
    us = _offer(cat, "runpod-US-1x_A100-80GB_SECURE-hourly")
    assert "over 14 zones" not in us.source and "rows 7-20" in us.source and us.max_nodes == 4
    cudo, cat = _import("cudo", target, force=True)
    a100 = [o for o in cat.offers.values() if o.vendor == "cudo" and o.gpu == "A100-80G-PCIe"
            and o.datacenter == "cudo-no-kristiansand-1" and o.gpus_per_node == 1]
    assert [o.offer for o in a100] == ["cudo-no-kristiansand-1-epyc-genoa-a100-pcie_1x2v4gb-hourly"]
    assert "in 2 vCPU/RAM sizes (also epyc-genoa-a100-pcie_1x4v8gb: the cheapest kept)" in a100[0].source


def test_a_region_with_no_tag_is_noted_once(tmp_path, target):
    src = tmp_path / "v7" / "lambda"
    src.mkdir(parents=True)
    (src / "vms.csv").write_text(LAMBDA_HEADER + "\n" + "".join(
        f"gpu_{n}x_a100,A100,{n}.0,30.0,200.0,{1.29 * n:g},moon-base-1,,\n" for n in (1, 2, 4)), encoding="utf-8")
    result = import_skypilot(src.parent, target)
    assert [n for n in result.clouds[0].notes if "no residency tag" in n] == [
        "region moon-base-1: no residency tag (name not in the table); set clouds.lambda.residency.moon-base-1 "
        "in the overlay"]


def test_suspicious_prices_are_kept_marked_and_listed(tmp_path, target):
    runpod, cat = _import("runpod", target)
    spot = _offer(cat, "runpod-US-8x_L40S_SECURE-spot")
    assert spot.price == 6.88 and "CHECK: spot 6.88 is not below on-demand 3.44" in spot.source
    assert "8x_L40S_SECURE in US, spot: spot 6.88 is not below on-demand 3.44" in runpod.warnings
    src = tmp_path / "v7" / "lambda"
    src.mkdir(parents=True)
    (src / "vms.csv").write_text(LAMBDA_HEADER + "\ngpu_1x_h100_sxm5,H100,1.0,26.0,225.0,99,us-east-1,,\n",
                                 encoding="utf-8")
    odd = import_skypilot(src.parent, target).clouds[0]
    assert "outside the 0.5-30 real list prices span" in odd.offers[0].source and len(odd.warnings) == 1
    vast, _ = _import("vast", target)
    assert "SpotPrice 0 on 61 rows (rows 2-62): read as no spot market" in vast.notes


def test_importing_the_same_data_twice_is_byte_identical_and_backs_nothing_up(target):
    for step in range(3):
        result = import_skypilot(CLOUDS, target, clouds=["gcp", "runpod"], skip_unknown=True, force=step == 2)
        files = {p.name: p.read_bytes() for p in sorted(target.iterdir())}
        if step == 0:
            first = files
        assert files == first and result.unchanged == (step > 0) and result.backups == []
    assert sorted(first) == ["datacenters.csv", "gpus.csv", "offers.csv"]


def test_as_of_is_the_catalogs_date_when_given_else_the_files_said_so(target):
    _, cat = _import("oci", target)
    dated = next(iter(cat.offers.values()))
    assert "dated by the file's modification time" in dated.source
    _, cat = _import("oci", target, force=True, as_of=date(2026, 12, 1))
    given = next(iter(cat.offers.values()))
    assert given.as_of == date(2026, 12, 1) and "modification time" not in given.source


def test_a_pcie_card_plan_pays_its_pcie_efficiency(target):
    """runpod's "H100" is its PCIe card: planned at its own 756 dense TFLOPS (not the SXM's 989.4) and
    without NVLink, so the same work rents 989.4/756 times the GPU-days the SXM offer would."""
    from solver.api import solve_problem
    from solver.milp.instance import build_instance
    from solver.model.problem import Job, Problem, Restrict

    _import("runpod", target)
    cat = load_catalog(target)
    pcie, sxm = "runpod-US-1x_H100_SECURE-hourly", "runpod-US-1x_H100-SXM_SECURE-hourly"

    def prob(flops: float, gpus: list[str]) -> Problem:
        return Problem(name="pcie", catalog=".", currency="USD", horizon_days=30, redundancy=0,
                       jobs=[Job(name="j", model=ONE_B, flops=flops, deadline_days=30)],
                       restrict=Restrict(gpus=gpus))
    rates = {o.config.split(":")[0]: o.rate_flops for o in build_instance(prob(1e18, []), cat).options}
    assert rates[pcie] / rates[sxm] <= 756 / 989.4 + 1e-9    # its own peak (and any PCIe derating on top)
    work = 10 * rates[sxm] * 86_400 * (1 - 1e-9)          # just under 10 GPU-days on the SXM card
    used = {}
    for gpu in ("H100-PCIe-80G", "H100-80G"):
        plan = solve_problem(prob(work, [gpu]), cat)   # no time limit: the GPU-days asserted are the optimum's
        assert plan.status == "optimal"
        assert plan.jobs[0].gpu_types == [gpu]
        used[gpu] = sum(r.gpu_days_used for r in plan.rental_use)
    assert used["H100-80G"] == pytest.approx(10) and used["H100-PCIe-80G"] >= 10 * 989.4 / 756


def test_cli_imports_a_cloud_and_says_when_nothing_changed(target):
    def run():
        return subprocess.run([sys.executable, "-m", "solver.cli", "catalog", "import-skypilot", str(CLOUDS),
                               "--clouds", "azure", "--into", str(target), "--skip-unknown", "--as-of", "2026-12-07"],
                              capture_output=True, text=True, cwd=ROOT)
    first, again = run(), run()
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    assert "azure: 24 rows" in first.stdout and "spot 6.98 is not below on-demand 6.98" in first.stderr
    assert "names a GPU (a10) but no AcceleratorName" in first.stderr
    assert "already holds exactly these rows: nothing written" in again.stdout
    bad = subprocess.run([sys.executable, "-m", "solver.cli", "catalog", "import-skypilot", str(CLOUDS), "--clouds",
                          "azure", "--into", str(target), "--as-of", "7 Dec"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "--as-of '7 Dec' is not a date" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("width", [60, 80, 100, 140])
def test_catalog_show_fits_the_width_and_breaks_ids_only_between_pieces(target, width):
    import io
    import re

    from rich.console import Console

    from solver.report.catalog_table import render_table

    import_skypilot(CLOUDS, target, clouds=["cudo", "runpod"], skip_unknown=True)
    cat = load_catalog(target)
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    render_table(cat, console, "offers")
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    names = list(cat.offers) + list(cat.datacenters)
    runs = {"".join(p[i:j]) for p in (re.split(r"(?<=[-_])", n) for n in names)
            for i in range(len(p)) for j in range(i + 1, len(p) + 1)}
    other = {o.vendor for o in cat.offers.values()} | set(cat.gpus) | {"hourly", "spot"}
    table = text.split("all-in per GPU-hour (")[0].split("─\n", 1)[1]      # the rows, not header or caption
    broken = [t for t in table.split() if any(t in n for n in names) and t not in runs | other and not t.isdigit()]
    assert not broken, broken[:5]
    whole = [line.split()[0] for line in text.splitlines() if line.split() and line.split()[0] in cat.offers]
    assert (len(whole) == len(cat.offers)) == (width >= 140)     # wide enough: every id on one line


def test_a_box_takes_the_overlay_entry_of_any_of_its_sizes(tmp_path, target):
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text("instances:\n  - {cloud: nebius, instance_type: gpu-l40s-a_1gpu-32vcpu-128gb, max_nodes: 9}\n",
                       encoding="utf-8")
    _, cat = _import("nebius", target, overlay=overlay)
    box = _offer(cat, "nebius-eu-north1-gpu-l40s-a_1gpu-8vcpu-32gb-hourly")     # the cheapest of five sizes
    assert box.max_nodes == 9 and "stock from the overlay for this GPU box in 5 vCPU/RAM sizes" in box.source
    assert not [o for o in cat.offers if "gpu-l40s-a_1gpu-32vcpu" in o]


@pytest.mark.parametrize("region, tags", [
    ("us-east-1", ("us",)), ("europe-west4", ("eu",)), ("northamerica-northeast2", ("ca",)), ("me-west1", ("me",)),
    ("eu-amsterdam-1", ("eu",)), ("ap-mumbai-1", ("apac",)), ("sa-saopaulo-1", ("latam",)), ("africa-south1", ("af",)),
    ("no-kristiansand-1", ("eu", "no")), ("au-melbourne-1", ("apac", "au")), ("za-centurion-1", ("af", "za")),
    ("SE", ("eu", "se")), ("US", ("us",)), ("Jiangsu, CN, AS", ("cn",)), (", US, NA", ("us",)),
    ("St.-Petersburg, RU, EU", ("ru",)), ("eastus2", ("us",)), ("southcentralus", ("us",)),
    ("germanywestcentral", ("eu",)), ("australiaeast", ("apac",)), ("uaenorth", ("me",)), ("moon-base-1", ()),
])
def test_residency_from_every_region_spelling(region, tags):
    from solver.ingest.skypilot_regions import residency_tags

    assert residency_tags(region) == tags
