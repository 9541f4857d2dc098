"""SkyPilot's public price lists (`~/.sky/catalogs/v7/<cloud>/vms.csv`) into a catalog folder.

import_skypilot(folder, into, ...) reads one vms.csv per cloud (folder/<cloud>/vms.csv, or a single
vms.csv given directly), in either column layout SkyPilot uses (columns are found by name):
  - one row per instance type and region (lambda, nebius and most GPU clouds):
    InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price, Region, GpuInfo, SpotPrice;
  - one row per availability zone (aws, gcp): the same plus AvailabilityZone.
and writes, for each cloud, one datacenter per (cloud, region) and per instance type and region
an hourly offer (Price, USD per instance-hour) and a spot offer (SpotPrice) into into/datacenters.csv
and into/offers.csv. Zones are folded into their region: the highest zone price is kept (a plan
never counts on the luckiest zone) and the range is noted in the row's source. CPU-only rows (no
AcceleratorName) are skipped and counted. SkyPilot's accelerator names are mapped to gpus.csv names
through ACCELERATORS (an overlay may map one instance type differently); a name with no mapping, or
mapped to a GPU gpus.csv lacks, is reported with its rows and nothing is written (or, with
skip_unknown, those rows are left out and listed).

What the files do not carry comes from an overlay YAML (OVERLAY_HELP, README): per cloud its
source, date, quota, spot reclaim rate, storage and egress prices and residency tags; per instance
type its interconnect (EFA, InfiniBand, none) with its price, stock cap and lead time; reserved and
committed prices (1-year, 3-year, capacity blocks) as extra offers.

Re-importing a cloud replaces that cloud's rows only (offers of vendor <cloud>, datacenters named
<cloud>-<region>); the other rows are kept as written. A file that changes is kept as .bak (then
.bak2, ...) first; replacing rows of a cloud already imported needs force. Nothing is written while
any row is bad: every bad cell is reported with its file, row and column.
"""

from __future__ import annotations

import csv
import math
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from solver.errors import ProblemError
from solver.load import TABLES, _from_validation, _read_table, read_yaml
from solver.model.catalog import LEGACY_COLUMNS, Catalog, Datacenter, Offer, inconsistencies
from solver.quotes import COLUMNS as OFFER_COLUMNS, offer_cells, write_tables_together

DEFAULT_DIR = Path("~/.sky/catalogs/v7").expanduser()
"""Where SkyPilot keeps its downloaded catalogs: the default folder to import from."""

ACCELERATORS: dict[str, str] = {
    "A100": "A100-40G", "A100-80GB": "A100-80G", "H100": "H100-80G", "H100-MEGA": "H100-80G",
    "H200": "H200-141G", "B200": "B200-180G", "GH200": "GH200-96G", "L40S": "L40S-48G", "L40": "L40-48G",
    "L4": "L4-24G", "A10G": "A10G-24G", "A10": "A10-24G", "A40": "A40-48G", "A6000": "A6000-48G",
    "RTX6000": "RTX6000-24G", "RTX4090": "RTX4090-24G", "V100": "V100-16G", "V100-32GB": "V100-32G",
    "T4": "T4-16G", "P100": "P100-16G",
}
"""SkyPilot AcceleratorName → gpus.csv `gpu`. SkyPilot's A100 is the 40 GB card (its 80 GB one is
A100-80GB); H100 is listed for SXM and PCIe instances alike (map a PCIe instance type to its own
GPU row in the overlay). A name missing here is reported, never dropped."""

PREEMPTIONS_PER_DAY: dict[str, float] = {"aws": 0.2, "gcp": 1.0, "azure": 0.5}
"""Spot reclaims per day assumed per cloud (the catalogs carry none): aws's interruption-frequency
bands for large GPU instances run to '>20 %' of instances a month; gcp's spot VMs, like its older
preemptible ones, are reclaimed far more often. Other clouds: DEFAULT_PREEMPTIONS. Override per cloud
in the overlay (clouds.<cloud>.preemptions_per_day) or with --preemptions-per-day."""
DEFAULT_PREEMPTIONS = 0.5

