"""The largest value each number in a problem or catalog may take: finite and sane.

Why: pydantic's types stop NaN and infinity, not 1e308. `storage_tb: 1e308` times a price
overflowed to infinity inside the MILP's objective and OR-Tools raised (a traceback, exit 1,
read as "infeasible"); a price of 1e300 did the same. Every number is checked against the
cap for its key (`MAX`), or `DEFAULT_MAX`; the caps are far beyond any real plan (a 10-GW
site, an exabyte of storage, 1e30 FLOPs) and keep every product the model forms finite.
"""

from __future__ import annotations

import math

DEFAULT_MAX = 1e15
"""Any number not in MAX: far above any count, price or size a plan meets (a budget of 10^15)."""

MAX: dict[str, float] = {
    "flops": 1e30,                      # ~1,000× the largest training runs of 2026
    "tokens": 1e17,
    "storage_tb": 1e6, "egress_tb": 1e6, "dataset_tb": 1e6,   # an exabyte
    "trials": 1e4,
    "lora_rank": 1e6, "micro_batch": 1e6,
    "checkpoint_interval_hours": 1e5, "restart_hours": 1e5,
    "price": 1e9, "interconnect_price": 1e9,
    "storage_per_tb_month": 1e7, "egress_per_tb": 1e7,
    "max_nodes": 1e6, "discount_from_gpus": 1e8, "min_term_days": 1e5, "lead_time_days": 1e5,
    "power_quota_kw": 1e7, "node_kw": 1e4, "preemptions_per_day": 1e4,
}


def check_magnitude(key: str, value: object) -> object:
    """A validator's check: `value` (a number, numeric text, or a list of them) within MAX[key]."""
    cap = MAX.get(key, DEFAULT_MAX)
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, bool):
            continue
        number = item
        if isinstance(item, str):
            try:
                number = float(item)
            except ValueError:
                continue   # not a number: the field's own type check reports it
        if isinstance(number, (int, float)) and math.isfinite(number) and abs(number) > cap:
            raise ValueError(f"{number:g} is out of range (at most {cap:g} in absolute value)")
    return value
