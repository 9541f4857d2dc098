"""Quote sheets: a template to fill in (xlsx or csv) and its import into a catalog's offers.csv.

write_template(path, catalog)   sheet `offers` (the offers.csv columns, in order, and one example
                                row, or the catalog's own offers with prefill=True), sheet `columns`
                                (each column's type, unit, allowed values, range, default, whether
                                required) and a hidden sheet `lists` behind the dropdowns of the enum
                                columns (mode, price_unit, true/false, the catalog's GPUs and sites).
read_quotes(path, gpus, datacenters)
                                every row validated by the catalog's own `Offer` model, then checked
                                against the target catalog (known GPU and datacenter, one storage and
                                egress price per vendor and site: `inconsistencies`) and for duplicate
                                ids. Every bad cell is collected, with its sheet, row, column (and
                                cell, for xlsx) and a fix.
import_quotes(path, into, ...)  writes into/offers.csv only when every row is good (or, with
                                skip_bad, the good rows), never over an existing offers.csv without
                                force; with force the old file is kept as offers.csv.bak (.bak2, ...).

Cell conventions are those of the catalog CSVs (catalogs/*/README.md): lists are '|'-separated,
booleans true/false, dates YYYY-MM-DD. One difference: a blank cell in a column that has a default
(min_term_days, platform_fee_pct, illustrative, ...) takes that default, which is then written out,
so the offers.csv produced is complete. Consistency rules that span several cells of a row (a
price_unit that does not fit the mode, ...) are checked once the row's cells are each valid.
An import replaces the whole offers.csv: to add rows to a catalog, start from
`write_template(..., prefill=True)`, which holds the existing offers.
"""

from __future__ import annotations

import csv
import difflib
import os
import re
import shutil
import types
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MinLen
from pydantic import ValidationError
from pydantic_core import PydanticUndefined

from solver import files
from solver.errors import ProblemError
from solver.files import require_openpyxl
from solver.ingest.readers import TABLES, csv_rows, read_table
from solver.model.catalog import LEGACY_COLUMNS, Catalog, Datacenter, Gpu, Offer, inconsistencies
from solver.model.modes import MODES, UNIT_DAYS

SHEET = "offers"
COLUMNS = [f.alias or name for name, f in Offer.model_fields.items()]     # the order of offers.csv
EXAMPLE_ID = "example-yz-a100-80-8x-monthly"
EXAMPLE_SOURCE = "EXAMPLE ROW - replace with your quote (vendor, contact, document, date) or delete the row"
TEMPLATE_ROWS = 1000                     # rows of the template that carry dropdowns and formats



def _mode_note() -> str:
    """The mode column's note, from the mode table: "hourly/spot: paid per hour used;
    monthly/yearly/hosted: paid per whole term" (modes grouped by how they are paid)."""
    groups: dict[str, list[str]] = {}
    for mode in MODES.values():
        groups.setdefault(mode.paid, []).append(mode.name)
    return "; ".join(f"{'/'.join(names)}: {paid}" for paid, names in groups.items())


def _price_unit_note() -> str:
    """The price_unit column's note, from the mode table: "hourly and spot: *_hour; monthly and
    hosted: *_month (30 days); yearly: *_year (365 days)" (modes grouped by price unit)."""
    groups: dict[str, list[str]] = {}
    for mode in MODES.values():
        groups.setdefault(mode.unit, []).append(mode.name)
    return "; ".join(f"{' and '.join(names)}: *_{unit}" + ("" if unit == "hour" else f" ({UNIT_DAYS[unit]:g} days)")
                     for unit, names in groups.items())


