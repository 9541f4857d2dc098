"""What `gpuplan catalog validate|template|import|import-skypilot` say when they succeed: one line each, plus the
import's warnings and skipped rows on stderr.

File names and quote-sheet cells are user text: printed as written, never as markup.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console


def render_validated(folder: Path, catalog) -> None:
    vendors = len({o.vendor for o in catalog.offers.values()})
    Console(markup=False).print(f"{folder}: ok — {len(catalog.gpus)} GPUs, {len(catalog.datacenters)} datacenters, "
                                f"{len(catalog.offers)} offers from {vendors} vendors", highlight=False)


def render_template_written(path: Path, catalog, catalog_dir: Path, prefill: bool) -> None:
    rows = f"{len(catalog.offers)} offers of {catalog_dir}" if prefill else "one example row"
    Console(soft_wrap=True, markup=False).print(f"wrote {path}: sheet offers ({rows})"
                                                + (", sheet columns (types, units, allowed values)"
                                                   if path.suffix.lower() == ".xlsx" else "")
                                                + f". Fill it, then: gpuplan catalog import {path} --into CATALOG_DIR",
                                                highlight=False)


def render_imported(result, catalog) -> None:
    """What was written (stdout), then warnings and the rows skipped with their bad cells (stderr)."""
    out = Console(soft_wrap=True, markup=False)
    err = Console(stderr=True, soft_wrap=True, markup=False)
    vendors = len({o.vendor for o in result.offers})
    out.print(f"wrote {result.target}: {_n(len(result.offers), 'offer')} from {_n(vendors, 'vendor')} "
              f"({len(catalog.gpus)} GPUs, {len(catalog.datacenters)} datacenters in the catalog)", highlight=False)
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


def render_skypilot_imported(result, catalog, *, notes: int = 8) -> None:
    """Per cloud what was read, written and left out (stdout), and why rows were left out (stderr)."""
    out = Console(soft_wrap=True, markup=False)
    err = Console(stderr=True, soft_wrap=True, markup=False)
    for cloud in result.clouds:
        modes: dict[str, int] = {}
        for offer in cloud.offers:
            modes[offer.mode] = modes.get(offer.mode, 0) + 1
        kinds = ", ".join(f"{n} {mode}" for mode, n in sorted(modes.items()))
        out.print(f"{cloud.cloud}: {_n(cloud.rows, 'row')} of {cloud.file} -> {_n(len(cloud.offers), 'offer')} "
                  f"({kinds or 'none'}) in {_n(len(cloud.datacenters), 'region')}; {cloud.cpu_rows} CPU-only rows "
                  f"(nothing in them names a GPU) skipped, {cloud.filtered} left out by --regions/--gpus"
                  + (f"; replaced its {cloud.replaced_offers} earlier offers" if cloud.replaced_offers else ""),
                  highlight=False)
        for reason, rows in cloud.skipped.items():
            shown = ", ".join(map(str, rows[:8])) + (", ..." if len(rows) > 8 else "")
            err.print(f"  {cloud.cloud}: left out {_n(len(rows), 'row')}: {reason} "
                      f"({'row' if len(rows) == 1 else 'rows'} {shown})", highlight=False)
        for warning in cloud.warnings[:notes]:
            err.print(f"  {cloud.cloud}: warning: {warning} (its offer's source says CHECK)", highlight=False)
        if len(cloud.warnings) > notes:
            err.print(f"  {cloud.cloud}: ... and {len(cloud.warnings) - notes} more warnings", highlight=False)
        for note in cloud.notes[:notes]:
            err.print(f"  {cloud.cloud}: {note}", highlight=False)
        if len(cloud.notes) > notes:
            err.print(f"  {cloud.cloud}: ... and {len(cloud.notes) - notes} more notes", highlight=False)
    if result.unchanged:
        out.print(f"{result.into} already holds exactly these rows: nothing written ({len(catalog.offers)} offers, "
                  f"{len(catalog.datacenters)} datacenters, {len(catalog.gpus)} GPUs in the catalog)", highlight=False)
        return
    out.print(f"wrote {result.into}: {len(catalog.offers)} offers, {len(catalog.datacenters)} datacenters, "
              f"{len(catalog.gpus)} GPUs in the catalog", highlight=False)
    for backup in result.backups:
        out.print(f"the previous {backup.name.split('.bak')[0]} is kept as {backup}", highlight=False)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
