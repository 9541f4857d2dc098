"""Compute demand of a job: FLOPs, card-hours and GPUs for a deadline.

Everything here is the ``c·N·D`` family of estimates: ``N`` parameters (active
parameters for MoE), ``D`` tokens and a per-kind constant ``c``. The constant counts
matrix-multiply FLOPs only; attention-score FLOPs (``∝ seq_len``) and element-wise
work are ignored, as in the sources below, and absorbed by the efficiency (MFU)
the caller applies later.

Sources
-------
- Kaplan et al. 2020, "Scaling Laws for Neural Language Models", §2.1, Table 1:
  forward ≈ 2·N FLOPs per token, backward ≈ 2× forward, so training ≈ 6·N·D.
- EleutherAI, "Transformer Math 101" (Anthony, Biderman, Schoelkopf 2023):
  C ≈ 6·N·D; the backward pass is 4·N·D (2·N·D for gradients w.r.t. activations,
  2·N·D for gradients w.r.t. weights).
- Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
  Models", §5 / Chowdhery et al. 2022 (PaLM) Appendix B: full activation
  recomputation reruns the forward pass, 8·N·D in total.
- Hu et al. 2021, "LoRA", §4.2: frozen weights need no weight gradients.
- Dettmers et al. 2023, "QLoRA", §3: 4-bit NF4 storage, dequantised to BF16 for
  every matmul.
- Seed 000 (7B × 200B tokens → 8.4e21 FLOPs; A100 312 TFLOPS × 40 %), seed 002
  (13B × 100B tokens ≈ 8e21 FLOPs).
"""

from __future__ import annotations

import math

KINDS = ("pretrain", "full_finetune", "lora", "qlora", "sweep", "preprocess", "inference")

TRAINING_KINDS = ("pretrain", "full_finetune", "lora", "qlora", "sweep")
"""Kinds with a backward pass; only these can use activation recomputation."""

FORWARD_FACTOR = 2.0
"""FLOPs per parameter per token of one forward pass (Kaplan et al. 2020, §2.1)."""

FULL_TRAINING_FACTOR = 6.0
"""Forward 2 + backward 4 (Kaplan et al. 2020, §2.1; Transformer Math 101)."""

LORA_FACTOR = 4.0
"""Forward 2 + activation-gradient pass 2; the weight-gradient pass (2) is skipped.

Why 4: the backward pass of a linear layer is two matmuls, dX = dY·Wᵀ and
dW = Xᵀ·dY, each 2·N·D over the whole model (Transformer Math 101). With frozen
weights dW is never formed, but dX must still flow through every frozen layer to
reach the adapters below it. The adapters' own 6·N_adapter·D is < 1 % of N·D at
rank ≤ 64 and is ignored. Hu et al. 2021 (LoRA, §4.2) measure a 25 % training
speed-up on GPT-3 175B, i.e. less than the ideal 33 % this factor implies,
because element-wise and memory-bound work does not shrink; that gap belongs
in the MFU the caller supplies.
"""

QLORA_DEQUANT_OVERHEAD = 1.3
"""Multiplier on the LoRA factor for QLoRA's 4-bit → BF16 dequantisation.

Engineering assumption, not a published constant. QLoRA (Dettmers et al. 2023,
§3) stores frozen weights in NF4 and dequantises them to BF16 before every matmul
(forward and backward). That work is memory-bound: roughly 0.5 byte read plus
2 bytes written and re-read per parameter per pass. On an A100 (312 TFLOPS,
~2 TB/s, ~150 FLOP/byte) that is worth ~30–70 % of the matmul time at
512–1024 tokens per micro-batch and under 10 % at 4k+ tokens. 1.3 sits at the
large-micro-batch end of that range; practitioners report anything from ~1.2×
to several × (e.g. bitsandbytes on unsupported GPUs), so callers with a
measurement (seed 003 Q2: time a few hundred steps) should prefer it.
"""

RECOMPUTE_EXTRA = FORWARD_FACTOR
"""Full recompute reruns one forward pass: +2·N·D (Korthikanti et al. 2022, §5;
PaLM Appendix B gives 8·N·D for full recompute). Seed 002 quotes "about 20 %"
extra compute; 2/6 = 33 % is the full-recompute figure, 20 % is closer to a
partial (selective/every-other-layer) recompute."""

_BASE_FACTORS = {
    "pretrain": FULL_TRAINING_FACTOR,
    "full_finetune": FULL_TRAINING_FACTOR,
    "sweep": FULL_TRAINING_FACTOR,
    "lora": LORA_FACTOR,
    "qlora": LORA_FACTOR,
    "inference": FORWARD_FACTOR,
}


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown job kind {kind!r}; expected one of {KINDS}")
    if kind == "preprocess":
        raise ValueError(
            "preprocess jobs have no c·N·D model; give their FLOP count (or card-hours) directly"
        )


