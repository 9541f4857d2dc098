"""`gpuplan sweep`'s outputs: the summary table, the rows as JSON, the table as CSV/Parquet/Excel.

Why here and not in solver.analysis.sweep: writing a file and drawing a table are the
report's work (the layering puts report above analysis; analysis imports no report).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.errors import ProblemError
from solver.report.tables import sweep_tables, write_xlsx

SHOWN_ROWS = 30
NOTE_CHARS = 80


def json_rows(df: pd.DataFrame) -> list[dict]:
    """The table's rows for --json, pandas' missing values as null."""
    return [{k: _plain(v) for k, v in rec.items()} for rec in df.to_dict(orient="records")]


def _plain(value):
    """JSON cells: pandas' missing values become null."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def render_sweep(df, output: Path | None, console: Console) -> None:
    """One line of counts and the cheapest scenario, then the first SHOWN_ROWS rows as a table."""
    counts = df["status"].value_counts()
    solved = df[df["status"].isin(["optimal", "feasible"])]
    line = f"{len(df)} scenarios: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    if len(solved):
        best = solved.loc[solved["total_cost"].idxmin()]
        line += f"; cheapest {best['scenario']} at {best['total_cost']:,.0f}"
    console.print(escape(line + (f" → {output}" if output else "")), highlight=False)
    finish = [c for c in df.columns if c.startswith("finish_")]
    table = Table()
    for col in ("scenario", "edits", "status", "cost", *(c.removeprefix("finish_") + " day" for c in finish),
                "binding / error", "s"):
        table.add_column(col, justify="right" if col in ("cost", "s") or col.endswith(" day") else "left",
                         overflow="fold")
    for _, r in df.head(SHOWN_ROWS).iterrows():
        cost = "" if _plain(r["total_cost"]) is None else f"{r['total_cost']:,.0f}"
        days = ["" if _plain(r[c]) is None else str(r[c]) for c in finish]
        note = r["error"] or r["binding"]
        note = note if len(note) <= NOTE_CHARS else note[:NOTE_CHARS - 1] + "…"
        table.add_row(escape(r["scenario"]), escape(r["edits"]), r["status"], cost, *days, escape(note),
                      "" if _plain(r["seconds"]) is None else f"{r['seconds']:.2f}")
    console.print(table)
    if len(df) > SHOWN_ROWS:
        where = f" in {output}" if output else " (write them with -o)"
        console.print(escape(f"… {len(df) - SHOWN_ROWS} more rows{where}"))


def write_table(df: pd.DataFrame, path: str | Path, *, force: bool = False) -> None:
    """CSV, Parquet or Excel by the file's suffix; an existing file is replaced only with force."""
    path = Path(path)
    check_output(path, force=force)
    if path.suffix.lower() == ".parquet":
        df.to_parquet(path, index=False)
    elif path.suffix.lower() == ".xlsx":
        write_xlsx(sweep_tables(df), path, force=True)  # checked just above
    else:
        df.to_csv(path, index=False)


def check_output(path: str | Path, *, force: bool = False) -> None:
    """Checked before solving, so a sweep never ends in a refusal to write its result."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".xlsx"):
        raise ProblemError("unknown table format", file=str(path), key="-o",
                           fix="name the file *.csv, *.parquet or *.xlsx")
    if path.exists() and not force:
        raise ProblemError("file exists; not overwritten", file=str(path), key="-o",
                           fix="pass --force to replace it, or choose another name")
    if not path.parent.is_dir():
        raise ProblemError("folder not found", file=str(path), key="-o", fix="create the folder first")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ProblemError("Parquet needs pyarrow", file=str(path), key="-o",
                               fix="pip install .[parquet], or write .csv") from None
