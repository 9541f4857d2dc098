"""`gpuplan catalog show|validate|template|import|import-skypilot`: look at, check and fill a catalog folder."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from solver.commands.common import MAX_WIDTH, SAMPLE_CATALOG, colour, run_action
from solver.commands.options import catalog_option, choices
from solver.errors import ProblemError
from solver.report.catalog_table import TABLES, OfferFilter, render_table

catalog_app = typer.Typer(no_args_is_help=True, help="Inspect and validate catalogs (GPUs, datacenters, offers).")
CatalogTable = choices("CatalogTable", TABLES)


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")


@catalog_app.command("show")
def catalog_show(folder: Path = typer.Argument(SAMPLE_CATALOG, help="catalog folder (default: the bundled sample)"),
                 table: CatalogTable = typer.Option("offers", help="which table"),
                 gpu: list[str] = typer.Option([], "--gpu", help="offers of this GPU only (repeat, or a,b)"),
                 mode: list[str] = typer.Option([], "--mode", help="offers of this rental mode only (repeat, or a,b)"),
                 region: list[str] = typer.Option([], "--region", help="offers at this region or datacenter "
                                                  "(repeat, or a,b)"),
                 vendor: list[str] = typer.Option([], "--vendor", help="offers of this vendor only (repeat, or a,b)"),
                 top: int = typer.Option(None, "--top", min=1, help="the N cheapest offers of each GPU"),
                 currency: str = typer.Option("CNY", "--currency", help="the currency --rate converts into"),
                 rate: list[str] = typer.Option([], "--rate", help="CUR=N: N units of --currency for one CUR, to "
                                                "rank offers in several currencies together (e.g. USD=7.1)")) -> None:
    """Print one table of a catalog (offers by GPU, then all-in price per GPU-hour), within the terminal's width;
    each row's date and source are numbered notes under the table. Filters and --top narrow the offers."""
    def listed(values: list[str]) -> tuple[str, ...]:
        return tuple(part.strip() for v in values for part in v.split(",") if part.strip())

    def action() -> None:
        from solver.load import load_catalog

        cat = load_catalog(folder)
        how = OfferFilter(gpus=listed(gpu), modes=listed(mode), regions=listed(region), vendors=listed(vendor),
                          top=top, currency=currency, rates=_rates(rate))
        known = {"--gpu": (how.gpus, set(cat.gpus)), "--vendor": (how.vendors, {o.vendor for o in cat.offers.values()}),
                 "--mode": (how.modes, {o.mode for o in cat.offers.values()}),
                 "--region": (how.regions, set(cat.datacenters) | {d.region for d in cat.datacenters.values()})}
        for option, (asked, names) in known.items():
            for name in asked:
                if name not in names:
                    raise ProblemError(f"no {option[2:]} {name!r} in the catalog", key=option,
                                       fix=f"use one of {', '.join(sorted(names)[:40])}")
        render_table(cat, _show_console(), table.value, how)
    run_action(action)


def _show_console() -> Console:
    """catalog show fits the terminal it prints to, however wide (long imported ids then stay whole);
    COLUMNS when set; 100 columns when piped (like every table)."""
    probe = Console()
    width = probe.width if probe.is_terminal or os.environ.get("COLUMNS", "").isdigit() else MAX_WIDTH
    return Console(width=width, **colour())


