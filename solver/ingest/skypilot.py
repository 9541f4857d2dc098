"""SkyPilot's public price lists (`~/.sky/catalogs/v7/<cloud>/vms.csv`) into a catalog folder.

import_skypilot(folder, into, ...) reads one vms.csv per cloud (folder/<cloud>/vms.csv, or a single
vms.csv given directly), whatever its column order (columns are found by name): one row per instance
type and region (lambda, nebius, cudo, azure, ...) or one per availability zone (aws, gcp, runpod, oci),
and writes one datacenter per (cloud, region) and, per GPU box and region, an hourly offer (Price, USD
per instance-hour) and a spot offer (SpotPrice) into into/datacenters.csv and into/offers.csv.

Rows become instances (solver.ingest.skypilot_offers): zones are folded into their region (the highest zone
price is kept: a plan never counts on the luckiest zone; the range is noted), a zone listed under two
regions is kept under one (solver.ingest.skypilot_regions), and GCP's machine types that carry GPUs
(a2-highgpu-8g, ...) are priced as their host row plus the accelerator rows priced apart in the same
zone; attachable GPUs (V100, T4, ...) get a host VM (clouds.gcp.host_vm, default n1-standard-8). A row
is CPU-only only when nothing in it names a GPU. The card is read from everything the row says
(solver.ingest.skypilot_gpus); an unknown or ambiguous card, or one gpus.csv lacks, is reported with its file
and rows and nothing is written (or, with skip_unknown, those rows are left out and listed).

What the files do not carry comes from an overlay YAML (OVERLAY_HELP, README): per cloud its
source, date, quota, spot reclaim rate, storage and egress prices and residency tags; per instance
type its interconnect (EFA, InfiniBand, none) with its price, stock cap and lead time; reserved and
committed prices (1-year, 3-year, capacity blocks) as extra offers.

Re-importing a cloud replaces that cloud's rows only (offers of vendor <cloud>, datacenters named
<cloud>-<region>); the other rows are kept as written. Data that would write the same rows writes
nothing (no backup). A file that changes is kept as .bak (then .bak2, ...) first; replacing rows of a
cloud already imported needs force. Nothing is written while any row is bad: every bad cell is
reported with its file, row and column.
"""

from __future__ import annotations

import csv
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from solver.errors import ProblemError
from solver.ingest.readers import TABLES, from_validation, read_table, read_yaml
from solver.model.catalog import LEGACY_COLUMNS, Catalog, Datacenter, Offer, inconsistencies
from solver.model.modes import MODES
from solver.ingest.tables import COLUMNS as OFFER_COLUMNS, csv_text, offer_cells, write_tables_together
from solver.ingest.skypilot_gpus import ACCELERATORS, identify
from solver.ingest.skypilot_offers import Instance, dc_id, make_offers
from solver.ingest.skypilot_rows import HOST_VM, BadRow, Row, one_region_per_zone, parse, priced_apart

__all__ = ["ACCELERATORS", "DEFAULT_DIR", "SkyPilotError", "SkyPilotImport", "import_skypilot"]

DEFAULT_DIR = Path("~/.sky/catalogs/v7").expanduser()
"""Where SkyPilot keeps its downloaded catalogs: the default folder to import from."""

PREEMPTIONS_PER_DAY: dict[str, float] = {"aws": 0.2, "gcp": 1.0, "azure": 0.5}
"""Spot reclaims per day assumed per cloud (the catalogs carry none): aws's interruption-frequency
bands for large GPU instances run to '>20 %' of instances a month; gcp's spot VMs, like its older
preemptible ones, are reclaimed far more often. Other clouds: DEFAULT_PREEMPTIONS. Override per cloud
in the overlay (clouds.<cloud>.preemptions_per_day) or with --preemptions-per-day."""
DEFAULT_PREEMPTIONS = 0.5

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
    host_vm: str | None = Field(default=None, min_length=1,
                                description="gcp: the VM attachable GPUs (V100, T4, ...) are priced on "
                                            "(default n1-standard-8)")


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


class SkyPilotError(ProblemError):
    """Bad rows or names in the SkyPilot files (exit 2): every one listed, nothing written."""

    def __init__(self, message: str, bad: list[str], *, file: str, fix: str) -> None:
        self.bad = bad
        shown = bad[:30] + ([f"... and {len(bad) - 30} more"] if len(bad) > 30 else [])
        super().__init__(message + "".join(f"\n  - {b}" for b in shown) + f"\nFix: {fix}", file=file)


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
    warnings: list[str] = field(default_factory=list)
    skipped: dict[str, list[int]] = field(default_factory=dict)   # reason → rows
    replaced_offers: int = 0

    @property
    def short(self) -> str:
        """The file as messages name it: <cloud folder>/vms.csv."""
        path = Path(self.file)
        return f"{path.parent.name}/{path.name}" if path.parent.name else path.name


