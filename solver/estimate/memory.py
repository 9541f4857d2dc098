"""GPU memory per device: model states, activations, and the smallest layout that fits.

Accounting, per GPU, in GB = 1e9 bytes:

- Model states (Rajbhandari et al. 2020, "ZeRO", §3 and §5.1, Fig. 1): mixed-precision
  Adam keeps 2 bytes of BF16 weights, 2 bytes of BF16 gradients and K = 12 bytes of
  FP32 master weights, momentum and variance per parameter: 16 bytes/param. Tensor
  and pipeline parallelism split them over tp·pp; ZeRO stage 1/2/3 further shards
  optimizer / +gradients / +weights over dp (ZeRO §5.1: P_os, P_os+g, P_os+g+p).
  DeepSpeed's own estimator (``estimate_zero3_model_states_mem_needs``) budgets
  18·P/G plus 4·largest-layer for ZeRO-3; the extra buffers are left to
  ``USABLE_FRACTION`` here.
- Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
  Transformer Models", §4.1 eq. 1 and §4.2.2 eq. 4): s·b·h·(34 + 5·a·s/h) bytes per
  layer, divided by t with tensor + sequence parallelism. Flash attention never
  stores the a·s² score matrix, so the 5·a·s/h term drops: 34·s·b·h/t. Full
  recomputation stores only each layer's input, 2·s·b·h/t (§4.3, "full activation
  recomputation"), plus one layer's full activations while it is recomputed. The
  cross-entropy logits add 4·s·b·v/t (§4.3, output layer). Sequence parallelism is
  assumed whenever tp > 1 (Megatron-LM's default with tensor parallelism).
- Pipeline (Korthikanti §4.2.3; Narayanan et al. 2021 §2.2 1F1B): the first stage
  keeps p micro-batches in flight, each over L/p layers, so it stores L layers'
  worth of activations whatever p is; pipeline parallelism therefore shrinks model
  states but not activations. Assumes ≥ p micro-batches per step.
- LoRA / QLoRA (Hu et al. 2021; Dettmers et al. 2023 §3): frozen weights have no
  gradients or optimizer states; adapters carry the full 16 bytes/param.
- Inference: BF16 weights plus the KV cache, no gradients or optimizer.

No CPU/NVMe offload (ZeRO-Offload/Infinity) is modelled: a job that needs it does
not fit here, which is the conservative answer for a rental decision.
"""

from __future__ import annotations

import functools

import itertools
from dataclasses import dataclass

BYTES_PER_GB = 1e9

WEIGHT_BYTES = 2.0
"""BF16 working copy of each weight (ZeRO §3: 2Ψ)."""
GRADIENT_BYTES = 2.0
"""BF16 gradient per trained weight (ZeRO §3: 2Ψ)."""
OPTIMIZER_BYTES = 12.0
"""FP32 master weight + Adam momentum + variance (ZeRO §3: K = 12)."""

NF4_BYTES_PER_PARAM = 0.5 + 0.127 / 8
"""4-bit NF4 weight plus double-quantised constants: 0.127 bits/param (QLoRA §3,
"Double Quantization": 8/64 + 32/(64·256) bits)."""

ACTIVATION_BYTES_PER_SBH = 34.0
"""Korthikanti et al. 2022 eq. 1 without the 5as/h score term (flash attention)."""
RECOMPUTE_BYTES_PER_SBH = 2.0
"""Layer input kept under full recomputation (Korthikanti et al. 2022 §4.3)."""
LOGIT_BYTES_PER_SBV = 4.0
"""FP32 logits for the cross-entropy (Korthikanti et al. 2022 §4.3: 4sbv/t)."""
KV_BYTES = 2.0
"""BF16 keys and values in the inference KV cache."""

LORA_MATRICES_PER_LAYER = 4
"""Assumption: adapters on the four attention projections q, k, v, o (each h×h),
as in Hu et al. 2021 §7.1. QLoRA (§4) puts them on every linear layer; at ranks
≤ 64 the difference is < 1 GB even for 65B, so the lighter default is kept."""

OVERHEAD_GB = 1.5
"""CUDA context, cuBLAS/NCCL workspaces and framework buffers: an engineering
figure (a bare PyTorch CUDA context alone is ~0.3–0.5 GB; NCCL and cuBLAS
workspaces add the rest)."""

USABLE_FRACTION = 0.92
"""Share of a card's nominal memory a job can count on: the caching allocator's
fragmentation, ZeRO-3 gather/prefetch buffers and temporary spikes take the
rest. Engineering assumption; 8 % of 80 GB is ~6 GB of headroom."""

TRAINING_KINDS = ("pretrain", "full_finetune", "sweep", "lora", "qlora")
MEMORY_KINDS = TRAINING_KINDS + ("inference",)
TENSOR_PARALLEL_SIZES = (1, 2, 4, 8)


