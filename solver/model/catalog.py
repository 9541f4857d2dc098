"""Catalog nouns: GPUs, datacenters and vendor offers, exactly the CSV columns (see catalogs/*/README.md).

Unit conversion of a price lives here because it is part of what a price *means*
(a month is 30 days, a year 365); nothing here knows about solving.
"""

from __future__ import annotations

from datetime import date
from typing import Literal

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from solver.errors import ProblemError
from solver.model.magnitudes import check_magnitude
from solver.model.modes import MODES, UNIT_DAYS, Mode
from solver.model.text import refuse_control

Interconnect = Literal["ib_ndr", "ib_hdr", "roce", "ethernet"]
PriceUnit = Literal["per_gpu_hour", "per_node_hour", "per_gpu_month", "per_node_month", "per_node_year",
                    "cny_per_gpu_hour", "cny_per_node_hour", "cny_per_gpu_month",
                    "cny_per_node_month", "cny_per_node_year"]
"""What `price` is per, in the offer's `currency`. The `cny_` spellings are the older names
(still read); they say CNY, so they only go with currency CNY."""
CURRENCY_PATTERN = r"^[A-Z]{3}$"
"""An ISO 4217 code: three capital letters (CNY, USD, EUR, ...)."""
DEFAULT_CURRENCY = "CNY"
"""The currency of an offer whose `currency` cell is blank or absent (the catalogs written
before the column existed are all in CNY)."""
LEGACY_COLUMNS = {"storage_cny_per_tb_month": "storage_per_tb_month", "egress_cny_per_tb": "egress_per_tb"}
"""Older offers.csv column names, still read, and the currency-neutral names they stand for."""

MODE_UNITS = {name: mode.unit for name, mode in MODES.items()}
"""What a price of each mode is per (from solver.model.modes.MODES)."""
Stack = Literal["cuda", "cann", "rocm"]
"""Software stacks a GPU's training code is built on (gpus.csv `stack`; a problem's or job's `stacks`)."""
DEFAULT_WAN_GBPS = 10.0
"""Bandwidth (Gbit/s) of a datacenter's line to sites outside its link group when its
optional `wan_gbps` cell is blank. Inside one link group (dedicated lines) moving a
dataset is taken as immediate; between groups the slower end's wan_gbps applies."""


MAX_GPUS_PER_NODE = 64
"""The most GPUs one node of an offer holds; a SkyPilot AcceleratorCount above it is a bad cell."""


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _printable_and_sane(cls, value: object, info: ValidationInfo) -> object:
        """No ESC in a name (solver.model.text); no number beyond its key's cap (solver.model.magnitudes)."""
        return check_magnitude(info.field_name, refuse_control(value))


class Gpu(_Row):
    """One accelerator type: dense (no sparsity) tensor peak, memory, power."""

    gpu: str = Field(min_length=1)
    memory_gb: float = Field(gt=0)
    bf16_tflops: float = Field(gt=0, description="dense BF16 tensor TFLOPS, no sparsity")
    fp8_tflops: float | None = Field(default=None, gt=0)
    mem_bw_tbs: float = Field(gt=0)
    tdp_w: float = Field(gt=0)
    form: Literal["sxm", "pcie", "oam"]
    gpu_class: Literal["datacenter", "consumer", "domestic"] = Field(alias="class")
    stack: Stack = Field(
        default="cuda", description="software stack the training code needs on this card: cuda (NVIDIA), "
                                    "cann (Huawei Ascend), rocm (AMD); a plan mixing stacks is warned about")
    default_mfu: float = Field(gt=0, le=1)
    confidence: Literal["high", "medium", "low"] = "medium"
    as_of: date | None = None
    source: str = Field(min_length=1)

    @property
    def nvlink(self) -> bool:
        """GPUs of a node talk over NVLink (SXM, OAM boards), not only PCIe (form pcie: L40S,
        RTX 4090, even where a bridge pairs two cards); the layout search reads it."""
        return self.form != "pcie"


