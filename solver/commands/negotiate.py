"""`gpuplan negotiate PROBLEM [--vendor V]`: walk-away and break-even prices, levers, a vendor's sheet."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from solver.choices import DEFAULT_BACKEND
from solver.clock import left_of
from solver.commands.common import command_budget, plan_console, run_action, speak, working
from solver.commands.options import (AsJson, BackendChoice, bounded, gap_option, Lang, max_seconds_option, ProblemFile,
                                     TimeLimit)


def register(app: typer.Typer) -> None:
    app.command("negotiate")(negotiate)


def negotiate(problem: ProblemFile,
              vendor: Optional[list[str]] = typer.Option(None, "--vendor", "-v",
                                                         help="only this vendor's offers (repeat for more)"),
              kw: float = typer.Option(50, "--kw", help="value of this many more kW at each site whose power binds",
                                callback=bounded(gt=0, example="--kw 50")),
              lead_days: int = typer.Option(7, "--lead-days", min=1,
                                             help="value of lead times shorter by this many days"),
              nodes: int = typer.Option(2, "--nodes", min=1, help="value of this many more nodes where availability binds"),
              margin: float = typer.Option(0.05, help="target price this fraction below the current price "
                                                      "(in the plan) or the break-even (not in it)"),
              max_solves: int = typer.Option(8, help="solves per offer at most"),
              max_seconds: Annotated[Optional[float], max_seconds_option(
                  "the whole run's budget: no solve starts after it, none runs past it",
                  example="--max-seconds 120")] = None,
              export_vendor: Optional[tuple[str, Path]] = typer.Option(None, "--export-vendor", metavar="VENDOR FILE",
                                                             help="write VENDOR's sheet (CSV, or .xlsx with openpyxl): "
                                                                  "its own offers, target prices, volumes only"),
              force: bool = typer.Option(False, "--force", help="overwrite the export file"),
              jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1,
                                                 help="processes the offers are priced in (default: all cores); "
                                                      "the output is the same for any number"),
              ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS",
                                                help="price the offers on Ray actors (pip install .\\[ray]): 'local' "
                                                     "starts Ray here with --jobs CPUs; 'auto' or host:port joins a "
                                                     "cluster (one actor per CPU, or --jobs)"),
              as_json: AsJson = False,
              lang: Lang = None,
              backend: BackendChoice = DEFAULT_BACKEND,
              time_limit: TimeLimit = None,
              gap: Annotated[float, gap_option("relative gap of each solve (prices are as exact as costs)")] = 1e-7,
              ) -> None:
    """Walk-away price of each offer in the plan, break-even price of each offer not in it, and
    what more power, shorter lead times and more nodes are worth (re-solve deltas, in the problem's currency).

    Price means the offer's price column (the vendor's quote); interconnect surcharge,
    platform fee and discount stay as they are.
    """
    def action() -> None:
        command_budget(max_seconds)
        from solver.analysis.negotiate import check_vendor
        from solver.analysis.negotiate import negotiate as analyse
        from solver.load import load_problem
        from solver.report.negotiate import render_negotiation
        from solver.report.json_out import print_json
        from solver.report.vendor_sheet import check_sheet, export_vendor as write_sheet

        sheet_vendor, sheet_path = export_vendor or (None, None)
        if sheet_path is not None:
            check_sheet(sheet_path, force=force)
        prob, cat = load_problem(problem)
        speak(lang, prob)
        if sheet_vendor is not None:
            check_vendor(cat, sheet_vendor, "--export-vendor")
        vendors = list(vendor or [])
        if vendors and sheet_vendor and sheet_vendor not in vendors:
            vendors.append(sheet_vendor)
        with working("negotiate: walk-away and break-even prices"):
            result = analyse(prob, cat, vendors=vendors or None, kw=kw, lead_days=lead_days, nodes=nodes, margin=margin,
                             max_solves=max_solves, max_seconds=left_of(max_seconds), backend=backend.value,
                             time_limit=time_limit, gap=gap, jobs=jobs if ray else jobs or os.cpu_count() or 1, ray=ray)
        written = None
        if sheet_vendor:
            rows = write_sheet(result, sheet_vendor, sheet_path, force=force)
            written = {"vendor": sheet_vendor, "file": str(sheet_path), "rows": rows}
        if as_json:
            data = result.to_dict()
            data["export"] = written
            print_json(data)
        else:
            render_negotiation(result, plan_console(), written)
    run_action(action, stoppable=True)