@dataclass(frozen=True)
class ModelShape:
    """A decoder-only transformer's size.

    ``params`` counts every stored weight (for MoE: all experts); ``active_params``
    is what one token touches (MoE only; used by ``flops``, not memory).
    """

    params: float
    layers: int
    hidden: int
    heads: int
    seq_len: int
    active_params: float | None = None
    vocab: int = 32000

    def __post_init__(self) -> None:
        for name in ("params", "layers", "hidden", "heads", "seq_len", "vocab"):
            if not getattr(self, name) > 0:
                raise ValueError(f"ModelShape.{name} must be positive")
        if self.active_params is not None and not 0 < self.active_params <= self.params:
            raise ValueError("ModelShape.active_params must be in (0, params]")


@dataclass(frozen=True)
class MemoryBreakdown:
    """Memory per GPU in GB (1e9 bytes); ``total_gb`` is the sum of the parts.

    For inference, ``activations_gb`` holds the KV cache.
    """

    weights_gb: float
    gradients_gb: float
    optimizer_gb: float
    activations_gb: float
    overhead_gb: float
    total_gb: float


@dataclass(frozen=True)
class Layout:
    """The smallest model-parallel group that holds one replica of a job.

    ``gpus = tp·pp·dp``; dp here is only the ZeRO sharding degree needed for
    memory, the planner may add more data-parallel replicas for speed.
    """

    gpus: int
    tp: int
    pp: int
    dp: int
    zero: int
    recompute: bool
    memory_per_gpu_gb: float
    multi_node: bool

    def describe(self) -> str:
        """Human label of the group, e.g. ``TP2×PP1×DP4, ZeRO-3, recompute``."""
        parts = [f"TP{self.tp}×PP{self.pp}×DP{self.dp}"]
        if self.zero:
            parts.append(f"ZeRO-{self.zero}")
        if self.recompute:
            parts.append("recompute")
        return ", ".join(parts)

    def label(self, replicas: int) -> str:
        """A job running `replicas` copies of this group, e.g. ``20 replicas of TP2×PP1 (DP20)``.

        DP is the job's whole data-parallel degree: replicas × the group's own ZeRO sharding
        degree (a group of TP2×PP1 sharded over 4 by ZeRO-3, five times, is DP20)."""
        copies = f"{replicas} replica{'s' if replicas != 1 else ''} of TP{self.tp}×PP{self.pp}"
        if self.dp > 1:
            copies += f" sharded over {self.dp}"
        parts = [f"{copies} (DP{replicas * self.dp})"]
        if self.zero:
            parts.append(f"ZeRO-{self.zero}")
        if self.recompute:
            parts.append("recompute")
        return ", ".join(parts)


def lora_adapter_params(shape: ModelShape, rank: int) -> float:
    """Trainable LoRA parameters: 2·r·h per adapted h×h matrix (A: h×r, B: r×h,
    Hu et al. 2021 §4.1) × ``LORA_MATRICES_PER_LAYER`` × layers."""
    if rank < 1:
        raise ValueError(f"lora_rank must be ≥ 1, got {rank!r}")
    return 2.0 * rank * shape.hidden * LORA_MATRICES_PER_LAYER * shape.layers


def _state_bytes(shape: ModelShape, kind: str, lora_rank: int) -> tuple[float, float, float]:
    """Unsharded (weights, gradients, optimizer) bytes of one model replica."""
    p = shape.params
    if kind == "inference":
        return WEIGHT_BYTES * p, 0.0, 0.0
    if kind in ("lora", "qlora"):
        adapters = lora_adapter_params(shape, lora_rank)
        frozen = (NF4_BYTES_PER_PARAM if kind == "qlora" else WEIGHT_BYTES) * p
        return (
            frozen + WEIGHT_BYTES * adapters,
            GRADIENT_BYTES * adapters,
            OPTIMIZER_BYTES * adapters,
        )
    return WEIGHT_BYTES * p, GRADIENT_BYTES * p, OPTIMIZER_BYTES * p


def _training_activation_bytes(
    shape: ModelShape, tp: int, recompute: bool, micro_batch: int
) -> float:
    """Korthikanti et al. 2022 activations for L layers (1F1B first stage) + logits."""
    sbh = shape.seq_len * micro_batch * shape.hidden
    per_layer = ACTIVATION_BYTES_PER_SBH * sbh / tp
    if recompute:
        # Layer inputs for all L layers, plus one layer rebuilt in full.
        layers = shape.layers * RECOMPUTE_BYTES_PER_SBH * sbh / tp + per_layer
    else:
        layers = shape.layers * per_layer
    logits = LOGIT_BYTES_PER_SBV * shape.seq_len * micro_batch * shape.vocab / tp
    return layers + logits


