"""`gpuplan calibrate`: the MFU a short measured run achieved, written where the planner reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from solver.commands.common import SAMPLE_CATALOG, run_action
from solver.commands.options import AsJson


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate)


def _print_formats(value: bool) -> None:
    """--help-formats is eager: it prints and exits before typer asks for the required --gpu."""
    if not value:
        return
    from solver.tools import calibrate as cal
    typer.echo(cal.LOG_FORMATS)
    typer.echo("nvidia-smi: nvidia-smi --query-gpu=timestamp,index,utilization.gpu,power.draw,clocks.sm "
               "--format=csv -l 5 > smi.csv (clocks.max.sm and clocks_event_reasons.active optional)")
    raise typer.Exit()


def calibrate(
        gpu: str = typer.Option(..., help="GPU type of the measured run, as named in gpus.csv"),
        catalog: Optional[Path] = typer.Option(None, help="catalog folder; default the problem's, else beijing-sample"),
        tokens_per_sec_per_gpu: Optional[float] = typer.Option(None, help="measured training tokens/s per GPU"),
        log: Optional[Path] = typer.Option(None, help="training log or CSV with step times (formats: --help-formats)"),
        global_batch_tokens: Optional[float] = typer.Option(None, help="tokens per step: global batch × seq_len"),
        gpus: Optional[int] = typer.Option(None, help="GPUs in the measured run"),
        warmup: int = typer.Option(10, help="first steps of the log to ignore"),
        problem: Optional[Path] = typer.Option(None, help="read model, kind, precision and assumed MFU of --job here"),
        job: Optional[str] = typer.Option(None, help="job name in --problem / --write-problem"),
        params: Optional[float] = typer.Option(None, help="parameters, e.g. 7e9 (when no --problem)"),
        active_params: Optional[float] = typer.Option(None, help="MoE: parameters active per token"),
        layers: Optional[int] = typer.Option(None, help="for the attention-inclusive MFU (information only)"),
        hidden: Optional[int] = typer.Option(None), seq_len: Optional[int] = typer.Option(None),
        kind: str = typer.Option("pretrain", help="pretrain | full_finetune | lora | qlora | sweep | inference"),
        precision: str = typer.Option("bf16", help="bf16 | fp16 | fp8: selects the peak"),
        recompute: bool = typer.Option(False, "--recompute", help="the run used full activation recomputation"),
        nvidia_smi: Optional[Path] = typer.Option(None, "--nvidia-smi", help="nvidia-smi --format=csv log of the run"),
        write_problem: Optional[Path] = typer.Option(None, help="set --job's mfu in this problem YAML "
                                                                 "(writes NAME.calibrated.yaml beside it)"),
        in_place: bool = typer.Option(False, "--in-place", help="with --write-problem: edit the file itself"),
        write_gpu: bool = typer.Option(False, "--write-gpu", help="print the gpus.csv row with default_mfu set"),
        catalog_out: Optional[Path] = typer.Option(None, help="write a copy of the catalog with default_mfu set"),
        force: bool = typer.Option(False, "--force", help="overwrite an existing output file"),
        help_formats: bool = typer.Option(False, "--help-formats", is_eager=True, callback=_print_formats,
                                          help="describe the log formats and exit (no other option needed)"),
        as_json: AsJson = False) -> None:
    """Measured MFU of a short run (a few hundred steps on one GPU type), compared with the planner's assumption (within 10%?).

    MFU = c·N·tokens/s per GPU ÷ dense peak, with the planner's c (6 for pretraining, 8
    with --recompute). From a step-time log: tokens/s per GPU = global batch tokens ÷
    step time ÷ GPUs, median over the steps after the warm-up, spread p10–p90.
    """
    from solver.tools import calibrate as cal

    def action() -> None:
        from solver.errors import ProblemError
        from solver.load import load_catalog, load_problem
        from solver.report.calibrate import render_calibration
        from solver.report.json_out import print_json

        nonlocal catalog
        spec_kind, spec_precision, assumed, assumed_from, job_tokens = kind, precision, None, None, None
        n, n_active, lay, hid, seq = params, active_params, layers, hidden, seq_len
        cat = None
        if problem is not None:
            if not job:
                raise ProblemError("--problem needs --job NAME", key="--job", file=str(problem),
                                   fix="add --job with the name of the job that was measured")
            prob, cat = load_problem(problem)
            found = next((j for j in prob.jobs if j.name == job), None)
            if found is None:
                raise ProblemError(f"no job {job!r}", file=str(problem), key="--job",
                                   fix=f"use one of {', '.join(j.name for j in prob.jobs)}")
            if found.model is None:
                raise ProblemError("job has no model", file=str(problem), key=f"jobs.{job}.model",
                                   fix="give the job a model (at least model.params)")
            from solver.estimate.shape import infer_shape
            shape = infer_shape(found.model)
            spec_kind, spec_precision = found.kind, found.precision
            n = n or found.model.params
            n_active = n_active or found.model.active_params
            lay, hid, seq = lay or shape.layers, hid or shape.hidden, seq or shape.seq_len
            job_tokens = found.tokens
            if found.mfu is not None:
                assumed, assumed_from = found.mfu, f"job {job} mfu in {problem.name}"
        if catalog is not None or cat is None:
            catalog = catalog or SAMPLE_CATALOG
            cat = load_catalog(catalog)
        else:
            catalog = Path(cat.path)
        if gpu not in cat.gpus:
            raise ProblemError(f"unknown gpu {gpu!r}", file=str(Path(catalog) / "gpus.csv"), key="--gpu",
                               fix=f"use one of {', '.join(sorted(cat.gpus))}")
        if n is None:
            raise ProblemError("the model size is needed", key="--params",
                               fix="--params 7e9, or --problem FILE --job NAME")
        row = cat.gpus[gpu]
        steps = cal.read_step_log(log, warmup) if log is not None else None
        smi = cal.read_nvidia_smi(nvidia_smi, row.tdp_w) if nvidia_smi is not None else None
        result = cal.calibrate(row, params=n, active_params=n_active, kind=spec_kind, precision=spec_precision,
                               recompute=recompute, tokens_per_sec_per_gpu=tokens_per_sec_per_gpu, step_log=steps,
                               global_batch_tokens=global_batch_tokens, gpus=gpus, assumed_mfu=assumed,
                               assumed_from=assumed_from, layers=lay, hidden=hid, seq_len=seq, job=job,
                               job_tokens=job_tokens, smi=smi)
        note = cal.provenance(result)
        written: dict[str, str] = {}
        if write_problem is not None:
            if not job:
                raise ProblemError("--write-problem needs --job NAME", key="--job", file=str(write_problem),
                                   fix="add --job with the name of the job to calibrate")
            target = cal.write_problem_mfu(write_problem, job, result.mfu, in_place=in_place, force=force, note=note)
            written["problem"] = str(target)
        if write_gpu or catalog_out is not None:
            src = Path(catalog) / "gpus.csv"
            if catalog_out is not None:
                out, old, new = cal.write_catalog_mfu(catalog, catalog_out, gpu, result.mfu, force=force, note=note)
                written["catalog"] = str(out)
            else:
                try:
                    _, old, new = cal.set_gpu_mfu(src.read_text(encoding="utf-8"), gpu, result.mfu, note)
                except ValueError as exc:
                    raise ProblemError(str(exc), file=str(src), key="--gpu",
                                       fix="name a GPU of that gpus.csv (gpuplan catalog show)") from None
            written["gpus_csv_old"], written["gpus_csv_new"] = old, new
        if as_json:
            print_json({**result.to_dict(), "written": written})
        else:
            render_calibration(result, written)
    run_action(action)
