"""`gpuplan split-bill`: one shared rack's monthly bill per tenant, from Slurm's sacct (seed 002 FAQ)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from solver.commands.common import print_json, run_action
from solver.report.outputs import check_new_file


def register(app: typer.Typer) -> None:
    app.command("split-bill")(split_bill)


def split_bill(
        sacct: Path = typer.Option(..., help="output of sacct -P (header line included)"),
        rack_cost: str = typer.Option(..., help="base rent of the rack for the period, split evenly"),
        power_cost: str = typer.Option("0", help="electricity bill, split by GPU-hours"),
        bandwidth_cost: str = typer.Option("0", help="bandwidth bill, split by GPU-hours"),
        by: str = typer.Option("account", help="tenant = Slurm account or user"),
        tenant: list[str] = typer.Option([], "--tenant", help="every tenant sharing the rack (repeat); "
                                                              "those without jobs still pay their rent share"),
        since: Optional[datetime] = typer.Option(None, help="cut jobs to the period from Start/End (instead of Elapsed)"),
        until: Optional[datetime] = typer.Option(None, help="end of the period (running jobs count up to it)"),
        currency: str = typer.Option("CNY"),
        csv_out: Optional[Path] = typer.Option(None, "--csv", help="also write the table as CSV"),
        force: bool = typer.Option(False, "--force", help="replace an existing --csv file"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object")) -> None:
    """Split a shared rack's bill: rent evenly, power and bandwidth by GPU-hours from sacct.

    Amounts are exact to the cent: each column is rounded by largest remainder so the
    tenants' shares add up to the bill. Export with
    `sacct -a -X -P -T -S 2026-11-01 -E 2026-12-01 --format=JobID,JobName,User,Account,Partition,AllocTRES,Elapsed,Start,End,State`.
    """
    from solver.billing import read_sacct, write_csv
    from solver.billing import split_bill as split

    def action() -> None:
        if csv_out is not None:
            check_new_file(csv_out, "--csv", force=force, example="bill.csv")
        usage = read_sacct(sacct, by.lower(), since=since, until=until)
        bill = split(usage, rack_cost, power_cost, bandwidth_cost, tenants=tenant or None, currency=currency)
        if csv_out is not None:
            write_csv(bill, csv_out)
        if as_json:
            print_json(bill.to_dict())
        else:
            render(bill, csv_out)
    run_action(action)


def render(bill, csv_out: Optional[Path]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    from solver.billing import money

    console = Console(width=max(100, Console().width))
    total = bill.rack_cost + bill.power_cost + bill.bandwidth_cost
    table = Table(title=f"Shared rack bill {money(total)} {bill.currency}: rent evenly, power and bandwidth by "
                        f"GPU-hours ({bill.by})")
    for name in ("tenant", "jobs", "GPU-hours", "share", "rent", "power", "bandwidth", "total"):
        table.add_column(name, justify="left" if name == "tenant" else "right")
    rows = bill.rows()
    for i, r in enumerate(rows):
        last = i == len(rows) - 1
        table.add_row(escape(r["tenant"]), str(r["jobs"]), f"{r['gpu_hours']:,.2f}", f"{r['share_pct']:.2f}%",
                      r["rent"], r["power"], r["bandwidth"], r["total"], end_section=(i == len(rows) - 2),
                      style="bold" if last else None)
    console.print(table)
    console.print(f"{len(bill.tenants)} tenants from {escape(str(bill.source))}; {bill.skipped_steps} job steps skipped "
                  "(the allocation line holds the GPUs)", highlight=False)
    for note in bill.notes:
        console.print(f"note: {escape(note)}", highlight=False)
    if csv_out is not None:
        console.print(escape(f"wrote {csv_out}"), highlight=False)
