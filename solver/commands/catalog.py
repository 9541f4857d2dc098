"""`gpuplan catalog show|validate|template|import`: look at, check and fill a catalog folder."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from solver.commands.common import SAMPLE_CATALOG, plan_console, run_action

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
        Console().print(f"{folder}: ok — {len(cat.gpus)} GPUs, {len(cat.datacenters)} datacenters, "
                        f"{len(cat.offers)} offers from {len({o.vendor for o in cat.offers.values()})} vendors")
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
        Console(soft_wrap=True).print(f"wrote {path}: sheet offers ({rows})"
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
        out, err = Console(soft_wrap=True), Console(stderr=True, soft_wrap=True)
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
                err.print(f"  - {bad.render()}", highlight=False, markup=False)
    run_action(action)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


# --- catalog show: one table within the console (at most 100 columns) -------------------------

KEEP_WHOLE = {"offer", "vendor", "site", "mode", "gpu", "datacenter"}
"""Names a user copies into --set edits and restrict lists: never folded while the table fits."""
NUMBERS = {"memory GB", "bf16 TFLOPS", "fp8 TFLOPS", "mem TB/s", "TDP W", "default MFU", "power kW", "PUE",
           "WAN Gbit/s", "CNY/GPU-h", "max nodes × GPUs", "term / lead days"}


def render_table(catalog, console: Console, name: str) -> None:
    """One catalog table. Offers are grouped by GPU and sorted by rent per GPU-hour (the other
    offers.csv columns, e.g. fees and discounts, are named in the caption); every row's as_of
    and source become a numbered note under the table, shared by rows that cite the same."""
    if name == "gpus":
        rows = list(catalog.gpus.values())
        header = ["gpu", "memory GB", "bf16 TFLOPS", "fp8 TFLOPS", "mem TB/s", "TDP W", "form", "class",
                  "default MFU", "confidence"]
        cells = [[g.gpu, _num(g.memory_gb), _num(g.bf16_tflops), _num(g.fp8_tflops), _num(g.mem_bw_tbs),
                  _num(g.tdp_w), g.form, g.gpu_class, _num(g.default_mfu), g.confidence] for g in rows]
        groups, caption = None, None
    elif name == "datacenters":
        rows = list(catalog.datacenters.values())
        header = ["datacenter", "region", "power kW", "PUE", "residency", "link group", "WAN Gbit/s"]
        cells = [[d.datacenter, d.region, _num(d.power_quota_kw), _num(d.pue), " ".join(d.residency), d.link_group,
                  _num(d.wan_gbps) or "default"] for d in rows]
        groups, caption = None, None
    else:
        rows = sorted(catalog.offers.values(), key=lambda o: (o.gpu, o.gpu_price_per_hour()))
        header = ["offer", "vendor", "site", "mode", "CNY/GPU-h", "max nodes × GPUs", "term / lead days", "fabric"]
        cells = [[o.offer, o.vendor, o.datacenter, o.mode, f"{o.gpu_price_per_hour():.2f}",
                  f"{o.max_nodes}×{o.gpus_per_node}", f"{o.term_days}/{o.lead_time_days}", " ".join(o.interconnect)]
                 for o in rows]
        groups = [o.gpu for o in rows]
        caption = ("CNY/GPU-h: rent alone, to compare offers; the quoted price and unit, interconnect price, "
                   "platform fee, discount, power, storage and egress are in offers.csv")
    notes: dict[tuple[str, str], int] = {}
    refs = [str(notes.setdefault((str(r.as_of or ""), r.source), len(notes) + 1)) for r in rows]
    title = f"{catalog.path} — {name}"
    table = _table(title, header, cells, refs, groups, _widths([*header, "src"], [c + [r] for c, r in zip(cells, refs)],
                                                               console.width))
    console.print(table)
    if caption:
        console.print(caption, highlight=False, markup=False)
    sources = Table.grid(padding=(0, 1))
    sources.add_column(justify="right")
    sources.add_column(overflow="fold")
    for (as_of, source), n in notes.items():
        sources.add_row(f"{n}.", Text(f"{as_of}: {source}" if as_of else source))
    console.print("src (as of, source):", highlight=False)
    console.print(sources)


def _widths(header: list[str], cells: list[list[str]], width: int) -> list[int] | None:
    """Column widths within `width` (one space between columns): each at least its widest word
    (names in KEEP_WHOLE: their longest value), then widened towards its longest line as room
    allows. None when even that does not fit: rich then folds cells, but drops no column."""
    def words(k: int) -> list[str]:
        return header[k].split() + [w for row in cells for w in
                                    ([row[k]] if header[k] in KEEP_WHOLE else row[k].split())]
    least = [max(map(len, words(k))) for k in range(len(header))]
    most = [max(least[k], len(header[k]), *(len(row[k]) for row in cells)) for k in range(len(header))]
    room = width - (len(header) - 1) - sum(least)
    if room < 0:
        return None
    widths = list(least)
    for k in sorted(range(len(header)), key=lambda k: most[k] - least[k]):   # small gaps closed first
        grow = min(room, most[k] - least[k])
        widths[k] += grow
        room -= grow
    return widths


def _table(title: str, header: list[str], cells: list[list[str]], refs: list[str], groups: list[str] | None,
           widths: list[int] | None) -> Table:
    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=0)
    for k, col in enumerate([*header, "src"]):
        table.add_column(col, justify="right" if col in NUMBERS or col == "src" else "left", overflow="fold",
                         width=widths[k] if widths else None)
    group = None
    for i, (row, ref) in enumerate(zip(cells, refs)):
        if groups is not None and groups[i] != group:
            if group is not None:
                table.rows[-1].end_section = True
            group = groups[i]
            table.add_row(Text(group, style="bold"))
        table.add_row(*(Text(c) for c in row), ref)
    return table


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"
