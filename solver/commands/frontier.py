"""`gpuplan frontier PROBLEM --x deadline|budget|spot_share|vendors --points N`: non-dominated plans."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from solver.clock import left_of
from solver.commands.common import (
    Backend,
    bounded,
    gap_option,
    plan_console,
    print_json,
    run_action,
    time_limit_option,
    working,
)
from solver.api import DEFAULT_BACKEND

Axis = Enum("Axis", {a: a for a in ("deadline", "budget", "spot_share", "vendors")}, type=str)


def register(app: typer.Typer) -> None:
    app.command("frontier")(frontier_command)


def frontier_command(
        problem: Path = typer.Argument(..., help="problem YAML"),
        x: Axis = typer.Option("deadline", "--x",
                               help="deadline: cost vs finishing day; budget: finishing day vs budget; "
                                    "spot_share: cost vs share of work on spot; vendors: cost vs vendors used"),
        points: int = typer.Option(10, "--points", "-n", help="ε values to try (non-dominated points are kept)"),
        plot: Optional[Path] = typer.Option(None, "--plot", help="write PREFIX.png and PREFIX.svg"),
        plans: Optional[Path] = typer.Option(None, "--plans", help="write each point's plan JSON into this folder"),
        xlsx: Optional[Path] = typer.Option(None, "--xlsx", help="write the points and every ε tried as a workbook"),
        force: bool = typer.Option(False, "--force", help="overwrite existing plot, plan or workbook files"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
        backend: Backend = typer.Option(DEFAULT_BACKEND, help="MILP solver bundled with OR-Tools"),
        time_limit: Optional[float] = time_limit_option("seconds per solve"),
        gap: Optional[float] = gap_option(help="stop each solve at this relative gap"),
        max_seconds: Optional[float] = typer.Option(
            None, "--max-seconds", callback=bounded(gt=0, example="--max-seconds 300"),
            help="bound the whole run: the points found by then are the frontier, with a note (> 0)")) -> None:
    """Trade-off of PROBLEM along one axis: ε-constraint solves on one model, non-dominated plans only,
    each verified. Exit 1 when the problem itself has no plan."""
    from solver.analysis.frontier import existing_plan_files, frontier, write_plans
    from solver.errors import ProblemError
    from solver.load import load_problem

    def action() -> None:
        if plot is not None:  # fail before solving, not after
            from solver.report.frontier_plot import check_plot_paths, require_matplotlib
            check_plot_paths(plot, force=force)
            require_matplotlib()
        if plans is not None:
            if plans.exists() and not plans.is_dir():
                raise ProblemError("is a file, not a folder", key="--plans", file=str(plans), fix="give a folder")
            if existing_plan_files(plans) and not force:
                raise ProblemError("plan files already there", key="--plans", file=str(plans),
                                   fix="choose another folder, or pass --force to overwrite")
        if xlsx is not None:
            from solver.report.tables import check_xlsx_target
            check_xlsx_target(xlsx, force=force)
        prob, cat = load_problem(problem)
        with working(f"frontier along {x.value}: {points} points"):
            result = frontier(prob, cat, x.value, points, backend=backend.value, time_limit=time_limit, gap=gap,
                              max_seconds=left_of(max_seconds))
        written: dict[str, list[str]] = {}
        if plans is not None:
            written["plans"] = [str(p) for p in write_plans(result, plans, force=force)]
        if xlsx is not None:
            from solver.report.tables import frontier_tables, write_xlsx
            written["xlsx"] = [str(write_xlsx(frontier_tables(result), xlsx, force=force))]
        if plot is not None:
            from solver.report.frontier_plot import plot_frontier
            written["plot"] = [str(p) for p in plot_frontier(result, plot, force=force)]
        if as_json:
            data = result.to_dict()
            if "plans" in written:
                for point, path in zip(data["points"], written["plans"]):
                    point["plan_file"] = path
            data["files"] = written
            print_json(data)
        else:
            render_frontier(result, plan_console(), written)
    run_action(action)


def render_frontier(result, console: Console, written: dict[str, list[str]] | None = None) -> None:
    x_label, y_label, eps_label = result.labels
    table = Table(title=f"{escape(result.problem)}: {y_label} vs {x_label} — {len(result.points)} non-dominated "
                        f"plan{'s' if len(result.points) != 1 else ''} from {len(result.tried)} ε values")
    for col in ("#", eps_label, "cost (CNY)", "finish day", *(["spot share"] if result.axis == "spot_share" else []),
                *(["vendors"] if result.axis == "vendors" else []), "mix (peak nodes × GPUs per node)", ""):
        table.add_column(col, justify="right" if col in ("#", "cost (CNY)", "finish day", "vendors") else "left")
    for i, p in enumerate(result.points, 1):
        eps = _eps(result.axis, p.eps)
        extra = ([f"{p.spot_share:.1%}"] if result.axis == "spot_share" else []) + \
                ([str(p.vendors)] if result.axis == "vendors" else [])
        table.add_row(str(i), eps, f"{p.cost:,.0f}", str(p.finish_day), *extra, escape(p.mix),
                      "[bold red]◀ knee[/]" if p.knee else "")
    console.print(table)
    for outcome, words in (("dominated", "dominated (a point above is as good in both and better in one), dropped"),
                           ("same plan", "the same plan as a point above"),
                           ("infeasible", "no plan"),
                           ("not settled", "no plan found within the time limit (none ruled out)")):
        values = [_eps(result.axis, e) for e, seen, _ in result.tried if seen == outcome]
        if values:
            console.print(f"{words}: ε = {'; '.join(values)}", highlight=False)
    for note in result.notes:
        console.print(f"note: {escape(note)}", highlight=False)
    console.print(f"{result.milp_solves} MILP solves, {result.lp_solves} LP bounds, {result.probes} feasibility "
                  f"probes, {result.reused} plans reused; {result.seconds:.1f} s", highlight=False)
    for kind, paths in (written or {}).items():
        console.print(escape(f"wrote {kind}: {', '.join(paths)}"), highlight=False)


def _eps(axis: str, eps: float) -> str:
    """An ε the way its column writes it (a budget in whole CNY, a spot share in per cent)."""
    return f"{eps:,.0f}" if axis == "budget" else f"{eps:.1%}" if axis == "spot_share" else f"{eps:g}"