REGION_TAGS: tuple[tuple[str, str], ...] = (
    ("cn-", "cn"), ("us-", "us"), ("ca-", "ca"), ("northamerica-", "ca"), ("eu-", "eu"), ("europe-", "eu"),
    ("uk-", "eu"), ("me-", "me"), ("il-", "me"), ("asia-", "apac"), ("ap-", "apac"), ("australia", "apac"),
    ("jp-", "apac"), ("sa-", "latam"), ("southamerica-", "latam"), ("af-", "af"))
"""Residency tag of a region, by the start of its name (coarse: continent or country block). Exact
tags per region go in the overlay (clouds.<cloud>.residency)."""

INTERCONNECT_NAMES = {"efa": "roce", "infiniband": "ib_ndr", "ib": "ib_ndr", "none": "ethernet"}
"""Overlay spellings → the catalog's interconnect names. EFA (AWS's RDMA fabric over Ethernet) is
planned as roce; plain InfiniBand as ib_ndr; none as ethernet (no RDMA between nodes)."""

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region", "SpotPrice")
DATACENTER_COLUMNS = [f.alias or n for n, f in Datacenter.model_fields.items()]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class CloudOverlay(_Strict):
    """What a cloud's whole price list lacks."""

    source: str | None = Field(default=None, description="where the file comes from (repository, commit, date)")
    as_of: date | None = None
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")
    max_nodes: int = Field(default=4, gt=0, description="assumed quota: instances of one type per region")
    preemptions_per_day: float | None = Field(default=None, gt=0)
    lead_time_days: int = Field(default=0, ge=0)
    storage_per_tb_month: float = Field(default=0, ge=0)
    egress_per_tb: float = Field(default=0, ge=0)
    platform_fee_pct: float = Field(default=0, ge=0, le=100)
    residency: dict[str, list[str]] = Field(default={}, description="region → residency tags (replaces the default)")


class InstanceOverlay(_Strict):
    """One instance type (in one region, or all): interconnect, stock, lead time, or its GPU row."""

    cloud: str
    instance_type: str
    region: str | None = None
    gpu: str | None = None
    interconnect: list[str] | str | None = None
    interconnect_price: list[float] | float | None = Field(default=None, description="per node-hour, each option")
    max_nodes: int | None = Field(default=None, gt=0)
    lead_time_days: int | None = Field(default=None, ge=0)


class ReservedOverlay(_Strict):
    """A committed price the catalog lacks: 1- or 3-year reservations, capacity blocks."""

    cloud: str
    region: str
    instance_type: str
    name: str = Field(min_length=1, description="offer id suffix, e.g. 1yr or 3yr")
    mode: Literal["monthly", "yearly", "hourly"]
    price: float = Field(gt=0)
    price_unit: str | None = None
    min_term_days: int = Field(default=0, ge=0)
    lead_time_days: int | None = Field(default=None, ge=0)
    max_nodes: int | None = Field(default=None, gt=0)
    illustrative: bool = Field(default=True, description="false only for a price from a real quote or price list")
    source: str = Field(min_length=1)


class Overlay(_Strict):
    clouds: dict[str, CloudOverlay] = {}
    instances: list[InstanceOverlay] = []
    reserved: list[ReservedOverlay] = []


@dataclass
class BadRow:
    file: str
    row: int
    column: str
    message: str

    def render(self) -> str:
        return f"{self.file}, row {self.row}, column {self.column}: {self.message}"


class SkyPilotError(ProblemError):
    """Bad rows or names in the SkyPilot files (exit 2): every one listed, nothing written."""

    def __init__(self, message: str, bad: list[str], *, file: str, fix: str) -> None:
        self.bad = bad
        shown = bad[:30] + ([f"... and {len(bad) - 30} more"] if len(bad) > 30 else [])
        super().__init__(message + "".join(f"\n  - {b}" for b in shown) + f"\nFix: {fix}", file=file)


@dataclass
class Instance:
    """One instance type in one region, its zones folded."""

    cloud: str
    instance_type: str
    accelerator: str
    count: int
    region: str
    rows: list[int] = field(default_factory=list)
    prices: list[float] = field(default_factory=list)
    spots: list[float] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)