def kv_cache_bytes(shape: ModelShape, micro_batch: int, tp: int = 1, pp: int = 1) -> float:
    """KV cache: 2 (K and V) · layers · seq · hidden · 2 bytes · batch, split over tp
    (heads) and pp (layers). Assumes full multi-head attention; grouped-query
    attention (Ainslie et al. 2023) would divide it by heads/kv_heads."""
    per_seq = 2.0 * shape.layers * shape.seq_len * shape.hidden * KV_BYTES
    return per_seq * micro_batch / (tp * pp)


def _check_layout_args(shape: ModelShape, kind: str, tp: int, pp: int, dp: int, zero: int) -> None:
    if kind not in MEMORY_KINDS:
        raise ValueError(f"no memory model for kind {kind!r}; expected one of {MEMORY_KINDS}")
    if min(tp, pp, dp) < 1:
        raise ValueError("tp, pp and dp must be ≥ 1")
    if pp > shape.layers:
        raise ValueError(f"pp={pp} exceeds the {shape.layers} layers to split")
    if zero not in (0, 1, 2, 3):
        raise ValueError(f"ZeRO stage must be 0..3, got {zero!r}")
    if kind == "inference" and zero:
        raise ValueError("ZeRO sharding is not modelled for inference (use zero=0)")


def _gb(x: float) -> float:
    return x / BYTES_PER_GB


def memory_per_gpu(
    shape: ModelShape,
    kind: str,
    *,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    zero: int = 0,
    recompute: bool = False,
    micro_batch: int = 1,
    lora_rank: int = 16,
) -> MemoryBreakdown:
    """Per-GPU memory of ``kind`` under a TP×PP×DP layout (sources: module docstring).

    States split over tp·pp; ZeRO stage ≥ 1 shards optimizer, ≥ 2 gradients,
    3 weights over dp (ZeRO §5.1). pretrain, full_finetune and sweep carry full
    training states; lora/qlora only adapter states beside frozen weights;
    inference weights + KV cache (``recompute`` ignored: nothing is stored
    for a backward pass).
    """
    _check_layout_args(shape, kind, tp, pp, dp, zero)
    if micro_batch < 1:
        raise ValueError(f"micro_batch must be ≥ 1, got {micro_batch!r}")
    weights, grads, optim = (b / (tp * pp) for b in _state_bytes(shape, kind, lora_rank))
    optim /= dp if zero >= 1 else 1
    grads /= dp if zero >= 2 else 1
    weights /= dp if zero >= 3 else 1
    if kind == "inference":
        acts = kv_cache_bytes(shape, micro_batch, tp, pp)
    else:
        acts = _training_activation_bytes(shape, tp, recompute, micro_batch)
    parts = [_gb(weights), _gb(grads), _gb(optim), _gb(acts), OVERHEAD_GB]
    return MemoryBreakdown(*parts, total_gb=sum(parts))


def usable_memory_gb(memory_gb: float) -> float:
    """Memory a job may plan to use on a card of ``memory_gb`` nominal GB."""
    if memory_gb <= 0:
        raise ValueError(f"memory_gb must be positive, got {memory_gb!r}")
    return memory_gb * USABLE_FRACTION


def _powers_of_two(limit: int) -> list[int]:
    return [1 << k for k in range(limit.bit_length()) if 1 << k <= limit]


def _candidate_layouts(shape: ModelShape, kind: str, gpus_per_node: int, max_gpus: int):
    """(tp, pp, dp, zero, recompute) tuples worth trying.

    tp stays inside a node and must divide the heads (Megatron-LM splits whole
    heads); dp > 1 only with ZeRO (plain data parallelism replicates everything
    and saves no memory) and ZeRO only with dp > 1 (nothing to shard over).
    Inference: no ZeRO, no recompute, dp = 1.
    """
    tps = [t for t in TENSOR_PARALLEL_SIZES if t <= gpus_per_node and shape.heads % t == 0]
    pps = _powers_of_two(min(max_gpus, shape.layers))
    inference = kind == "inference"
    dps = [1] if inference else _powers_of_two(max_gpus)
    zeros = (0,) if inference else (0, 1, 2, 3)
    recomputes = (False,) if inference else (False, True)
    for tp, pp, dp, zero, rec in itertools.product(tps, pps, dps, zeros, recomputes):
        if tp * pp * dp <= max_gpus and (zero == 0) == (dp == 1):
            yield tp, pp, dp, zero, rec


