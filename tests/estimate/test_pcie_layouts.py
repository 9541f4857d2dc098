"""PCIe cards (no NVLink): pipeline stages before tensor parallelism, and where tensor
parallelism is still needed to fit, its cost in the plan's rate (solver.estimate.memory.minimal_layout,
solver.estimate.efficiency)."""

from __future__ import annotations

from pathlib import Path

import pytest

from solver.api import solve_problem
from solver.estimate.memory import ModelShape, minimal_layout
from solver.load import load_problem
from tests.builders import ROOT

LLAMA_13B = ModelShape(params=13e9, layers=40, hidden=5120, heads=40, seq_len=4096)


def test_pcie_cards_take_pipeline_stages_before_tensor_parallelism():
    # 13B full fine-tune on 48 GB cards: TP8 with NVLink (Megatron's takeaway), the same 8
    # GPUs as TP2×PP4 over PCIe; memory, ZeRO stage and recompute as before.
    nvlink = minimal_layout(LLAMA_13B, "full_finetune", 48, max_gpus=64)
    pcie = minimal_layout(LLAMA_13B, "full_finetune", 48, max_gpus=64, nvlink=False)
    assert (nvlink.tp, nvlink.pp) == (8, 1)
    assert (pcie.tp, pcie.pp) == (2, 4)
    assert (pcie.gpus, pcie.zero, pcie.recompute) == (nvlink.gpus, nvlink.zero, nvlink.recompute)
    assert pcie.memory_per_gpu_gb <= 48


def test_pipeline_stages_never_cost_more_gpus():
    # Activations are not split by pipeline stages: where only tensor parallelism fits
    # (LoRA of 7B on 24 GB), PCIe keeps it rather than taking more GPUs.
    shape = ModelShape(params=7e9, layers=32, hidden=4096, heads=32, seq_len=4096)
    nvlink = minimal_layout(shape, "lora", 24, max_gpus=64)
    pcie = minimal_layout(shape, "lora", 24, max_gpus=64, nvlink=False)
    assert pcie == nvlink and pcie.tp == 2


def _problem(tmp_path: Path, gpu: str) -> Path:
    path = tmp_path / f"{gpu}.yaml"
    path.write_text(f"""name: ft-on-{gpu}
catalog: {ROOT / 'catalogs' / 'beijing-sample'}
horizon_days: 10
jobs:
  - name: ft-7b
    kind: full_finetune
    model: {{params: 7e9, layers: 32, hidden: 4096, heads: 32, seq_len: 4096}}
    tokens: 2e9
    deadline_days: 10
restrict: {{gpus: [{gpu}]}}
""", encoding="utf-8")
    return path


@pytest.mark.parametrize("gpu, pcie", [("RTX4090-24G", True), ("A100-80G", False)])
def test_tensor_parallelism_over_pcie_is_priced_not_warned_about(tmp_path, gpu, pcie):
    # Issue 36, item 1: the plan's rate carries the PCIe factor (solver.estimate.efficiency),
    # so the warning that the MFU "does not count" it is gone.
    from solver.api import build_instance
    from solver.estimate.efficiency import pipeline_factor, tensor_link_factor

    prob, cat = load_problem(_problem(tmp_path, gpu))
    plan = solve_problem(prob, cat)
    assert not any("NVLink" in w or "does not count" in w for w in plan.warnings)
    layout = plan.jobs[0].layout
    row = cat.gpus[gpu]
    opt = next(o for o in build_instance(prob, cat).options if (o.layout.tp, o.layout.pp) == (layout["tp"], layout["pp"]))
    factor = tensor_link_factor(layout["tp"], 4096, row.bf16_tflops * row.default_mfu, nvlink=not pcie) \
        * pipeline_factor(layout["pp"])
    perf = cat.offers[opt.config.split(":")[0]].perf_guarantee_pct or 90
    assert opt.rate_flops == pytest.approx(row.bf16_tflops * 1e12 * row.default_mfu * factor * perf / 100)
    if pcie:
        assert (layout["tp"], layout["pp"]) == (4, 2) and factor < 0.85
    else:
        assert layout["tp"] > 1 and layout["pp"] == 1 and factor == 1.0
