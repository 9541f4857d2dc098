"""`gpuplan why PROBLEM`: each job's runners-up with the reason each lost, and the binding limits'
re-solve deltas (issue 5)."""

from __future__ import annotations

from typing import Annotated

import typer

from solver.choices import DEFAULT_BACKEND
from solver.clock import left_of
from solver.commands.common import command_budget, plan_console, run_action, speak, working
from solver.commands.options import AsJson, BackendChoice, Gap, Lang, max_seconds_option, ProblemFile, TimeLimit


def register(app: typer.Typer) -> None:
    app.command("why")(why_command)


def why_command(problem: ProblemFile,
                k: int = typer.Option(3, "--k", "-k", min=1, help="runners-up shown per job"),
                as_json: AsJson = False,
                lang: Lang = None,
                backend: BackendChoice = DEFAULT_BACKEND,
                time_limit: TimeLimit = None,
                gap: Gap = None,
                max_seconds: Annotated[float | None, max_seconds_option(
                    "the whole run's budget: no solve starts after it, none runs past it",
                    example="--max-seconds 120")] = None) -> None:
    """Why this plan: per job the best K alternatives (GPU type × mode × site × vendor) the optimum did
    not use that have a plan when the job is forced onto them, by that plan's cost; listed apart, with
    their reason (power, availability, deadline, lead_time, memory, fabric, residency), those with no
    plan when forced and those left out before solving; then what one more unit of each binding
    limit is worth, by re-solving. Exit 1 when the problem itself is infeasible."""
    def action() -> None:
        command_budget(max_seconds)
        from solver.analysis.why import why
        from solver.load import load_problem
        from solver.report.json_out import print_json
        from solver.report.why import render_why

        prob, cat = load_problem(problem)
        speak(lang, prob)
        with working("why: optimum, runners-up and binding limits"):
            result = why(prob, cat, k=k, backend=backend.value, time_limit=time_limit, gap=gap,
                         max_seconds=left_of(max_seconds))
        if as_json:
            print_json(result.to_dict())
        else:
            render_why(result, plan_console())
    run_action(action, stoppable=True)
