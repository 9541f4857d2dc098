"""The quote sheet's layout, shared by its template (solver.ingest.quote_template) and its import
(solver.ingest.quotes): the sheet's name, the example row's marks, and every offers.csv column
described from the Offer model (type, unit, allowed values, range, default).
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MinLen
from pydantic_core import PydanticUndefined

from solver.ingest.tables import csv_text
from solver.model.catalog import Offer
from solver.model.modes import MODES, UNIT_DAYS

SHEET = "offers"
EXAMPLE_ID = "example-yz-a100-80-8x-monthly"
EXAMPLE_SOURCE = "EXAMPLE ROW - replace with your quote (vendor, contact, document, date) or delete the row"


def _mode_note() -> str:
    """The mode column's note, from the mode table: "hourly/spot: paid per hour used;
    monthly/yearly/hosted: paid per whole term" (modes grouped by how they are paid)."""
    groups: dict[str, list[str]] = {}
    for mode in MODES.values():
        groups.setdefault(mode.paid, []).append(mode.name)
    return "; ".join(f"{'/'.join(names)}: {paid}" for paid, names in groups.items())


def _price_unit_note() -> str:
    """The price_unit column's note, from the mode table: "hourly and spot: *_hour; monthly and
    hosted: *_month (30 days); yearly: *_year (365 days)" (modes grouped by price unit)."""
    groups: dict[str, list[str]] = {}
    for mode in MODES.values():
        groups.setdefault(mode.unit, []).append(mode.name)
    return "; ".join(f"{' and '.join(names)}: *_{unit}" + ("" if unit == "hour" else f" ({UNIT_DAYS[unit]:g} days)")
                     for unit, names in groups.items())


# What each column's numbers mean (documentation only; the rules live in solver.model.catalog.Offer).
UNITS = {
    "offer": "unique id, e.g. vendor-site-gpu-8x-mode",
    "vendor": "vendor id (same spelling on all its offers)",
    "datacenter": "a datacenter of the catalog (datacenters.csv)",
    "gpu": "a GPU of the catalog (gpus.csv)",
    "mode": _mode_note(),
    "price": "currency per price_unit; rent only (no interconnect, storage, egress or fee)",
    "price_unit": _price_unit_note(),
    "currency": "ISO 4217 code of every price of the row (CNY, USD, ...); blank = CNY",
    "gpus_per_node": "GPUs in one rentable node",
    "max_nodes": "nodes the vendor can give at once at this site",
    "min_term_days": "days; 0 for hourly/spot, e.g. 30 monthly, 365 yearly",
    "lead_time_days": "days from order to use",
    "interconnect": "inter-node fabric options, e.g. ib_hdr|roce",
    "interconnect_price": "currency per node in price_unit's time unit, one per interconnect option, e.g. 6000|3000",
    "counts_power": "true for hosted racks: node_kw counts against the site's power quota",
    "node_kw": "kW of IT power per node; required when counts_power is true",
    "platform_fee_pct": "percent surcharge on all charges (5 = 5%)",
    "preemptions_per_day": "expected reclaims per day; > 0 for spot, else 0",
    "perf_guarantee_pct": "percent of rated performance guaranteed (95 = 95%); blank = none",
    "discount_from_gpus": "GPUs from which the volume discount applies; blank = no discount",
    "discount_pct": "percent off once the tier applies (8 = 8%); with discount_from_gpus",
    "storage_per_tb_month": "currency per TB-month; the same on every offer of one vendor at one site",
    "egress_per_tb": "currency per TB exported; the same on every offer of one vendor at one site",
    "illustrative": "false for a real quote, true for made-up numbers",
    "as_of": "date of the quote",
    "source": "where the numbers come from: vendor, contact, document",
    "billing": "how a committed term is paid: monthly (blank = monthly) or upfront; blank for hourly/spot",
}

BLANK = {"interconnect_price": "0 for each option"}     # defaults the model fills in itself


# ---------------------------------------------------------------- column descriptions

@dataclass(frozen=True)
class ColumnSpec:
    name: str
    required: bool
    kind: str                      # text | number | whole number | true/false | date | list of ...
    allowed: tuple[str, ...]       # enum values, if any
    bounds: str                    # e.g. "> 0", "0 to 100"
    default: str                   # text of the default, "" = blank
    unit: str
    is_date: bool = False

    def guide(self) -> str:
        """One line: what the column takes."""
        parts = [self.kind + (f" {self.bounds}" if self.bounds else "")]
        if self.allowed and not self.kind.startswith("'|'"):
            parts = [f"one of {', '.join(self.allowed)}"]
        elif self.allowed:
            parts.append(f"from {', '.join(self.allowed)}")
        if self.unit:
            parts.append(self.unit)
        return "; ".join(parts)


def column_specs(gpus: list[str] | None = None, datacenters: list[str] | None = None) -> dict[str, ColumnSpec]:
    """Every offers.csv column, described from the Offer model (and the catalog's ids for gpu, datacenter)."""
    specs = {}
    for name, info in Offer.model_fields.items():
        col = info.alias or name
        ann = info.annotation
        if get_origin(ann) in (Union, types.UnionType):
            ann = next(a for a in get_args(ann) if a is not type(None))
        listed = get_origin(ann) is tuple
        inner = get_args(ann)[0] if listed else ann
        allowed = tuple(str(v) for v in get_args(inner)) if get_origin(inner) is Literal else ()
        kind = {str: "text", float: "a number", int: "a whole number", bool: "true or false",
                date: "a date YYYY-MM-DD"}.get(inner, "text")
        if allowed:
            kind = "one value"
        if listed:
            kind = "'|'-separated list of " + ("values" if allowed else "numbers" if inner is float else "texts")
        bounds = _bounds(info.metadata, listed, inner)
        if col == "gpu" and gpus:
            allowed = tuple(gpus)
        if col == "datacenter" and datacenters:
            allowed = tuple(datacenters)
        default = "" if info.default is PydanticUndefined or info.default in (None, ()) else csv_text(info.default)
        default = BLANK.get(col, default)
        specs[col] = ColumnSpec(col, info.is_required(), kind, allowed, bounds, default, UNITS.get(col, ""),
                                is_date=inner is date)
    return specs


def _bounds(metadata: list, listed: bool, inner: Any) -> str:
    low = high = ""
    for m in metadata:
        if isinstance(m, Gt):
            low = f"> {csv_text(m.gt)}"
        elif isinstance(m, Ge):
            low = f">= {csv_text(m.ge)}"
        elif isinstance(m, Lt):
            high = f"< {csv_text(m.lt)}"
        elif isinstance(m, Le):
            high = f"<= {csv_text(m.le)}"
        elif isinstance(m, MinLen) and m.min_length:
            return "(at least one)" if listed else "(not empty)"
    return ", ".join(p for p in (low, high) if p)
