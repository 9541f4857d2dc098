"""`gpuplan estimate --params N --tokens D`: FLOPs, GPU-hours, minimal layout and GPU count for one
job on one GPU type, without solving."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Optional

import typer

from solver.commands.common import SAMPLE_CATALOG, plan_console, run_action
from solver.commands.options import bounded, catalog_option, literal_choices
from solver.errors import ProblemError
from solver.choices import Kind as JobKind
from solver.choices import Precision as JobPrecision

Kind = literal_choices("Kind", JobKind)
Precision = literal_choices("Precision", JobPrecision)


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate)


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
             catalog: Annotated[Path, catalog_option("catalog folder for the GPU row")] = SAMPLE_CATALOG,
             as_json: bool = typer.Option(False, "--json")) -> None:
    """FLOPs, GPU-hours, minimal layout and GPUs for one job on one GPU type.

    Exit 1 when no layout holds the model on that GPU (the output says so; no GPU count).
    """
    def action() -> None:
        from solver.estimate.shape import infer_shape
        from solver.estimate.summary import estimate_job
        from solver.load import load_catalog
        from solver.report.estimate_table import render_estimate
        from solver.report.json_out import print_json

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
            render_estimate(data, days, redundancy, plan_console())
        if result.layout is None:  # the contract's "infeasible": no layout holds the model on this GPU
            raise typer.Exit(1)
    run_action(action)


def _model_spec(params, active_params, layers, hidden, heads, seq_len, tokens):
    """The model's shape from the options, each bad value named by its option (exit 2)."""
    if not (math.isfinite(tokens) and tokens > 0):
        raise ProblemError(f"tokens must be a finite number > 0 (got {tokens:g})", key="--tokens",
                           fix="e.g. --tokens 200e9")
    for option, value, example in (("--params", params, "7e9"), ("--active-params", active_params, "1.3e10")):
        if value is not None and not math.isfinite(value):
            raise ProblemError(f"not a finite number (got {value:g})", key=option, fix=f"e.g. {option} {example}")
    from pydantic import ValidationError

    from solver.model.problem import ModelSpec
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