@dataclass
class SkyPilotImport:
    into: Path
    clouds: list[CloudResult]
    backups: list[Path]
    unchanged: bool = False       # the catalog already held exactly these rows: nothing written


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
        for (name, gpu, why), rows in unknown.items():
            mine = [r for c, _, r in rows if c == result.cloud]
            if mine:
                reason = (f"accelerator {name} has no GPU row" if gpu or why == "not in the mapping table"
                          else f"accelerator {name}: {why}")
                result.skipped.setdefault(reason, []).extend(mine)
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
    gpu_rows = read_table(into / "gpus.csv", *TABLES["gpus.csv"])
    old_dcs = _raw_rows(into / "datacenters.csv", TABLES["datacenters.csv"][0])
    old_offers = _raw_rows(into / "offers.csv", Offer)
    return gpu_rows, old_dcs, old_offers


def _raw_rows(path: Path, model: type[BaseModel]) -> list[dict[str, str]]:
    """An existing table's rows as cells, after checking that it loads (a broken table is not merged into)."""
    if not path.is_file():
        return []
    key = "offer" if model is Offer else "datacenter"
    read_table(path, model, key)
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return [{LEGACY_COLUMNS.get(k, k): (v or "") for k, v in row.items()} for row in csv.DictReader(fh)]


def _read_overlay(path: str | Path | None) -> Overlay:
    if path is None:
        return Overlay()
    data = read_yaml(Path(path), "overlay file")
    try:
        return Overlay.model_validate(data or {})
    except ValidationError as exc:
        raise from_validation(exc, str(path)) from None




def _read_cloud(cloud: str, path: Path, spec: Overlay, *, regions, gpus, known, bad: list[BadRow],
                unknown, preemptions, as_of) -> CloudResult:
    result = CloudResult(cloud, str(path))
    conf = spec.clouds.get(cloud, CloudOverlay())
    gpu_rows, hosts, apart = parse(result, path, bad)
    if bad:
        return result
    gpu_rows += priced_apart(result, gpu_rows, hosts, apart, conf.host_vm or HOST_VM)
    found: dict[tuple[str, str], Instance] = {}
    for row in one_region_per_zone(result, gpu_rows):
        if regions and row.region not in regions:
            result.filtered += 1
            continue
        gpu, why = _gpu_of(spec, cloud, row)
        if gpus and row.accel not in gpus and (gpu or "") not in gpus:
            result.filtered += 1
            continue
        if gpu is None or gpu not in known:
            unknown[row.accel, gpu, why].append((cloud, result.short, row.number))
            continue
        key = (row.instance_type, row.region)
        inst = found.get(key)
        if inst is None:
            inst = found[key] = Instance(cloud, row.instance_type, row.accel, row.count, row.region, gpu, how=row.how)
        elif inst.accelerator != row.accel or inst.count != row.count:
            bad.append(BadRow(result.file, row.number, "AcceleratorName", f"{row.instance_type} in {row.region} is "
                              f"listed with {row.count}× {row.accel} here and {inst.count}× {inst.accelerator} in "
                              f"row {inst.rows[0]}"))
            continue
        if row.zone and row.zone in inst.zones or (not row.zone and inst.rows):
            result.notes.append(f"row {row.number} repeats {row.instance_type} in {row.region}"
                                + (f" zone {row.zone}" if row.zone else "") + f" (row {inst.rows[0]}): folded in")
        inst.rows += row.rows or [row.number]
        inst.zones.append(row.zone)
        if row.price is not None:
            inst.prices.append(row.price)
        if row.spot is not None:
            inst.spots.append(row.spot)
    if not bad:
        day = as_of or conf.as_of or date.fromtimestamp(os.path.getmtime(path))
        origin = (conf.source or f"SkyPilot catalog {cloud}/vms.csv") + (
            "" if as_of or conf.as_of else
            " (dated by the file's modification time: give --as-of for the catalog's own date)")
        reclaim = preemptions or conf.preemptions_per_day or PREEMPTIONS_PER_DAY.get(cloud, DEFAULT_PREEMPTIONS)
        make_offers(result, found.values(), conf, matching=lambda t, r: _matching(spec, cloud, t, r), known=known,
                    reclaim=reclaim, day=day, origin=origin)
    return result


def _gpu_of(spec: Overlay, cloud: str, row: Row) -> tuple[str | None, str]:
    """The gpus.csv row a row rents (the overlay's mapping first) and, when none, why."""
    for entry in _matching(spec, cloud, row.instance_type, row.region):
        if entry.gpu:
            return entry.gpu, ""
    found = identify(cloud, row.instance_type, row.accel, row.count, row.gpu_info)
    return found.gpu, found.why


