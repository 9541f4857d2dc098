"""The quote sheet to fill in: .xlsx (sheet `offers` with one example row or the catalog's own offers,
sheet `columns` describing each column, a hidden sheet `lists` behind the dropdowns) or .csv (the
header and the rows only). Its layout is solver.ingest.quote_sheet's; its import, solver.ingest.quotes.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from solver import files
from solver.errors import ProblemError
from solver.files import require_openpyxl
from solver.ingest.quote_sheet import EXAMPLE_ID, EXAMPLE_SOURCE, SHEET, ColumnSpec, column_specs
from solver.ingest.tables import COLUMNS, csv_text, offer_cells, write_csv_atomic
from solver.model.catalog import Catalog

TEMPLATE_ROWS = 1000                     # rows of the template that carry dropdowns and formats


def write_template(path: str | Path, catalog: Catalog | None = None, *, prefill: bool = False,
                   force: bool = False) -> Path:
    """The quote sheet: .xlsx (offers + columns + dropdowns) or .csv (header and rows only)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".xlsx", ".csv"):
        raise ProblemError("unknown sheet format", file=str(path), fix="name the file *.xlsx (or *.csv)")
    files.check_new_file(path, "FILE", force=force, example=f"quotes{suffix}")
    if prefill and catalog is None:
        raise ProblemError("prefill needs a catalog", fix="pass --catalog DIR")
    rows = [offer_cells(o) for o in catalog.offers.values()] if prefill else [example_row(catalog)]
    if suffix == ".csv":
        write_csv_atomic(path, rows, replace=force, for_people=True)
        return path
    _write_xlsx_template(path, rows, catalog)
    return path


def example_row(catalog: Catalog | None = None) -> dict[str, Any]:
    """One valid offer for the catalog, as typed cell values (numbers as numbers, a real date)."""
    gpus = list(catalog.gpus) if catalog else []
    sites = list(catalog.datacenters) if catalog else []
    gpu = "A100-80G" if not gpus or "A100-80G" in gpus else gpus[0]
    site = "Yizhuang" if not sites or "Yizhuang" in sites else sites[0]
    return {"offer": EXAMPLE_ID, "vendor": "example-vendor", "datacenter": site, "gpu": gpu, "mode": "monthly",
            "price": 62000, "price_unit": "per_node_month", "currency": "CNY", "gpus_per_node": 8, "max_nodes": 4,
            "min_term_days": 30, "lead_time_days": 3, "interconnect": "ib_hdr|roce",
            "interconnect_price": "6000|3000", "counts_power": False, "node_kw": 6.5, "platform_fee_pct": 0,
            "preemptions_per_day": 0, "perf_guarantee_pct": 95, "discount_from_gpus": 32, "discount_pct": 8,
            "storage_per_tb_month": 1200, "egress_per_tb": 600, "illustrative": False,
            "as_of": date.today(), "source": EXAMPLE_SOURCE}


def _write_xlsx_template(path: Path, rows: list[dict[str, Any]], catalog: Catalog | None) -> None:
    openpyxl = require_openpyxl(key=None)
    from openpyxl.comments import Comment
    from openpyxl.styles import Font
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.datavalidation import DataValidation

    specs = column_specs(list(catalog.gpus) if catalog else None, list(catalog.datacenters) if catalog else None)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = SHEET
    ws.append(COLUMNS)
    for row in rows:
        ws.append([_typed(row.get(c), specs[c]) for c in COLUMNS])
    for i, col in enumerate(COLUMNS, start=1):
        spec, letter = specs[col], get_column_letter(i)
        head = ws.cell(row=1, column=i)
        head.font = Font(bold=True, color=None if spec.required else "555555")
        head.comment = Comment(f"{'required' if spec.required else 'optional'}: {spec.guide()}"
                               + (f"\nblank = {spec.default}" if spec.default else ""), "gpuplan", width=300)
        width = max([len(col)] + [len(csv_text(r.get(col))) for r in rows]) + 2
        ws.column_dimensions[letter].width = min(width, 60)
        fmt = "yyyy-mm-dd" if spec.is_date else "@" if spec.kind.startswith("'|'") or spec.kind == "text" else None
        if fmt:                          # the column's format: new cells typed in it keep dates and '|' text
            ws.column_dimensions[letter].number_format = fmt
            for r in range(2, len(rows) + 2):
                ws.cell(row=r, column=i).number_format = fmt
    ws.freeze_panes = "B2"

    lists = wb.create_sheet("lists")
    dropdowns = {c: specs[c].allowed for c in COLUMNS if specs[c].allowed and not specs[c].kind.startswith("'|'")}
    dropdowns.update({c: ("true", "false") for c in COLUMNS if specs[c].kind == "true or false"})
    for j, (col, values) in enumerate(dropdowns.items(), start=1):
        letter = get_column_letter(j)
        lists.cell(row=1, column=j, value=col)
        for k, value in enumerate(values, start=2):
            lists.cell(row=k, column=j, value=value)
        dv = DataValidation(type="list", formula1=f"lists!${letter}$2:${letter}${len(values) + 1}",
                            allow_blank=True, showErrorMessage=True, errorTitle=f"{col}: not allowed",
                            error=f"{col} takes one of: {', '.join(values)}"[:255])
        target = get_column_letter(COLUMNS.index(col) + 1)
        dv.add(f"{target}2:{target}{TEMPLATE_ROWS}")
        ws.add_data_validation(dv)
    lists.sheet_state = "hidden"

    doc = wb.create_sheet("columns", 1)
    doc.append(["column", "required", "type", "allowed values", "range", "blank means", "unit / meaning"])
    for col in COLUMNS:
        s = specs[col]
        doc.append([col, "yes" if s.required else "no", s.kind, ", ".join(s.allowed), s.bounds,
                    (s.default or "none") if not s.required else "", s.unit])
    doc.append([])
    for line in ("One row per quote in sheet 'offers'; row 1 is the header (keep the names).",
                 "Lists are '|'-separated (ib_hdr|roce and 6000|3000); percentages are plain numbers (5 = 5%).",
                 "Delete the example row, or overwrite it, before importing:",
                 "gpuplan catalog import THIS.xlsx --into CATALOG_DIR"):
        doc.append([line])
    for cell in doc[1]:
        cell.font = Font(bold=True)
    for letter, width in zip("ABCDEFG", (26, 9, 34, 50, 14, 12, 80)):
        doc.column_dimensions[letter].width = width
    doc.freeze_panes = "A2"
    for sheet in (ws, lists, doc):
        files.text_cells(sheet)     # a prefilled name like =HYPERLINK(…) stays text
    _save_atomic(path, wb.save)


def _typed(value: Any, spec: ColumnSpec) -> Any:
    """Cells as a person would type them: numbers as numbers, dates as dates, lists as text."""
    if value in (None, ""):
        return None
    if spec.is_date and isinstance(value, str):
        return date.fromisoformat(value)
    if spec.kind in ("a number", "a whole number") and isinstance(value, str):
        number = float(value)
        return int(number) if number.is_integer() else number
    if spec.kind == "true or false" and isinstance(value, bool):
        return "true" if value else "false"
    return value


def _save_atomic(path: Path, save) -> None:
    files.save_atomic(path, lambda tmp: save(str(tmp)))
