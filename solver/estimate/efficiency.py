"""Sustained MFU of one configuration: the GPU's figure, derated for the layout that runs on it.

    sustained = mfu × tensor_link × pipeline        (× fabric × scale: solver.estimate.throughput)

`mfu` is the GPU's `default_mfu` (or the job's `mfu`): what a well-run job sustains with its
tensor parallelism inside an NVLink node and a negligible pipeline bubble, the setting the
published figures come from (Narayanan et al. 2021, "Efficient Large-Scale Language Model
Training on GPU Clusters Using Megatron-LM", Table 1: 43–52 % on A100 with TP ≤ 8 inside a
DGX A100 node). The factors here derate from that setting; each is derived from a published
formula and published hardware figures, never fitted to a plan:

- `tensor_link`: tensor parallelism all-reduces each layer's activations twice forward and
  twice backward (Shoeybi et al. 2019, "Megatron-LM", §3, Fig. 3; Narayanan et al. 2021
  §3.3), on the critical path. A ring all-reduce of b·s·h values (2 bytes each) sends
  2(t−1)/t of them per GPU, so a layer's traffic is 16·b·s·h·(t−1)/t bytes per GPU per
  step, against 72·b·s·h²/t FLOPs of compute (Narayanan et al. 2021 §5.1, eq. for the
  FLOPs of a transformer layer without recompute). Time lost per unit compute:
  r = (2/9)·(t−1)·F/(h·B), F the FLOP/s one GPU achieves, B the link's bytes/s per
  direction. Factor (1 + r_NVLink)/(1 + r_link): 1 on NVLink cards, below 1 on PCIe
  (NVLink 3: 300 GB/s a direction, NVIDIA A100 datasheet, 600 GB/s bidirectional;
  PCIe 4.0 ×16: 32 GB/s a direction, NVIDIA L40S datasheet, 64 GB/s bidirectional).
- `pipeline`: the 1F1B schedule idles (p−1)/m of a step's ideal time with m micro-batches
  (Narayanan et al. 2021 §2.2.1); factor m/(m + p − 1) with m = max(8p, 48), bounds every
  run of Narayanan et al. Table 1 with pipelines keeps (micro-batches of one sequence:
  39.1B: p = 2, batch 1536 over 32 pipelines, m = 48; 145.6B: p = 8, DP 24, batch 2304,
  m = 96 = 12p; 1T: p = 64, DP 6, batch 3072, m = 512 = 8p). 1 without pipeline stages.

The inter-node fabric and the cluster's size stay in `throughput` (fabric factor and size
tiers), applied by the planner per fabric domain and tier.
"""

from __future__ import annotations

from dataclasses import dataclass

NVLINK_GBS = 300.0
"""NVLink 3 bandwidth per direction, GB/s (NVIDIA A100 datasheet: 600 GB/s bidirectional)."""
PCIE_GBS = 32.0
"""PCIe 4.0 ×16 bandwidth per direction, GB/s (NVIDIA L40S datasheet: 64 GB/s bidirectional)."""
MICROBATCHES_PER_STAGE = 8
"""Micro-batches per step per pipeline stage: the fewest in Narayanan et al. 2021, Table 1's runs."""
MICROBATCHES_LEAST = 48
"""Micro-batches per step of one pipeline: the fewest in Table 1's runs with pipelines (39.1B: a batch
of 1536 over 32 pipelines)."""


@dataclass(frozen=True)
class Efficiency:
    """The sustained MFU of one layout on one GPU and the factors that make it."""

    mfu: float              # the GPU's (or the job's) figure
    tensor_link: float
    pipeline: float

    @property
    def factor(self) -> float:
        return self.tensor_link * self.pipeline

    @property
    def sustained(self) -> float:
        return self.mfu * self.factor

    def text(self) -> str:
        """`35% × TP over PCIe 0.87 × pipeline 0.91 = 27.7%`; the bare figure when nothing derates it."""
        parts = [f"{self.mfu:.0%}"]
        if self.tensor_link < 1:
            parts.append(f"TP over PCIe {self.tensor_link:.2f}")
        if self.pipeline < 1:
            parts.append(f"pipeline bubble {self.pipeline:.2f}")
        return " × ".join(parts) + (f" = {self.sustained:.1%}" if len(parts) > 1 else "")


def _lost(tp: int, hidden: int, achieved_tflops: float, link_gbs: float) -> float:
    """Time lost to tensor-parallel all-reduces per unit of compute (module doc)."""
    return 2 / 9 * (tp - 1) * achieved_tflops * 1e12 / (hidden * link_gbs * 1e9)


def tensor_link_factor(tp: int, hidden: int, achieved_tflops: float, nvlink: bool) -> float:
    """Tensor parallelism's all-reduces on the card's own link, relative to NVLink (module doc)."""
    if tp < 1 or hidden < 1 or achieved_tflops <= 0:
        raise ValueError("tp and hidden must be ≥ 1 and the achieved TFLOPS positive")
    if tp == 1 or nvlink:
        return 1.0
    return (1 + _lost(tp, hidden, achieved_tflops, NVLINK_GBS)) / (1 + _lost(tp, hidden, achieved_tflops, PCIE_GBS))


def pipeline_factor(pp: int, per_stage: int = MICROBATCHES_PER_STAGE, least: int = MICROBATCHES_LEAST) -> float:
    """The 1F1B bubble with m = max(per_stage·p, least) micro-batches: m / (m + p − 1) (module doc)."""
    if pp < 1 or per_stage < 1 or least < 1:
        raise ValueError("pp, per_stage and least must be ≥ 1")
    m = max(per_stage * pp, least)
    return m / (m + pp - 1)


def layout_efficiency(mfu: float, *, tp: int, pp: int, hidden: int, peak_tflops: float,
                      nvlink: bool) -> Efficiency:
    """The sustained MFU of a TP×PP group on one GPU type (peak TFLOPS at the job's precision)."""
    if not 0 < mfu <= 1:
        raise ValueError(f"mfu must be in (0, 1], got {mfu!r}")
    return Efficiency(mfu=mfu, tensor_link=tensor_link_factor(tp, hidden, peak_tflops * mfu, nvlink),
                      pipeline=pipeline_factor(pp))