def _matching(spec: Overlay, cloud: str, instance_type: str, region: str) -> list[InstanceOverlay]:
    """Overlay entries for this instance, region-specific ones first."""
    hits = [e for e in spec.instances if e.cloud == cloud and e.instance_type == instance_type
            and e.region in (None, region)]
    return sorted(hits, key=lambda e: e.region is None)


def _add_reserved(results: list[CloudResult], spec: Overlay, bad: list[BadRow]) -> None:
    """Overlay reservations: an offer like the instance's hourly one, at the committed price and term."""
    by_cloud = {r.cloud: r for r in results}
    for k, entry in enumerate(spec.reserved):
        result = by_cloud.get(entry.cloud)
        if result is None:
            continue
        base = next((o for o in result.offers if o.offer.startswith(f"{dc_id(entry.cloud, entry.region)}-"
                                                                    f"{entry.instance_type}-")), None)
        if base is None:
            bad.append(BadRow("overlay", k + 1, f"reserved[{k}]", f"{entry.instance_type} in {entry.region} is not "
                              f"among the {entry.cloud} offers imported"))
            continue
        unit = MODES[entry.mode].unit
        cells = {**base.model_dump(), "offer": f"{dc_id(entry.cloud, entry.region)}-{entry.instance_type}-{entry.name}",
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
    ours = {d["datacenter"] for d in old_dcs
            if any(d.get("datacenter") == dc_id(c, d.get("region", "")) for c in clouds)}
    keep_dcs = [d for d in old_dcs if d.get("datacenter") not in ours]
    keep_offers = [o for o in old_offers if o.get("vendor") not in clouds]
    for r in results:
        r.replaced_offers = sum(1 for o in old_offers if o.get("vendor") == r.cloud)
    replaced = sum(r.replaced_offers for r in results)
    new_dcs = [d for r in results for d in r.datacenters]
    new_offers = [o for r in results for o in r.offers]
    clash = {d.datacenter for d in new_dcs} & {d.get("datacenter") for d in keep_dcs}
    if clash:
        raise ProblemError(f"datacenter {sorted(clash)[0]} is already in datacenters.csv and not from this import",
                           file=str(into / "datacenters.csv"), fix="rename that row, or import into another folder")
    dc_rows = keep_dcs + [_cells(d, DATACENTER_COLUMNS) for d in new_dcs]
    offer_rows = keep_offers + [offer_cells(o) for o in new_offers]
    _check_whole(into, gpu_rows, dc_rows, offer_rows)
    if _unchanged(into, (("datacenters.csv", dc_rows, DATACENTER_COLUMNS), ("offers.csv", offer_rows, OFFER_COLUMNS))):
        return SkyPilotImport(into, results, [], unchanged=True)
    if replaced and not force:
        raise ProblemError(f"offers.csv already holds {replaced} offers of {', '.join(sorted(c for c in clouds))}; "
                           "not replaced", file=str(into / "offers.csv"), key="--into",
                           fix="pass --force to replace that cloud's rows (the old file is kept as offers.csv.bak)")
    backups = write_tables_together(into, [("datacenters.csv", dc_rows, DATACENTER_COLUMNS),
                                           ("offers.csv", offer_rows, OFFER_COLUMNS)])   # both or neither
    return SkyPilotImport(into, results, backups)


def _unchanged(into: Path, tables) -> bool:
    """Whether every table would be written with the cells it already holds (then nothing is written:
    no rewrite, no backup). Compared cell by cell as the writer renders them, line endings aside."""
    for name, rows, columns in tables:
        path = into / name
        if not path.is_file():
            return False
        with open(path, newline="", encoding="utf-8-sig") as fh:
            held = [line for line in csv.reader(fh) if line]
        wanted = [list(columns)] + [[csv_text(row.get(c)) for c in columns] for row in rows]
        if held != wanted:
            return False
    return True


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
        raise from_validation(exc, str(into), prefix="merged catalog") from None
    if len(offers) != len(offer_rows):
        seen: set[str] = set()
        dup = next(o["offer"] for o in offer_rows if o["offer"] in seen or seen.add(o["offer"]))
        raise ProblemError(f"offer id {dup!r} twice in the merged offers.csv", file=str(into / "offers.csv"),
                           fix="rename the older row")
    found = inconsistencies(Catalog.model_construct(gpus=gpu_rows, datacenters=dcs, offers=offers))
    if found:
        offer, column, message, fix = found[0]
        raise ProblemError(message, file=str(into / "offers.csv"), key=f"offer {offer}.{column}", fix=fix)


def _unknown_line(key: tuple[str, str | None, str], rows: list[tuple[str, str, int]]) -> str:
    name, gpu, why = key
    clouds = sorted({c for c, _, _ in rows})
    _, file, first = rows[0]
    why = f"maps to {gpu}, which gpus.csv lacks" if gpu else why
    return (f"accelerator {name!r} ({why}): {len(rows)} row{'s' if len(rows) != 1 else ''} of "
            f"{', '.join(clouds)}, first row {first} of {file}")
