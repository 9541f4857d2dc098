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
from solver.files import check_new_file, csv_frame, save_atomic
from solver.report.tables import sweep_tables, write_xlsx
from solver.report.fit import keep_whole

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


def grid_header(key: str) -> str:
    """A grid key as a short column header: its last name and its operator, `offers[vendor=x].price*=` →
    `price ×`, `datacenters.Shunyi.power_quota_kw=` → `power_quota_kw`, `budget+=` → `budget +`."""
    op = "×" if key.endswith("*=") else "+" if key.endswith("+=") else ""
    path = key.rstrip("=").rstrip("*+")
    depth, cut = 0, 0
    for i, ch in enumerate(path):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "." and depth == 0:
            cut = i + 1
    name = path[cut:] or path
    return f"{name} {op}".strip()


def _grid_value(value) -> str:
    if _plain(value) is None:
        return ""
    if isinstance(value, float):
        return f"{value:,g}" if abs(value) < 1e6 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def render_sweep(df, output: Path | None, console: Console) -> None:
    """One line of counts and the cheapest scenario, then the first SHOWN_ROWS rows as a table: one column
    per grid key (its values), the edits only for scenarios outside the grid."""
    counts = df["status"].value_counts()
    solved = df[df["status"].isin(["optimal", "feasible"])]
    line = f"{len(df)} scenarios: " + ", ".join(f"{n} {s}" for s, n in counts.items())
    if len(solved):
        best = solved.loc[solved["total_cost"].idxmin()]
        line += f"; cheapest {best['scenario']} at {best['total_cost']:,.0f} {best['currency']}"
    line += _how_words(df)
    console.print(escape(line + (f" → {output}" if output else "")), highlight=False)
    columns = list(df.columns)
    params = columns[columns.index("edits") + 1:columns.index("status")] if "edits" in columns else []
    headers = [grid_header(k) for k in params]
    if len(set(headers)) < len(headers):           # two keys end alike: number them instead
        headers = [f"g{i}" for i in range(1, len(params) + 1)]
    if params:
        console.print(escape("grid: " + "; ".join(f"{h} = {k}" for h, k in zip(headers, params))), highlight=False)
    shown = df.head(SHOWN_ROWS)
    off_grid = [all(_plain(r[k]) is None for k in params) for _, r in shown.iterrows()] if params else \
        [True] * len(shown)
    finish = [c for c in df.columns if c.startswith("finish_")]
    table = Table(pad_edge=False)  # each solve's seconds are in the file (-o), not here: the columns hold the grid
    table.add_column("scenario", overflow="fold")
    for h in headers:
        table.add_column(escape(h), justify="right", overflow="fold")
    if any(off_grid):
        table.add_column("edits" if not params else "other edits", overflow="fold")
    table.add_column("status")
    table.add_column(f"cost ({currency_of(df) or 'currency column'})", justify="right",
                     no_wrap=True)   # an amount split over lines is misread
    for c in finish:
        table.add_column(c.removeprefix("finish_") + " day", justify="right", overflow="fold")
    table.add_column("binding / error", overflow="fold")
    for (_, r), outside in zip(shown.iterrows(), off_grid):
        cost = _cost_cell(r)
        days = ["" if _plain(r[c]) is None else str(r[c]) for c in finish]
        note = r["error"] or r["binding"]
        note = note if len(note) <= NOTE_CHARS else note[:NOTE_CHARS - 1] + "…"
        edits = [escape(r["edits"] if outside else "")] if any(off_grid) else []
        table.add_row(escape(r["scenario"]), *(escape(_grid_value(r[k])) for k in params), *edits, r["status"],
                      cost, *days, escape(note))
    console.print(keep_whole(table, console.width))
    if len(df) > SHOWN_ROWS:
        where = f" in {output}" if output else " (write them with -o)"
        console.print(escape(f"… {len(df) - SHOWN_ROWS} more rows{where}"))


def _how_words(df: pd.DataFrame) -> str:
    """How the rows were solved (solver.analysis.sweep.Worker): `; 12 probes, 2 rebuilt`."""
    if "how" not in df.columns:
        return ""
    probes, rebuilt = (int((df["how"] == how).sum()) for how in ("probe", "rebuilt"))
    parts = [f"{probes} probe{'' if probes == 1 else 's'}"] if probes else []
    parts += [f"{rebuilt} rebuilt"] if rebuilt else []
    return "; " + ", ".join(parts) if parts else ""


def _cost_cell(row) -> str:
    """The cost, or the interval bound–cost when the time ran out before it was proven."""
    cost = _plain(row["total_cost"])
    if cost is None:
        return ""
    low = _plain(row.get("lower_bound"))
    return f"{low:,.0f}–{cost:,.0f}" if low is not None and low < cost - 0.005 else f"{cost:,.0f}"


def currency_of(df: pd.DataFrame) -> str | None:
    """The rows' one currency; None when scenarios differ in it (one may edit `currency`): each row names its own."""
    codes = sorted(set(df["currency"].dropna()))
    return codes[0] if len(codes) == 1 else None


def write_table(df: pd.DataFrame, path: str | Path, *, force: bool = False) -> None:
    """CSV, Parquet or Excel by the file's suffix; an existing file is replaced only with force."""
    path = Path(path)
    check_output(path, force=force)
    if path.suffix.lower() == ".parquet":
        save_atomic(path, lambda tmp: df.to_parquet(tmp, index=False))
    elif path.suffix.lower() == ".xlsx":
        write_xlsx(sweep_tables(df), path, currency=currency_of(df) or "", force=True)  # checked just above
    else:
        save_atomic(path, lambda tmp: csv_frame(df).to_csv(tmp, index=False))


def check_output(path: str | Path, *, force: bool = False) -> Path:
    """Checked before solving, so a sweep never ends in a refusal to write its result (solver.files'
    check, after the name's own: a table format, and pyarrow for Parquet)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".xlsx"):
        raise ProblemError("unknown table format", file=str(path), key="-o",
                           fix="name the file *.csv, *.parquet or *.xlsx")
    check_new_file(path, "-o", force=force, example="sweep.csv")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ProblemError("Parquet needs pyarrow", file=str(path), key="-o",
                               fix="pip install .[parquet], or write .csv") from None
    return path
