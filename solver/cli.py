"""`gpuplan` command line: parse, call the library, render. Exit 0 solved, 1 infeasible, 2 bad input,
3 plan failed verification, 141 standard output closed early."""

from __future__ import annotations

import math
import os
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

import solver
from solver.clock import COMMAND, RunClock, start_command
from solver.commands import register_all
from solver.commands.common import (
    OUTPUT,
    SAMPLE_CATALOG,
    Backend,
    bounded,
    gap_option,
    plan_console,
    print_json,
    run_action,
    time_limit_option,
    working,
)
from solver.report.outputs import check_new_file
from solver.errors import ProblemError
from solver.api import DEFAULT_BACKEND

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)

Kind = Enum("Kind", {k: k for k in ("pretrain", "full_finetune", "lora", "qlora", "sweep", "preprocess", "inference")},
            type=str)
Precision = Enum("Precision", {p: p for p in ("bf16", "fp16", "fp8")}, type=str)


@app.callback()
def _options(quiet: bool = typer.Option(False, "--quiet", "-q", help="no spinners or progress bars, only results"),
             no_color: bool = typer.Option(False, "--no-color", help="plain text, no colours")) -> None:
    """Plan which GPUs to rent, where, how many, on which contract and for how long."""
    OUTPUT.quiet, OUTPUT.color = quiet, not no_color
    start_command()


Objective = Enum("Objective", {o: o for o in ("min_cost", "min_time")}, type=str)


@app.command()
def solve(problem: Path = typer.Argument(..., help="problem YAML"),
          as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
          backend: Backend = typer.Option(DEFAULT_BACKEND, help="MILP solver bundled with OR-Tools"),
          time_limit: Optional[float] = time_limit_option("seconds; returns the best plan with its gap"),
          gap: Optional[float] = gap_option(help="stop at this relative gap, e.g. 0.01"),
          export_mps: Optional[Path] = typer.Option(None, help="write the model as MPS for another solver"),
          baselines: bool = typer.Option(False, "--baselines",
                                         help="also solve best-single-offer, all-hourly and all-monthly plans"),
          objective: Objective = typer.Option("min_cost", help="min_cost, or min_time: the earliest-finishing "
                                              "plan within the budget (ties broken by cost)"),
          html: Optional[Path] = typer.Option(None, help="also write the plan as a self-contained HTML report"),
          xlsx: Optional[Path] = typer.Option(None, help="also write the plan's tables as an Excel workbook"),
          csv: Optional[Path] = typer.Option(None, help="also write the plan's tables as CSV files in this folder"),
          force: bool = typer.Option(False, "--force", help="replace existing --html/--xlsx/--csv/--export-mps files"),
          why: bool = typer.Option(False, "--why", help="also: each job's best runners-up, the reason each lost, "
                                                        "and what one more unit of each binding limit is worth"),
          why_k: int = typer.Option(3, "--why-k", min=1, help="runners-up per job with --why"),
          explain: bool = typer.Option(True, "--explain/--no-explain",
                                       help="when infeasible, find the smallest relaxation of each limit"),
          max_seconds: Optional[float] = typer.Option(
              None, "--max-seconds", callback=bounded(gt=0, example="--max-seconds 300"),
              help="bound the whole command: the solve (each solve with --objective min_time), then "
                   "--why, --baselines or the infeasible explanation in what is left; what gets no time "
                   "is shown as not determined (> 0)")) -> None:
    """Cheapest feasible rental plan for PROBLEM, verified independently before it is shown.

    Infeasible (exit 1): the smallest relaxation of each limit that alone makes it feasible
    and the cheapest combination, each re-solved to check it (solver.analysis.explain);
    with --json one object {"status": "infeasible", "message", "reasons", "explanation"}.
    """
    from solver.api import solve_problem
    from solver.errors import Infeasible
    from solver.load import load_problem
    from solver.report.terminal import render_baselines, render_plan

    def action() -> None:
        from solver.report.outputs import PlanFiles
        prob, cat = load_problem(problem)
        files = PlanFiles(html, xlsx, csv, force)
        files.check()
        if export_mps is not None:  # before solving: a long solve never ends in a refusal to write
            if objective.value == "min_time":
                raise ProblemError("not written with --objective min_time, which solves a sequence of models",
                                   key="--export-mps", fix="leave out --export-mps, or export the min_cost model")
            check_new_file(export_mps, "--export-mps", force=force, example="model.mps")
        run = RunClock.since_start(time_limit, max_seconds)  # the solve's steps each cut to what is left
        options = {"backend": backend.value, "time_limit": time_limit, "gap": gap}
        try:
            with working(f"solving {problem.name} ({backend.value})"):
                if objective.value == "min_time":
                    from solver.analysis.min_time import min_time_plan
                    plan = min_time_plan(prob, cat, max_seconds=run.left(), **options)
                else:
                    plan = solve_problem(prob, cat, export_mps=export_mps, max_seconds=run.left(), **options)
        except Infeasible as exc:
            if exc.proven and explain:
                from solver.analysis.explain import explain_infeasible
                with working("infeasible: searching the smallest relaxations"):
                    exc.explanation = explain_infeasible(prob, cat, backend=backend.value,
                                                         time_limit=time_limit or 60.0,
                                                         max_seconds=run.left() if max_seconds else 600.0).to_dict()
            if as_json:  # the object on stdout for programs; the words still go to stderr (run_action)
                print_json({"status": "infeasible", "proven": exc.proven, "message": str(exc),
                            "reasons": exc.reasons, "explanation": exc.explanation})
            raise
        explained = None
        if why:
            from solver.analysis.why import why as why_plan
            with working("why: forcing the runners-up"):
                explained = why_plan(prob, cat, k=why_k, plan=plan, max_seconds=run.left(), **options)
        written = files.write(plan, prob, cat, why=explained.to_dict() if explained else None)
        compared = []
        if baselines:
            from solver.analysis.baselines import all_baselines
            with working("baselines: best single offer, all hourly, all monthly"):
                compared = all_baselines(prob, cat, max_seconds=run.left(), **options)
        if as_json:
            data = plan.model_dump(mode="json")
            if explained is not None:
                data["why"] = explained.to_dict()
            if baselines:
                data["baselines"] = [b.to_dict(plan.total_cost) for b in compared]
            print_json(data)
        else:
            console = plan_console()
            render_plan(plan, console)
            if baselines:
                render_baselines(plan, compared, console)
            if explained is not None:
                from solver.report.why import render_why
                render_why(explained, console)
            for path in written:
                console.print(f"wrote {path}", highlight=False, markup=False)
    run_action(action)