# What each column's numbers mean (documentation only; the rules live in solver.model.catalog.Offer).
UNITS = {
    "offer": "unique id, e.g. vendor-site-gpu-8x-mode",
    "vendor": "vendor id (same spelling on all its offers)",
    "datacenter": "a datacenter of the catalog (datacenters.csv)",
    "gpu": "a GPU of the catalog (gpus.csv)",
    "mode": _mode_note(),
    "price": "currency per price_unit; rent only (no interconnect, storage, egress or fee)",
    "price_unit": _price_unit_note(),
    "currency": "ISO 4217 code of every price of the row (CNY, USD, ...); blank = CNY",
    "gpus_per_node": "GPUs in one rentable node",
    "max_nodes": "nodes the vendor can give at once at this site",
    "min_term_days": "days; 0 for hourly/spot, e.g. 30 monthly, 365 yearly",
    "lead_time_days": "days from order to use",
    "interconnect": "inter-node fabric options, e.g. ib_hdr|roce",
    "interconnect_price": "currency per node in price_unit's time unit, one per interconnect option, e.g. 6000|3000",
    "counts_power": "true for hosted racks: node_kw counts against the site's power quota",
    "node_kw": "kW of IT power per node; required when counts_power is true",
    "platform_fee_pct": "percent surcharge on all charges (5 = 5%)",
    "preemptions_per_day": "expected reclaims per day; > 0 for spot, else 0",
    "perf_guarantee_pct": "percent of rated performance guaranteed (95 = 95%); blank = none",
    "discount_from_gpus": "GPUs from which the volume discount applies; blank = no discount",
    "discount_pct": "percent off once the tier applies (8 = 8%); with discount_from_gpus",
    "storage_per_tb_month": "currency per TB-month; the same on every offer of one vendor at one site",
    "egress_per_tb": "currency per TB exported; the same on every offer of one vendor at one site",
    "illustrative": "false for a real quote, true for made-up numbers",
    "as_of": "date of the quote",
    "source": "where the numbers come from: vendor, contact, document",
    "billing": "how a committed term is paid: monthly (blank = monthly) or upfront; blank for hourly/spot",
}

BLANK = {"interconnect_price": "0 for each option"}     # defaults the model fills in itself


# ---------------------------------------------------------------- column descriptions

@dataclass(frozen=True)
class ColumnSpec:
    name: str
    required: bool
    kind: str                      # text | number | whole number | true/false | date | list of ...
    allowed: tuple[str, ...]       # enum values, if any
    bounds: str                    # e.g. "> 0", "0 to 100"
    default: str                   # text of the default, "" = blank
    unit: str
    is_date: bool = False

    def guide(self) -> str:
        """One line: what the column takes."""
        parts = [self.kind + (f" {self.bounds}" if self.bounds else "")]
        if self.allowed and not self.kind.startswith("'|'"):
            parts = [f"one of {', '.join(self.allowed)}"]
        elif self.allowed:
            parts.append(f"from {', '.join(self.allowed)}")
        if self.unit:
            parts.append(self.unit)
        return "; ".join(parts)


def column_specs(gpus: list[str] | None = None, datacenters: list[str] | None = None) -> dict[str, ColumnSpec]:
    """Every offers.csv column, described from the Offer model (and the catalog's ids for gpu, datacenter)."""
    specs = {}
    for name, info in Offer.model_fields.items():
        col = info.alias or name
        ann = info.annotation
        if get_origin(ann) in (Union, types.UnionType):
            ann = next(a for a in get_args(ann) if a is not type(None))
        listed = get_origin(ann) is tuple
        inner = get_args(ann)[0] if listed else ann
        allowed = tuple(str(v) for v in get_args(inner)) if get_origin(inner) is Literal else ()
        kind = {str: "text", float: "a number", int: "a whole number", bool: "true or false",
                date: "a date YYYY-MM-DD"}.get(inner, "text")
        if allowed:
            kind = "one value"
        if listed:
            kind = "'|'-separated list of " + ("values" if allowed else "numbers" if inner is float else "texts")
        bounds = _bounds(info.metadata, listed, inner)
        if col == "gpu" and gpus:
            allowed = tuple(gpus)
        if col == "datacenter" and datacenters:
            allowed = tuple(datacenters)
        default = "" if info.default is PydanticUndefined or info.default in (None, ()) else csv_text(info.default)
        default = BLANK.get(col, default)
        specs[col] = ColumnSpec(col, info.is_required(), kind, allowed, bounds, default, UNITS.get(col, ""),
                                is_date=inner is date)
    return specs