@dataclass
class CloudResult:
    """What one cloud's file gave: counts of what was read, used and left out (with why)."""

    cloud: str
    file: str
    rows: int = 0
    cpu_rows: int = 0
    filtered: int = 0
    offers: list[Offer] = field(default_factory=list)
    datacenters: list[Datacenter] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: dict[str, list[int]] = field(default_factory=dict)   # reason → rows
    replaced_offers: int = 0


@dataclass
class SkyPilotImport:
    into: Path
    clouds: list[CloudResult]
    backups: list[Path]


def import_skypilot(source: str | Path | None, into: str | Path, *, clouds: list[str] | None = None,
                    regions: list[str] | None = None, gpus: list[str] | None = None,
                    overlay: str | Path | None = None, preemptions_per_day: float | None = None,
                    skip_unknown: bool = False, force: bool = False, as_of: date | None = None) -> SkyPilotImport:
    """Read the clouds' vms.csv files, map them and merge them into the catalog folder `into`."""
    files = _cloud_files(source, clouds)
    into = Path(into)
    gpu_rows, old_dcs, old_offers = _target(into)
    spec = _read_overlay(overlay)
    results, bad, unknown = [], [], defaultdict(list)
    for cloud, path in files:
        result = _read_cloud(cloud, path, spec, regions=regions, gpus=gpus, known=gpu_rows, bad=bad,
                             unknown=unknown, preemptions=preemptions_per_day, as_of=as_of)
        results.append(result)
    if bad:
        raise SkyPilotError(f"{len(bad)} bad cell{'s' if len(bad) != 1 else ''}; nothing written", [b.render() for b in bad],
                            file=str(files[0][1].parent if len(files) > 1 else files[0][1]),
                            fix="correct the file (or leave the cloud out with --clouds) and import again")
    if unknown and not skip_unknown:
        raise SkyPilotError(f"{len(unknown)} accelerator name{'s' if len(unknown) != 1 else ''} with no GPU row; "
                            "nothing written", [_unknown_line(k, v) for k, v in sorted(unknown.items())],
                            file=str(into / "gpus.csv"),
                            fix="add the GPU to gpus.csv (the mapping: README, 'Public clouds and currencies'), map the "
                                "instance type in the overlay (instances: gpu:), filter with --gpus, or pass "
                                "--skip-unknown to import the rest and list these")
    for result in results:
        for (name, _), rows in unknown.items():
            mine = [r for c, r in rows if c == result.cloud]
            if mine:
                result.skipped[f"accelerator {name} has no GPU row"] = mine
    _add_reserved(results, spec, bad)
    if bad:
        raise SkyPilotError("bad reserved entries in the overlay; nothing written", [b.render() for b in bad],
                            file=str(overlay), fix="correct them and import again")
    return _merge(into, results, old_dcs, old_offers, gpu_rows, force=force)


def _cloud_files(source: str | Path | None, clouds: list[str] | None) -> list[tuple[str, Path]]:
    if source is None:
        if not DEFAULT_DIR.is_dir():
            raise ProblemError("no SkyPilot catalogs found", file=str(DEFAULT_DIR),
                               fix="give the folder (…/catalogs/v7) or a vms.csv; `sky check` downloads them")
        source = DEFAULT_DIR
    source = Path(source)
    if source.is_file():
        return [(clouds[0] if clouds and len(clouds) == 1 else source.parent.name, source)]
    if not source.is_dir():
        raise ProblemError("not found", file=str(source), fix="give a catalogs/v7 folder or one cloud's vms.csv")
    found = {p.parent.name: p for p in sorted(source.glob("*/vms.csv"))}
    if not found:
        raise ProblemError("no <cloud>/vms.csv in this folder", file=str(source),
                           fix="give SkyPilot's catalogs/v7 folder (it holds aws/vms.csv, lambda/vms.csv, ...)")
    if clouds:
        missing = [c for c in clouds if c not in found]
        if missing:
            raise ProblemError(f"no {missing[0]}/vms.csv here", file=str(source), key="--clouds",
                               fix=f"choose from {', '.join(sorted(found))}")
        return [(c, found[c]) for c in clouds]
    return sorted(found.items())


