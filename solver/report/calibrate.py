"""`gpuplan calibrate`'s answer as plain lines: what was measured, the MFU, against the assumption."""

from __future__ import annotations

import typer


def render_calibration(c, written: dict[str, str]) -> None:
    for line in calibration_lines(c, written):
        typer.echo(line)


def calibration_lines(c, written: dict[str, str]) -> list[str]:
    """Plain lines: what was measured, the MFU with its spread, against what the planner assumed."""
    factor = c.flops_per_token / c.params
    out = [f"Calibration: {c.kind} on {c.gpu}, {c.precision} peak {c.peak_tflops:g} TFLOPS, "
           f"{factor:g}·N = {c.flops_per_token:.3g} FLOPs/token (N = {c.params:.3g}"
           f"{', full recompute' if c.recompute else ''})"]
    if c.steps:
        out.append(f"  measured: {c.steps} steps after {c.warmup_skipped} warm-up; "
                   f"median {c.tokens_per_sec_per_gpu:,.0f} tokens/s per GPU")
        spread = f" (p10–p90 over steps {c.mfu_p10:.1%}–{c.mfu_p90:.1%})"
    else:
        out.append(f"  measured: {c.tokens_per_sec_per_gpu:,.0f} tokens/s per GPU (given)")
        spread = ""
    out.append(f"  MFU {c.mfu:.1%}{spread}; achieved {c.achieved_tflops:.1f} TFLOPS per GPU")
    if c.mfu_with_attention is not None:
        out.append(f"  with attention FLOPs (PaLM App. B, information only): {c.mfu_with_attention:.1%}")
    verdict = "within" if c.within_baseline else "OUTSIDE"
    out.append(f"  assumed {c.assumed_mfu:.1%} ({c.assumed_from}): measured is {c.deviation:+.1%}, "
               f"{verdict} the 10% a measured cost baseline is good to")
    out.append(f"  GPU-hours per 1B tokens: {c.gpu_hours_per_billion_tokens:,.1f}")
    if c.job_gpu_hours:
        out.append(f"  job {c.job}: {c.job_gpu_hours:,.0f} GPU-hours at the measured rate vs "
                   f"{c.job_gpu_hours_assumed:,.0f} assumed (before redundancy and recompute)")
    if c.smi is not None:
        s = c.smi
        parts = [f"{s.samples} samples of {s.gpus} GPU{'s' if s.gpus != 1 else ''}"]
        if s.mean_utilization_pct is not None:
            parts.append(f"utilisation {s.mean_utilization_pct:.0f}%")
        if s.mean_power_w is not None:
            parts.append(f"power {s.mean_power_w:.0f} W")
        if s.median_sm_mhz is not None:
            parts.append(f"SM clock median {s.median_sm_mhz:.0f} MHz (reference {s.reference_sm_mhz:.0f})")
        if s.throttled_share is not None:
            parts.append(f"throttled {s.throttled_share:.0%} of busy samples")
        out.append("  nvidia-smi: " + ", ".join(parts))
    for w in c.warnings:
        out.append(f"  warning: {w}")
    if "problem" in written:
        out.append(f"  wrote {written['problem']} (job {c.job}: mfu {c.mfu:.3f})")
    if "gpus_csv_old" in written:
        where = f"wrote {written['catalog']}/gpus.csv" if "catalog" in written else "gpus.csv change (not written)"
        out.append(f"  {where}:")
        out.append(f"  - {written['gpus_csv_old']}")
        out.append(f"  + {written['gpus_csv_new']}")
    return out
