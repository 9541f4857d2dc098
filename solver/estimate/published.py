"""Published training runs against the estimator: what each run achieved, what we would have said.

The runs are data (`catalogs/reference/published_runs.csv`, its columns in that folder's
README); this module reads one row's numbers, no files. Two figures per run, both in
TFLOP/s per GPU counted as c·N·D model FLOPs (6·N·D for pre-training, N the active
parameters; solver.estimate.flops), so they compare like with like:

- `reported_tflops`: what the run achieved, from what its source reports:
  GPU-hours (6·N·D ÷ GPU-seconds), days on a stated GPU count (GPU-hours = GPUs × days × 24),
  tokens/s per GPU (6·N × tokens/s), TFLOP/s per GPU, or % of peak. Sources that count
  FLOPs with full activation recomputation (Narayanan et al. 2021 eq. 3; Megatron-DeepSpeed's
  throughput with checkpointed activations) count one forward pass more than the model's
  (8·N·D against 6·N·D: Korthikanti et al. 2022 §5, PaLM App. B), so × 3/4.
- `estimated_tflops`: what gpuplan's estimator gives for that run: peak × the GPU's
  `default_mfu` derated for the fastest layout (solver.estimate.efficiency) × fabric × size
  tier (solver.estimate.throughput) ÷ 4/3 when that layout needs recompute. A run whose GPU
  count is not stated gets no size tier; a run whose fabric is not stated is read as
  InfiniBand HDR (the tiers' best case), each said in `assumptions`. The performance clause
  (a rented card below rated speed) and spot loss are left out: these are the builders' own
  clusters.

The ratio reported ÷ estimated is the estimator's error on the run: GPU-hours estimated ÷
GPU-hours reported is the same ratio, so the error in GPU-hours is ratio − 1
(tests/bench/bench_estimate.py; solver.estimate.spread turns the ratios into an interval).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from solver.estimate.flops import flops_factor
from solver.estimate.efficiency import layout_efficiency
from solver.estimate.memory import ModelShape, minimal_layout
from solver.estimate.shape import infer_shape
from solver.estimate.throughput import INTERCONNECTS, fabric_factor, peak_tflops, scale_factor
from solver.model.problem import ModelSpec

REPORTED = ("gpu_hours", "days", "tokens_per_sec_per_gpu", "tflops_per_gpu", "pct_of_peak")
"""What a row's `value` is: GPU-hours, days on `gpus` GPUs, tokens/s per GPU, TFLOP/s per GPU, % of peak."""
BASES = ("6ND", "model", "hardware_full_recompute", "unstated")
"""How the source counted FLOPs: 6ND (a time figure: the model FLOPs are ours), model FLOPs, hardware
FLOPs with full recompute (× 3/4 to model FLOPs), or not said (read as model FLOPs)."""
RECOMPUTE_TO_MODEL = 6.0 / 8.0
"""Model FLOPs ÷ FLOPs counted with full recompute: 6·N·D ÷ 8·N·D (Korthikanti et al. 2022 §5)."""
UNSTATED_FABRIC = "ib_hdr"
"""The fabric a run is read on when its source does not say: InfiniBand, the tiers' best case."""
GPUS_PER_NODE = 8
"""Every run here is on 8-GPU servers (DGX/HGX A100 and H100, H800, Atlas 800 with 8 Ascend 910B)."""


@dataclass(frozen=True)
class PublishedRun:
    """One row of published_runs.csv, typed; `value` in the unit `reported` names."""

    run: str
    source_id: str
    source: str
    gpu: str
    params: float
    tokens: float | None
    seq_len: int
    precision: str
    reported: str
    value: float
    flops_basis: str
    gpus: int | None = None
    interconnect: str | None = None
    active_params: float | None = None
    days: float | None = None
    measured: bool = True

    @property
    def n(self) -> float:
        """Parameters that do the work per token (active ones for a mixture of experts)."""
        return self.active_params or self.params

    @property
    def gpu_hours(self) -> float | None:
        """GPU-hours the source gives, or GPUs × days × 24 when it gives those; None otherwise."""
        if self.reported == "gpu_hours":
            return self.value
        if self.reported == "days" and self.gpus:
            return self.gpus * self.value * 24
        return None


def _number(row: dict, key: str) -> float | None:
    text = (row.get(key) or "").strip()
    return float(text) if text else None


def run_from_row(row: dict) -> PublishedRun:
    """A CSV row (str → str) as a PublishedRun; ValueError naming the run and column when a value is off."""
    name = (row.get("run") or "").strip() or "?"
    try:
        reported, basis = row["reported"].strip(), row["flops_basis"].strip()
        if reported not in REPORTED:
            raise ValueError(f"reported {reported!r} is not one of {REPORTED}")
        if basis not in BASES:
            raise ValueError(f"flops_basis {basis!r} is not one of {BASES}")
        fabric = (row.get("interconnect") or "").strip() or None
        if fabric is not None and fabric not in INTERCONNECTS:
            raise ValueError(f"interconnect {fabric!r} is not one of {INTERCONNECTS}")
        gpus = _number(row, "gpus")
        run = PublishedRun(run=name, source_id=row["source_id"].strip(), source=row["source"].strip(),
                           gpu=row["gpu"].strip(), params=float(row["params"]), tokens=_number(row, "tokens"),
                           seq_len=int(row["seq_len"]), precision=row["precision"].strip(), reported=reported,
                           value=float(row["value"]), flops_basis=basis,
                           gpus=None if gpus is None else int(gpus), interconnect=fabric,
                           active_params=_number(row, "active_params"), days=_number(row, "days"),
                           measured=row["measured"].strip() == "measured")
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"published run {name}: {exc}") from None
    if not run.source or not run.source_id:
        raise ValueError(f"published run {name}: no source")
    if run.reported == "gpu_hours" and run.tokens is None or run.reported == "days" and not (run.tokens and run.gpus):
        raise ValueError(f"published run {name}: a time figure needs tokens (and days a GPU count)")
    return run