def _day(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        raise ProblemError(f"--as-of {text!r} is not a date", key="--as-of", fix="write it as YYYY-MM-DD") from None


def _rates(values: list[str]) -> tuple[tuple[str, float], ...]:
    out = []
    for text in values:
        code, _, number = text.partition("=")
        try:
            value = float(number)
        except ValueError:
            value = -1.0
        if not code.strip() or not (value > 0):
            raise ProblemError(f"--rate {text!r} is not CUR=N", key="--rate", fix="write e.g. --rate USD=7.1")
        out.append((code.strip().upper(), value))
    return tuple(out)


@catalog_app.command("validate")
def catalog_validate(folder: Path = typer.Argument(...)) -> None:
    """Check every row and cross-reference of a catalog; exit 2 naming the first bad cell."""
    def action() -> None:
        from solver.load import load_catalog
        from solver.report.catalog_messages import render_validated

        render_validated(folder, load_catalog(folder))
    run_action(action)


@catalog_app.command("template")
def catalog_template(file: Path = typer.Argument(..., help="the quote sheet to write, *.xlsx (or *.csv)"),
                     catalog: Annotated[Path, catalog_option("catalog whose GPUs and datacenters fill the dropdowns")]
                     = SAMPLE_CATALOG,
                     prefill: bool = typer.Option(False, "--prefill",
                                                  help="start from the catalog's offers instead of one example row"),
                     force: bool = typer.Option(False, "--force", help="replace FILE if it exists")) -> None:
    """Write a quote sheet: the offers.csv columns, their units and allowed values, and one example row."""
    def action() -> None:
        from solver.load import load_catalog
        from solver.ingest.quote_template import write_template
        from solver.report.catalog_messages import render_template_written

        cat = load_catalog(catalog)
        render_template_written(write_template(file, cat, prefill=prefill, force=force), cat, catalog, prefill)
    run_action(action)


@catalog_app.command("import")
def catalog_import(file: Path = typer.Argument(..., help="filled quote sheet, *.xlsx or *.csv"),
                   into: Path = typer.Option(..., "--into", help="catalog folder holding gpus.csv and "
                                             "datacenters.csv; offers.csv is written there"),
                   sheet: str = typer.Option("offers", "--sheet", help="the sheet to read from an .xlsx"),
                   skip_bad: bool = typer.Option(False, "--skip-bad",
                                                 help="write the good rows and list the bad ones"),
                   force: bool = typer.Option(False, "--force", help="replace an existing offers.csv "
                                              "(kept as offers.csv.bak)")) -> None:
    """Check a filled quote sheet row by row and write it as the catalog's offers.csv.

    Every bad cell is reported with its sheet, row, column and a fix; nothing is written unless every row is good (or --skip-bad). An existing offers.csv is never replaced without --force, and then it is kept as offers.csv.bak.
    """
    def action() -> None:
        from solver.load import load_catalog
        from solver.ingest.quotes import import_quotes
        from solver.report.catalog_messages import render_imported

        result = import_quotes(file, into, skip_bad=skip_bad, force=force, sheet=sheet)
        render_imported(result, load_catalog(into))  # what was written loads as a catalog
    run_action(action)


@catalog_app.command("import-skypilot")
def catalog_import_skypilot(
        folder: Path = typer.Argument(None, help="SkyPilot's catalogs/v7 folder (one <cloud>/vms.csv each) or one "
                                      "vms.csv; default ~/.sky/catalogs/v7"),
        into: Path = typer.Option(..., "--into", help="catalog folder holding gpus.csv; its datacenters.csv and "
                                  "offers.csv get the clouds' rows"),
        clouds: str = typer.Option(None, "--clouds", help="comma-separated clouds to import (default: every folder)"),
        regions: str = typer.Option(None, "--regions", help="comma-separated regions to keep (default: all)"),
        gpus: str = typer.Option(None, "--gpus", help="comma-separated GPUs to keep, SkyPilot or gpus.csv names"),
        overlay: Path = typer.Option(None, "--overlay", help="YAML with what the catalog lacks: interconnect, "
                                     "stock, reserved prices, lead times, residency (README)"),
        preemptions: float = typer.Option(None, "--preemptions-per-day", min=0.0001,
                                          help="spot reclaims per day for every cloud imported (default: per cloud)"),
        skip_unknown: bool = typer.Option(False, "--skip-unknown", help="leave out (and list) rows whose "
                                          "accelerator has no GPU row, instead of stopping"),
        force: bool = typer.Option(False, "--force", help="replace rows of a cloud imported before (old files kept "
                                   "as .bak)"),
        as_of: str = typer.Option(None, "--as-of", help="YYYY-MM-DD: the catalogs' own date (e.g. their commit's); "
                                  "default: the overlay's as_of, else each file's modification date, said so")) -> None:
    """Import SkyPilot's price lists: one datacenter per cloud and region, an hourly offer per instance type
    (Price) and a spot offer (SpotPrice), in USD; availability zones folded into their region.

    Unknown accelerator names and bad cells are listed with file, row and column, and nothing is written. Rows of
    other clouds and vendors are kept as written; changed files are kept as .bak first.
    """
    def split(text: str | None) -> list[str] | None:
        return [part.strip() for part in text.split(",") if part.strip()] if text else None

    def action() -> None:
        from solver.load import load_catalog
        from solver.report.catalog_messages import render_skypilot_imported
        from solver.ingest.skypilot import import_skypilot

        result = import_skypilot(folder, into, clouds=split(clouds), regions=split(regions), gpus=split(gpus),
                                 overlay=overlay, preemptions_per_day=preemptions, skip_unknown=skip_unknown,
                                 force=force, as_of=_day(as_of))
        render_skypilot_imported(result, load_catalog(into))
    run_action(action)
