"""Calibration: the MFU a short measured run achieved, in the planner's own terms.

Seed 003 Q2: before renting, run a few hundred steps on one card of the type, measure
the throughput, then extrapolate. Seed 002: log nvidia-smi during a small experiment to
build a cost baseline good to within 10 %. This module turns such a measurement into the
one number the planner needs, the MFU, counted exactly as the planner counts it:

    MFU = c · N · (tokens/s per GPU) / peak

with c = flops_factor(kind, recompute) (6 for pretraining, 8 with full recompute, see
estimate.flops), N the active parameters and peak the dense BF16 (or FP8) figure of the
catalog row (estimate.throughput.peak_tflops). The planner divides its rate by 8/6 when
a layout recomputes activations, so state `recompute=True` when the measured run used
full activation recomputation: the MFU then includes that forward pass, as the planner
assumes. The planner further derates by an offer's performance clause and spot losses;
the measured MFU is the card's as measured, before those.

Inputs read here (formats in the function docstrings): a training log with step times,
a CSV of step times, and an nvidia-smi CSV log. Writers edit a problem YAML or a copy of a
catalog with the fewest changed lines, never overwriting a file unless asked to.
"""

from solver.tools.calibrate.measure import (
    LOG_FORMATS,
    Calibration,
    SmiSummary,
    StepLog,
    calibrate,
    read_nvidia_smi,
    read_step_log,
)
from solver.tools.calibrate.writers import (
    calibrated_path,
    provenance,
    set_gpu_mfu,
    set_job_key,
    set_job_mfu,
    write_catalog_mfu,
    write_problem_mfu,
)

__all__ = ["LOG_FORMATS", "Calibration", "SmiSummary", "StepLog", "calibrate", "calibrated_path", "provenance",
           "read_nvidia_smi", "read_step_log", "set_gpu_mfu", "set_job_key", "set_job_mfu", "write_catalog_mfu", "write_problem_mfu"]
