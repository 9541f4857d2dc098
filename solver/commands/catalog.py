"""`gpuplan catalog show|validate`: look at and check a catalog folder."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer
from rich.console import Console

from solver.commands.common import run_action

catalog_app = typer.Typer(no_args_is_help=True, help="Inspect and validate catalogs (GPUs, datacenters, offers).")
CatalogTable = Enum("CatalogTable", {t: t for t in ("offers", "gpus", "datacenters")}, type=str)
DEFAULT_CATALOG = Path(__file__).resolve().parent.parent.parent / "catalogs" / "beijing-sample"


def register(app: typer.Typer) -> None:
    app.add_typer(catalog_app, name="catalog")


@catalog_app.command("show")
def catalog_show(folder: Path = typer.Argument(DEFAULT_CATALOG),
                 table: CatalogTable = typer.Option("offers", help="which table")) -> None:
    """Print one table of a catalog (offers sorted by GPU and price per GPU-hour)."""
    from solver.load import load_catalog
    from solver.report.terminal import render_catalog
    run_action(lambda: render_catalog(load_catalog(folder), Console(width=200), table.value))


@catalog_app.command("validate")
def catalog_validate(folder: Path = typer.Argument(...)) -> None:
    """Check every row and cross-reference of a catalog; exit 2 naming the first bad cell."""
    from solver.load import load_catalog

    def action() -> None:
        cat = load_catalog(folder)
        Console().print(f"{folder}: ok — {len(cat.gpus)} GPUs, {len(cat.datacenters)} datacenters, "
                        f"{len(cat.offers)} offers from {len({o.vendor for o in cat.offers.values()})} vendors")
    run_action(action)
