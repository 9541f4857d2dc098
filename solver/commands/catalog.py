"""`gpuplan catalog show|validate|template|import`: look at, check and fill a catalog folder."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer
from rich.console import Console

from solver.commands.common import SAMPLE_CATALOG, plan_console, run_action
from solver.report.catalog_table import render_table

catalog_app = typer.Typer(no_args_is_help=True, help="Inspect and validate catalogs (GPUs, datacenters, offers).")
CatalogTable = Enum("CatalogTable", {t: t for t in ("offers", "gpus", "datacenters")}, type=str)


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")


@catalog_app.command("show")
def catalog_show(folder: Path = typer.Argument(SAMPLE_CATALOG, help="catalog folder (default: the bundled sample)"),
                 table: CatalogTable = typer.Option("offers", help="which table")) -> None:
    """Print one table of a catalog (offers by GPU, then price per GPU-hour), within 100 columns;
    each row's date and source are numbered notes under the table."""
    from solver.load import load_catalog
    run_action(lambda: render_table(load_catalog(folder), plan_console(), table.value))


@catalog_app.command("validate")
def catalog_validate(folder: Path = typer.Argument(...)) -> None:
    """Check every row and cross-reference of a catalog; exit 2 naming the first bad cell."""
    from solver.load import load_catalog

    def action() -> None:
        cat = load_catalog(folder)
        vendors = len({o.vendor for o in cat.offers.values()})
        Console(markup=False).print(f"{folder}: ok — {len(cat.gpus)} GPUs, {len(cat.datacenters)} datacenters, "
                                    f"{len(cat.offers)} offers from {vendors} vendors", highlight=False)
    run_action(action)


@catalog_app.command("template")
def catalog_template(file: Path = typer.Argument(..., help="the quote sheet to write, *.xlsx (or *.csv)"),
                     catalog: Path = typer.Option(SAMPLE_CATALOG, "--catalog",
                                                  help="catalog whose GPUs and datacenters fill the dropdowns"),
                     prefill: bool = typer.Option(False, "--prefill",
                                                  help="start from the catalog's offers instead of one example row"),
                     force: bool = typer.Option(False, "--force", help="replace FILE if it exists")) -> None:
    """Write a quote sheet: the offers.csv columns, their units and allowed values, and one example row."""
    from solver.load import load_catalog
    from solver.quotes import write_template

    def action() -> None:
        cat = load_catalog(catalog)
        path = write_template(file, cat, prefill=prefill, force=force)
        rows = f"{len(cat.offers)} offers of {catalog}" if prefill else "one example row"
        Console(soft_wrap=True, markup=False).print(f"wrote {path}: sheet offers ({rows})"
                                      + (", sheet columns (types, units, allowed values)"
                                         if path.suffix.lower() == ".xlsx" else "")
                                      + f". Fill it, then: gpuplan catalog import {path} --into CATALOG_DIR",
                                      highlight=False)
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
    from solver.load import load_catalog
    from solver.quotes import import_quotes

    def action() -> None:
        result = import_quotes(file, into, skip_bad=skip_bad, force=force, sheet=sheet)
        cat = load_catalog(into)               # what was written loads as a catalog
        # file names and quote-sheet cells are user text: printed as written, never as markup
        out = Console(soft_wrap=True, markup=False)
        err = Console(stderr=True, soft_wrap=True, markup=False)
        vendors = len({o.vendor for o in result.offers})
        out.print(f"wrote {result.target}: {_n(len(result.offers), 'offer')} from {_n(vendors, 'vendor')} "
                  f"({len(cat.gpus)} GPUs, {len(cat.datacenters)} datacenters in the catalog)", highlight=False)
        if result.backup:
            out.print(f"replaced the old offers.csv ({_n(result.replaced_rows or 0, 'row')}); "
                      f"it is kept as {result.backup}",
                      highlight=False)
        for warning in result.quotes.warnings:
            err.print(f"warning: {warning}", highlight=False)
        if result.skipped:
            rows = result.quotes.bad_rows
            err.print(f"skipped {_n(len(rows), 'row')} with bad cells ({'row' if len(rows) == 1 else 'rows'} "
                      f"{', '.join(map(str, rows))}):", highlight=False)
            for bad in result.skipped:
                err.print(f"  - {bad.render()}", highlight=False)
    run_action(action)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
