"""`gpuplan sweep PROBLEM --grid GRID.yaml`: many what-if scenarios → one CSV/Parquet table.

Parsing only: the grid format, the columns and the executors are described in
solver/analysis/sweep.py, the summary table and the output file's formats in
solver/report/sweep.py. The output file is checked before any solve, so hours of
solving never end in "file exists".
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from solver.choices import DEFAULT_BACKEND, EXECUTORS
from solver.commands.common import check_settings, live_stderr, plan_console, run_action, working
from solver.commands.options import Backend, Gap, ProblemFile, choices, time_limit_option
from solver.errors import ProblemError

Executor = choices("Executor", EXECUTORS)


def register(app: typer.Typer) -> None:
    app.command()(sweep)


def sweep(problem: ProblemFile,
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
          backend: Optional[Backend] = typer.Option(
              None, help=f"MILP solver bundled with OR-Tools (default: {DEFAULT_BACKEND})"),
          time_limit: Annotated[Optional[float], time_limit_option("seconds per scenario")] = None,
          gap: Gap = None,
          as_json: bool = typer.Option(False, "--json", help="print the rows as a JSON list"),
          quiet: bool = typer.Option(False, "--quiet", "-q", help="no progress bar")) -> None:
    """Solve every scenario of GRID on PROBLEM: one row each (edits, status, cost, finish days, GPU-days, limits)."""
    from solver.report.sweep import check_output, json_rows, render_sweep, write_table  # pandas: only when run

    def action() -> None:
        from solver.analysis.sweep import check_edits, load_grid, run_sweep
        from solver.load import load_problem
        from solver.report.json_out import print_json

        check_settings()
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
            print_json(json_rows(df))
        else:
            render_sweep(df, output, plan_console())
    run_action(action, stoppable=True)   # Ctrl-C: the rows so far, then exit 130 (solver.analysis.sweep)


class _progress:
    """A rich progress bar on stderr, where one may be drawn (`live_stderr`), each row printed
    above it as it arrives (solver.rows); elsewhere the rows as progress lines (`working`)."""

    def __init__(self, total: int, quiet: bool) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
        err = live_stderr(f"sweep: {total} scenarios", quiet=quiet)
        self.bar, self.lines = None, None
        if err is not None:
            self.bar = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[last]}"), TimeRemainingColumn(), console=err, transient=True)
            self.task = self.bar.add_task("sweep", total=total, last="")
        elif not quiet:
            self.lines = working(f"sweep: {total} scenarios")

    def __enter__(self):
        if self.bar is None:
            if self.lines is not None:
                self.lines.__enter__()
            return lambda i, row: None
        from solver.rows import ROWS
        ROWS.listener = lambda words, done, expected: self.bar.console.print(
            f"  {done}/{expected} {words}", markup=False, highlight=False)
        self.bar.start()
        return lambda i, row: self.bar.update(self.task, advance=1, last=row["status"])

    def __exit__(self, *exc) -> None:
        if self.lines is not None:
            self.lines.__exit__(*exc)
        if self.bar is not None:
            from solver.rows import ROWS
            ROWS.listener = None
            self.bar.stop()