def _bounds(metadata: list, listed: bool, inner: Any) -> str:
    low = high = ""
    for m in metadata:
        if isinstance(m, Gt):
            low = f"> {csv_text(m.gt)}"
        elif isinstance(m, Ge):
            low = f">= {csv_text(m.ge)}"
        elif isinstance(m, Lt):
            high = f"< {csv_text(m.lt)}"
        elif isinstance(m, Le):
            high = f"<= {csv_text(m.le)}"
        elif isinstance(m, MinLen) and m.min_length:
            return "(at least one)" if listed else "(not empty)"
    return ", ".join(p for p in (low, high) if p)


# ---------------------------------------------------------------- template

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
        _write_csv_atomic(path, rows, replace=force, for_people=True)
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


# ---------------------------------------------------------------- reading and checking

@dataclass
class BadCell:
    sheet: str
    row: int
    column: str
    message: str
    fix: str
    cell: str | None = None          # e.g. "F5" for xlsx
    header: bool = False             # a problem of the header row: no row can be imported around it

    def render(self) -> str:
        where = f"sheet {self.sheet}, row {self.row}, column {self.column}"
        if self.cell:
            where += f" (cell {self.cell})"
        return f"{where}: {self.message}. Fix: {self.fix}"


@dataclass
class QuoteRows:
    """What a sheet holds: the good offers by row number, and every bad cell."""

    source: str
    sheet: str
    offers: dict[int, Offer] = field(default_factory=dict)
    bad: list[BadCell] = field(default_factory=list)
    rows: int = 0
    warnings: list[str] = field(default_factory=list)
    refs: dict[int, dict[str, str | None]] = field(default_factory=dict, repr=False)     # row → column → cell
    partial: dict[int, dict[str, str]] = field(default_factory=dict, repr=False)          # bad rows' cells

    @property
    def bad_rows(self) -> list[int]:
        return sorted({b.row for b in self.bad if not b.header})

    @property
    def header_bad(self) -> list[BadCell]:
        return [b for b in self.bad if b.header]


class QuoteSheetError(ProblemError):
    """Bad cells in a quote sheet (exit 2); `bad` holds every one of them."""

    def __init__(self, message: str, bad: list[BadCell], *, file: str, fix: str) -> None:
        self.bad = bad
        lines = "".join(f"\n  - {b.render()}" for b in bad)
        super().__init__(f"{message}{lines}\nFix: {fix}", file=file)
        self.what_to_do = fix


def read_quotes(path: str | Path, gpus: dict[str, Gpu], datacenters: dict[str, Datacenter], *,
                sheet: str = SHEET) -> QuoteRows:
    """Validate every row of a filled sheet (.xlsx/.xlsm sheet `sheet`, or .csv) against the catalog tables."""
    path = Path(path)
    if not path.is_file():
        raise ProblemError("file not found", file=str(path), fix="check the path")
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xlsm"):
        name, grid = _xlsx_grid(path, sheet)
    elif suffix == ".csv":
        name, grid = path.name, _csv_grid(path)
    else:
        raise ProblemError("unknown sheet format", file=str(path), fix="import an .xlsx workbook or a .csv file")
    out = QuoteRows(source=str(path), sheet=name)
    specs = column_specs(sorted(gpus), sorted(datacenters))
    if not grid or not any(_filled(c.value) for c in grid[0][1]):
        raise ProblemError("no header row", file=str(path), key=f"sheet {name}, row 1",
                           fix=f"row 1 names the columns: {', '.join(COLUMNS)}")
    columns = _header(grid[0][1], name, specs, out)
    named = {i for i, c in enumerate(grid[0][1]) if _filled(c.value)}
    missing_cols = {c for c in COLUMNS if specs[c].required and c not in columns.values()}
    for number, cells in grid[1:]:
        if not any(_filled(c.value) for c in cells):
            continue
        out.rows += 1
        _check_row(number, cells, columns, named, specs, name, out, missing_cols)
    if out.rows == 0 and not out.header_bad:
        raise ProblemError("no offer rows", file=str(path), key=f"sheet {name}",
                           fix="fill at least one row under the header")
    _cross_check(out, gpus, datacenters, name)
    for number, offer in out.offers.items():
        if offer.offer == EXAMPLE_ID or offer.source == EXAMPLE_SOURCE:
            out.warnings.append(f"sheet {name}, row {number} looks like the template's example row "
                                f"(offer {offer.offer!r}); delete it if it is not a real quote")
    return out


