"""The sustained MFU of a layout (solver/estimate/efficiency.py; issue 36, item 1), pinned against
published runs and hand-worked factors.

Published runs (GPU, fabric, layout → MFU): Narayanan et al. 2021, "Efficient Large-Scale
Language Model Training on GPU Clusters Using Megatron-LM", Table 1, A100-80G DGX nodes on
8 × 200 Gb/s InfiniBand HDR (TP inside the node on NVLink); Dubey et al. 2024, "The Llama 3
Herd of Models", Table 4, H100 on RoCE. The planner's prediction is the first run's MFU derated
for each run's layout (this module), fabric and size (solver.estimate.throughput): within 15 %
of the published figure up to 512 GPUs, and never above it beyond (its size tiers are meant
for rented clusters without a tuned topology, so it errs on the slow side there).
"""

from __future__ import annotations

import pytest

from solver.estimate.efficiency import (MICROBATCHES_LEAST, MICROBATCHES_PER_STAGE, NVLINK_GBS, PCIE_GBS, layout_efficiency,
                                        pipeline_factor, tensor_link_factor)
from solver.estimate.throughput import fabric_factor, scale_factor

A100, H100 = 312.0, 989.4
MEGATRON_BASE = 0.44
"""Table 1's smallest run: 1.7B, TP1 PP1 on 32 A100s, 137 TFLOP/s = 44 % of peak."""

# (what, peak TFLOPS, hidden, TP, PP, GPUs, fabric, published MFU)
RUNS = [
    ("Megatron 3.6B", A100, 3072, 2, 1, 64, "ib_hdr", 0.44),
    ("Megatron 7.5B", A100, 4096, 4, 1, 128, "ib_hdr", 0.46),
    ("Megatron 18.4B", A100, 6144, 8, 1, 256, "ib_hdr", 0.43),
    ("Megatron 39.1B", A100, 8192, 8, 2, 512, "ib_hdr", 0.44),
]
LARGE = [
    ("Megatron 76.1B", A100, 10240, 8, 4, 1024, "ib_hdr", 0.45),
    ("Megatron 145.6B", A100, 12288, 8, 8, 1536, "ib_hdr", 0.47),
    ("Llama 3 405B", H100, 16384, 8, 16, 8192, "roce", 0.43),
]


def predicted(peak, hidden, tp, pp, gpus, fabric, base=MEGATRON_BASE) -> float:
    eff = layout_efficiency(base, tp=tp, pp=pp, hidden=hidden, peak_tflops=peak, nvlink=True)
    return eff.sustained * fabric_factor(fabric, gpus > 8) * scale_factor(fabric, gpus)


@pytest.mark.parametrize("what, peak, hidden, tp, pp, gpus, fabric, published", RUNS, ids=[r[0] for r in RUNS])
def test_published_runs_up_to_512_gpus(what, peak, hidden, tp, pp, gpus, fabric, published):
    assert predicted(peak, hidden, tp, pp, gpus, fabric) == pytest.approx(published, rel=0.15)


@pytest.mark.parametrize("what, peak, hidden, tp, pp, gpus, fabric, published", LARGE, ids=[r[0] for r in LARGE])
def test_larger_runs_are_never_overestimated(what, peak, hidden, tp, pp, gpus, fabric, published):
    assert predicted(peak, hidden, tp, pp, gpus, fabric) <= published


def test_tensor_parallel_on_pcie_worked_by_hand():
    # L40S (362.05 TFLOPS × 35 % = 126.7 achieved), a 13B model (h 5120), TP2:
    # r = 2/9 × 1 × 126.7e12 / (5120 × B): PCIe 32e9 → 0.1719, NVLink 300e9 → 0.01834;
    # factor 1.01834 / 1.1719 = 0.869.
    assert tensor_link_factor(2, 5120, 362.05 * 0.35, nvlink=False) == pytest.approx(0.869, abs=0.001)
    assert tensor_link_factor(4, 5120, 362.05 * 0.35, nvlink=False) < tensor_link_factor(2, 5120, 362.05 * 0.35,
                                                                                         nvlink=False)
    assert tensor_link_factor(8, 5120, 126.7, nvlink=True) == 1.0
    assert tensor_link_factor(1, 5120, 126.7, nvlink=False) == 1.0
    assert (NVLINK_GBS, PCIE_GBS) == (300.0, 32.0)   # A100 and L40S datasheets, per direction


def test_pipeline_bubble():
    # 1F1B with m = max(8p, 48) micro-batches: m / (m + p − 1)
    assert (MICROBATCHES_PER_STAGE, MICROBATCHES_LEAST) == (8, 48)
    assert pipeline_factor(1) == 1.0
    assert pipeline_factor(2) == pytest.approx(48 / 49)
    assert pipeline_factor(4) == pytest.approx(48 / 51)
    assert pipeline_factor(8) == pytest.approx(64 / 71)


def test_the_words_name_each_factor():
    eff = layout_efficiency(0.35, tp=2, pp=4, hidden=5120, peak_tflops=362.05, nvlink=False)
    assert eff.text().startswith("35% × TP over PCIe 0.87 × pipeline bubble 0.94 = 28.")
    assert layout_efficiency(0.4, tp=8, pp=1, hidden=5120, peak_tflops=312, nvlink=True).text() == "40%"
