"""Calibration's measurement: step times from a training log (or a CSV of them) and an nvidia-smi
log read, and the MFU they give computed exactly as the planner counts it (the package's docstring
gives the formula). The writers of the number are solver.tools.calibrate.writers.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from solver.errors import ProblemError
from solver.estimate.flops import flops_factor
from solver.estimate.throughput import peak_tflops
from solver.model.catalog import Gpu

DEFAULT_WARMUP = 10
BASELINE_TOLERANCE = 0.10          # seed 002: a cost baseline good to within 10 %
FEW_STEPS = 100                    # seed 003 Q2: measure "a few hundred" steps
THROTTLE_RATIO = 0.90              # an SM clock below 90 % of the reference counts as throttled
THROTTLE_SHARE = 0.05              # warn when more than 5 % of busy samples were throttled
BUSY_UTIL_PCT = 50.0               # idle cards clock down legitimately: judge busy samples only
LOW_UTIL_PCT = 90.0
THROTTLE_BITS = 0x4 | 0x8 | 0x20 | 0x40 | 0x80
"""nvidia-smi clocks_event_reasons bits that slow a busy card: SW power cap (0x4), HW
slowdown (0x8), SW thermal (0x20), HW thermal (0x40), HW power brake (0x80). GPU idle
(0x1), application clocks (0x2) and sync boost (0x10) are not throttling."""

LOG_FORMATS = """\
step-time logs, one step per line (other lines are ignored):
  text:  any line with a step time: 'time/step 1.23s', 'step_time=1.23', 'step time: 1230ms',
         'sec/step 1.2' or Megatron-LM's 'elapsed time per iteration (ms): 1230.4'; the step number
         ('step 120', 'iteration 120/5000', 'step=120') is read when present
  CSV:   a header with a 'step' column and a time column: seconds, time, step_time, time_s,
         step_time_s (seconds) or ms, time_ms, step_time_ms (milliseconds)"""

_TIME_PATTERNS = (
    (re.compile(r"elapsed time per iteration \(ms\)\s*[:=]\s*([0-9.]+(?:e[-+]?\d+)?)", re.I), "ms"),
    (re.compile(r"(?:time/step|time per step|time_per_step|step[_ ]time|sec/step|s/step|seconds/step)"
                r"\s*[:=]?\s*([0-9.]+(?:e[-+]?\d+)?)\s*(ms|s|sec|seconds)?\b", re.I), None),
)
_STEP_PATTERN = re.compile(r"(?<![/\w])(?:global[_ ]step|step|iteration|iter)\s*[:=#]?\s*(\d+)(?![\d.])", re.I)
_CSV_TIME_COLUMNS = {"seconds": 1.0, "time": 1.0, "step_time": 1.0, "time_s": 1.0, "step_time_s": 1.0,
                     "sec": 1.0, "ms": 1e-3, "time_ms": 1e-3, "step_time_ms": 1e-3}


@dataclass(frozen=True)
class StepLog:
    """Step times of a run after the warm-up steps were dropped."""

    source: str
    format: str                     # "text" or "csv"
    seconds: list[float]            # per measured step, in log order
    first_step: int | None
    last_step: int | None
    warmup_skipped: int


def read_step_log(path: str | Path, warmup: int = DEFAULT_WARMUP) -> StepLog:
    """Step times from a training log or a CSV; the first `warmup` steps are dropped.

    Formats: see LOG_FORMATS. Warm-up steps (compilation, allocator growth, data-loader
    start) are the first `warmup` steps in the file's order, whatever their numbers.
    """
    path = Path(path)
    if not path.is_file():
        raise ProblemError("step-time log not found", file=str(path), fix="check the path")
    if warmup < 0:
        raise ProblemError("warm-up steps must be >= 0", key="--warmup", fix="e.g. --warmup 10")
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    first = next((ln for ln in lines if ln.strip()), "")
    header = [c.strip().lower() for c in first.split(",")]
    if "," in first and "step" in header:
        fmt, steps = "csv", _csv_steps(path, lines)
    else:
        fmt, steps = "text", _text_steps(path, lines)
    if not steps:
        raise ProblemError("no step times found", file=str(path), fix=LOG_FORMATS.replace("\n", " "))
    if len(steps) <= warmup:
        raise ProblemError(f"only {len(steps)} step times, all inside the {warmup} warm-up steps", file=str(path),
                           fix="log more steps (a few hundred, before extrapolating) or lower --warmup")
    kept = steps[warmup:]
    numbers = [s for s, _ in kept if s is not None]
    return StepLog(str(path), fmt, [t for _, t in kept], min(numbers) if numbers else None,
                   max(numbers) if numbers else None, warmup)


def _text_steps(path: Path, lines: list[str]) -> list[tuple[int | None, float]]:
    out: list[tuple[int | None, float]] = []
    for number, line in enumerate(lines, 1):
        for pattern, unit in _TIME_PATTERNS:
            match = pattern.search(line)
            if match:
                break
        else:
            continue
        value = float(match.group(1))
        unit = unit or (match.group(2) or "s").lower()
        seconds = value / 1000 if unit == "ms" else value
        if not seconds > 0:
            raise ProblemError(f"step time {match.group(0)!r} is not positive", file=str(path),
                               key=f"line {number}", fix="remove the line or fix the logger")
        rest = line[:match.start()] + " " + line[match.end():]
        step = _STEP_PATTERN.search(rest)
        out.append((int(step.group(1)) if step else None, seconds))
    return out


def _csv_rows(path: Path, text: io.StringIO, **options) -> list[list[str]]:
    """The rows of a measured CSV; a cell past the csv module's 131,072-character limit (a
    30-MB line crashed calibrate) or a broken quote is a ProblemError naming the line."""
    reader = csv.reader(text, **options)
    try:
        return list(reader)
    except csv.Error as exc:
        raise ProblemError(f"not a readable CSV log ({exc})", file=str(path), key=f"line {reader.line_num}",
                           fix="give the file as the tool wrote it (one sample per line)") from None


def _csv_steps(path: Path, lines: list[str]) -> list[tuple[int | None, float]]:
    rows = _csv_rows(path, io.StringIO("\n".join(ln for ln in lines if ln.strip())))
    header = [c.strip().lower() for c in rows[0]]
    time_cols = [c for c in header if c in _CSV_TIME_COLUMNS]
    if not time_cols:
        raise ProblemError("no step-time column", file=str(path), key="line 1",
                           fix=f"name one column {', '.join(sorted(_CSV_TIME_COLUMNS))}")
    step_i, time_i = header.index("step"), header.index(time_cols[0])
    scale = _CSV_TIME_COLUMNS[time_cols[0]]
    out: list[tuple[int | None, float]] = []
    for number, row in enumerate(rows[1:], 2):
        try:
            step = int(float(row[step_i])) if row[step_i].strip() else None
            seconds = float(row[time_i]) * scale
        except (ValueError, IndexError):
            raise ProblemError(f"not a number in column {time_cols[0]!r} or 'step'", file=str(path),
                               key=f"line {number}", fix="one step per row: step,seconds") from None
        if not seconds > 0:
            raise ProblemError("step time must be > 0", file=str(path), key=f"line {number}, column {time_cols[0]}",
                               fix="remove the line, or give the step's time in seconds")
        out.append((step, seconds))
    return out


@dataclass(frozen=True)
class SmiSummary:
    """What an nvidia-smi CSV log says about the measured run."""

    samples: int
    gpus: int
    mean_utilization_pct: float | None
    mean_power_w: float | None
    median_sm_mhz: float | None
    reference_sm_mhz: float | None      # clocks.max.sm when logged, else the highest SM clock seen
    throttled_share: float | None       # of busy samples
    warnings: list[str] = field(default_factory=list)


def read_nvidia_smi(path: str | Path, tdp_w: float | None = None) -> SmiSummary:
    """Summarise `nvidia-smi --query-gpu=timestamp,index,utilization.gpu,power.draw,clocks.sm --format=csv -l 5`.

    Column headers carry units in brackets ('power.draw [W]') and cells carry them too
    ('385.12 W'); '[N/A]' cells are skipped. Optional columns: clocks.max.sm (the
    reference for throttling, else the highest SM clock in the log) and
    clocks_event_reasons.active / clocks_throttle_reasons.active (bit mask).
    """
    path = Path(path)
    if not path.is_file():
        raise ProblemError("nvidia-smi log not found", file=str(path), fix="check the path")
    rows = [r for r in _csv_rows(path, io.StringIO(path.read_text(encoding="utf-8", errors="replace")),
                                 skipinitialspace=True) if r and any(c.strip() for c in r)]
    if not rows:
        raise ProblemError("empty nvidia-smi log", file=str(path), fix="log with --format=csv (header included)")
    header = [re.sub(r"\s*\[.*?\]\s*$", "", c.strip()).lower() for c in rows[0]]
    wanted = {"utilization.gpu", "power.draw", "clocks.sm"}
    if not wanted & set(header):
        raise ProblemError("no utilization.gpu, power.draw or clocks.sm column", file=str(path), key="line 1",
                           fix="nvidia-smi --query-gpu=timestamp,index,utilization.gpu,power.draw,clocks.sm "
                               "--format=csv -l 5 > smi.csv")
    columns: dict[str, list[float | None]] = {name: [] for name in header}
    for number, row in enumerate(rows[1:], 2):
        if len(row) != len(header):
            raise ProblemError(f"{len(row)} cells, header has {len(header)}", file=str(path), key=f"line {number}",
                               fix="one sample per line, as nvidia-smi --format=csv writes it")
        for name, cell in zip(header, row):
            columns[name].append(_smi_value(name, cell))
    util, power, sm = (columns.get(k, []) for k in ("utilization.gpu", "power.draw", "clocks.sm"))
    max_sm = columns.get("clocks.max.sm", [])
    reasons = columns.get("clocks_event_reasons.active") or columns.get("clocks_throttle_reasons.active") or []
    n = len(rows) - 1
    gpus = len({c for c in columns.get("index", []) if c is not None}) or (1 if n else 0)
    mean_util = _mean(util)
    mean_power = _mean(power)
    seen = [v for v in sm if v is not None]
    reference = _mean(max_sm) if any(v is not None for v in max_sm) else (max(seen) if seen else None)
    throttled = None
    warnings: list[str] = []
    busy = [i for i in range(n) if not util or (util[i] is not None and util[i] >= BUSY_UTIL_PCT)]
    if seen and reference:
        judged = [i for i in busy if sm[i] is not None]
        slow = [i for i in judged if sm[i] < THROTTLE_RATIO * (max_sm[i] if max_sm and max_sm[i] else reference)]
        throttled = len(slow) / len(judged) if judged else None
    if reasons:
        flagged = [i for i in busy if reasons[i] is not None and int(reasons[i]) & THROTTLE_BITS]
        share = len(flagged) / len(busy) if busy else 0.0
        throttled = max(throttled or 0.0, share)
    if throttled is not None and throttled > THROTTLE_SHARE:
        warnings.append(f"SM clocks throttled in {throttled:.0%} of busy samples (power or thermal limits): "
                        "the measured MFU is below what a well-cooled card reaches; check cooling and power "
                        "caps, and a contract's performance clause (commonly >= 95 % of rated)")
    if mean_util is not None and mean_util < LOW_UTIL_PCT:
        warnings.append(f"mean GPU utilisation {mean_util:.0f}% < {LOW_UTIL_PCT:.0f}%: the cards waited on input "
                        "or communication; the measured MFU includes that wait")
    if mean_power is not None and tdp_w and mean_power > 1.02 * tdp_w:
        warnings.append(f"mean power {mean_power:.0f} W is above the catalog TDP {tdp_w:.0f} W: check --gpu")
    return SmiSummary(n, gpus, mean_util, mean_power, float(np.median(seen)) if seen else None, reference,
                      throttled, warnings)


def _smi_value(name: str, cell: str) -> float | None:
    cell = cell.strip()
    if not cell or cell.startswith("[") or name == "timestamp":
        return None
    if name.endswith("reasons.active"):
        try:
            return float(int(cell, 16))
        except ValueError:
            return None
    try:
        return float(cell.split()[0])
    except ValueError:
        return None


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


@dataclass(frozen=True)
class Calibration:
    """Measured MFU and how it compares with what the planner assumes."""

    gpu: str
    precision: str
    kind: str
    recompute: bool
    params: float                     # N counted: active parameters for MoE
    flops_per_token: float
    peak_tflops: float
    tokens_per_sec_per_gpu: float     # median over measured steps
    mfu: float
    mfu_p10: float | None
    mfu_p90: float | None
    steps: int | None                 # measured steps (None for a given tokens/s)
    warmup_skipped: int | None
    achieved_tflops: float
    gpu_hours_per_billion_tokens: float
    assumed_mfu: float
    assumed_from: str                 # "job NAME mfu" or "gpus.csv default_mfu"
    deviation: float                  # measured / assumed − 1
    within_baseline: bool             # |deviation| <= 10 % (seed 002)
    mfu_with_attention: float | None = None
    job: str | None = None
    job_gpu_hours: float | None = None            # at the measured rate, no redundancy
    job_gpu_hours_assumed: float | None = None    # at the assumed MFU
    smi: SmiSummary | None = None
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def calibrate(gpu: Gpu, *, params: float, active_params: float | None = None, kind: str = "pretrain",
              precision: str = "bf16", recompute: bool = False, tokens_per_sec_per_gpu: float | None = None,
              step_log: StepLog | None = None, global_batch_tokens: float | None = None, gpus: int | None = None,
              assumed_mfu: float | None = None, assumed_from: str | None = None, layers: int | None = None,
              hidden: int | None = None, seq_len: int | None = None, job: str | None = None,
              job_tokens: float | None = None, smi: SmiSummary | None = None) -> Calibration:
    """Measured MFU from tokens/s per GPU, or from step times × tokens per step ÷ GPUs.

    Raises ProblemError for inconsistent inputs (both or neither throughput source,
    a step log without --global-batch-tokens or --gpus, an MFU above 1).
    """
    if (tokens_per_sec_per_gpu is None) == (step_log is None):
        raise ProblemError("give either a measured tokens/s per GPU or a step-time log", key="--log",
                           fix="--tokens-per-sec-per-gpu 3100, or --log train.log --global-batch-tokens 4194304 --gpus 8")
    _positive("--params", params)
    if kind == "preprocess":
        raise ProblemError("preprocess jobs have no c·N·D model to calibrate", key="kind",
                           fix="give a preprocess job its flops directly")
    try:
        factor = flops_factor(kind, recompute)
    except ValueError as exc:
        raise ProblemError(str(exc), key="--kind", fix="use one of the kinds in `gpuplan calibrate --help`") from None
    try:
        peak = peak_tflops(gpu.bf16_tflops, gpu.fp8_tflops, precision)
    except ValueError as exc:
        raise ProblemError(f"{gpu.gpu}: {exc}", key="--precision", fix="bf16 | fp16 | fp8 (fp8 needs an fp8_tflops "
                           "figure in gpus.csv)") from None
    n = active_params or params
    per_token = factor * n
    p10 = p90 = None
    steps = warm = None
    if step_log is not None:
        if global_batch_tokens is None or gpus is None:
            raise ProblemError("a step-time log needs the tokens per step and the GPU count",
                               key="--global-batch-tokens" if global_batch_tokens is None else "--gpus",
                               fix="--global-batch-tokens = global batch size × sequence length, "
                                   "--gpus = GPUs in the measured run")
        _positive("--global-batch-tokens", global_batch_tokens)
        _positive("--gpus", gpus)
        rates = np.array([global_batch_tokens / (s * gpus) for s in step_log.seconds])
        tps = float(np.median(rates))
        p10, p90 = (float(np.percentile(rates, q)) * per_token / (peak * 1e12) for q in (10, 90))
        steps, warm = len(step_log.seconds), step_log.warmup_skipped
    else:
        assert tokens_per_sec_per_gpu is not None
        _positive("--tokens-per-sec-per-gpu", tokens_per_sec_per_gpu)
        tps = tokens_per_sec_per_gpu
    achieved = per_token * tps / 1e12
    mfu = achieved / peak
    if mfu > 1:
        inputs = ("--gpus, --global-batch-tokens" if step_log is not None else "--tokens-per-sec-per-gpu (per GPU, "
                  "not per node or job)")
        raise ProblemError(f"measured MFU {mfu:.0%} exceeds 100% of the {precision} peak {peak:g} TFLOPS",
                           key="--gpus" if step_log is not None else "--tokens-per-sec-per-gpu",
                           fix=f"check {inputs}, --params and --gpu")
    warnings: list[str] = []
    if mfu > 0.75:
        warnings.append(f"MFU {mfu:.0%} is above what large dense training usually reaches (~60%): check the inputs")
    if steps is not None and steps < FEW_STEPS:
        warnings.append(f"only {steps} measured steps: measure a few hundred before extrapolating")
    if smi is not None:
        warnings.extend(smi.warnings)
    assumed = assumed_mfu if assumed_mfu is not None else gpu.default_mfu
    source = assumed_from or f"gpus.csv default_mfu of {gpu.gpu}"
    deviation = mfu / assumed - 1
    if abs(deviation) > BASELINE_TOLERANCE:
        warnings.append(f"measured MFU {mfu:.1%} is {deviation:+.0%} from the assumed {assumed:.0%} ({source}): "
                        "more than the 10% a measured cost baseline is good to; plans made with the assumed MFU misjudge GPU-hours")
    attention = None
    if layers and hidden and seq_len:
        # PaLM (Chowdhery et al. 2022) App. B: attention scores add 12·L·h·s per token to 6·N for
        # training, i.e. 2·c·L·h·s for the kind's factor c. Informational: the planner counts c·N.
        attention = (per_token + 2 * factor * layers * hidden * seq_len) * tps / (peak * 1e12)
    return Calibration(
        gpu=gpu.gpu, precision=precision, kind=kind, recompute=recompute, params=n, flops_per_token=per_token,
        peak_tflops=peak, tokens_per_sec_per_gpu=tps, mfu=mfu, mfu_p10=p10, mfu_p90=p90, steps=steps,
        warmup_skipped=warm, achieved_tflops=achieved, gpu_hours_per_billion_tokens=1e9 / tps / 3600,
        assumed_mfu=assumed, assumed_from=source, deviation=deviation,
        within_baseline=abs(deviation) <= BASELINE_TOLERANCE, mfu_with_attention=attention, job=job,
        job_gpu_hours=job_tokens / tps / 3600 if job_tokens else None,
        job_gpu_hours_assumed=job_tokens * per_token / (peak * 1e12 * assumed) / 3600 if job_tokens else None,
        smi=smi, warnings=warnings)


def _positive(key: str, value: float) -> None:
    if not (value > 0 and np.isfinite(value)):
        raise ProblemError(f"must be a positive number, got {value!r}", key=key, fix="give a finite number above 0")
