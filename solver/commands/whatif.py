"""`gpuplan whatif PROBLEM --set EDIT ...`: the problem with edits, beside the baseline."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from solver.choices import DEFAULT_BACKEND
from solver.commands.common import command_budget, plan_console, run_action, speak, working
from solver.commands.options import AsJson, BackendChoice, Gap, Lang, max_seconds_option, ProblemFile, TimeLimit


def register(app: typer.Typer) -> None:
    app.command("whatif")(whatif)


def whatif(problem: ProblemFile,
           edits: list[str] = typer.Option(..., "--set", "-s",
                                           help="PATH=VALUE, PATH*=FACTOR or PATH+=AMOUNT; repeat for more, "
                                                "e.g. --set 'offers\\[vendor=sinnet].price*=0.9'"),
           as_json: AsJson = False,
           lang: Lang = None,
           backend: BackendChoice = DEFAULT_BACKEND,
           time_limit: TimeLimit = None,
           gap: Gap = None,
           explain: bool = typer.Option(True, "--explain/--no-explain",
                                        help="when the edits make it infeasible, find the smallest relaxation "
                                             "of each limit"),
           max_seconds: Annotated[Optional[float], max_seconds_option(
               "the whole run's budget: the baseline, the scenario and its explanation; no solve starts "
               "after it, none runs past it", example="--max-seconds 120")] = None) -> None:
    """Solve PROBLEM as written and with the edits; print cost delta, mix changes and what binds.

    Exit 1 when the edited problem is proven infeasible (the baseline is still shown, and, unless
    --no-explain, the smallest relaxation of each limit that makes the edited problem feasible).
    A scenario the time left undetermined exits 0 and shows what is known of it.
    """
    def action() -> None:
        command_budget(max_seconds)
        from solver.analysis.whatif import what_if
        from solver.load import load_problem
        from solver.report.json_out import print_json
        from solver.report.whatif import render_whatif

        prob, cat = load_problem(problem)
        speak(lang, prob)
        with working("what-if: baseline and scenario"):
            result = what_if(prob, cat, edits, explain=explain, backend=backend.value, time_limit=time_limit,
                             gap=gap)
        if as_json:
            print_json(result.to_dict())
        else:
            render_whatif(result, plan_console())
        if result.scenario.plan is None and result.scenario.proven:  # not determined: exit 0, its interval shown
            raise typer.Exit(1)
    run_action(action, stoppable=True)