def _target(into: Path) -> tuple[dict, list[dict[str, str]], list[dict[str, str]]]:
    """The target folder's GPUs (validated) and its datacenters and offers as raw cells (kept as written)."""
    if not into.is_dir():
        raise ProblemError("catalog folder not found", file=str(into), key="--into",
                           fix="give a folder that holds gpus.csv (and datacenters.csv, offers.csv if it has them)")
    gpu_rows = _read_table(into / "gpus.csv", *TABLES["gpus.csv"])
    old_dcs = _raw_rows(into / "datacenters.csv", TABLES["datacenters.csv"][0])
    old_offers = _raw_rows(into / "offers.csv", Offer)
    return gpu_rows, old_dcs, old_offers


def _raw_rows(path: Path, model: type[BaseModel]) -> list[dict[str, str]]:
    """An existing table's rows as cells, after checking that it loads (a broken table is not merged into)."""
    if not path.is_file():
        return []
    key = "offer" if model is Offer else "datacenter"
    _read_table(path, model, key)
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return [{LEGACY_COLUMNS.get(k, k): (v or "") for k, v in row.items()} for row in csv.DictReader(fh)]


def _read_overlay(path: str | Path | None) -> Overlay:
    if path is None:
        return Overlay()
    data = read_yaml(Path(path), "overlay file")
    try:
        return Overlay.model_validate(data or {})
    except ValidationError as exc:
        raise _from_validation(exc, str(path)) from None


