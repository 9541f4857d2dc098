"""Sustained throughput: peak × MFU × fabric × scale × perf × (1 − spot loss) (seeds 000, 002)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from solver.estimate.flops import card_hours
from solver.estimate.throughput import (
    INTERCONNECTS,
    SCALE_TIERS,
    effective_tflops,
    fabric_factor,
    peak_tflops,
    scale_factor,
    scale_tiers,
    spot_loss,
)


def test_seed000_a100_at_40_percent_is_124_8_tflops():
    # The seed rounds this to 125 TFLOPS (see test_estimate_flops).
    assert effective_tflops(312, 0.40) == pytest.approx(124.8)


def test_seed002_13b_at_60_percent_mfu():
    eff = effective_tflops(312, 0.60)
    assert eff == pytest.approx(187.2)
    assert card_hours(7.8e21, eff) == pytest.approx(11_574, abs=1)


def test_effective_tflops_multiplies_every_derating():
    eff = effective_tflops(989, 0.4, fabric=0.95, scale=0.92, perf=0.95, spot_loss=0.1)
    assert eff == pytest.approx(989 * 0.4 * 0.95 * 0.92 * 0.95 * 0.9)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"mfu": 0.0},
        {"mfu": 1.2},
        {"mfu": 0.4, "fabric": 0.0},
        {"mfu": 0.4, "scale": 1.5},
        {"mfu": 0.4, "perf": -0.1},
        {"mfu": 0.4, "spot_loss": 1.0},
        {"mfu": 0.4, "spot_loss": -0.1},
    ],
)
def test_effective_tflops_rejects_out_of_range_factors(kwargs):
    with pytest.raises(ValueError):
        effective_tflops(312, **kwargs)


def test_effective_tflops_rejects_non_positive_peak():
    with pytest.raises(ValueError):
        effective_tflops(0, 0.4)


# --- Fabric and scale ------------------------------------------------------------------

@pytest.mark.parametrize("interconnect", INTERCONNECTS)
def test_inside_one_node_the_fabric_does_not_matter(interconnect):
    assert fabric_factor(interconnect, multi_node=False) == 1.0


@pytest.mark.parametrize(
    ("interconnect", "factor"), [("ib_ndr", 1.0), ("ib_hdr", 1.0), ("roce", 0.95), ("ethernet", 0.6)]
)
def test_multi_node_fabric_factors(interconnect, factor):
    assert fabric_factor(interconnect, multi_node=True) == factor


def test_unknown_interconnect_is_rejected():
    with pytest.raises(ValueError):
        fabric_factor("nvlink", True)
    with pytest.raises(ValueError):
        scale_factor("omnipath", 16)


@pytest.mark.parametrize(
    ("gpus", "factor"), [(1, 1.0), (256, 1.0), (257, 0.92), (512, 0.92), (1024, 0.85), (4096, 0.75)]
)
def test_seed000_infiniband_speedup_falls_beyond_a_few_hundred_cards(gpus, factor):
    assert scale_factor("ib_hdr", gpus) == factor


def test_beyond_the_last_tier_the_last_factor_holds():
    assert scale_factor("ib_ndr", 10_000) == scale_tiers("ib_ndr")[-1][1]


def test_scale_factor_rejects_zero_gpus():
    with pytest.raises(ValueError):
        scale_factor("ib_ndr", 0)


@pytest.mark.parametrize("interconnect", INTERCONNECTS)
def test_tiers_ascend_in_size_and_never_speed_up(interconnect):
    tiers = scale_tiers(interconnect)
    bounds = [b for b, _ in tiers]
    factors = [f for _, f in tiers]
    assert bounds == sorted(set(bounds)) and bounds[-1] >= 4096
    assert factors == sorted(factors, reverse=True) and 0 < factors[-1] <= factors[0] <= 1


def test_every_interconnect_has_tiers():
    assert set(SCALE_TIERS) == set(INTERCONNECTS)


@given(st.sampled_from(INTERCONNECTS), st.integers(1, 8192), st.integers(1, 8192))
def test_larger_jobs_never_scale_better(interconnect, a, b):
    small, large = sorted((a, b))
    assert scale_factor(interconnect, large) <= scale_factor(interconnect, small)


@given(st.integers(1, 8192))
def test_slower_fabrics_never_beat_infiniband(gpus):
    def total(i):
        return fabric_factor(i, True) * scale_factor(i, gpus)

    assert total("ethernet") <= total("roce") <= total("ib_hdr") == total("ib_ndr")


# --- Spot pre-emption --------------------------------------------------------------------

def test_one_preemption_a_day_with_hourly_checkpoints():
    # Half an hour of lost work plus a quarter-hour restart, once in 24 h.
    assert spot_loss(1.0) == pytest.approx(0.75 / 24)


def test_no_preemptions_lose_nothing():
    assert spot_loss(0.0) == 0.0


def test_spot_loss_is_capped():
    assert spot_loss(100.0, checkpoint_interval_hours=4.0) == 0.9


def test_spot_loss_rejects_negative_input():
    with pytest.raises(ValueError):
        spot_loss(-1.0)


@given(st.floats(0, 50), st.floats(0, 50), st.floats(0, 12), st.floats(0, 4))
def test_more_preemptions_or_sparser_checkpoints_never_lose_less(r1, r2, interval, restart):
    low, high = sorted((r1, r2))
    assert spot_loss(low, interval, restart) <= spot_loss(high, interval, restart)
    assert spot_loss(high, interval, restart) <= spot_loss(high, interval + 1, restart)


# --- Peak by precision ------------------------------------------------------------------

def test_bf16_and_fp16_use_the_bf16_peak():
    assert peak_tflops(312, None, "bf16") == 312
    assert peak_tflops(312, None, "fp16") == 312


def test_fp8_uses_the_fp8_peak_when_the_gpu_has_one():
    assert peak_tflops(989, 1979, "fp8") == 1979  # H100 SXM dense


def test_fp8_on_a_gpu_without_fp8_is_rejected():
    with pytest.raises(ValueError, match="FP8"):
        peak_tflops(312, None, "fp8")


def test_unknown_precision_is_rejected():
    with pytest.raises(ValueError):
        peak_tflops(312, None, "int4")


def test_nodes_count_groups_that_stay_inside_a_node():
    """2-GPU groups on 3-GPU nodes: one group a node (34 GPUs = 17 groups = 17 nodes, not 12);
    groups that divide the node pack by count; groups spanning nodes count their GPUs."""
    from solver.estimate.summary import nodes_for

    assert nodes_for(34, 2, 3) == 17
    assert nodes_for(40, 2, 8) == 5 and nodes_for(36, 4, 8) == 5
    assert nodes_for(48, 3, 8) == 8          # two 3-GPU groups a node
    assert nodes_for(32, 16, 8) == 4 and nodes_for(24, 12, 8) == 3