@dataclass
class _Cell:
    value: Any
    ref: str | None = None          # "F5"
    number_format: str = "General"


def _xlsx_grid(path: Path, sheet: str) -> tuple[str, list[tuple[int, list[_Cell]]]]:
    openpyxl = require_openpyxl(key=None)
    try:
        wb = openpyxl.load_workbook(path, data_only=True)
    except Exception as exc:  # noqa: BLE001 -- zip, XML and format errors all mean the same to a user
        raise ProblemError(f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})", file=str(path),
                           fix="save it from the spreadsheet program as an Excel Workbook (.xlsx) or as CSV") from None
    if sheet not in wb.sheetnames:
        raise ProblemError(f"no sheet named {sheet!r} (sheets: {', '.join(wb.sheetnames)})", file=str(path),
                           fix=f"name the quote sheet {sheet!r}, or pass --sheet NAME")
    ws = wb[sheet]
    grid = [(cells[0].row, [_Cell(c.value, c.coordinate, c.number_format) for c in cells])
            for cells in ws.iter_rows() if cells]
    return sheet, grid


def _csv_grid(path: Path) -> list[tuple[int, list[_Cell]]]:
    return [(i, [_Cell(v) for v in record]) for i, record in enumerate(csv_rows(path), start=1)]


def _header(cells: list[_Cell], sheet: str, specs: dict[str, ColumnSpec], out: QuoteRows) -> dict[int, str]:
    columns: dict[int, str] = {}
    for i, cell in enumerate(cells):
        name = "" if cell.value is None else str(cell.value).strip()
        if not name:
            continue
        name = LEGACY_COLUMNS.get(name, name)       # the older storage/egress names, still read
        if name not in specs:
            near = difflib.get_close_matches(name, COLUMNS, n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            out.bad.append(BadCell(sheet, 1, name, f"unknown column {name!r}",
                                   f"{hint}rename or delete it; the columns are {', '.join(COLUMNS)}",
                                   cell.ref, header=True))
        elif name in columns.values():
            out.bad.append(BadCell(sheet, 1, name, f"column {name!r} appears twice", "keep one of them",
                                   cell.ref, header=True))
        else:
            columns[i] = name
    for col in COLUMNS:
        if specs[col].required and col not in columns.values():
            out.bad.append(BadCell(sheet, 1, col, "required column missing",
                                   f"add a column {col!r}: {specs[col].guide()}", header=True))
    return columns


def _check_row(number: int, cells: list[_Cell], columns: dict[int, str], named: set[int],
               specs: dict[str, ColumnSpec], sheet: str, out: QuoteRows, missing_cols: set[str]) -> None:
    refs: dict[str, str | None] = {}
    values: dict[str, str] = {}
    bad: list[BadCell] = []
    for i, cell in enumerate(cells):
        if i not in columns:
            if i not in named and _filled(cell.value):
                bad.append(BadCell(sheet, number, f"#{i + 1}", "value in a column with no header",
                                   "move it under a named column, or delete it", cell.ref))
            continue
        col = columns[i]
        refs[col] = cell.ref
        problem = _percent_cell(cell, col)
        if problem:
            bad.append(BadCell(sheet, number, col, problem[0], f"{col}: {problem[1]}", cell.ref))
            continue
        text = _cell_text(cell.value, specs[col])
        if text:
            values[col] = text
    flagged = {b.column for b in bad}
    try:
        offer = Offer.model_validate(values)
    except ValidationError as exc:
        for err in exc.errors():
            made = _bad_cell(err, specs, values, sheet, number, refs)
            if made.column not in flagged and not (err["type"] == "missing" and made.column in missing_cols):
                bad.append(made)
    else:
        if not bad:
            out.offers[number] = offer
    out.refs[number] = refs
    if bad:
        out.partial[number] = values
    out.bad.extend(bad)


def _filled(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _percent_cell(cell: _Cell, col: str) -> tuple[str, str] | None:
    """A spreadsheet '5%' holds 0.05, but percent columns take 5."""
    if col.endswith("_pct") and "%" in (cell.number_format or "") and isinstance(cell.value, (int, float)) \
            and not isinstance(cell.value, bool):
        shown = csv_text(round(cell.value * 100, 9))
        return (f"the cell is formatted as a percentage, so it holds {csv_text(cell.value)}, not {shown}",
                f"type {shown} in a cell formatted as General or Number (percent columns take 5 for 5%)")
    return None


def _cell_text(value: Any, spec: ColumnSpec) -> str:
    """A cell as the CSV text the catalog would hold ('' = blank)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.date().isoformat() if spec.is_date else value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (int, float)):
        return csv_text(value)
    text = str(value).strip()
    # the quote that keeps a name from being a formula in a CSV for people (solver.files.csv_cell)
    return text[1:] if text.startswith("'") and text[1:].startswith(files.FORMULA_START) else text


def _bad_cell(err: dict, specs: dict[str, ColumnSpec], values: dict[str, str], sheet: str, number: int,
              refs: dict[str, str | None]) -> BadCell:
    loc = err["loc"]
    kind = err["type"]
    msg = err["msg"].removeprefix("Value error, ")
    col = str(loc[0]) if loc else _column_named_in(msg)
    spec = specs.get(col)
    got = err.get("input")
    item = f"item {loc[1] + 1} of the list: " if len(loc) > 1 and isinstance(loc[1], int) else ""
    shown = f" (got {_shown(got)})" if not isinstance(got, (dict, type(None))) and kind != "missing" else ""
    guide = spec.guide() if spec else "see the columns sheet"
    if kind == "missing":
        message, fix = "required, but the cell is empty", f"fill it: {guide}"
    elif kind == "literal_error":
        allowed = _allowed(spec)
        near = difflib.get_close_matches(str(got), allowed, n=1)
        message = f"{item}not an allowed value{shown}"
        fix = (f"did you mean {near[0]!r}? " if near else "") + f"use one of {', '.join(allowed)}"
    elif kind.endswith(("_parsing", "_type")) or kind in ("int_from_float", "date_from_datetime_inexact"):
        expected = (("a number" if "numbers" in spec.kind else "text") if item else spec.kind) if spec else "?"
        message = f"{item}wrong type: expected {expected}{shown}"
        fix = f"type {guide}" + ("; no thousands separators, units or currency signs"
                                 if spec and "number" in spec.kind else "")
    elif kind == "value_error":
        message = msg + ("" if values.get(col) is None or values[col] in msg else f" (got {_shown(values[col])})")
        fix = guide
    else:
        message = item + msg.replace("Input should be", "must be").replace("Value should have", "needs") + shown
        fix = guide
    return BadCell(sheet, number, col or "(row)", message, f"{col}: {fix}" if col else fix, refs.get(col))


def _shown(value: Any) -> str:
    """A cell's value in a message: numbers bare, text quoted."""
    if isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", value):
        return value
    return repr(value)


def _allowed(spec: ColumnSpec | None) -> list[str]:
    return list(spec.allowed) if spec else []


def _column_named_in(message: str) -> str:
    """The column a cross-cell rule is about: the first column named in its message."""
    for word in re.findall(r"[a-z_]+", message):
        if word in COLUMNS and word not in ("mode", "offer"):
            return word
    return ""


def _cross_check(out: QuoteRows, gpus: dict[str, Gpu], datacenters: dict[str, Datacenter], sheet: str) -> None:
    """Duplicate ids, then the catalog's own cross-table rules on the rows that are good so far."""
    first: dict[str, int] = {}
    unique: dict[str, Offer] = {}
    row_of: dict[str, int] = {}
    for number, offer in list(out.offers.items()):
        if offer.offer in first:
            out.bad.append(BadCell(sheet, number, "offer", f"duplicate offer id {offer.offer!r} "
                                   f"(also in row {first[offer.offer]})", "offer: each offer id must be unique",
                                   out.refs[number].get("offer")))
            del out.offers[number]
            continue
        first[offer.offer] = number
        unique[offer.offer] = offer
        row_of[offer.offer] = number
    found = inconsistencies(Catalog.model_construct(gpus=gpus, datacenters=datacenters, offers=unique))
    for offer_id, col, message, fix in found:
        number = row_of[offer_id]
        out.bad.append(BadCell(sheet, number, col, message, f"{col}: {fix}", out.refs[number].get(col)))
        out.offers.pop(number, None)
    # rows already bad: still name an unknown gpu or datacenter (the same rule, on the cells as typed)
    stubs = {f"row {n}": Offer.model_construct(offer=f"row {n}", vendor=f"row {n}", gpu=values.get("gpu"),
                                                datacenter=values.get("datacenter"),
                                                storage_per_tb_month=0, egress_per_tb=0, currency="CNY")
             for n, values in out.partial.items()}
    for stub_id, col, message, fix in inconsistencies(Catalog.model_construct(gpus=gpus, datacenters=datacenters,
                                                                              offers=stubs)):
        number = int(stub_id.removeprefix("row "))
        if col in ("gpu", "datacenter") and out.partial[number].get(col) and not any(
                b.row == number and b.column == col for b in out.bad):
            out.bad.append(BadCell(sheet, number, col, message, f"{col}: {fix}", out.refs[number].get(col)))
    out.bad.sort(key=lambda b: (b.row, COLUMNS.index(b.column) if b.column in COLUMNS else -1))


# ---------------------------------------------------------------- import

@dataclass
class ImportResult:
    target: Path
    offers: list[Offer]
    quotes: QuoteRows
    backup: Path | None = None
    replaced_rows: int | None = None

    @property
    def skipped(self) -> list[BadCell]:
        return self.quotes.bad


def import_quotes(path: str | Path, into: str | Path, *, skip_bad: bool = False, force: bool = False,
                  sheet: str = SHEET) -> ImportResult:
    """Validate a filled quote sheet against the catalog folder `into` and write into/offers.csv."""
    into = Path(into)
    if not into.is_dir():
        raise ProblemError("catalog folder not found", file=str(into), key="--into",
                           fix="give a folder that holds gpus.csv and datacenters.csv")
    for name in ("gpus.csv", "datacenters.csv"):
        if not (into / name).is_file():
            raise ProblemError(f"no {name} in the catalog folder", file=str(into), key="--into",
                               fix="import into a catalog folder with gpus.csv and datacenters.csv "
                                   "(e.g. a copy of catalogs/beijing-sample)")
    target = into / "offers.csv"
    if target.exists() and not force:
        raise ProblemError("offers.csv exists; not overwritten", file=str(target), key="--into",
                           fix="pass --force to replace it (the old file is kept as offers.csv.bak), "
                               "or import into another folder")
    gpus = read_table(into / "gpus.csv", *TABLES["gpus.csv"])
    datacenters = read_table(into / "datacenters.csv", *TABLES["datacenters.csv"])
    quotes = read_quotes(path, gpus, datacenters, sheet=sheet)
    good = len(quotes.offers)
    if quotes.header_bad:
        raise QuoteSheetError(f"the header row has {_n(len(quotes.header_bad), 'problem')}"
                              + (f" (and {_n(len(quotes.bad) - len(quotes.header_bad), 'bad cell')} in the rows)"
                                 if len(quotes.bad) > len(quotes.header_bad) else "") + "; nothing written",
                              quotes.bad, file=str(path), fix="correct the header (row 1) and import again")
    if quotes.bad and (not skip_bad or not good):
        more = (f", or pass --skip-bad to write the {_n(good, 'good row')}" if good and not skip_bad else "")
        raise QuoteSheetError(f"{_n(len(quotes.bad), 'bad cell')} in {_n(len(quotes.bad_rows), 'row')} of "
                              f"{quotes.rows}; nothing written", quotes.bad, file=str(path),
                              fix=f"correct them and import again{more}")
    offers = list(quotes.offers.values())
    old_rows = _count_rows(target) if target.exists() else None
    backup = _write_csv_atomic(target, [offer_cells(o) for o in offers], replace=force)
    return ImportResult(target=target, offers=offers, quotes=quotes, backup=backup, replaced_rows=old_rows)


def offer_cells(offer: Offer) -> dict[str, str]:
    """An offer as offers.csv cells (every column written, defaults included)."""
    data = offer.model_dump(by_alias=True)
    return {c: csv_text(data[c]) for c in COLUMNS}


def _write_csv_atomic(target: Path, rows: list[dict[str, Any]], *, replace: bool,
                      columns: list[str] | None = None, for_people: bool = False) -> Path | None:
    """Write atomically (solver.files); an existing target (only with replace) is first linked (or
    copied) to the first free .bak name, so at every moment the target is the old table or the new.
    `columns`: the header, offers.csv's COLUMNS unless given (solver.ingest.skypilot writes datacenters.csv too).
    `for_people`: a sheet to open in a spreadsheet (the template), its text cells kept from formulas."""
    backup = None
    if os.path.lexists(target):
        if not replace:
            raise ProblemError("file exists; not overwritten", file=str(target), fix="pass --force")
        if not target.is_symlink():
            backup = _keep_backup(target)
    files.save_atomic(target, lambda tmp: _save_csv(tmp, rows, columns or COLUMNS, for_people))
    return backup


def _save_csv(tmp: Path, rows: list[dict[str, Any]], columns: list[str], for_people: bool = False) -> None:
    cell = files.csv_cell if for_people else (lambda text: text)
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: cell(csv_text(row.get(c))) for c in columns})


