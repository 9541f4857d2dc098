"""`gpuplan solve PROBLEM`: the cheapest (or earliest) verified plan, with its optional extras
(--why, --baselines, --robust, --html/--xlsx/--csv, --export-mps) and, when infeasible, the smallest
relaxations."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Literal, Optional

import typer

from solver.choices import DEFAULT_BACKEND, DETAILS
from solver.clock import RunClock
from solver.commands.common import command_budget, announce_infeasible, plan_console, run_action, speak, working
from solver.commands.options import (
    AsJson,
    BackendChoice,
    Lang,
    ProblemFile,
    choices,
    gap_option,
    literal_choices,
    max_seconds_option,
    time_limit_option,
)
from solver.errors import Infeasible, ProblemError
from solver.files import check_new_file

Objective = literal_choices("Objective", Literal["min_cost", "min_time"])
SheetDetail = choices("SheetDetail", DETAILS)


def register(app: typer.Typer) -> None:
    app.command("solve")(solve)


def solve(problem: ProblemFile,
          as_json: AsJson = False,
          backend: BackendChoice = DEFAULT_BACKEND,
          time_limit: Annotated[Optional[float], time_limit_option("seconds; returns the best plan with its gap")]
          = None,
          gap: Annotated[Optional[float], gap_option("stop at this relative gap, e.g. 0.01")] = None,
          export_mps: Optional[Path] = typer.Option(None, help="write the model as MPS for another solver"),
          baselines: bool = typer.Option(False, "--baselines",
                                         help="also solve best-single-offer, all-hourly and all-monthly plans"),
          objective: Objective = typer.Option("min_cost", help="min_cost, or min_time: the earliest-finishing "
                                              "plan within the budget (ties broken by cost)"),
          html: Optional[Path] = typer.Option(None, help="also write the plan as a self-contained HTML report"),
          xlsx: Optional[Path] = typer.Option(None, help="also write the plan's tables as an Excel workbook"),
          csv: Optional[Path] = typer.Option(None, help="also write the plan's tables as CSV files in this folder"),
          force: bool = typer.Option(False, "--force", help="replace existing --html/--xlsx/--csv/--export-mps files"),
          sheet_detail: SheetDetail = typer.Option("month", "--sheet-detail",
                                                   help="rows of the allocations sheet (--xlsx/--csv): per rental "
                                                        "per month (a 30-day block without a start_date), per "
                                                        "day, or per planning period"),
          why: bool = typer.Option(False, "--why", help="also: each job's best runners-up, the reason each lost, "
                                                        "and what one more unit of each binding limit is worth"),
          why_k: int = typer.Option(3, "--why-k", min=1, help="runners-up per job with --why"),
          robust: bool = typer.Option(False, "--robust",
                                      help="also: the cheapest plan meeting every deadline with every MFU × the "
                                           "problem's robust.mfu_factor (default 0.8), and its premium"),
          thin_margin: float = typer.Option(0.10, "--thin-margin", min=0.0, max=1.0,
                                            help="warn under the headline when a job's MFU can fall by less than "
                                                 "this share before the plan misses its deadline (0 turns it off)"),
          deterministic: bool = typer.Option(
              False, "--deterministic", help="reproducible: each HiGHS solve stops at a node limit (10,000 nodes), "
                                             "not at a time limit, so every run on any machine gives the same plan "
                                             "unless the budget (--max-seconds) ends first"),
          lang: Lang = None,
          explain: bool = typer.Option(True, "--explain/--no-explain",
                                       help="when infeasible, find the smallest relaxation of each limit"),
          max_seconds: Annotated[Optional[float], max_seconds_option(
              "bound the whole command: the solve (each solve with --objective min_time), then "
              "--why, --baselines or the infeasible explanation in what is left; what gets no time "
              "is shown as not determined", example="--max-seconds 300")] = None) -> None:
    """Cheapest feasible rental plan for PROBLEM, verified independently before it is shown.

    Infeasible (exit 1): the smallest relaxation of each limit that alone makes it feasible
    and the cheapest combination, each re-solved to check it (solver.analysis.explain);
    with --json one object {"status": "infeasible", "message", "reasons", "explanation"}.
    """
    def action() -> None:
        from solver.analysis.margin import with_margins
        from solver.load import load_problem
        from solver.report.outputs import PlanFiles
        from solver.report.terminal import infeasible_json, print_json, solve_json

        if deterministic and backend.value != "highs":
            raise ProblemError("--deterministic needs HiGHS: its node limit is what makes a run reproducible",
                               key="--deterministic", fix="leave out --backend, or drop --deterministic")
        prob, cat = load_problem(problem)
        speak(lang, prob)
        files = PlanFiles(html, xlsx, csv, force, sheet_detail.value)
        files.check()
        if export_mps is not None:  # before solving: a long solve never ends in a refusal to write
            if objective.value == "min_time":
                raise ProblemError("not written with --objective min_time, which solves a sequence of models",
                                   key="--export-mps", fix="leave out --export-mps, or export the min_cost model")
            check_new_file(export_mps, "--export-mps", force=force, example="model.mps")
        command_budget(max_seconds)
        run = RunClock.since_start(time_limit, max_seconds)  # the solve's steps each cut to what is left
        options = {"backend": backend.value, "time_limit": time_limit, "gap": gap}
        try:
            with working(f"solving {problem.name} ({backend.value})"):
                plan, probes = _plan(prob, cat, objective.value, export_mps, run, options)
        except Infeasible as exc:
            if exc.proven and explain:
                announce_infeasible(exc)  # the verdict at once; the search for relaxations takes longer
                exc.explanation = _explanation(prob, cat, backend.value, time_limit, run.left())
            if as_json:  # the object on stdout for programs; the words still go to stderr (run_action)
                print_json(infeasible_json(exc, prob.currency))
            raise
        with working("margin, and the robust plan if asked: how much slower each job may run"):
            plan = with_margins(prob, cat, plan, robust=robust, clock=run, probes=probes, **options)
        explained = _why(prob, cat, plan, why_k, run, options, probes) if why else None
        written = files.write(plan, prob, cat, why=explained.to_dict() if explained else None)
        compared = _baselines(prob, cat, run, options, probes) if baselines else None
        if as_json:
            print_json(solve_json(plan, why=explained.to_dict() if explained else None, baselines=compared,
                                  thin_margin=thin_margin))
        else:
            _render(plan, compared, explained, written, thin_margin, deterministic)
    with _node_limit(deterministic):
        run_action(action, stoppable=True)


@contextmanager
def _node_limit(deterministic: bool):
    """`--deterministic`: every HiGHS solve of this command stops at a node limit instead of a time
    limit (solver.engine.progress.DETERMINISTIC_NODES), put back after the command."""
    from solver.api import DETERMINISTIC_NODES, PROGRESS

    saved, PROGRESS.node_limit = PROGRESS.node_limit, DETERMINISTIC_NODES if deterministic else None
    try:
        yield
    finally:
        PROGRESS.node_limit = saved


def _plan(prob, cat, objective: str, export_mps: Path | None, run: RunClock, options: dict):
    """The min_cost plan (the probe engine's base: what api.solve_problem gives, on a model the
    analyses after it reuse), or the earliest-finishing one within the budget."""
    from solver.probes import Probes

    probes = Probes(prob, cat, backend=options["backend"], gap=options["gap"], clock=run)
    if objective == "min_time":  # its searches probe the same model the margins then probe
        from solver.analysis.min_time import min_time_plan
        return min_time_plan(prob, cat, probes=probes, **options), probes
    return probes.plan(export_mps), probes


def _explanation(prob, cat, backend: str, time_limit: float | None, max_seconds: float | None) -> dict:
    from solver.analysis.explain import explain_infeasible
    with working("infeasible: searching the smallest relaxations"):
        return explain_infeasible(prob, cat, backend=backend, time_limit=time_limit or 60.0,
                                  max_seconds=max_seconds).to_dict()


def _why(prob, cat, plan, k: int, run: RunClock, options: dict, probes=None):
    from solver.analysis.why import why as why_plan
    with working("why: forcing the runners-up"):
        return why_plan(prob, cat, k=k, plan=plan, max_seconds=run.left(), probes=probes, **options)


def _baselines(prob, cat, run: RunClock, options: dict, probes=None) -> list:
    """On the solve's own engine when it has one (one Instance and one model for the command)."""
    from solver.analysis.baselines import all_baselines
    with working("baselines: best single offer, all hourly, all monthly"):
        return all_baselines(prob, cat, max_seconds=run.left(), probes=probes, **options)


def _render(plan, compared: list | None, explained, written: list[Path], thin_margin: float,
            deterministic: bool = False) -> None:
    from solver.report.terminal import render_baselines, render_plan, render_written
    from solver.report.why import render_why

    console = plan_console()
    render_plan(plan, console, thin_margin=thin_margin, deterministic=deterministic)
    if compared is not None:
        render_baselines(plan, compared, console)
    if explained is not None:
        render_why(explained, console)
    render_written(written, console)
