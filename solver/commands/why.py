"""`gpuplan why PROBLEM`: each job's runners-up with the reason each lost, and the binding limits'
re-solve deltas (issue 5)."""

from __future__ import annotations

from pathlib import Path

import typer

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


def register(app: typer.Typer) -> None:
    app.command("why")(why_command)


def why_command(problem: Path = typer.Argument(..., help="problem YAML"),
                k: int = typer.Option(3, "--k", "-k", min=1, help="runners-up shown per job"),
                as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
                backend: Backend = typer.Option(DEFAULT_BACKEND, help="MILP solver bundled with OR-Tools"),
                time_limit: float | None = time_limit_option("seconds per solve"),
                gap: float | None = gap_option(help="stop each solve at this relative gap"),
                max_seconds: float | None = typer.Option(
                    None, help="the whole run's budget: no solve starts after it, none runs past it (> 0)",
                    callback=bounded(gt=0, example="--max-seconds 120"))) -> None:
    """Why this plan: per job the best K alternatives (GPU type × mode × site × vendor) the optimum did
    not use, each with the cost of the best plan forced onto it and the reason it lost (price, memory,
    power, lead_time, availability, residency, deadline, fabric); then what one more unit of each
    binding limit is worth, by re-solving. Exit 1 when the problem itself is infeasible."""
    from solver.analysis.why import why
    from solver.load import load_problem
    from solver.report.why import render_why

    def action() -> None:
        prob, cat = load_problem(problem)
        with working("why: optimum, runners-up and binding limits"):
            result = why(prob, cat, k=k, backend=backend.value, time_limit=time_limit, gap=gap,
                         max_seconds=left_of(max_seconds))
        if as_json:
            print_json(result.to_dict())
        else:
            render_why(result, plan_console())
    run_action(action)