def _keep_backup(target: Path) -> Path:
    """The old table under the first free .bak name, as a hard link where the disk allows (the
    target itself is never moved away, so no kill leaves it missing)."""
    backup = _free_backup(target)
    try:
        try:
            os.link(target, backup)
        except OSError:
            shutil.copy2(target, backup)
    except OSError as exc:
        raise files.write_error(exc, backup) from None
    return backup


write_csv_atomic = _write_csv_atomic
"""A catalog table written whole, the old file kept as .bak (the writer `catalog import` uses)."""


def write_tables_together(into: Path, tables: list[tuple[str, list[dict[str, Any]], list[str]]]) -> list[Path]:
    """Several tables of one catalog folder as one change (solver.files.replace_together: a kill
    leaves all old tables or all new ones), each old table kept as .bak first; the backups made."""
    backups = [_keep_backup(into / name) for name, _, _ in tables
               if (into / name).exists() and not (into / name).is_symlink()]
    files.replace_together([(into / name, lambda tmp, rows=rows, columns=columns: _save_csv(tmp, rows, columns))
                            for name, rows, columns in tables], into)
    return backups


def _save_atomic(path: Path, save) -> None:
    files.save_atomic(path, lambda tmp: save(str(tmp)))


def _free_backup(target: Path) -> Path:
    candidate, n = target.with_name(target.name + ".bak"), 1
    while candidate.exists():
        n += 1
        candidate = target.with_name(f"{target.name}.bak{n}")
    return candidate


def _count_rows(path: Path) -> int:
    with open(path, newline="", encoding="utf-8-sig") as fh:
        return max(0, sum(1 for row in csv.reader(fh) if row) - 1)


def csv_text(value: Any) -> str:
    """CSV text: '|'-joined lists, true/false, ISO dates, numbers without a needless '.0'."""
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return "|".join(csv_text(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
