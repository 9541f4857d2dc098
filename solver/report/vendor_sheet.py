"""negotiate's sheet for one vendor (`negotiate --export-vendor VENDOR FILE`): its own offers, our
target price for each and the volume we would take there, as CSV or a workbook.

Why in report: the sheet is words and a file; the analysis (solver.analysis.negotiate) gives the
terms, this module chooses what a vendor may see and writes it through solver.files (one check
before the negotiation, the same one again at the write, one atomic writer).
"""

from __future__ import annotations

import csv
from pathlib import Path

from solver.analysis.negotiate import Negotiation
from solver.errors import ProblemError
from solver.files import check_new_file, csv_cell, require_openpyxl, save_atomic, text_cells
from solver.i18n import N_, _

OPTION = "--export-vendor"


def check_sheet(path: str | Path, *, force: bool = False) -> Path:
    """The sheet's file, checked before the negotiation (solver.files.check_new_file), and
    openpyxl when it is a workbook."""
    path = check_new_file(path, OPTION, force=force, example="sheet.csv")
    if path.suffix.lower() == ".xlsx":
        require_openpyxl(OPTION)
    return path


EXPORT_COLUMNS = ("offer", "gpu", "mode", "datacenter", "price_unit", "currency", "current_price", "target_price",
                  "node_days_at_target", "peak_nodes_at_target", "volume_unit", "note")
EXPORT_HEADERS = {c: h for c, h in zip(EXPORT_COLUMNS, (
    N_("offer"), N_("gpu"), N_("mode"), N_("datacenter"), N_("price_unit"), N_("currency"), N_("current_price"),
    N_("target_price"), N_("node_days_at_target"), N_("peak_nodes_at_target"), N_("volume_unit"), N_("note")))}
"""The sheet's header row: the column names, in the language of the command (`--lang`)."""


def vendor_rows(result: Negotiation, vendor: str) -> list[dict]:
    """One row per offer of `vendor`: its own offer, price, our target and the volume at the target.

    Built from the vendor's own OfferTerms only, and notes are fixed phrases: no other
    vendor's name, offer, price or volume can reach the sheet (replaced_by, displaces,
    savings and reasons, which may name other offers, are left out on purpose).
    """
    rows = []
    for t in result.offers:
        if t.vendor != vendor:
            continue
        if t.target_price is not None:
            note = (_("in our plan; target is our ask") if t.status == "in_plan"
                    else _("not in our plan; at the target price we would take the volume shown"))
        elif t.status == "unusable":
            note = _("cannot carry this problem's jobs as offered")
        elif not t.analysed:
            note = _("not analysed")
        else:
            note = _("not competitive for this problem at any price we tried")
        rows.append({"offer": t.offer, "gpu": t.gpu, "mode": t.mode, "datacenter": t.datacenter,
                     "price_unit": t.price_unit, "currency": t.currency, "current_price": _num(t.price),
                     "target_price": "" if t.target_price is None else f"{t.target_price:.2f}",
                     "node_days_at_target": _num(round(t.target_node_days, 2)),
                     "peak_nodes_at_target": str(t.target_nodes), "volume_unit": _("node-days"), "note": note})
    return rows


def _num(x: float) -> str:
    """Plain digits, never an exponent: 1460000, 9.5, 1440."""
    return str(int(x)) if float(x).is_integer() else f"{x:.2f}".rstrip("0")


def export_vendor(result: Negotiation, vendor: str, path: str | Path, *, force: bool = False) -> int:
    """Write the vendor's sheet (CSV, or .xlsx with openpyxl); refuse to overwrite without force.
    The number of rows written."""
    if result.vendors and vendor not in result.vendors:
        raise ProblemError(f"vendor {vendor!r} was not analysed", key=OPTION,
                           fix=f"add --vendor {vendor}, or leave --vendor out")
    path = check_sheet(path, force=force)
    rows = vendor_rows(result, vendor)
    if not rows:
        raise ProblemError(f"vendor {vendor!r} has no offers", key=OPTION, fix="check the vendor name")
    if path.suffix.lower() == ".xlsx":
        book = require_openpyxl(OPTION).Workbook()
        sheet = book.active
        sheet.title = _("offers")
        sheet.append([_(EXPORT_HEADERS[c]) for c in EXPORT_COLUMNS])
        for row in rows:
            sheet.append([row[c] for c in EXPORT_COLUMNS])
        text_cells(sheet)   # a vendor's offer named =HYPERLINK(…) stays text
        save_atomic(path, lambda tmp: book.save(tmp))
    else:
        def save(tmp: Path) -> None:
            with open(tmp, "w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, fieldnames=EXPORT_COLUMNS)
                writer.writerow({c: _(EXPORT_HEADERS[c]) for c in EXPORT_COLUMNS})
                writer.writerows({c: csv_cell(v) for c, v in row.items()} for row in rows)
        save_atomic(path, save)
    return len(rows)
