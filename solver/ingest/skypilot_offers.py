"""A cloud's instances (one instance type in one region, its zones folded) as catalog offers and datacenters.

One offer per GPU box, region and mode: the vCPU/RAM sizes of one box (cudo's `…_1x2v4gb` and
`…_1x4v8gb`, nebius's `…_1gpu-16vcpu-64gb`, vast's `…-32-65536`, GCP's `-nolssd`) are one box whose
stock they share, so only the cheapest size is written and the others are named in its source.
Every offer's price is checked (SANITY): a spot price not below on-demand, or a price per GPU-hour
outside the band real list prices span for the card's throughput, is kept as given but marked CHECK
in its source and listed as a warning.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

from solver.model.catalog import Datacenter, Offer
from solver.model.modes import MODES
from solver.ingest.skypilot_regions import residency_tags

INTERCONNECT_NAMES = {"efa": "roce", "infiniband": "ib_ndr", "ib": "ib_ndr", "none": "ethernet"}
"""Overlay spellings → the catalog's interconnect names. EFA (AWS's RDMA fabric over Ethernet) is
planned as roce; plain InfiniBand as ib_ndr; none as ethernet (no RDMA between nodes)."""

BOX_SIZES = (r"_\d+x\d+v\d+gb$", r"_\d+gpu-\d+vcpu-\d+gb$", r"-\d+-\d+$", r"-nolssd$")
"""Instance-type endings that name a vCPU/RAM size (or local disk) of one GPU box: cudo, nebius, vast, gcp."""

USD_PER_PFLOPS_HOUR = (0.5, 30.0)
"""Plausible rent per GPU-hour for each dense BF16 PFLOPS of the card, in USD: the list prices read
in December 2026 run from 1.6 (a V100 on vast) to 25 (a V100 on Azure); H100s 3 to 12. Outside: CHECK."""


@dataclass
class Instance:
    """One instance type in one region, its zones folded (rows: every vms.csv row behind it)."""

    cloud: str
    instance_type: str
    accelerator: str
    count: int
    region: str
    gpu: str = ""
    rows: list[int] = field(default_factory=list)
    prices: list[float] = field(default_factory=list)
    spots: list[float] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)
    how: str = ""                     # how the price was put together (GCP: host + accelerator rows)

    @property
    def price(self) -> float | None:
        return max(self.prices) if self.prices else None

    @property
    def spot(self) -> float | None:
        return max(self.spots) if self.spots else None


def dc_id(cloud: str, region: str) -> str:
    """The datacenter id of a cloud's region: <cloud>-<region>, a region like vast's "Texas, US, NA" written
    Texas-US-NA (ids go into comma-separated lists and --set edits)."""
    return f"{cloud}-{_slug(region)}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-") or "x"


def box_of(instance_type: str) -> str:
    """The GPU box an instance type is one size of (its vCPU/RAM/disk ending removed)."""
    for pattern in BOX_SIZES:
        instance_type = re.sub(pattern, "", instance_type)
    return instance_type


def boxes(instances) -> list[tuple[Instance, list[Instance]]]:
    """Each box's cheapest size (by on-demand, then spot price) and the other sizes folded into it."""
    groups: dict[tuple, list[Instance]] = defaultdict(list)
    for inst in instances:
        groups[inst.region, inst.gpu, inst.count, box_of(inst.instance_type)].append(inst)
    out = []
    for members in groups.values():
        members.sort(key=lambda i: (i.price is None, i.price or 0.0, i.spot is None, i.spot or 0.0, i.instance_type))
        out.append((members[0], members[1:]))
    return sorted(out, key=lambda pair: (pair[0].region, pair[0].instance_type))


