"""PCIe cards (no NVLink): pipeline stages before tensor parallelism, and a warning where
tensor parallelism is still needed to fit (solver.estimate.memory.minimal_layout,
solver.milp.extract._warnings)."""

from __future__ import annotations

import json
import subprocess
import sys
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


@pytest.mark.parametrize("gpu, warned", [("RTX4090-24G", True), ("A100-80G", False)])
def test_a_plan_warns_of_tensor_parallelism_over_pcie(tmp_path, gpu, warned):
    plan = solve_problem(*load_problem(_problem(tmp_path, gpu)))
    assert bool(plan.warnings) == warned
    if warned:
        (text,) = plan.warnings
        assert "ft-7b" in text and "TP4" in text and "RTX4090-24G" in text and "NVLink" in text
        assert plan.jobs[0].layout["tp"] == 4 and plan.jobs[0].layout["pp"] == 2  # TP8 before
    else:
        assert plan.jobs[0].layout["tp"] > 1  # tensor parallel over NVLink: nothing to say


def test_the_warning_reaches_the_terminal_and_json(tmp_path):
    path = _problem(tmp_path, "RTX4090-24G")
    run = [sys.executable, "-m", "solver.cli", "solve", str(path)]
    text = subprocess.run(run, capture_output=True, text=True, cwd=ROOT)
    assert text.returncode == 0, text.stderr
    assert "warning: job ft-7b runs tensor parallel TP4" in " ".join(text.stdout.split())
    data = json.loads(subprocess.run(run + ["--json"], capture_output=True, text=True, cwd=ROOT).stdout)
    assert len(data["warnings"]) == 1


def test_the_warning_reaches_the_html_report(tmp_path):
    from solver.report.html import render_html

    prob, cat = load_problem(_problem(tmp_path, "RTX4090-24G"))
    page = render_html(solve_problem(prob, cat), prob, cat)
    assert "<h2>Warnings</h2>" in page and "runs tensor parallel TP4 on RTX4090-24G" in page
