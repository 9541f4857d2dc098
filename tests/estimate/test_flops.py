"""Compute demand: c·N·D FLOPs, card-hours and GPUs for a deadline (seeds 000, 002)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.estimate.flops import (
    KINDS,
    QLORA_DEQUANT_OVERHEAD,
    card_hours,
    flops_factor,
    min_gpus_for_deadline,
    nodes_for_gpus,
    training_flops,
)

SEED_000_FLOPS = 8.4e21


# --- Seed 000 worked example: 7B params × 200B tokens, A100, 30 days -----------------

def test_seed000_7b_200b_tokens_is_8_4e21_flops():
    assert training_flops(7e9, 200e9) == pytest.approx(8.4e21, rel=1e-12)


def test_seed000_card_hours_with_the_seeds_rounded_125_tflops():
    # The seed rounds 312 × 0.40 = 124.8 up to 125 TFLOPS: 8.4e21 / 125e12 / 3600.
    assert card_hours(SEED_000_FLOPS, 125.0) == pytest.approx(18_666.67, abs=0.01)
    assert round(card_hours(SEED_000_FLOPS, 125.0)) == 18_667


def test_seed000_card_hours_unrounded_124_8_tflops_is_0_16_percent_more():
    # Exact 124.8 TFLOPS gives 18,696.6 h; the seed's rounding hides ~30 card-hours.
    assert card_hours(SEED_000_FLOPS, 124.8) == pytest.approx(18_696.58, abs=0.01)


def test_seed000_theoretical_peak_needs_about_7500_hours_and_10_4_cards():
    assert card_hours(SEED_000_FLOPS, 312.0) == pytest.approx(7_479, abs=1)
    assert min_gpus_for_deadline(SEED_000_FLOPS, 312.0, 720) == pytest.approx(10.4, abs=0.05)


def test_seed000_26_cards_for_30_days():
    gpus = min_gpus_for_deadline(SEED_000_FLOPS, 125.0, 720)
    assert gpus == pytest.approx(25.93, abs=0.01)
    assert math.ceil(gpus) == 26


def test_seed000_thirty_percent_redundancy_gives_5_nodes_40_cards():
    gpus = min_gpus_for_deadline(SEED_000_FLOPS, 125.0, 720, redundancy=0.3)
    assert gpus == pytest.approx(33.70, abs=0.01)
    assert nodes_for_gpus(gpus, 8) == 5
    assert nodes_for_gpus(gpus, 8) * 8 == 40


def test_seed002_13b_100b_tokens_is_7_8e21_flops():
    # Seed 002 says "about 8e21"; the exact product is 7.8e21.
    assert training_flops(13e9, 100e9) == pytest.approx(7.8e21, rel=1e-12)


# --- Factors per kind ---------------------------------------------------------------

@pytest.mark.parametrize(
    ("kind", "plain", "recompute"),
    [
        ("pretrain", 6.0, 8.0),
        ("full_finetune", 6.0, 8.0),
        ("sweep", 6.0, 8.0),
        ("lora", 4.0, 6.0),
        ("qlora", 4.0 * QLORA_DEQUANT_OVERHEAD, 6.0 * QLORA_DEQUANT_OVERHEAD),
        ("inference", 2.0, 2.0),
    ],
)
def test_flops_factor_per_kind(kind, plain, recompute):
    assert flops_factor(kind) == pytest.approx(plain)
    assert flops_factor(kind, recompute=True) == pytest.approx(recompute)


def test_full_recompute_costs_one_third_more_for_dense_training():
    # Korthikanti et al. 2022 / PaLM appendix B: 8·N·D vs 6·N·D.
    assert flops_factor("pretrain", True) / flops_factor("pretrain") == pytest.approx(4 / 3)


def test_qlora_costs_more_than_lora_and_less_than_full_training():
    assert flops_factor("lora") < flops_factor("qlora") < flops_factor("full_finetune")


def test_moe_counts_active_parameters_only():
    # Mixtral-8x7B-like: 46.7B stored, 12.9B active per token.
    flops = training_flops(46.7e9, 1e12, active_params=12.9e9)
    assert flops == pytest.approx(6 * 12.9e9 * 1e12)


def test_sweep_is_trials_independent_pretrain_runs():
    one = training_flops(1e9, 20e9, "pretrain")
    assert training_flops(1e9, 20e9, "sweep", trials=5) == pytest.approx(5 * one)


def test_inference_is_one_forward_pass():
    assert training_flops(7e9, 1e9, "inference") == pytest.approx(2 * 7e9 * 1e9)


# --- Errors -------------------------------------------------------------------------

def test_preprocess_needs_a_user_given_flop_count():
    assert "preprocess" in KINDS
    with pytest.raises(ValueError, match="preprocess"):
        training_flops(7e9, 1e9, "preprocess")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"params": 0, "tokens": 1e9},
        {"params": -1e9, "tokens": 1e9},
        {"params": 1e9, "tokens": 0},
        {"params": 1e9, "tokens": float("nan")},
        {"params": 1e9, "tokens": 1e9, "kind": "distill"},
        {"params": 1e9, "tokens": 1e9, "trials": 0},
        {"params": 1e9, "tokens": 1e9, "active_params": 2e9},
    ],
)
def test_training_flops_rejects_bad_input(kwargs):
    with pytest.raises(ValueError):
        training_flops(**kwargs)


def test_deadline_rejects_negative_redundancy_and_zero_hours():
    with pytest.raises(ValueError):
        min_gpus_for_deadline(1e21, 100, 720, redundancy=-0.1)
    with pytest.raises(ValueError):
        min_gpus_for_deadline(1e21, 100, 0)
    with pytest.raises(ValueError):
        card_hours(1e21, 0)


# --- Laws ---------------------------------------------------------------------------

sizes = st.floats(min_value=1e6, max_value=1e13)
train_kinds = st.sampled_from([k for k in KINDS if k != "preprocess"])


@given(sizes, sizes, train_kinds, st.booleans(), st.integers(1, 64))
def test_training_flops_is_factor_times_n_times_d_times_trials(n, d, kind, rec, trials):
    expected = flops_factor(kind, rec) * n * d * trials
    assert training_flops(n, d, kind, recompute=rec, trials=trials) == pytest.approx(expected)


@given(sizes, sizes, train_kinds)
def test_recompute_never_makes_a_job_cheaper(n, d, kind):
    assert training_flops(n, d, kind, recompute=True) >= training_flops(n, d, kind)


@given(
    st.floats(1e15, 1e25),
    st.floats(1.0, 2000.0),
    st.floats(1.0, 10_000.0),
    st.floats(0.0, 1.0),
)
def test_gpus_times_hours_equals_card_hours_with_redundancy(flops, eff, hours, r):
    gpus = min_gpus_for_deadline(flops, eff, hours, r)
    assert gpus * hours == pytest.approx(card_hours(flops, eff) * (1 + r))


@given(st.floats(0.0, 1e5), st.integers(1, 16))
def test_nodes_hold_all_gpus_with_less_than_one_node_spare(gpus, per_node):
    nodes = nodes_for_gpus(gpus, per_node)
    assert nodes * per_node >= gpus - 1e-6
    assert (nodes - 1) * per_node < gpus or nodes == 0