@functools.lru_cache(maxsize=8192)
def minimal_layout(
    shape: ModelShape,
    kind: str,
    gpu_memory_gb: float,
    *,
    gpus_per_node: int = 8,
    max_gpus: int = 4096,
    micro_batch: int = 1,
    lora_rank: int = 16,
    nvlink: bool = True,
) -> Layout | None:
    """The cheapest-to-run group of GPUs that holds one replica of the job.

    Among layouts whose ``total_gb ≤ usable_memory_gb(gpu_memory_gb)``, prefer in
    order: a group inside one node (crossing nodes needs RDMA), no recompute
    (+33 % compute, see ``flops.RECOMPUTE_EXTRA``), fewest GPUs, lowest ZeRO
    stage (less communication), then fewest pipeline stages, i.e. the most tensor
    parallelism for a given group: Narayanan et al. 2021 (Megatron-LM at scale),
    §3.3 Takeaway #1, use tensor parallelism up to the GPUs of one server before
    pipeline parallelism, whose bubble costs (p−1)/m of each step. None when
    nothing fits within ``max_gpus`` (offload is not modelled).

    ``nvlink=False`` (PCIe cards: L40S, L20, RTX 4090) reverses the last two: the
    least tensor parallelism for a given group. The takeaway rests on NVLink inside
    the server: tensor parallelism all-reduces each layer's activations (b·s·h) twice
    forward and twice backward (Narayanan et al. §3.3, Shoeybi et al. 2019 §3), which
    over PCIe Gen4 x16 (~32 GB/s a direction, against 300 GB/s of NVLink 3) stalls the
    step, while a pipeline sends b·s·h once per stage boundary, point to point.
    Activations are not split by pipeline stages (1F1B keeps p micro-batches in flight
    on the first stage), so the swap happens only where it fits the same GPUs.
    """
    return _best_layout(shape, kind, gpu_memory_gb, gpus_per_node, max_gpus, micro_batch, lora_rank, nvlink,
                        fewest_gpus=False)


@functools.lru_cache(maxsize=8192)
def smallest_layout(
    shape: ModelShape,
    kind: str,
    gpu_memory_gb: float,
    *,
    gpus_per_node: int = 8,
    max_gpus: int = 4096,
    micro_batch: int = 1,
    lora_rank: int = 16,
    nvlink: bool = True,
) -> Layout | None:
    """The fewest GPUs that hold one replica of the job, recompute allowed.

    ``minimal_layout`` is the fastest group: it takes no recompute on two GPUs over
    recompute on one, because recompute costs a third more compute per step. This is
    the other question, "what is the least hardware this job can run on": fewest GPUs
    first, then no recompute, then the lowest ZeRO stage and minimal_layout's TP/PP
    order. Example (golden test): QLoRA of a 65B model at sequence 512 holds on one
    48 GB card only with full recompute (Dettmers et al. 2023, §4 and Table 1: a 65B
    model fine-tuned on one 48 GB GPU, with gradient checkpointing); without it the
    activations (34·s·b·h per layer over 80 layers, 11.5 GB) push it past the card.
    """
    return _best_layout(shape, kind, gpu_memory_gb, gpus_per_node, max_gpus, micro_batch, lora_rank, nvlink,
                        fewest_gpus=True)


def _best_layout(shape: ModelShape, kind: str, gpu_memory_gb: float, gpus_per_node: int, max_gpus: int,
                 micro_batch: int, lora_rank: int, nvlink: bool, *, fewest_gpus: bool) -> Layout | None:
    """The best fitting layout in one of the two orders (minimal_layout, smallest_layout)."""
    if gpus_per_node < 1 or max_gpus < 1:
        raise ValueError("gpus_per_node and max_gpus must be ≥ 1")
    _check_layout_args(shape, kind, 1, 1, 1, 0)
    budget = usable_memory_gb(gpu_memory_gb)
    best_key, best = None, None
    for tp, pp, dp, zero, rec in _candidate_layouts(shape, kind, gpus_per_node, max_gpus):
        gpus = tp * pp * dp
        head = (gpus, rec) if fewest_gpus else (gpus > gpus_per_node, rec, gpus)
        key = head + (zero,) + ((pp, tp) if nvlink else (tp, pp))
        if best_key is not None and key >= best_key:
            continue
        mem = memory_per_gpu(
            shape, kind, tp=tp, pp=pp, dp=dp, zero=zero, recompute=rec,
            micro_batch=micro_batch, lora_rank=lora_rank,
        )
        if mem.total_gb <= budget:
            best_key = key
            best = Layout(gpus, tp, pp, dp, zero, rec, mem.total_gb, gpus > gpus_per_node)
    return best


def seed_rule_of_thumb_gb(params: float, bytes_per_param: float = 2) -> float:
    """Seed 000's rough rule: memory ≈ params × 2 × bytes per parameter.

    Shown beside the real accounting only; it is far too low for training (7B at
    FP16 gives 28 GB, the seed says "about 32 GB", while Adam model states alone
    are 112 GB).
    """
    if params <= 0 or bytes_per_param <= 0:
        raise ValueError("params and bytes_per_param must be positive")
    return params * 2 * bytes_per_param / BYTES_PER_GB
