"""`gpuplan whatif PROBLEM --set EDIT ...`: the problem with edits, beside the baseline."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from solver.commands.common import (
    Backend,
    gap_option,
    plan_console,
    print_json,
    run_action,
    time_limit_option,
    working,
)
from solver.api import DEFAULT_BACKEND


def register(app: typer.Typer) -> None:
    app.command("whatif")(whatif)


def whatif(problem: Path = typer.Argument(..., help="problem YAML"),
           edits: list[str] = typer.Option(..., "--set", "-s",
                                           help="PATH=VALUE, PATH*=FACTOR or PATH+=AMOUNT; repeat for more, "
                                                "e.g. --set 'offers\\[vendor=sinnet].price*=0.9'"),
           as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
           backend: Backend = typer.Option(DEFAULT_BACKEND, help="MILP solver bundled with OR-Tools"),
           time_limit: Optional[float] = time_limit_option("seconds per solve"),
           gap: Optional[float] = gap_option(help="stop each solve at this relative gap"),
           explain: bool = typer.Option(True, "--explain/--no-explain",
                                        help="when the edits make it infeasible, find the smallest relaxation "
                                             "of each limit")) -> None:
    """Solve PROBLEM as written and with the edits; print cost delta, mix changes and what binds.

    Exit 1 when the edited problem is infeasible (the baseline is still shown, and, unless
    --no-explain, the smallest relaxation of each limit that makes the edited problem feasible).
    """
    from solver.analysis.whatif import what_if
    from solver.load import load_problem
    from solver.report.whatif import render_whatif

    def action() -> None:
        prob, cat = load_problem(problem)
        with working("what-if: baseline and scenario"):
            result = what_if(prob, cat, edits, explain=explain, backend=backend.value, time_limit=time_limit,
                             gap=gap)
        if as_json:
            print_json(result.to_dict())
        else:
            render_whatif(result, plan_console())
        if result.scenario.plan is None:
            raise typer.Exit(1)
    run_action(action)
