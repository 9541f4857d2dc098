"""`gpuplan sweep PROBLEM --grid GRID.yaml`: many what-if scenarios → one CSV/Parquet table.

Parsing and rendering only; the grid format, the columns and the executors are described
in solver/analysis/sweep.py. The output file is checked before any solve, so hours of
solving never end in "file exists".
"""

from __future__ import annotations

import math
from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.commands.common import (Backend, gap_option, live_stderr, plan_console, print_json, run_action,
                                    time_limit_option)
from solver.errors import ProblemError

Executor = Enum("Executor", {e: e for e in ("process", "ray")}, type=str)
SHOWN_ROWS = 30
NOTE_CHARS = 80


def register(app: typer.Typer) -> None:
    app.command()(sweep)


def sweep(problem: Path = typer.Argument(..., help="problem YAML"),
          grid: Path = typer.Option(..., "--grid", help="grid YAML: `grid:` (cartesian) and/or `scenarios:` (list)"),
          output: Optional[Path] = typer.Option(None, "-o", "--output",
                                                help="write the table: FILE.csv, FILE.parquet or FILE.xlsx"),
          force: bool = typer.Option(False, "--force", help="replace an existing output file"),
          executor: Executor = typer.Option("process",
                                            help="process pool here, or a Ray cluster (pip install .\\[ray])"),
          jobs: Optional[int] = typer.Option(None, "--jobs", "-j", min=1,
                                             help="parallel solves (default: CPU count; 1 = in this process)"),
          address: Optional[str] = typer.Option(None, help="Ray: address of an existing cluster "
                                                          "(default: start a local one)"),
          backend: Optional[Backend] = typer.Option(None, help="MILP solver bundled with OR-Tools (default: highs)"),
          time_limit: Optional[float] = time_limit_option("seconds per scenario"),
          gap: Optional[float] = gap_option(help="stop each solve at this relative gap"),
          as_json: bool = typer.Option(False, "--json", help="print the rows as a JSON list"),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar")) -> None:
    """Solve every scenario of GRID on PROBLEM: one row each (edits, status, cost, finish days, GPU-days, limits)."""
    from solver.analysis.sweep import check_edits, check_output, load_grid, run_sweep, write_table
    from solver.load import load_problem

    def action() -> None:
        if address and executor.value != "ray":
            raise ProblemError("--address is the address of a Ray cluster", key="--address",
                               fix="add --executor ray, or leave --address out")
        if output is not None:
            check_output(output, force=force)
        prob, cat = load_problem(problem)
        scenarios = load_grid(grid)
        check_edits(prob, cat, scenarios, str(grid))
        with _progress(len(scenarios), quiet) as advance:
            df = run_sweep(prob, cat, scenarios, executor=executor.value, jobs=jobs, address=address,
                           backend=backend.value if backend else None, time_limit=time_limit, gap=gap,
                           on_row=advance)
        if output is not None:
            write_table(df, output, force=force)
        if as_json:
            print_json([{k: _plain(v) for k, v in rec.items()} for rec in df.to_dict(orient="records")])
        else:
            _summary(df, output, plan_console())
    run_action(action)


class _progress:
    """A rich progress bar on stderr, where one may be drawn (`live_stderr`)."""

    def __init__(self, total: int, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        err = live_stderr(f"sweep: {total} scenarios", quiet=quiet)
        self.bar = None
        if err is not None:
            self.bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[last]}"), TimeRemainingColumn(), console=err, transient=True)
            self.task = self.bar.add_task("sweep", total=total, last="")

    def __enter__(self):
        if self.bar is None:
            return lambda i, row: None
        self.bar.start()
        return lambda i, row: self.bar.update(self.task, advance=1, last=row["status"])

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def _plain(value):
    """JSON cells: pandas' missing values become null."""
    import pandas as pd
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def _summary(df, output: Path | None, console: Console) -> None:
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
