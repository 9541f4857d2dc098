"""Quote sheets: a filled sheet read and imported into a catalog's offers.csv. The template to fill in
is solver.ingest.quote_template's, the layout both share solver.ingest.quote_sheet's.

write_template(path, catalog)   (quote_template) sheet `offers` (the offers.csv columns, in order, and one example
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

import difflib
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from solver import files
from solver.errors import ProblemError
from solver.files import require_openpyxl
from solver.ingest.quote_sheet import EXAMPLE_ID, EXAMPLE_SOURCE, SHEET, ColumnSpec, column_specs
from solver.ingest.readers import TABLES, csv_rows, read_table
from solver.ingest.tables import COLUMNS, count_rows, csv_text, offer_cells, write_csv_atomic
from solver.model.catalog import LEGACY_COLUMNS, Catalog, Datacenter, Gpu, Offer, inconsistencies


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
    old_rows = count_rows(target) if target.exists() else None
    backup = write_csv_atomic(target, [offer_cells(o) for o in offers], replace=force)
    return ImportResult(target=target, offers=offers, quotes=quotes, backup=backup, replaced_rows=old_rows)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
