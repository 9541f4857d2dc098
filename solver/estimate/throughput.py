"""Sustained per-GPU throughput: peak × MFU × deratings.

``effective_tflops = peak × mfu × fabric × scale × perf × (1 − spot_loss)``.

The MFU the user states (seed 000: 30–50 %, default 40 %; seed 002: 60 %) is taken
to be what a well-run job achieves on a normal InfiniBand cluster of up to a few
hundred GPUs, the setting those figures come from. The factors here only derate
from that baseline: a slower fabric, a larger scale, cards below rated speed, and
time lost to spot pre-emption. Every factor is an engineering assumption unless
it names a source, and every one can be overridden by passing a different number.
"""

from __future__ import annotations

import math

INTERCONNECTS = ("ib_ndr", "ib_hdr", "roce", "ethernet")
PRECISIONS = ("bf16", "fp16", "fp8")

_FABRIC = {"ib_ndr": 1.0, "ib_hdr": 1.0, "roce": 0.95, "ethernet": 0.6}
"""Multi-node derating per fabric.

- InfiniBand NDR 400 Gb/s / HDR 200 Gb/s: 1.0, the stated MFU already includes
  normal multi-node communication (seed 000's worked example runs on IB HDR).
- RoCE: 0.95. Engineering assumption: RDMA like IB, but a lossless Ethernet fabric
  (PFC/ECN) loses a little to congestion control and tail latency (seed 000: "good
  value, needs switches with lossless support").
- Ethernet (TCP, no RDMA): 0.6. Engineering assumption: data-parallel gradient
  all-reduce over 25–100 GbE TCP moves 2·(n−1)/n × 2 bytes/param per step and
  cannot overlap fully with compute; seed 003 scenario C (multiple sites without a
  dedicated link: "the more compute, the slower") is the extreme case. Override it
  with a measurement when one exists (seed 003 Q2).
"""

SCALE_TIERS: dict[str, tuple[tuple[int, float], ...]] = {
    "ib_ndr": ((256, 1.0), (512, 0.92), (1024, 0.85), (4096, 0.75)),
    "ib_hdr": ((256, 1.0), (512, 0.92), (1024, 0.85), (4096, 0.75)),
    "roce": ((128, 1.0), (256, 0.95), (512, 0.88), (1024, 0.8), (4096, 0.68)),
    "ethernet": ((16, 1.0), (64, 0.85), (256, 0.7), (1024, 0.55), (4096, 0.4)),
}
"""(max_gpus, factor) tiers: a job of n GPUs takes the first tier with n ≤ max_gpus.

Seed 000: "beyond a threshold such as 512 cards the share of communication grows
and the speed-up falls". The IB figures are engineering assumptions for rented
clusters without a tuned SuperPOD topology; well-tuned fleets do better (e.g.
MegaScale, Jiang et al. 2024, Table 2: 55 % MFU at 12,288 GPUs vs 59 % at 256,
i.e. ≈ 0.93). RoCE falls earlier and further, Ethernet much earlier. Jobs larger
than the last tier keep its factor (the planner caps jobs at 4096 GPUs).
"""


def _check_interconnect(interconnect: str) -> None:
    if interconnect not in INTERCONNECTS:
        raise ValueError(f"unknown interconnect {interconnect!r}; expected one of {INTERCONNECTS}")


def fabric_factor(interconnect: str, multi_node: bool) -> float:
    """Throughput multiplier for the fabric between nodes; 1.0 inside one node.

    Inside a node traffic stays on NVLink or PCIe whatever the fabric is
    (figures and reasons on ``_FABRIC``).
    """
    _check_interconnect(interconnect)
    return _FABRIC[interconnect] if multi_node else 1.0


def scale_tiers(interconnect: str) -> tuple[tuple[int, float], ...]:
    """The (max_gpus, factor) tiers for ``interconnect``, ascending in max_gpus."""
    _check_interconnect(interconnect)
    return SCALE_TIERS[interconnect]


def scale_factor(interconnect: str, gpus: int) -> float:
    """Throughput multiplier for running one synchronous job on ``gpus`` GPUs."""
    if gpus < 1:
        raise ValueError(f"gpus must be ≥ 1, got {gpus!r}")
    tiers = scale_tiers(interconnect)
    for max_gpus, factor in tiers:
        if gpus <= max_gpus:
            return factor
    return tiers[-1][1]


MAX_SPOT_LOSS = 0.9


def spot_loss(
    preemptions_per_day: float,
    checkpoint_interval_hours: float = 1.0,
    restart_hours: float = 0.25,
) -> float:
    """Fraction of wall time lost to pre-emptions, capped at 0.9.

    A pre-emption at a uniformly random moment loses on average half a checkpoint
    interval of work, then the restart (re-queue, reload, warm-up) adds
    ``restart_hours``: loss = rate/24 · (interval/2 + restart). The cap keeps the
    derived throughput positive; above it spot is useless anyway. Seed 002: spot
    only with checkpoint-resume.
    """
    values = (preemptions_per_day, checkpoint_interval_hours, restart_hours)
    if any(not math.isfinite(v) or v < 0 for v in values):
        raise ValueError("pre-emption rate, checkpoint interval and restart time must be ≥ 0")
    lost_hours_per_day = preemptions_per_day * (checkpoint_interval_hours / 2 + restart_hours)
    return min(lost_hours_per_day / 24.0, MAX_SPOT_LOSS)


def _check_fraction(name: str, value: float, *, allow_zero: bool) -> None:
    low_ok = value >= 0 if allow_zero else value > 0
    if not (math.isfinite(value) and low_ok and value <= 1):
        bounds = "[0, 1]" if allow_zero else "(0, 1]"
        raise ValueError(f"{name} must be in {bounds}, got {value!r}")


def effective_tflops(
    peak_tflops: float,
    mfu: float,
    *,
    fabric: float = 1.0,
    scale: float = 1.0,
    perf: float = 1.0,
    spot_loss: float = 0.0,
) -> float:
    """Sustained TFLOPS per GPU: peak × mfu × fabric × scale × perf × (1 − spot_loss).

    Seed 000: 312 × 0.40 = 124.8 (the seed rounds to 125). ``perf`` is the
    card's speed relative to rated (seed 002: degraded cards run 10 %+ slower;
    contracts should guarantee ≥ 0.95).
    """
    if not (math.isfinite(peak_tflops) and peak_tflops > 0):
        raise ValueError(f"peak_tflops must be positive, got {peak_tflops!r}")
    _check_fraction("mfu", mfu, allow_zero=False)
    _check_fraction("fabric", fabric, allow_zero=False)
    _check_fraction("scale", scale, allow_zero=False)
    _check_fraction("perf", perf, allow_zero=False)
    _check_fraction("spot_loss", spot_loss, allow_zero=True)
    if spot_loss >= 1:
        raise ValueError("spot_loss must be < 1")
    return peak_tflops * mfu * fabric * scale * perf * (1.0 - spot_loss)


def peak_tflops(bf16_tflops: float, fp8_tflops: float | None, precision: str) -> float:
    """Dense peak for the training precision.

    bf16 and fp16 run on the same tensor cores at the same rate on every GPU we
    catalogue (e.g. A100 312 TFLOPS both), so both use the bf16 figure; fp8
    needs hardware support (Hopper, Ada) and raises ValueError without it.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; expected one of {PRECISIONS}")
    if precision == "fp8":
        if fp8_tflops is None:
            raise ValueError("this GPU has no FP8 tensor cores; train in bf16 instead")
        return fp8_tflops
    return bf16_tflops