def make_offers(result, instances, conf, *, matching: Callable, known: dict, reclaim: float, day, origin: str) -> None:
    """result.offers and result.datacenters for a cloud's instances (module docstring)."""
    cloud = result.cloud
    regions: dict[str, Datacenter] = {}
    for inst, others in boxes(instances):
        if inst.region not in regions:
            regions[inst.region] = datacenter(result, inst.region, conf, day, origin)
        entries = next((m for m in (matching(i.instance_type, inst.region) for i in [inst, *others]) if m), [])
        link, link_price, link_note = interconnect(entries)
        max_nodes = next((e.max_nodes for e in entries if e.max_nodes), conf.max_nodes)
        lead = next((e.lead_time_days for e in entries if e.lead_time_days is not None), conf.lead_time_days)
        zones = f" over {len(set(inst.zones))} zones" if len(set(inst.zones)) > 1 else ""
        base = dict(vendor=cloud, datacenter=regions[inst.region].datacenter, gpu=inst.gpu, price_unit="per_node_hour",
                    currency=conf.currency, gpus_per_node=inst.count, max_nodes=max_nodes, lead_time_days=lead,
                    interconnect=link, interconnect_price=link_price, platform_fee_pct=conf.platform_fee_pct,
                    storage_per_tb_month=conf.storage_per_tb_month, egress_per_tb=conf.egress_per_tb,
                    illustrative=False, as_of=day)
        stock = ("stock " + ("from the overlay" if any(e.max_nodes for e in entries) else
                             f"assumed {max_nodes} (the catalog has none)"))
        if others:
            names = ", ".join(o.instance_type for o in others[:3]) + (", …" if len(others) > 3 else "")
            stock += f" for this GPU box in {len(others) + 1} vCPU/RAM sizes (also {names}: the cheapest kept)"
        where = f"{origin}, {inst.instance_type} ({inst.accelerator} x{inst.count}), {span(inst.rows)}{inst.how}"
        checks = sanity(inst, known.get(inst.gpu), conf.currency)
        for mode, value, values in (("hourly", inst.price, inst.prices), ("spot", inst.spot, inst.spots)):
            if value is None:
                continue
            spot = MODES[mode].preemptible  # SkyPilot's SpotPrice column: capacity that can be reclaimed
            label = "SpotPrice" if spot else "Price"
            spread = (f"; {'spot' if spot else 'on-demand'} {min(values):g}-{value:g}{zones}, highest kept"
                      if min(values) != value else "")
            extra = dict(preemptions_per_day=reclaim) if spot else {}
            reclaims = f"; reclaims {reclaim:g}/day assumed" if spot else ""
            check = "".join(f"; CHECK: {c}" for c in checks.get(mode, []))
            offer_id = f"{dc_id(cloud, inst.region)}-{_slug(inst.instance_type)}-{mode}"
            source = f"{where}: {label}{spread}{reclaims}; {stock}{link_note}{check}"
            result.offers.append(Offer(offer=offer_id, mode=mode, price=value, source=source, **base, **extra))
            result.warnings += [f"{inst.instance_type} in {inst.region}, {mode}: {c}" for c in checks.get(mode, [])]
        if inst.price is None and inst.spot is not None:
            result.notes.append(f"{inst.instance_type} in {inst.region} ({span(inst.rows)}): no on-demand Price, "
                                "a spot offer only")
        elif inst.price is None:
            result.skipped.setdefault("neither Price nor SpotPrice", []).extend(inst.rows)
    result.datacenters = list(regions.values())


def sanity(inst: Instance, gpu: Any, currency: str) -> dict[str, list[str]]:
    """What is odd about an instance's prices, per mode (empty: nothing)."""
    out: dict[str, list[str]] = defaultdict(list)
    if inst.price is not None and inst.spot is not None and inst.spot >= inst.price:
        out["spot"].append(f"spot {inst.spot:g} is not below on-demand {inst.price:g}")
    if gpu is not None and currency == "USD":
        low, high = USD_PER_PFLOPS_HOUR
        for mode, value in (("hourly", inst.price), ("spot", inst.spot)):
            if value is None:
                continue
            per_gpu = value / inst.count
            rate = per_gpu / (gpu.bf16_tflops / 1000)
            if not low <= rate <= high:
                out[mode].append(f"{per_gpu:.3g} USD per GPU-hour is {rate:.3g} USD per dense BF16 PFLOPS-hour of "
                                 f"{gpu.gpu}, outside the {low:g}-{high:g} real list prices span")
    return out


def datacenter(result, region: str, conf, day, origin: str) -> Datacenter:
    """The (cloud, region) datacenter, its residency from the overlay or the region's name (noted once)."""
    cloud = result.cloud
    tags = conf.residency.get(region)
    if tags is None:
        tags = list(residency_tags(region))
        if not tags:
            result.notes.append(f"region {region}: no residency tag (name not in the table); "
                                f"set clouds.{cloud}.residency.{region} in the overlay")
    name = dc_id(cloud, region)
    return Datacenter(datacenter=name, region=region, power_quota_kw=0, pue=1.0, residency=tuple(tags),
                      link_group=name, as_of=day,
                      source=f"{origin}; public cloud region (no power quota of ours: its offers do not count power)")


def interconnect(entries) -> tuple[tuple[str, ...], tuple[float, ...], str]:
    """The overlay's fabric options for an instance (ethernet when it names none) and the source's word on it."""
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


def span(rows: list[int]) -> str:
    """Row numbers as runs: "row 4", "rows 4-7", "rows 4-7,43-46" (after four runs, "…")."""
    rows = sorted(set(rows))
    runs: list[list[int]] = []
    for r in rows:
        if runs and r == runs[-1][-1] + 1:
            runs[-1].append(r)
        else:
            runs.append([r])
    text = ",".join(f"{run[0]}-{run[-1]}" if len(run) > 1 else f"{run[0]}" for run in runs[:4])
    return ("row " if len(rows) == 1 else "rows ") + text + ("…" if len(runs) > 4 else "")