class Datacenter(_Row):
    """A site with the IT power quota available to us and the data-residency tags it carries."""

    datacenter: str = Field(min_length=1)
    region: str
    power_quota_kw: float = Field(ge=0)
    pue: float = Field(ge=1, le=3)
    residency: tuple[str, ...] = ()
    link_group: str = Field(min_length=1)
    wan_gbps: float | None = Field(default=None, gt=0,
                                   description=f"Gbit/s to other link groups; blank: {DEFAULT_WAN_GBPS:g}")
    as_of: date | None = None
    source: str = Field(min_length=1)

    @field_validator("residency", mode="before")
    @classmethod
    def _split_tags(cls, v: object) -> object:
        return _split(v)


class Offer(_Row):
    """One vendor quote: a GPU node type at a datacenter under one rental mode."""

    offer: str = Field(min_length=1)
    vendor: str = Field(min_length=1)
    datacenter: str = Field(min_length=1)
    gpu: str = Field(min_length=1)
    mode: Mode
    price: float = Field(gt=0, description="in `currency` per price_unit")
    price_unit: PriceUnit
    currency: str = Field(default=DEFAULT_CURRENCY, pattern=CURRENCY_PATTERN,
                          description="ISO 4217 code of price, interconnect_price, storage and egress prices")
    gpus_per_node: int = Field(gt=0, le=MAX_GPUS_PER_NODE)
    max_nodes: int = Field(gt=0)
    min_term_days: int = Field(default=0, ge=0)
    lead_time_days: int = Field(default=0, ge=0)
    interconnect: tuple[Interconnect, ...] = Field(min_length=1)
    interconnect_price: tuple[float, ...] = ()
    counts_power: bool = False
    node_kw: float | None = Field(default=None, gt=0)
    platform_fee_pct: float = Field(default=0, ge=0, le=100)
    preemptions_per_day: float = Field(default=0, ge=0)
    perf_guarantee_pct: float | None = Field(default=None, gt=0, le=100)
    discount_from_gpus: int | None = Field(default=None, gt=0)
    discount_pct: float | None = Field(default=None, gt=0, lt=100)
    storage_per_tb_month: float = Field(default=0, ge=0, description="in `currency` per TB-month")
    egress_per_tb: float = Field(default=0, ge=0, description="in `currency` per TB moved out")
    illustrative: bool = True
    as_of: date | None = None
    source: str = Field(min_length=1)
    billing: Literal["monthly", "upfront"] | None = Field(
        default=None, description="how a committed term is paid: monthly (the default when blank: each month "
                                  "pays the term's days in it) or upfront (the whole term on its first day); "
                                  "blank for hourly and spot, which are paid as used")

    @model_validator(mode="before")
    @classmethod
    def _legacy_names(cls, data: object) -> object:
        """storage_cny_per_tb_month and egress_cny_per_tb are read as the neutral names."""
        if isinstance(data, dict) and any(old in data for old in LEGACY_COLUMNS):
            data = dict(data)
            for old, new in LEGACY_COLUMNS.items():
                if old in data:
                    if data.get(new) is not None and data[old] is not None:
                        raise ValueError(f"{old} and {new} are the same column (the older and the newer "
                                         f"name): keep {new} only")
                    value = data.pop(old)
                    if data.get(new) is None:
                        data[new] = value
        return data

    @field_validator("currency", mode="before")
    @classmethod
    def _blank_is_default(cls, v: object) -> object:
        return DEFAULT_CURRENCY if v is None or (isinstance(v, str) and not v.strip()) else v

    @field_validator("interconnect", "interconnect_price", mode="before")
    @classmethod
    def _split_options(cls, v: object) -> object:
        return _split(v)

    @model_validator(mode="after")
    def _consistent(self) -> "Offer":
        if self.price_unit.startswith("cny_") and self.currency != "CNY":
            raise ValueError(f"price_unit {self.price_unit} says CNY but currency is {self.currency}: "
                             f"write price_unit {self.price_unit.removeprefix('cny_')}")
        unit = self.price_unit.rsplit("_", 1)[1]
        if unit != MODE_UNITS[self.mode]:
            raise ValueError(f"price_unit {self.price_unit} does not fit mode {self.mode}: "
                             f"{self.mode} offers are priced per {MODE_UNITS[self.mode]}")
        repeated = sorted({i for i in self.interconnect if self.interconnect.count(i) > 1})
        if repeated:
            raise ValueError(f"interconnect names {', '.join(repeated)} more than once: list each option once "
                             "(one price each in interconnect_price); a second price for the same fabric "
                             "is a second offer row")
        if not self.interconnect_price:
            object.__setattr__(self, "interconnect_price", (0.0,) * len(self.interconnect))
        if len(self.interconnect_price) != len(self.interconnect):
            options, prices = "|".join(self.interconnect), len(self.interconnect_price)
            raise ValueError(f"interconnect_price needs one '|'-separated value per interconnect option: "
                             f"{prices} for {len(self.interconnect)} ({options}); write one price per option, "
                             "in the same order, 0 where the fabric is included "
                             "(e.g. 12|6|0 for ib_hdr|roce|ethernet)")
        if any(p < 0 for p in self.interconnect_price):
            raise ValueError("interconnect_price must be >= 0")
        if self.counts_power and self.node_kw is None:
            raise ValueError("node_kw is required when counts_power is true (its draw counts against the site quota)")
        if (self.discount_from_gpus is None) != (self.discount_pct is None):
            raise ValueError("discount_from_gpus and discount_pct go together: set both or neither")
        if self.preemptible and self.preemptions_per_day <= 0:
            raise ValueError(f"{self.mode} offers need preemptions_per_day > 0 (how often capacity is reclaimed)")
        if not self.committed and self.billing is not None:
            raise ValueError(f"billing {self.billing} on {_article(self.mode)} {self.mode} offer: "
                             f"{self.mode} nodes are paid as used; leave billing blank")
        if not self.committed and self.min_term_days:
            raise ValueError(f"min_term_days {self.min_term_days} on {_article(self.mode)} {self.mode} offer: the planner rents "
                             f"{self.mode} nodes period by period and cannot hold them to a minimum; write 0, or "
                             "quote the offer as monthly with its min_term_days")
        return self

    @property
    def committed(self) -> bool:
        """Committed modes are paid by whole term from their start, used or not."""
        return MODES[self.mode].committed

    @property
    def preemptible(self) -> bool:
        """Spot-like: the vendor may reclaim the capacity at any time (solver.model.modes)."""
        return MODES[self.mode].preemptible

    @property
    def term_days(self) -> int:
        """Contract length of committed modes: the minimum term, at least one price unit."""
        if not self.committed:
            return 0
        return max(self.min_term_days, int(UNIT_DAYS[MODE_UNITS[self.mode]]))

    def _per_node(self, value: float) -> float:
        return value * self.gpus_per_node if "_gpu_" in self.price_unit else value

    def node_cost_per_hour(self, option: int = 0, *, rent_only: bool = False) -> float:
        """Rent + interconnect of one node for one hour, before platform fee (hourly/spot)."""
        extra = 0.0 if rent_only else self.interconnect_price[option]
        return self._per_node(self.price) + extra

    def node_cost_per_term(self, option: int = 0, *, rent_only: bool = False) -> float:
        """Rent + interconnect of one node for one whole term, before platform fee (committed)."""
        days = UNIT_DAYS[MODE_UNITS[self.mode]]
        return self.node_cost_per_hour(option, rent_only=rent_only) * self.term_days / days

    def gpu_price_per_hour(self) -> float:
        """Rent alone per GPU-hour, any mode (for comparing offers, not for billing)."""
        per_gpu = self._per_node(self.price) / self.gpus_per_node
        return per_gpu / (UNIT_DAYS[MODE_UNITS[self.mode]] * 24)

    def gpu_cost_per_hour(self, option: int = 0) -> float:
        """Rent and interconnect option `option` per GPU-hour, platform fee included: what a
        GPU-hour costs before any volume discount, any mode (for comparing offers, not for
        billing: the bill rounds to whole periods and terms, solver.verify)."""
        hours = UNIT_DAYS[MODE_UNITS[self.mode]] * 24
        return self.node_cost_per_hour(option) / self.gpus_per_node / hours * (1 + self.platform_fee_pct / 100)


