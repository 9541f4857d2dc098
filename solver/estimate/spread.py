"""How far a run's throughput may fall from the estimate: the published record as an interval.

The estimator gives one figure per job (solver.estimate.throughput). Against published training
runs (catalogs/reference/published_runs.csv, compared in solver.estimate.published) the ratio
R = achieved ÷ estimated throughput spreads widely: ln R is read as normal with mean `MU` and
standard deviation `SIGMA`, fitted (mean and sample standard deviation) to every run of that
file at the GPUs' default MFU by tests/bench/bench_estimate.py (its last line; the run is
recorded in tests/bench/HISTORY.md, and tests/estimate/test_published_runs.py fails when the
file and these figures disagree). Whole-run GPU-hours count restarts and failures, which a
problem's `redundancy` covers again: the probabilities here err low, not high.

What follows from R:

- `gpu_hours_interval`: GPU-hours = work ÷ throughput, so the P10 of the hours is the estimate
  ÷ the P90 of R and the P90 of the hours the estimate ÷ the P10 of R (`gpuplan estimate`).
- `throughput_factor(confidence)`: the factor of the estimated throughput a run reaches with
  probability `confidence`, exp(MU + SIGMA·Φ⁻¹(1 − confidence)), never above 1 (the planner
  plans no faster than the estimate): a problem's or job's `confidence:` plans with it.
- `meets_probability(fraction)`: P(R ≥ fraction), the probability that a run is fast enough
  when the plan carries the job down to `fraction` of the estimate (its MFU margin times the
  factor it was planned with).
- `quantile_of(factor)`: the share of runs slower than `factor` × the estimate (what `--robust`'s
  factor corresponds to).

A job whose MFU was measured (`gpuplan calibrate`, written as the job's `mfu` with
`mfu_measured: true`) is not read against the literature but against its measurement:
`Spread.measured()`, centred on the measured figure with `MEASURED_P90` (seed 002: a measured
baseline is good to 10 %, solver.tools.calibrate's BASELINE_TOLERANCE) as its P10–P90 half-width.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

MU = 0.0688
"""Mean of ln(achieved ÷ estimated) over the published runs at the default MFUs (module doc)."""
SIGMA = 0.3792
"""Its standard deviation (module doc)."""
RUNS = 46
"""How many runs MU and SIGMA were fitted to."""

Z90 = 1.2815515655446004
"""Φ⁻¹(0.9): P10 and P90 of a normal lie at mean ∓ Z90 standard deviations."""
MEASURED_P90 = 0.10
"""A calibrated job's P10–P90 half-width in throughput: ±10 % (seed 002; solver.tools.calibrate.BASELINE_TOLERANCE)."""

_NORMAL = statistics.NormalDist()


def fit(log_ratios: list[float]) -> tuple[float, float]:
    """(mean, sample standard deviation) of ln(achieved ÷ estimated) values; at least two."""
    if len(log_ratios) < 2:
        raise ValueError("a spread needs at least two runs")
    return statistics.fmean(log_ratios), statistics.stdev(log_ratios)


@dataclass(frozen=True)
class Spread:
    """ln R ~ Normal(mu, sigma); `source` says whose spread it is (published runs or a measurement)."""

    mu: float = MU
    sigma: float = SIGMA
    source: str = "published"

    @classmethod
    def measured(cls) -> "Spread":
        """A calibrated job's: centred on its measurement, ±MEASURED_P90 at P10 and P90."""
        return cls(mu=0.0, sigma=math.log(1 + MEASURED_P90) / Z90, source="measured")

    def ratio_at(self, q: float) -> float:
        """The q-quantile of R (q in (0, 1)): a share q of runs reach at most this × the estimate."""
        if not 0 < q < 1:
            raise ValueError(f"a quantile lies in (0, 1), got {q!r}")
        return math.exp(self.mu + self.sigma * _NORMAL.inv_cdf(q))

    def gpu_hours_interval(self, gpu_hours: float) -> tuple[float, float]:
        """(P10, P90) of the GPU-hours a job takes when the estimate says `gpu_hours`."""
        return gpu_hours / self.ratio_at(0.9), gpu_hours / self.ratio_at(0.1)

    def throughput_factor(self, confidence: float) -> float:
        """The factor of the estimate a run reaches with probability `confidence`, at most 1."""
        if not 0 < confidence < 1:
            raise ValueError(f"confidence lies in (0, 1), got {confidence!r}")
        return min(1.0, self.ratio_at(1 - confidence))

    def meets_probability(self, fraction: float) -> float:
        """P(R ≥ fraction): a run is at least `fraction` × the estimate (0 < fraction)."""
        if not fraction > 0:
            raise ValueError(f"fraction must be > 0, got {fraction!r}")
        return 1 - _NORMAL.cdf((math.log(fraction) - self.mu) / self.sigma)

    def quantile_of(self, factor: float) -> float:
        """The share of runs slower than `factor` × the estimate: P(R < factor)."""
        return 1 - self.meets_probability(factor)


PUBLISHED = Spread()
"""The published runs' spread, the default for every job."""


def job_spread(measured: bool) -> Spread:
    """The spread a job is read against: its measurement's when calibrated, else the published runs'."""
    return Spread.measured() if measured else PUBLISHED


def planned_factor(confidence: float | None, measured: bool = False) -> float:
    """The factor of the estimated throughput a job is planned with: 1 without `confidence`."""
    return 1.0 if confidence is None else job_spread(measured).throughput_factor(confidence)


def job_factor(job) -> float:
    """The factor of the estimate a problem's job (solver.model.problem.Job) is planned with: its
    confidence's (its own or its problem's) quantile of its spread, 1 without one."""
    return planned_factor(job.planned_confidence, job.mfu_measured)


def deadline_reading(job, mfu_margin: float | None) -> dict:
    """What a plan says of a job beside its MFU margin (solver.model.plan.JobResult):
    `planned_factor`, `throughput_spread` (published | measured) and `deadline_probability`, the probability
    that the run is fast enough for the plan's rentals, P(R ≥ mfu_margin × planned factor);
    None without a margin."""
    spread = job_spread(job.mfu_measured)
    factor = job_factor(job)
    probability = None if mfu_margin is None else round(spread.meets_probability(max(mfu_margin, 1e-6) * factor), 4)
    return {"planned_factor": round(factor, 4), "throughput_spread": spread.source,
            "deadline_probability": probability}
