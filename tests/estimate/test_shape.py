"""A shape inferred from a parameter count matches published models of that size."""

import pytest

from solver.estimate.shape import infer_shape
from solver.model.problem import ModelSpec


@pytest.mark.parametrize("params, hidden, layers", [
    (7e9, 4096, 32),      # Llama-2 7B
    (13e9, 5120, 40),     # Llama-2 13B
    (175e9, 12288, 96),   # GPT-3 175B (Brown et al. 2020, Table 2.1)
])
def test_inferred_shape_matches_published_models(params, hidden, layers):
    shape = infer_shape(ModelSpec(params=params))
    assert (shape.hidden, shape.layers, shape.heads) == (hidden, layers, hidden // 128)


def test_given_fields_are_kept_and_only_missing_ones_inferred():
    shape = infer_shape(ModelSpec(params=30e9, layers=60, hidden=6656, heads=52, seq_len=2048))
    assert (shape.layers, shape.hidden, shape.heads, shape.seq_len) == (60, 6656, 52, 2048)
    shape = infer_shape(ModelSpec(params=7e9, layers=32))
    assert shape.hidden == 4096 and shape.layers == 32


def test_inferred_layers_times_width_reproduce_the_parameter_count_within_a_fifth():
    for params in (1e9, 3e9, 7e9, 13e9, 34e9, 70e9, 175e9):
        s = infer_shape(ModelSpec(params=params))
        counted = 12 * s.layers * s.hidden ** 2 + 2 * s.vocab * s.hidden
        assert counted == pytest.approx(params, rel=0.2)
