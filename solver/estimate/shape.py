"""Fill in a transformer shape the user did not give, from its parameter count.

Why: memory accounting needs layers, hidden size and heads, but users often know only
"a 7B model". We infer a Llama-like shape: a decoder layer holds ≈ 12·h² parameters
(4·h² attention + 8·h² MLP; Kaplan et al. 2020, Table 1 with d_ff = 4·d_model), and
hidden/layers ≈ 128 (Llama-2 7B: 4096/32; 13B: 5120/40; 70B: 8192/80 = 102). The
inferred shape is reported beside the plan so the user can replace it.
"""

from __future__ import annotations

from solver.estimate.memory import ModelShape
from solver.model.problem import ModelSpec

ASPECT_RATIO = 128  # hidden / layers
HEAD_DIM = 128


def infer_shape(spec: ModelSpec) -> ModelShape:
    """The given shape, with missing layers / hidden / heads inferred from params."""
    hidden = spec.hidden
    layers = spec.layers
    if hidden is None and layers is not None:
        hidden = _round_to(max((spec.params / (12 * layers)) ** 0.5, HEAD_DIM), HEAD_DIM)
    if hidden is None:
        hidden = _round_to((spec.params * ASPECT_RATIO / 12) ** (1 / 3), HEAD_DIM)
    if layers is None:
        layers = max(1, round(spec.params / (12 * hidden * hidden)))
    heads = spec.heads or max(1, hidden // HEAD_DIM)
    return ModelShape(params=spec.params, layers=layers, hidden=hidden, heads=heads,
                      seq_len=spec.seq_len, active_params=spec.active_params, vocab=spec.vocab)


def _round_to(value: float, step: int) -> int:
    return max(step, int(round(value / step)) * step)