class Catalog(BaseModel):
    """The three tables, cross-checked: every offer names a GPU and a datacenter that exist."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpus: dict[str, Gpu]
    datacenters: dict[str, Datacenter]
    offers: dict[str, Offer]
    path: str = ""

    @model_validator(mode="after")
    def _cross_checked(self) -> "Catalog":
        found = inconsistencies(self)
        if found:
            offer, column, message, fix = found[0]
            raise ValueError(f"offer {offer}, column {column}: {message}. Fix: {fix}")
        return self


def inconsistencies(catalog: Catalog) -> list[tuple[str, str, str, str]]:
    """(offer, column, what is wrong, fix) for every cross-table problem of a catalog.

    Offers must name known GPUs and sites; storage and egress are priced per vendor and
    site, so every offer of one vendor at one datacenter must carry the same prices.
    """
    found = []
    seen: dict[tuple[str, str], tuple[float, float]] = {}
    for offer in catalog.offers.values():
        if offer.gpu not in catalog.gpus:
            found.append((offer.offer, "gpu", f"unknown gpu {offer.gpu!r}",
                          f"use one of {', '.join(sorted(catalog.gpus))} or add it to gpus.csv"))
        if offer.datacenter not in catalog.datacenters:
            found.append((offer.offer, "datacenter", f"unknown datacenter {offer.datacenter!r}",
                          f"use one of {', '.join(sorted(catalog.datacenters))} or add it to datacenters.csv"))
        prices = (offer.storage_per_tb_month, offer.egress_per_tb, offer.currency)
        if seen.setdefault((offer.vendor, offer.datacenter), prices) != prices:
            found.append((offer.offer, "storage_per_tb_month",
                          f"storage/egress prices differ between offers of {offer.vendor} at {offer.datacenter}",
                          "use one storage and one egress price (in one currency) per vendor and datacenter"))
    return found


def currencies(catalog: Catalog) -> set[str]:
    """The currencies the catalog's offers are priced in."""
    return {o.currency for o in catalog.offers.values()}