@app.command()
def estimate(params: float = typer.Option(..., help="parameters, e.g. 7e9 (total for MoE)"),
             tokens: float = typer.Option(..., help="training tokens, e.g. 200e9"),
             gpu: str = typer.Option("A100-80G", help="GPU name from the catalog"),
             mfu: Optional[float] = typer.Option(None, help="model FLOPs utilisation; default from the GPU row"),
             kind: Kind = typer.Option("pretrain", help="kind of job"),
             precision: Precision = typer.Option("bf16", help="bf16 | fp16 | fp8 (fp8 needs a GPU with FP8)"),
             seq_len: int = typer.Option(4096, help="sequence length"),
             layers: Optional[int] = typer.Option(None), hidden: Optional[int] = typer.Option(None),
             heads: Optional[int] = typer.Option(None),
             active_params: Optional[float] = typer.Option(None, help="MoE: parameters active per token"),
             days: float = typer.Option(30, help="deadline in days, for the GPU count (> 0)",
                                        callback=bounded(gt=0, example="--days 30")),
             redundancy: float = typer.Option(0.30, help="extra work for failures and restarts (0 to 5, "
                                              "as in a problem file)",
                                              callback=bounded(ge=0, le=5, example="--redundancy 0.3")),
             gpus_per_node: int = typer.Option(8, min=1, help="GPUs per node (≥ 1)"),
             catalog: Path = typer.Option(SAMPLE_CATALOG, help="catalog folder for the GPU row"),
             as_json: bool = typer.Option(False, "--json")) -> None:
    """FLOPs, GPU-hours, minimal layout and GPUs for one job on one GPU type.

    Exit 1 when no layout holds the model on that GPU (the output says so; no GPU count).
    """
    from solver.estimate.shape import infer_shape
    from solver.estimate.summary import estimate_job
    from solver.load import load_catalog

    def action() -> None:
        cat = load_catalog(catalog)
        if gpu not in cat.gpus:
            raise ProblemError(f"unknown gpu {gpu!r}", key="--gpu", file=str(catalog / "gpus.csv"),
                               fix=f"use one of {', '.join(sorted(cat.gpus))}")
        row = cat.gpus[gpu]
        if precision.value == "fp8" and row.fp8_tflops is None:
            fp8 = sorted(name for name, g in cat.gpus.items() if g.fp8_tflops is not None)
            raise ProblemError(f"{gpu} has no FP8 tensor cores (no fp8_tflops in gpus.csv)", key="--precision",
                               file=str(catalog / "gpus.csv"),
                               fix=f"use --precision bf16, or a GPU with FP8: {', '.join(fp8) or 'none in this catalog'}")
        if kind.value == "preprocess":  # accepted by problem files, so named here rather than unknown
            raise ProblemError("a preprocess job has no c·N·D model to estimate its FLOPs from", key="--kind",
                               fix="give its FLOPs in a problem file (flops: 2e20), or estimate a forward pass "
                                   "with --kind inference (2·N·D)")
        spec = _model_spec(params, active_params, layers, hidden, heads, seq_len, tokens)
        if mfu is not None and not 0 < mfu <= 1:
            raise ProblemError("mfu must be in (0, 1]", key="--mfu", fix="e.g. --mfu 0.4")
        result = estimate_job(infer_shape(spec), tokens, kind=kind.value, gpu_memory_gb=row.memory_gb,
                              bf16_tflops=row.bf16_tflops, fp8_tflops=row.fp8_tflops,
                              mfu=mfu or row.default_mfu, precision=precision.value, days=days,
                              redundancy=redundancy, gpus_per_node=gpus_per_node, nvlink=row.nvlink)
        data = {"gpu": gpu, "kind": kind.value, "mfu": mfu or row.default_mfu, **result.to_dict()}
        if as_json:
            print_json(data)
        else:
            from solver.report.terminal import render_estimate
            render_estimate(data, days, redundancy, plan_console())
        if result.layout is None:  # the contract's "infeasible": no layout holds the model on this GPU
            raise typer.Exit(1)
    run_action(action)