def reported_tflops(run: PublishedRun, peak: float) -> float:
    """Model TFLOP/s per GPU the run achieved (module doc); `peak` is the GPU's at the run's precision."""
    per_token = flops_factor("pretrain", False) * run.n
    hours = run.gpu_hours
    if hours is not None:
        assert run.tokens is not None
        return per_token * run.tokens / (hours * 3600) / 1e12
    if run.reported == "tokens_per_sec_per_gpu":
        return per_token * run.value / 1e12
    tflops = run.value if run.reported == "tflops_per_gpu" else run.value / 100 * peak
    return tflops * (RECOMPUTE_TO_MODEL if run.flops_basis == "hardware_full_recompute" else 1.0)


@dataclass(frozen=True)
class Estimated:
    """The estimator's TFLOP/s per GPU for a run, and what it had to assume."""

    tflops: float
    sustained_mfu: float
    layout: str
    assumptions: list[str] = field(default_factory=list)


def estimated_tflops(run: PublishedRun, shape: ModelShape, *, memory_gb: float, bf16_tflops: float,
                     fp8_tflops: float | None, mfu: float, nvlink: bool = True) -> Estimated:
    """What the estimator says the run sustains per GPU (module doc); `shape` the model's
    (solver.estimate.shape.infer_shape), the GPU's figures from its gpus.csv row, `mfu` its
    default_mfu (or a figure being tried)."""
    peak = peak_tflops(bf16_tflops, fp8_tflops, run.precision)
    layout = minimal_layout(shape, "pretrain", memory_gb, gpus_per_node=GPUS_PER_NODE, max_gpus=1 << 16,
                            nvlink=nvlink)
    notes = []
    if layout is None:
        raise ValueError(f"published run {run.run}: no layout holds the model on {run.gpu}")
    eff = layout_efficiency(mfu, tp=layout.tp, pp=layout.pp, hidden=shape.hidden, peak_tflops=peak, nvlink=nvlink)
    fabric = run.interconnect
    if fabric is None:
        fabric = UNSTATED_FABRIC
        notes.append(f"fabric not stated: read as {UNSTATED_FABRIC}")
    gpus = run.gpus
    if gpus is None:
        notes.append("GPU count not stated: no size tier")
    multi_node = gpus is None or gpus > GPUS_PER_NODE or layout.multi_node
    scale = 1.0 if gpus is None else scale_factor(fabric, gpus)
    slow = flops_factor("pretrain", True) / flops_factor("pretrain", False) if layout.recompute else 1.0
    tflops = peak * eff.sustained * fabric_factor(fabric, multi_node) * scale / slow
    return Estimated(tflops=tflops, sustained_mfu=eff.sustained, layout=layout.describe(), assumptions=notes)


def log_ratio(reported: float, estimated: float) -> float:
    """ln(reported ÷ estimated): the residual solver.estimate.spread is fitted to."""
    if not (reported > 0 and estimated > 0 and math.isfinite(reported) and math.isfinite(estimated)):
        raise ValueError("throughputs must be positive")
    return math.log(reported / estimated)


@dataclass(frozen=True)
class Comparison:
    """One run: its reported and estimated TFLOP/s per GPU, and the error of the estimated GPU-hours."""

    run: PublishedRun
    reported: float
    estimated: Estimated

    @property
    def ratio(self) -> float:
        """reported ÷ estimated throughput = estimated ÷ reported GPU-hours."""
        return self.reported / self.estimated.tflops

    @property
    def error(self) -> float:
        """Estimated GPU-hours ÷ reported − 1 (+0.2: the estimate asks 20 % more GPU-hours than the run took)."""
        return self.ratio - 1.0


def compare(run: PublishedRun, gpu, mfu: float | None = None) -> Comparison:
    """The run against the estimator on `gpu` (a solver.model.catalog.Gpu row: its figures and
    default_mfu, or `mfu` when a figure is being tried)."""
    shape = infer_shape(ModelSpec(params=run.params, active_params=run.active_params, seq_len=run.seq_len))
    peak = peak_tflops(gpu.bf16_tflops, gpu.fp8_tflops, run.precision)
    est = estimated_tflops(run, shape, memory_gb=gpu.memory_gb, bf16_tflops=gpu.bf16_tflops,
                           fp8_tflops=gpu.fp8_tflops, mfu=gpu.default_mfu if mfu is None else mfu,
                           nvlink=gpu.form != "pcie")
    return Comparison(run=run, reported=reported_tflops(run, peak), estimated=est)


SPLIT_SEED = 48
"""The held-out split's seed (issue 48): fixed, so the benchmark's held-out third is the same every run."""


def split_by_source(source_ids, seed: int = SPLIT_SEED, held_out: float = 1 / 3) -> tuple[list[str], list[str]]:
    """(fit, held-out) sources: the distinct source ids sorted, shuffled with `seed`, the last
    ⌈held_out × count⌉ held out. Runs of one source share a codebase and a cluster, so they go
    to the same side (issue 48: split by paper, not by row)."""
    ids = sorted(set(source_ids))
    random.Random(seed).shuffle(ids)
    cut = len(ids) - math.ceil(held_out * len(ids))
    return sorted(ids[:cut]), sorted(ids[cut:])
