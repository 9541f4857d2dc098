"""`gpuplan split-bill`: one shared rack's monthly bill per tenant, from Slurm's sacct (rent evenly; power and bandwidth by GPU-hours)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Optional

import typer

from solver.commands.common import run_action
from solver.commands.options import AsJson
from solver.files import check_new_file


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
        as_json: AsJson = False) -> None:
    """Split a shared rack's bill: rent evenly, power and bandwidth by GPU-hours from sacct.

    Amounts are exact to the cent: each column is rounded by largest remainder so the
    tenants' shares add up to the bill. Export with
    `sacct -a -X -P -T -S 2026-11-01 -E 2026-12-01 --format=JobID,JobName,User,Account,Partition,AllocTRES,Elapsed,Start,End,State`.
    """
    def action() -> None:
        from solver.tools.billing import read_sacct, write_csv
        from solver.tools.billing import split_bill as split
        from solver.report.split_bill import render_bill
        from solver.report.json_out import print_json

        if csv_out is not None:
            check_new_file(csv_out, "--csv", force=force, example="bill.csv")
        usage = read_sacct(sacct, by.lower(), since=since, until=until)
        bill = split(usage, rack_cost, power_cost, bandwidth_cost, tenants=tenant or None, currency=currency)
        if csv_out is not None:
            write_csv(bill, csv_out)
        if as_json:
            print_json(bill.to_dict())
        else:
            render_bill(bill, csv_out)
    run_action(action)