def _model_spec(params, active_params, layers, hidden, heads, seq_len, tokens):
    from pydantic import ValidationError

    from solver.model.problem import ModelSpec
    if not (math.isfinite(tokens) and tokens > 0):
        raise ProblemError(f"tokens must be a finite number > 0 (got {tokens:g})", key="--tokens",
                           fix="e.g. --tokens 200e9")
    for option, value, example in (("--params", params, "7e9"), ("--active-params", active_params, "1.3e10")):
        if value is not None and not math.isfinite(value):
            raise ProblemError(f"not a finite number (got {value:g})", key=option, fix=f"e.g. {option} {example}")
    try:
        return ModelSpec(params=params, active_params=active_params, layers=layers, hidden=hidden,
                         heads=heads, seq_len=seq_len)
    except ValidationError as exc:
        e = exc.errors()[0]
        if not e["loc"] and active_params is not None and active_params > params:  # the model's cross-checks
            raise ProblemError(f"more than --params ({active_params:g} > {params:g})",
                               key="--active-params",
                               fix="give at most --params (the parameters active per token are part of the total)"
                               ) from None
        if not e["loc"]:  # hidden ÷ heads
            raise ProblemError(str(e["msg"]).removeprefix("Value error, "), key="--hidden/--heads",
                               fix="give a --hidden that --heads divides") from None
        raise ProblemError(f"{e['msg']}", key="--" + str(e["loc"][0]).replace("_", "-"),
                           fix="give a number > 0") from None


register_all(app)


EXIT_OUTPUT_CLOSED = 141
"""Standard output closed before the command finished (`gpuplan solve … | head -1`): what a
shell reports for a process ended by SIGPIPE (128 + 13)."""


def main() -> None:
    """The console script: the command's `--max-seconds` counts from the process's start.

    Why the SystemExit is read: when standard output's reader goes away (`| head -1`),
    rich and click both end the command with exit 1, which here means "infeasible"; a
    script piping a plan into `head` would read that as no plan. Only that exit is changed
    (EXIT_OUTPUT_CLOSED), recognised by what each leaves behind after a failed write:
    rich points file descriptor 1 at os.devnull, click replaces sys.stdout with a wrapper
    that ignores the broken pipe. (A closed output that nothing was written to, as for an
    infeasible problem, whose explanation goes to stderr, keeps its exit code.)"""
    COMMAND.process = solver.STARTED
    stdout, was_devnull = sys.stdout, _stdout_is_devnull()
    try:
        app()
    except SystemExit as stop:
        closed = sys.stdout is not stdout or (_stdout_is_devnull() and not was_devnull)
        if stop.code == 1 and closed:
            raise SystemExit(EXIT_OUTPUT_CLOSED) from None
        raise


def _stdout_is_devnull() -> bool:
    try:
        return os.path.samestat(os.fstat(1), os.stat(os.devnull))
    except OSError:  # no file descriptor 1 (an embedding host)
        return False


if __name__ == "__main__":
    main()
