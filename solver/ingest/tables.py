"""A catalog's CSV tables written by its importers (the quote sheets, SkyPilot): offers as cells,
one table or several that go together written atomically (solver.files), each old table kept as
.bak first, so at every moment a table is the old one or the new.
"""

from __future__ import annotations

import csv
import os
import shutil
from datetime import date, datetime
from pathlib import Path
from typing import Any

from solver import files
from solver.errors import ProblemError
from solver.model.catalog import Offer

COLUMNS = [f.alias or name for name, f in Offer.model_fields.items()]     # the order of offers.csv


def offer_cells(offer: Offer) -> dict[str, str]:
    """An offer as offers.csv cells (every column written, defaults included)."""
    data = offer.model_dump(by_alias=True)
    return {c: csv_text(data[c]) for c in COLUMNS}


def write_csv_atomic(target: Path, rows: list[dict[str, Any]], *, replace: bool,
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


def write_tables_together(into: Path, tables: list[tuple[str, list[dict[str, Any]], list[str]]]) -> list[Path]:
    """Several tables of one catalog folder as one change (solver.files.replace_together: a kill
    leaves all old tables or all new ones), each old table kept as .bak first; the backups made."""
    backups = [_keep_backup(into / name) for name, _, _ in tables
               if (into / name).exists() and not (into / name).is_symlink()]
    files.replace_together([(into / name, lambda tmp, rows=rows, columns=columns: _save_csv(tmp, rows, columns))
                            for name, rows, columns in tables], into)
    return backups


def _free_backup(target: Path) -> Path:
    candidate, n = target.with_name(target.name + ".bak"), 1
    while candidate.exists():
        n += 1
        candidate = target.with_name(f"{target.name}.bak{n}")
    return candidate


def count_rows(path: Path) -> int:
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
