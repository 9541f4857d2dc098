"""Rental modes: the one table of what each mode means (hourly, monthly, yearly, hosted, spot).

Why a table: the model, the verifier, the MILP, the HTML report and the quote sheet each
asked the same questions of a mode (what is its price per, is it paid by whole term, can
its capacity be reclaimed, which colour is its bar) and each kept its own answer: a new
mode added to one place was silently missing from the others (a mode without a colour fell
out of the report's legend). Every such question is now a column here, and
tests/model/test_modes.py fails when the `Mode` literal and this table disagree.

Nothing here knows about solving; pydantic-free so any layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Mode = Literal["hourly", "monthly", "yearly", "hosted", "spot"]
"""The `mode` column of offers.csv, and a problem's `restrict.modes`: exactly the keys of MODES."""

PriceUnitTime = Literal["hour", "month", "year"]

UNIT_DAYS: dict[str, float] = {"hour": 1 / 24, "month": 30, "year": 365}
"""Days in one price unit: what a price *means* (a month is 30 days, a year 365)."""


@dataclass(frozen=True)
class RentalMode:
    """What one rental mode means to every part of the tool.

    unit:        what a price is per (`price_unit` ends in it: cny_per_gpu_<unit>, cny_per_node_<unit>)
    committed:   paid by whole term from its start, used or not (contracts); else paid per period held
    preemptible: its capacity can be reclaimed at any time (spot): only interruptible jobs may
                 use it, its throughput carries the restart loss, and a job's fabric domain is
                 all of it or none of it
    colour:      its bars and legend swatch in the HTML report (#rrggbb)
    paid:        how it is billed, in a few words (the quote sheet's column notes)
    """

    name: str
    unit: PriceUnitTime
    committed: bool
    preemptible: bool
    colour: str
    paid: str


MODES: dict[str, RentalMode] = {m.name: m for m in (
    RentalMode("hourly", "hour", committed=False, preemptible=False, colour="#4e79a7", paid="paid per hour used"),
    RentalMode("monthly", "month", committed=True, preemptible=False, colour="#59a14f", paid="paid per whole term"),
    RentalMode("yearly", "year", committed=True, preemptible=False, colour="#b07aa1", paid="paid per whole term"),
    RentalMode("hosted", "month", committed=True, preemptible=False, colour="#e15759", paid="paid per whole term"),
    RentalMode("spot", "hour", committed=False, preemptible=True, colour="#f28e2b", paid="paid per hour used"),
)}
"""Every rental mode, in the order of the `Mode` literal."""


def legend_order() -> list[str]:
    """Modes as the report's legend lists them: pay-as-you-go modes first, then contracts,
    each in table order (hourly, spot, monthly, yearly, hosted)."""
    return sorted(MODES, key=lambda m: (MODES[m].committed, list(MODES).index(m)))