def _read_cloud(cloud: str, path: Path, spec: Overlay, *, regions, gpus, known, bad: list[BadRow],
                unknown, preemptions, as_of) -> CloudResult:
    result = CloudResult(cloud, str(path))
    name = str(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            records = list(csv.reader(fh))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise ProblemError(f"not a readable CSV file ({exc})", file=name, fix="give SkyPilot's vms.csv as it is") from None
    if not records:
        bad.append(BadRow(name, 1, "(header)", "the file is empty"))
        return result
    header = [h.strip() for h in records[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        bad.append(BadRow(name, 1, missing[0], f"column missing (a SkyPilot v7 vms.csv has {', '.join(REQUIRED)})"))
        return result
    zoned = "AvailabilityZone" in header
    found: dict[tuple[str, str], Instance] = {}
    for number, cells in enumerate(records[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        result.rows += 1
        if len(cells) != len(header):
            bad.append(BadRow(name, number, "(row)", f"{len(cells)} cells, the header has {len(header)} "
                              "(a comma inside a cell must be quoted)"))
            continue
        row = {h: c.strip() for h, c in zip(header, cells)}
        if not row["AcceleratorName"]:
            result.cpu_rows += 1
            continue
        parsed = _numbers(row, name, number, bad)
        if parsed is None:
            continue
        count, price, spot = parsed
        instance_type, region, accel = row["InstanceType"], row["Region"], row["AcceleratorName"]
        if not region:
            bad.append(BadRow(name, number, "Region", "empty"))
            continue
        if not instance_type:
            result.skipped.setdefault("no InstanceType (an accelerator priced apart from its VM)", []).append(number)
            continue
        if count != int(count) or count < 1:
            result.skipped.setdefault(f"{count:g} accelerators per instance (not a whole GPU)", []).append(number)
            continue
        if regions and region not in regions:
            result.filtered += 1
            continue
        gpu = _gpu_of(spec, cloud, instance_type, region, accel)
        if gpus and accel not in gpus and (gpu or "") not in gpus:
            result.filtered += 1
            continue
        if gpu is None or gpu not in known:
            unknown[accel, gpu].append((cloud, number))
            continue
        key = (instance_type, region)
        inst = found.get(key)
        if inst is None:
            inst = found[key] = Instance(cloud, instance_type, accel, int(count), region)
        elif inst.accelerator != accel or inst.count != int(count):
            bad.append(BadRow(name, number, "AcceleratorName", f"{instance_type} in {region} is listed with "
                              f"{int(count)}× {accel} here and {inst.count}× {inst.accelerator} in row {inst.rows[0]}"))
            continue
        zone = row.get("AvailabilityZone", "") if zoned else ""
        if zone and zone in inst.zones or (not zoned and inst.rows):
            result.notes.append(f"row {number} repeats {instance_type} in {region}"
                                + (f" zone {zone}" if zone else "") + f" (row {inst.rows[0]}): folded in")
        inst.rows.append(number)
        inst.zones.append(zone)
        if price is not None:
            inst.prices.append(price)
        if spot is not None:
            inst.spots.append(spot)
    if not bad:
        _to_offers(result, found.values(), spec, preemptions, as_of, path)
    return result


def _numbers(row: dict[str, str], name: str, number: int, bad: list[BadRow]):
    """AcceleratorCount, Price, SpotPrice as numbers (None: blank); a BadRow for anything else."""
    out = []
    for column, blank_ok in (("AcceleratorCount", False), ("Price", True), ("SpotPrice", True)):
        text = row[column]
        if not text:
            if not blank_ok:
                bad.append(BadRow(name, number, column, "empty, but AcceleratorName is given"))
                return None
            out.append(None)
            continue
        try:
            value = float(text)
        except ValueError:
            bad.append(BadRow(name, number, column, f"not a number (got {text!r})"))
            return None
        if not math.isfinite(value) or value < 0:
            bad.append(BadRow(name, number, column, f"must be a finite number >= 0 (got {text!r})"))
            return None
        out.append(value if value > 0 or column == "AcceleratorCount" else None)
    return tuple(out)


def _gpu_of(spec: Overlay, cloud: str, instance_type: str, region: str, accel: str) -> str | None:
    for entry in _matching(spec, cloud, instance_type, region):
        if entry.gpu:
            return entry.gpu
    return ACCELERATORS.get(accel)


def _matching(spec: Overlay, cloud: str, instance_type: str, region: str) -> list[InstanceOverlay]:
    """Overlay entries for this instance, region-specific ones first."""
    hits = [e for e in spec.instances if e.cloud == cloud and e.instance_type == instance_type
            and e.region in (None, region)]
    return sorted(hits, key=lambda e: e.region is None)


def _to_offers(result: CloudResult, instances, spec: Overlay, preemptions, as_of, path: Path) -> None:
    cloud = result.cloud
    conf = spec.clouds.get(cloud, CloudOverlay())
    day = as_of or conf.as_of or date.fromtimestamp(os.path.getmtime(path))
    origin = conf.source or f"SkyPilot catalog {cloud}/vms.csv"
    reclaim = preemptions or conf.preemptions_per_day or PREEMPTIONS_PER_DAY.get(cloud, DEFAULT_PREEMPTIONS)
    regions = {}
    for inst in sorted(instances, key=lambda i: (i.region, i.instance_type)):
        gpu = _gpu_of(spec, cloud, inst.instance_type, inst.region, inst.accelerator)
        dc = regions.setdefault(inst.region, _datacenter(cloud, inst.region, conf, day, origin, result))
        entries = _matching(spec, cloud, inst.instance_type, inst.region)
        link, link_price, link_note = _interconnect(entries)
        max_nodes = next((e.max_nodes for e in entries if e.max_nodes), conf.max_nodes)
        lead = next((e.lead_time_days for e in entries if e.lead_time_days is not None), conf.lead_time_days)
        zones = f" over {len(set(inst.zones))} zones" if len(set(inst.zones)) > 1 else ""
        base = dict(vendor=cloud, datacenter=dc.datacenter, gpu=gpu, price_unit="per_node_hour",
                    currency=conf.currency, gpus_per_node=inst.count, max_nodes=max_nodes, lead_time_days=lead,
                    interconnect=link, interconnect_price=link_price, platform_fee_pct=conf.platform_fee_pct,
                    storage_per_tb_month=conf.storage_per_tb_month, egress_per_tb=conf.egress_per_tb,
                    illustrative=False, as_of=day)
        stock = ("stock " + ("from the overlay" if any(e.max_nodes for e in entries) else
                             f"assumed {max_nodes} (the catalog has none)"))
        where = f"{origin}, {inst.instance_type} ({inst.accelerator} x{inst.count}), {_span(inst.rows)}"
        if inst.prices:
            price = max(inst.prices)
            spread = (f"; on-demand {min(inst.prices):g}-{price:g}{zones}, highest kept"
                      if min(inst.prices) != price else "")
            result.offers.append(Offer(offer=f"{cloud}-{inst.region}-{inst.instance_type}-hourly", mode="hourly",
                                       price=price, source=f"{where}: Price{spread}; {stock}{link_note}", **base))
        elif inst.spots:
            result.notes.append(f"{inst.instance_type} in {inst.region} ({_span(inst.rows)}): no on-demand Price, "
                                "a spot offer only")
        else:
            result.skipped.setdefault("neither Price nor SpotPrice", []).extend(inst.rows)
        if inst.spots:
            spot = max(inst.spots)
            spread = (f"; spot {min(inst.spots):g}-{spot:g}{zones}, highest kept" if min(inst.spots) != spot else "")
            result.offers.append(Offer(offer=f"{cloud}-{inst.region}-{inst.instance_type}-spot", mode="spot",
                                       price=spot, preemptions_per_day=reclaim,
                                       source=f"{where}: SpotPrice{spread}; reclaims {reclaim:g}/day assumed; "
                                              f"{stock}{link_note}", **base))
    result.datacenters = list(regions.values())


def _datacenter(cloud: str, region: str, conf: CloudOverlay, day: date, origin: str, result: CloudResult) -> Datacenter:
    tags = conf.residency.get(region)
    if tags is None:
        tags = [tag for prefix, tag in REGION_TAGS if region.startswith(prefix)][:1]
        if not tags:
            result.notes.append(f"region {region}: no residency tag (name not in the table); "
                                f"set clouds.{cloud}.residency.{region} in the overlay")
    name = f"{cloud}-{region}"
    return Datacenter(datacenter=name, region=region, power_quota_kw=0, pue=1.0, residency=tuple(tags),
                      link_group=name, as_of=day,
                      source=f"{origin}; public cloud region (no power quota of ours: its offers do not count power)")


def _interconnect(entries: list[InstanceOverlay]) -> tuple[tuple[str, ...], tuple[float, ...], str]:
    entry = next((e for e in entries if e.interconnect is not None), None)
    if entry is None:
        return ("ethernet",), (0.0,), "; interconnect not in the catalog: ethernet assumed"
    names = [entry.interconnect] if isinstance(entry.interconnect, str) else list(entry.interconnect)
    prices = entry.interconnect_price if entry.interconnect_price is not None else [0.0] * len(names)
    prices = [prices] if isinstance(prices, (int, float)) else list(prices)
    mapped = tuple(INTERCONNECT_NAMES.get(n.lower(), n) for n in names)
    said = [f"{n} as {m}" for n, m in zip(names, mapped) if n != m]
    return mapped, tuple(float(p) for p in prices), "; interconnect from the overlay" + (
        f" ({', '.join(said)})" if said else "")


def _add_reserved(results: list[CloudResult], spec: Overlay, bad: list[BadRow]) -> None:
    """Overlay reservations: an offer like the instance's hourly one, at the committed price and term."""
    by_cloud = {r.cloud: r for r in results}
    for k, entry in enumerate(spec.reserved):
        result = by_cloud.get(entry.cloud)
        if result is None:
            continue
        base = next((o for o in result.offers if o.offer.startswith(f"{entry.cloud}-{entry.region}-"
                                                                    f"{entry.instance_type}-")), None)
        if base is None:
            bad.append(BadRow("overlay", k + 1, f"reserved[{k}]", f"{entry.instance_type} in {entry.region} is not "
                              f"among the {entry.cloud} offers imported"))
            continue
        unit = {"hourly": "hour", "monthly": "month", "yearly": "year"}[entry.mode]
        cells = {**base.model_dump(), "offer": f"{entry.cloud}-{entry.region}-{entry.instance_type}-{entry.name}",
                 "mode": entry.mode, "price": entry.price, "price_unit": entry.price_unit or f"per_node_{unit}",
                 "min_term_days": entry.min_term_days, "preemptions_per_day": 0, "source": entry.source,
                 "illustrative": entry.illustrative}
        if entry.lead_time_days is not None:
            cells["lead_time_days"] = entry.lead_time_days
        if entry.max_nodes is not None:
            cells["max_nodes"] = entry.max_nodes
        try:
            result.offers.append(Offer.model_validate(cells))
        except ValidationError as exc:
            bad.append(BadRow("overlay", k + 1, f"reserved[{k}]",
                              exc.errors()[0]["msg"].removeprefix("Value error, ")))


def _merge(into: Path, results: list[CloudResult], old_dcs: list[dict[str, str]], old_offers: list[dict[str, str]],
           gpu_rows: dict, *, force: bool) -> SkyPilotImport:
    clouds = {r.cloud for r in results}
    ours = {d["datacenter"] for d in old_dcs if any(d.get("datacenter") == f"{c}-{d.get('region')}" for c in clouds)}
    keep_dcs = [d for d in old_dcs if d.get("datacenter") not in ours]
    keep_offers = [o for o in old_offers if o.get("vendor") not in clouds]
    for r in results:
        r.replaced_offers = sum(1 for o in old_offers if o.get("vendor") == r.cloud)
    replaced = sum(r.replaced_offers for r in results)
    if replaced and not force:
        raise ProblemError(f"offers.csv already holds {replaced} offers of {', '.join(sorted(c for c in clouds))}; "
                           "not replaced", file=str(into / "offers.csv"), key="--into",
                           fix="pass --force to replace that cloud's rows (the old file is kept as offers.csv.bak)")
    new_dcs = [d for r in results for d in r.datacenters]
    new_offers = [o for r in results for o in r.offers]
    clash = {d.datacenter for d in new_dcs} & {d.get("datacenter") for d in keep_dcs}
    if clash:
        raise ProblemError(f"datacenter {sorted(clash)[0]} is already in datacenters.csv and not from this import",
                           file=str(into / "datacenters.csv"), fix="rename that row, or import into another folder")
    dc_rows = keep_dcs + [_cells(d, DATACENTER_COLUMNS) for d in new_dcs]
    offer_rows = keep_offers + [offer_cells(o) for o in new_offers]
    _check_whole(into, gpu_rows, dc_rows, offer_rows)
    backups = write_tables_together(into, [("datacenters.csv", dc_rows, DATACENTER_COLUMNS),
                                           ("offers.csv", offer_rows, OFFER_COLUMNS)])   # both or neither
    return SkyPilotImport(into, results, backups)


def _cells(row: BaseModel, columns: list[str]) -> dict[str, Any]:
    data = row.model_dump(by_alias=True)
    return {c: data.get(c) for c in columns}


def _check_whole(into: Path, gpu_rows: dict, dc_rows: list[dict], offer_rows: list[dict]) -> None:
    """The merged tables as the loader will read them: every row valid, every cross-reference good."""
    def clean(row: dict) -> dict:
        return {k: (v if not isinstance(v, str) else (v.strip() or None)) for k, v in row.items() if k}
    try:
        dcs = {d["datacenter"]: Datacenter.model_validate(clean(d)) for d in dc_rows}
        offers = {o["offer"]: Offer.model_validate(clean(o)) for o in offer_rows}
    except ValidationError as exc:
        raise _from_validation(exc, str(into), prefix="merged catalog") from None
    if len(offers) != len(offer_rows):
        seen: set[str] = set()
        dup = next(o["offer"] for o in offer_rows if o["offer"] in seen or seen.add(o["offer"]))
        raise ProblemError(f"offer id {dup!r} twice in the merged offers.csv", file=str(into / "offers.csv"),
                           fix="rename the older row")
    found = inconsistencies(Catalog.model_construct(gpus=gpu_rows, datacenters=dcs, offers=offers))
    if found:
        offer, column, message, fix = found[0]
        raise ProblemError(message, file=str(into / "offers.csv"), key=f"offer {offer}.{column}", fix=fix)


def _span(rows: list[int]) -> str:
    return f"row {rows[0]}" if len(rows) == 1 else "rows " + ( f"{rows[0]}-{rows[-1]}" if rows == list(
        range(rows[0], rows[-1] + 1)) else ",".join(map(str, rows[:4])) + ("…" if len(rows) > 4 else ""))


def _unknown_line(key: tuple[str, str | None], rows: list[tuple[str, int]]) -> str:
    name, gpu = key
    clouds = sorted({c for c, _ in rows})
    first = rows[0][1]
    why = f"maps to {gpu}, which gpus.csv lacks" if gpu else "not in the mapping table"
    return (f"accelerator {name!r} ({why}): {len(rows)} row{'s' if len(rows) != 1 else ''} of "
            f"{', '.join(clouds)}, first row {first}")
