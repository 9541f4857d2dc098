"""`gpuplan split-bill`'s table: each tenant's rent, power and bandwidth share of a shared rack."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.tools.billing import money


def grouped(amount: str) -> str:
    """An exact decimal string with thousands separators, digits untouched: '1234567.89' → '1,234,567.89'
    (the table is for people; the CSV and JSON keep the plain string for programs)."""
    sign, rest = ("-", amount[1:]) if amount.startswith("-") else ("", amount)
    whole, dot, cents = rest.partition(".")
    return f"{sign}{int(whole):,}{dot}{cents}"


def render_bill(bill, csv_out: Optional[Path]) -> None:
    """The tenants' shares as one table, with what was skipped and the file written."""
    console = Console(width=max(100, Console().width))
    total = bill.rack_cost + bill.power_cost + bill.bandwidth_cost
    table = Table(title=f"Shared rack bill {grouped(money(total))} {bill.currency}: rent evenly, power and bandwidth by "
                        f"GPU-hours ({bill.by})")
    for name in ("tenant", "jobs", "GPU-hours", "share", "rent", "power", "bandwidth", "total"):
        table.add_column(name, justify="left" if name == "tenant" else "right")
    rows = bill.rows()
    for i, r in enumerate(rows):
        last = i == len(rows) - 1
        table.add_row(escape(r["tenant"]), str(r["jobs"]), f"{r['gpu_hours']:,.2f}", f"{r['share_pct']:.2f}%",
                      *(grouped(r[k]) for k in ("rent", "power", "bandwidth", "total")), end_section=(i == len(rows) - 2),
                      style="bold" if last else None)
    console.print(table)
    console.print(f"{len(bill.tenants)} tenants from {escape(str(bill.source))}; {bill.skipped_steps} job steps skipped "
                  "(the allocation line holds the GPUs)", highlight=False)
    for note in bill.notes:
        console.print(f"note: {escape(note)}", highlight=False)
    if csv_out is not None:
        console.print(escape(f"wrote {csv_out}"), highlight=False)