def priced_in(catalog: Catalog, currency: str, rates: Mapping[str, float], *, file: str | None = None) -> Catalog:
    """The catalog with every offer's money (price, interconnect_price, storage, egress) in
    `currency`: an offer in currency X is multiplied by rates[X], the units of `currency`
    one X buys. Offers already in `currency` are kept as they are (the same objects).

    This is the one place money changes currency for planning: solver.milp.instance calls it
    once per instance; solver.verify converts on its own. A currency without a rate is a
    ProblemError naming it (key exchange_rates.rates.X of `file`, the problem)."""
    if all(o.currency == currency for o in catalog.offers.values()):
        return catalog
    missing = sorted(currencies(catalog) - set(rates) - {currency})
    if missing:
        used = ", ".join(sorted(o.offer for o in catalog.offers.values() if o.currency == missing[0])[:3])
        raise ProblemError(f"no exchange rate for {missing[0]}: offers are priced in it (e.g. {used}) and the "
                           f"problem's currency is {currency}", file=file, key=f"exchange_rates.rates.{missing[0]}",
                           fix=f"add exchange_rates: {{as_of: YYYY-MM-DD, rates: {{{missing[0]}: N}}}} "
                               f"(N {currency} for one {missing[0]}), or restrict the catalog")
    offers = {}
    for key, o in catalog.offers.items():
        if o.currency == currency:
            offers[key] = o
            continue
        r = rates[o.currency]
        offers[key] = o.model_copy(update={
            "price": o.price * r, "interconnect_price": tuple(p * r for p in o.interconnect_price),
            "storage_per_tb_month": o.storage_per_tb_month * r, "egress_per_tb": o.egress_per_tb * r,
            "currency": currency, "price_unit": o.price_unit.removeprefix("cny_")})
    return catalog.model_copy(update={"offers": offers})


def _split(v: object) -> object:
    """CSV cells hold lists as 'a|b'; blank cells arrive as None."""
    if v is None:
        return ()
    if isinstance(v, str):
        return tuple(part.strip() for part in v.split("|") if part.strip())
    if isinstance(v, (int, float)):
        return (v,)
    return v


def _article(word: str) -> str:
    """"an hourly", "a spot": the English article before a word, as it is said (a silent h)."""
    return "an" if word[0] in "aeiou" or word.startswith("hour") else "a"
