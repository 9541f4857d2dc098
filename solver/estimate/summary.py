"""One job on one GPU type, end to end: FLOPs, layout, card-hours, GPUs for a deadline.

The GPU-hours come with the P10–P90 interval the published runs give around the estimator
(solver.estimate.spread; tests/bench/bench_estimate.py).

This is what `gpuplan estimate` prints: the seed articles' back-of-envelope sizing,
done with the real memory accounting instead of rules of thumb.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from solver.estimate.efficiency import layout_efficiency
from solver.estimate.flops import card_hours, flops_factor, training_flops
from solver.estimate.spread import PUBLISHED
from solver.estimate.memory import (BYTES_PER_GB, ModelShape, memory_per_gpu, minimal_layout, seed_rule_of_thumb_gb,
                                    smallest_layout)
from solver.estimate.throughput import effective_tflops, peak_tflops


@dataclass(frozen=True)
class JobEstimate:
    flops: float
    effective_tflops: float
    gpu_hours: float
    min_gpus: int | None          # for the deadline, redundancy included, whole groups; None: fits nowhere
    nodes: int | None
    gpus_whole_nodes: int | None
    memory_per_gpu_gb: float | None
    layout: dict | None
    layout_text: str
    fits_one_node: bool
    needs_rdma: bool
    seed_rule_gb: float
    memory_breakdown_gb: dict | None
    smallest_layout: dict | None = None   # fewest GPUs for one replica, recompute allowed (None: fits nowhere)
    smallest_layout_text: str = ""
    sustained_mfu: float | None = None    # the MFU derated for the layout, as the planner uses it
    mfu_text: str = ""                    # how: `35% × TP over PCIe 0.87 = 30.5%`
    seed_rule_text: str = ""              # the rule of thumb for this kind that seed_rule_gb applies
    gpu_hours_p10: float | None = None    # the published runs' spread around gpu_hours (solver.estimate.spread)
    gpu_hours_p90: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def nodes_for(gpus: int, group: int, gpus_per_node: int) -> int:
    """Nodes that hold `gpus` GPUs in model-parallel groups of `group`: a group smaller than a
    node stays inside one, so a node holds ⌊gpn ÷ group⌋ of them (2-GPU groups on 3-GPU nodes:
    one a node, not 1.5), as the planner's MILP places them (solver.milp.assignment.node_share)."""
    if group < gpus_per_node:
        return math.ceil((gpus // group) / (gpus_per_node // group) - 1e-9)
    return math.ceil(gpus / gpus_per_node - 1e-9)


def estimate_job(shape: ModelShape, tokens: float, *, kind: str, gpu_memory_gb: float, bf16_tflops: float,
                 fp8_tflops: float | None, mfu: float, precision: str = "bf16", days: float = 30,
                 redundancy: float = 0.0, gpus_per_node: int = 8, max_gpus: int = 4096,
                 micro_batch: int = 1, lora_rank: int = 16, trials: int = 1, nvlink: bool = True) -> JobEstimate:
    """Size a job on one GPU type; recompute, when the layout needs it, slows the rate.

    `layout` is the fastest group (minimal_layout: one node and no recompute first), the one
    the GPU count and rate use; `smallest_layout` the fewest GPUs that hold one replica
    with recompute allowed (smallest_layout), for "what is the least this can run on"."""
    flops = training_flops(shape.params, tokens, kind, active_params=shape.active_params, trials=trials)
    layout = minimal_layout(shape, kind, gpu_memory_gb, gpus_per_node=gpus_per_node, max_gpus=max_gpus,
                            micro_batch=micro_batch, lora_rank=lora_rank, nvlink=nvlink)
    peak = peak_tflops(bf16_tflops, fp8_tflops, precision)
    sustained = None if layout is None else layout_efficiency(mfu, tp=layout.tp, pp=layout.pp, hidden=shape.hidden,
                                                              peak_tflops=peak, nvlink=nvlink)
    eff = effective_tflops(peak, mfu if sustained is None else sustained.sustained)
    if layout is not None and layout.recompute:
        eff /= flops_factor(kind, True) / flops_factor(kind, False)
    smallest = smallest_layout(shape, kind, gpu_memory_gb, gpus_per_node=gpus_per_node, max_gpus=max_gpus,
                               micro_batch=micro_batch, lora_rank=lora_rank, nvlink=nvlink)
    hours = card_hours(flops, eff)
    low, high = PUBLISHED.gpu_hours_interval(hours)
    group = layout.gpus if layout else 1
    raw = hours * (1 + redundancy) / (days * 24)
    gpus = max(group, math.ceil(raw / group - 1e-9) * group)
    nodes = nodes_for(gpus, group, gpus_per_node)
    breakdown = None
    if layout is not None:
        mem = memory_per_gpu(shape, kind, tp=layout.tp, pp=layout.pp, dp=layout.dp, zero=layout.zero,
                             recompute=layout.recompute, micro_batch=micro_batch, lora_rank=lora_rank)
        breakdown = {k: round(v, 2) for k, v in asdict(mem).items()}
    return JobEstimate(
        flops=flops, effective_tflops=eff, gpu_hours=hours,  # no GPU count for a job no layout holds
        min_gpus=gpus if layout else None, nodes=nodes if layout else None,
        gpus_whole_nodes=nodes * gpus_per_node if layout else None,
        memory_per_gpu_gb=round(layout.memory_per_gpu_gb, 2) if layout else None,
        layout={k: v for k, v in asdict(layout).items()} if layout else None,
        layout_text=layout.describe() if layout else layout_text_none(max_gpus, gpu_memory_gb),
        fits_one_node=bool(layout and not layout.multi_node), needs_rdma=bool(layout and layout.multi_node),
        seed_rule_gb=rule_of_thumb(shape.params, kind)[0], memory_breakdown_gb=breakdown,
        smallest_layout=asdict(smallest) if smallest else None,
        smallest_layout_text=smallest.describe() if smallest else layout_text_none(max_gpus, gpu_memory_gb),
        sustained_mfu=None if sustained is None else sustained.sustained,
        mfu_text=f"{mfu:.0%}" if sustained is None else sustained.text(),
        seed_rule_text=rule_of_thumb(shape.params, kind)[1], gpu_hours_p10=low, gpu_hours_p90=high)


def rule_of_thumb(params: float, kind: str) -> tuple[float, str]:
    """The rule of thumb that applies to the job's kind (GB, and the rule in words), shown beside
    the real accounting, never used by it.

    - full training (pretrain, full_finetune, sweep): seed 000's params × 2 × 2 B (far too low:
      Adam states alone are 16 B a parameter; seed_rule_of_thumb_gb);
    - lora and inference: the frozen BF16 weights, params × 2 B (Hu et al. 2021, LoRA §4.2: only
      the adapters train, the weights need no gradients or optimizer states);
    - qlora: 4-bit weights, params × 0.5 B (Dettmers et al. 2023, QLoRA §1: a 65B model
      fine-tuned in under 48 GB, against more than 780 GB in 16-bit)."""
    if kind == "qlora":
        return params * 0.5 / BYTES_PER_GB, "params × 0.5 B (4-bit weights)"
    if kind in ("lora", "inference"):
        return params * 2 / BYTES_PER_GB, "params × 2 B (frozen BF16 weights)"
    return seed_rule_of_thumb_gb(params), "params × 2 × 2 B (the rental guides' rule)"


def layout_text_none(max_gpus: int, gpu_memory_gb: float) -> str:
    return f"does not fit on {max_gpus} GPUs of {gpu_memory_gb:g} GB"
