"""Fill in a transformer shape the user did not give, from its parameter count.

Why: memory accounting needs layers, hidden size and heads, but users often know only
"a 7B model". We infer a Llama-like shape: a decoder layer holds ≈ 12·h² parameters
(4·h² attention + 8·h² MLP; Kaplan et al. 2020, Table 1 with d_ff = 4·d_model), and
hidden/layers ≈ 128 (Llama-2 7B: 4096/32; 13B: 5120/40; 70B: 8192/80 = 102). The
inferred shape is reported beside the plan so the user can replace it. Input and
output embeddings (2·vocab·hidden) are not in the layers. Check: 7e9 → 4096 × 32 layers
and 13e9 → 5120 × 40, the Llama-2 shapes.
"""

from __future__ import annotations

from solver.estimate.memory import ModelShape
from solver.model.problem import ModelSpec

ASPECT_RATIO = 128  # hidden / layers
HEAD_DIM = 128
HIDDEN_STEP = 512   # published hidden sizes are multiples of 512 (4096, 5120, 8192)
LAYER_STEP = 4      # and layer counts multiples of 4 (32, 40, 60, 80)


def infer_shape(spec: ModelSpec) -> ModelShape:
    """The given shape, with missing layers / hidden / heads inferred from params."""
    hidden = spec.hidden
    layers = spec.layers
    if hidden is None and layers is not None:
        rough = (spec.params / (12 * layers)) ** 0.5
        rough = (max(spec.params - 2 * spec.vocab * rough, spec.params / 2) / (12 * layers)) ** 0.5
        hidden = _round_to(rough, HIDDEN_STEP if rough >= 2 * HIDDEN_STEP else HEAD_DIM)
    if hidden is None:
        hidden = _round_to((spec.params * ASPECT_RATIO / 12) ** (1 / 3), HIDDEN_STEP)
    if layers is None:
        body = max(spec.params - 2 * spec.vocab * hidden, 12 * hidden * hidden)  # less input/output embeddings
        layers = max(1, _round_to(body / (12 * hidden * hidden), LAYER_STEP) if body / (12 * hidden * hidden) >= LAYER_STEP
                     else round(body / (12 * hidden * hidden)))
    heads = spec.heads or max(1, hidden // HEAD_DIM)
    return ModelShape(params=spec.params, layers=layers, hidden=hidden, heads=heads,
                      seq_len=spec.seq_len, active_params=spec.active_params, vocab=spec.vocab)


def _round_to(value: float, step: int) -> int:
    return max(step, int(round(value / step)) * step)
