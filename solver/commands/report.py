"""`gpuplan report PROBLEM -o plan.html`: solve, then write the plan as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from solver.choices import DEFAULT_BACKEND
from solver.commands.common import command_budget, run_action, speak, working
from solver.commands.options import BackendChoice, Gap, Lang, ProblemFile, TimeLimit, max_seconds_option


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)


def report_command(
        problem: ProblemFile,
        output: Path = typer.Option(..., "--output", "-o", help="HTML file to write, e.g. plan.html"),
        force: bool = typer.Option(False, "--force", help="overwrite an existing file"),
        frontier_points: int = typer.Option(0, "--frontier-points", min=0,
                                            help="also compute a cost vs finishing day frontier from this many "
                                                 "deadlines and chart it (0: none)"),
        backend: BackendChoice = DEFAULT_BACKEND,
        time_limit: TimeLimit = None,
        gap: Gap = None,
        max_seconds: Annotated[Optional[float], max_seconds_option(
            "the whole run's budget: the solve and the frontier's points; no solve starts after it, "
            "none runs past it", example="--max-seconds 300")] = None,
        lang: Lang = None) -> None:
    """Cheapest plan for PROBLEM as an HTML report that opens offline: summary, Gantt chart of rentals,
    cost breakdown, job layouts, assumptions and a contract checklist per vendor.
    Never overwrites a file without --force (exit 2). Exit 1 when infeasible (no file written)."""
    def action() -> None:
        command_budget(max_seconds)
        from solver.clock import RunClock
        from solver.load import load_problem
        from solver.probes import Probes
        from solver.report.html import check_html_path, write_html
        from solver.report.terminal import render_report_written

        check_html_path(output, force=force, option="--output")  # fail before solving, not after
        prob, cat = load_problem(problem)
        speak(lang, prob)
        options = {"backend": backend.value, "time_limit": time_limit, "gap": gap}
        with working(f"solving {problem.name}"):  # the one model: the margins are probes on it (solver.probes)
            probes = Probes(prob, cat, backend=options["backend"], gap=gap, clock=RunClock(time_limit, None, least=0.0))
            plan = probes.plan()
        from solver.analysis.margin import with_margins
        with working("margin: how much slower each job may run on these rentals"):
            plan = with_margins(prob, cat, plan, probes=probes, **options)  # and the robust plan, if it asks
        front = None
        if frontier_points:
            from solver.analysis.frontier import frontier
            front = frontier(prob, cat, "deadline", frontier_points, **options)
        path = write_html(output, plan, prob, cat, frontier=front, force=force, option="--output")
        render_report_written(plan, prob, path)
    run_action(action, stoppable=True)

