"""`gpuplan frontier PROBLEM --x deadline|budget|spot_share|vendors --points N`: non-dominated plans."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from solver.choices import AXES, DEFAULT_BACKEND
from solver.clock import left_of
from solver.commands.common import command_budget, plan_console, run_action, working
from solver.commands.options import AsJson, BackendChoice, Gap, ProblemFile, TimeLimit, choices, max_seconds_option

Axis = choices("Axis", AXES)


def register(app: typer.Typer) -> None:
    app.command("frontier")(frontier_command)


def frontier_command(
        problem: ProblemFile,
        x: Axis = typer.Option("deadline", "--x",
                               help="deadline: cost vs finishing day; budget: finishing day vs budget; "
                                    "spot_share: cost vs share of work on spot; vendors: cost vs vendors used"),
        points: int = typer.Option(10, "--points", "-n", help="ε values to try (non-dominated points are kept)"),
        plot: Optional[Path] = typer.Option(None, "--plot", help="write PREFIX.png and PREFIX.svg"),
        plans: Optional[Path] = typer.Option(None, "--plans", help="write each point's plan JSON into this folder"),
        xlsx: Optional[Path] = typer.Option(None, "--xlsx", help="write the points and every ε tried as a workbook"),
        force: bool = typer.Option(False, "--force", help="overwrite existing plot, plan or workbook files"),
        as_json: AsJson = False,
        backend: BackendChoice = DEFAULT_BACKEND,
        time_limit: TimeLimit = None,
        gap: Gap = None,
        max_seconds: Annotated[Optional[float], max_seconds_option(
            "bound the whole run: the points found by then are the frontier, with a note",
            example="--max-seconds 300")] = None) -> None:
    """Trade-off of PROBLEM along one axis: ε-constraint solves on one model, non-dominated plans only,
    each verified. Exit 1 when the problem itself has no plan."""
    def action() -> None:
        command_budget(max_seconds)
        from solver.analysis.frontier import frontier
        from solver.load import load_problem
        from solver.report.frontier import render_frontier
        from solver.report.frontier_plans import check_plans_folder, write_plans
        from solver.report.json_out import print_json

        if plot is not None:  # fail before solving, not after
            from solver.report.frontier_plot import check_plot_paths, require_matplotlib
            check_plot_paths(plot, force=force)
            require_matplotlib()
        if plans is not None:
            check_plans_folder(plans, force=force)
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
            written["xlsx"] = [str(write_xlsx(frontier_tables(result), xlsx, currency=result.currency,
                                                   force=force))]
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
    run_action(action, stoppable=True)
