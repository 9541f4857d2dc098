"""A vms.csv read into rows that rent GPUs: CPU-only rows counted, GCP's GPUs priced apart paired with their hosts.

parse() reads one file (columns by name, either layout) into the rows that carry a GPU, the rows
without one (CPU-only, or GCP hosts), and GCP's accelerator rows priced apart from any VM (empty
InstanceType). A row is CPU-only only when nothing in it names a GPU: an instance type that names one
but has no AcceleratorName is listed as left out. priced_apart() pairs GCP's machine types that carry
GPUs (a2-highgpu-8g: its Price is the host's) and attachable accelerators (V100 on an n1 host) with the
accelerator rows of the same zone; one_region_per_zone() keeps a zone listed under two regions once.
Every bad cell becomes a BadRow naming file, row and column.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from solver.model.catalog import MAX_GPUS_PER_NODE
from solver.model.magnitudes import MAX
from solver.ingest.skypilot_gpus import ATTACHABLE, NOT_GPUS, gcp_family, names_gpu
from solver.ingest.skypilot_offers import span
from solver.ingest.readers import csv_rows
from solver.ingest.skypilot_regions import zone_owner

HOST_VM = "n1-standard-8"
"""The host GCP attaches V100, T4, P100 and P4 accelerators to when the overlay names none
(clouds.gcp.host_vm): 8 vCPUs, 30 GB; its own Price and SpotPrice rows are added."""

REQUIRED = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region", "SpotPrice")

@dataclass
class BadRow:
    file: str
    row: int
    column: str
    message: str

    def render(self) -> str:
        return f"{self.file}, row {self.row}, column {self.column}: {self.message}"


@dataclass
class Row:
    """One vms.csv row with a GPU in it (or a host a GCP accelerator is priced apart from)."""

    number: int
    instance_type: str
    accel: str
    count: int
    price: float | None
    spot: float | None
    region: str
    zone: str
    gpu_info: str
    rows: list[int] = field(default_factory=list)
    how: str = ""



def parse(result: CloudResult, path: Path, bad: list[BadRow]) -> tuple[list[Row], dict, dict]:
    """The file's rows: those with a GPU, the GPU-less hosts by (type, region, zone), and the accelerators
    priced apart from any VM by (name, count, region, zone). CPU-only rows are counted, bad cells listed."""
    name = str(path)
    records = csv_rows(path, what="file", fix="give SkyPilot's vms.csv as it is")
    gpu_rows: list[Row] = []
    hosts: dict[tuple, Row] = {}
    apart: dict[tuple, Row] = {}
    if not records:
        bad.append(BadRow(name, 1, "(header)", "the file is empty"))
        return gpu_rows, hosts, apart
    header = [h.strip() for h in records[0]]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        bad.append(BadRow(name, 1, missing[0], f"column missing (a SkyPilot v7 vms.csv has {', '.join(REQUIRED)})"))
        return gpu_rows, hosts, apart
    zeros: dict[str, list[int]] = defaultdict(list)
    for number, cells in enumerate(records[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        result.rows += 1
        if len(cells) != len(header):
            bad.append(BadRow(name, number, "(row)", f"{len(cells)} cells, the header has {len(header)} "
                              "(a comma inside a cell must be quoted)"))
            continue
        cell = {h: c.strip() for h, c in zip(header, cells)}
        instance_type, accel, region = cell["InstanceType"], cell["AcceleratorName"], cell["Region"]
        parsed = _numbers(cell, name, number, bad, zeros if accel else defaultdict(list), need_count=bool(accel))
        if parsed is None:
            continue
        count, price, spot = parsed
        if not region:
            bad.append(BadRow(name, number, "Region", "empty"))
            continue
        row = Row(number, instance_type, accel, int(count), price, spot, region, cell.get("AvailabilityZone", ""),
                  cell.get("GpuInfo", ""))
        if not accel:
            if gcp_family(instance_type) or not names_gpu(instance_type):
                result.cpu_rows += not gcp_family(instance_type)
                hosts[instance_type, region, row.zone] = row
            else:
                result.skipped.setdefault(f"an instance type that names a GPU ({names_gpu(instance_type)}) but no "
                                          "AcceleratorName: its GPUs are not priced", []).append(number)
        elif NOT_GPUS.match(accel):
            result.skipped.setdefault("a TPU, not a GPU", []).append(number)
        elif count != int(count) or count < 1:
            result.skipped.setdefault(f"{count:g} accelerators per instance (not a whole GPU)", []).append(number)
        elif not instance_type:
            apart[accel, int(count), region, row.zone] = row
        else:
            gpu_rows.append(row)
    for column, rows in zeros.items():
        meaning = "no spot market" if column == "SpotPrice" else "no on-demand price"
        result.notes.append(f"{column} 0 on {len(rows)} row{'s' if len(rows) != 1 else ''} ({span(rows)}): "
                            f"read as {meaning}")
    return gpu_rows, hosts, apart


def priced_apart(result: CloudResult, gpu_rows: list[Row], hosts: dict, apart: dict, host_vm: str) -> list[Row]:
    """GCP: a machine type that carries GPUs (a2-highgpu-8g) priced as its host row plus the accelerator
    row of the same name, count, region and zone; an attachable accelerator (V100, T4) plus its host VM.
    Accelerator rows no machine type uses are listed as left out."""
    out, used = [], set()
    for (instance_type, region, zone), host in sorted(hosts.items(), key=lambda kv: kv[1].number):
        family = gcp_family(instance_type)
        if family is None:
            continue
        accel, count = family
        part = apart.get((accel, count, region, zone))
        if part is None:
            result.skipped.setdefault(f"a machine type with GPUs whose {accel} x{count} accelerator price is not in "
                                      "its zone (its Price is the host's only)", []).append(host.number)
            continue
        used.add((accel, count, region, zone))
        out.append(_paired(host, part, instance_type, "; Price and SpotPrice: the machine type's (host) plus "
                                                      f"the {accel} x{count} accelerator row's (GPUs)"))
    for key, part in sorted(apart.items(), key=lambda kv: kv[1].number):
        accel, count, region, zone = key
        if key in used:
            continue
        host = hosts.get((host_vm, region, zone)) if accel in ATTACHABLE else None
        if host is None:
            why = (f"an attachable accelerator with no {host_vm} host price in its zone" if accel in ATTACHABLE else
                   "an accelerator priced apart that no machine type in the file carries")
            result.skipped.setdefault(why, []).append(part.number)
            continue
        out.append(_paired(host, part, f"{host_vm}-{count}x{accel}", f"; Price and SpotPrice: host {host_vm} "
                                                                     f"(assumed: clouds.{result.cloud}.host_vm) plus "
                                                                     f"the {accel} x{count} accelerator row's"))
    return out


def _paired(host: Row, part: Row, instance_type: str, how: str) -> Row:
    def add(a: float | None, b: float | None) -> float | None:
        return None if a is None or b is None else round(a + b, 6)
    return Row(part.number, instance_type, part.accel, part.count, add(host.price, part.price),
               add(host.spot, part.spot), part.region, part.zone, part.gpu_info,
               sorted([host.number, part.number]), how)


def one_region_per_zone(result: CloudResult, rows: list[Row]) -> list[Row]:
    """Rows of a zone listed under several regions kept under one (zone_owner), the others left out."""
    regions_of: dict[str, list[str]] = defaultdict(list)
    for row in rows:
        if row.zone and row.region not in regions_of[row.zone]:
            regions_of[row.zone].append(row.region)
    owner = {z: zone_owner(z, rs) for z, rs in regions_of.items() if len(rs) > 1}
    reasons = {}
    for zone, region in owner.items():
        others = ", ".join(r for r in regions_of[zone] if r != region)
        result.notes.append(f"zone {zone} is listed under regions {', '.join(regions_of[zone])}: kept once, "
                            f"under {region}")
        reasons[zone] = f"zone {zone} listed again under {others} (kept under {region})"
    kept = []
    for row in rows:
        if row.zone in owner and row.region != owner[row.zone]:
            result.skipped.setdefault(reasons[row.zone], []).append(row.number)
        else:
            kept.append(row)
    return kept


def _numbers(row: dict[str, str], name: str, number: int, bad: list[BadRow], zeros: dict, *, need_count: bool):
    """AcceleratorCount, Price, SpotPrice as numbers (None: blank, or 0 for a price: listed in `zeros`)."""
    out = []
    for column, blank_ok in (("AcceleratorCount", not need_count), ("Price", True), ("SpotPrice", True)):
        text = row[column]
        if not text:
            if not blank_ok:
                bad.append(BadRow(name, number, column, "empty, but AcceleratorName is given"))
                return None
            out.append(0.0 if column == "AcceleratorCount" else None)
            continue
        try:
            value = float(text)
        except ValueError:
            bad.append(BadRow(name, number, column, f"not a number (got {text!r})"))
            return None
        if not math.isfinite(value) or value < 0:
            bad.append(BadRow(name, number, column, f"must be a finite number >= 0 (got {text!r})"))
            return None
        most = MAX_GPUS_PER_NODE if column == "AcceleratorCount" else MAX["price"]   # AcceleratorCount 1e12 crashed
        if value > most:
            bad.append(BadRow(name, number, column, f"must be at most {most:g} (got {text!r})"))
            return None
        if value == 0 and column != "AcceleratorCount":
            zeros[column].append(number)
        out.append(value if value > 0 or column == "AcceleratorCount" else None)
    return tuple(out)