def flops_factor(kind: str, recompute: bool = False) -> float:
    """The constant c in FLOPs ≈ c·N·D for one run of ``kind``.

    pretrain / full_finetune / sweep: 6 (8 with recompute); lora: 4 (6);
    qlora: 1.3 × lora; inference: 2 (``recompute`` is ignored: there is no
    backward pass and nothing stored to recompute). Sources in the module
    docstring and on each constant.
    """
    _check_kind(kind)
    factor = _BASE_FACTORS[kind]
    if recompute and kind in TRAINING_KINDS:
        factor += RECOMPUTE_EXTRA
    if kind == "qlora":
        # The recomputed forward pass dequantises too, so the overhead
        # multiplies the whole lora factor, recompute included.
        factor *= QLORA_DEQUANT_OVERHEAD
    return factor


def _check_positive(name: str, value: float) -> None:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


def training_flops(
    params: float,
    tokens: float,
    kind: str = "pretrain",
    *,
    active_params: float | None = None,
    recompute: bool = False,
    trials: int = 1,
) -> float:
    """Total FLOPs of a job: flops_factor(kind, recompute) · N · D · trials.

    N is ``active_params`` when given (MoE: only the routed experts' weights
    multiply each token, Kaplan-style counting applied per token; all experts
    still cost memory, see ``memory.py``), otherwise ``params``. ``trials``
    counts independent runs (a hyper-parameter sweep of ``trials`` full
    runs is ``trials × 6·N·D``); it multiplies any kind.

    Raises ValueError for non-positive sizes, active_params > params, an unknown
    kind, or ``preprocess`` (which has no parameter count to scale by).
    """
    _check_positive("params", params)
    _check_positive("tokens", tokens)
    if active_params is not None:
        _check_positive("active_params", active_params)
        if active_params > params:
            raise ValueError("active_params cannot exceed params (total incl. all experts)")
    if not isinstance(trials, int) or trials < 1:
        raise ValueError(f"trials must be an integer ≥ 1, got {trials!r}")
    n = params if active_params is None else active_params
    return flops_factor(kind, recompute) * n * tokens * trials


def card_hours(flops: float, effective_tflops_per_gpu: float) -> float:
    """GPU-hours to execute ``flops`` at a sustained per-GPU rate.

    hours = flops / (eff · 1e12 FLOP/s) / 3600 s. Seed 000: 8.4e21 / 125e12 /
    3600 ≈ 18,667 card-hours. ``effective_tflops_per_gpu`` already includes MFU
    and every derating (see ``throughput.effective_tflops``).
    """
    _check_positive("flops", flops)
    _check_positive("effective_tflops_per_gpu", effective_tflops_per_gpu)
    return flops / (effective_tflops_per_gpu * 1e12) / 3600.0


def min_gpus_for_deadline(
    flops: float,
    effective_tflops_per_gpu: float,
    hours: float,
    redundancy: float = 0.0,
) -> float:
    """Fractional GPUs needed to finish within ``hours``: card_hours·(1+r)/hours.

    Left fractional on purpose: the MILP rounds to whole nodes together with
    price and availability. ``redundancy`` is the seeds' safety margin for
    communication and failures (000: +30 %, 000 FAQ: +50 %, 003 Q3: +20 %).
    Seed 000: 18,667 / 720 h ≈ 26 cards; × 1.3 ≈ 33.7 → 5 nodes of 8 = 40 cards.
    """
    _check_positive("hours", hours)
    if not (math.isfinite(redundancy) and redundancy >= 0):
        raise ValueError(f"redundancy must be ≥ 0, got {redundancy!r}")
    return card_hours(flops, effective_tflops_per_gpu) * (1.0 + redundancy) / hours


def nodes_for_gpus(gpus: float, gpus_per_node: int = 8) -> int:
    """Whole nodes holding ``gpus`` cards (ceil), for reports beside the MILP.

    Seed 000 rounds 33.7 cards up to 5 nodes of 8; the seed's "8-card node as
    the standard unit" is why the default is 8.
    """
    if gpus < 0 or not math.isfinite(gpus):
        raise ValueError(f"gpus must be ≥ 0, got {gpus!r}")
    if not isinstance(gpus_per_node, int) or gpus_per_node < 1:
        raise ValueError(f"gpus_per_node must be an integer ≥ 1, got {gpus_per_node!r}")
    return math.ceil(gpus / gpus_per_node - 1e-9)
