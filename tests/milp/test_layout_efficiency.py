"""The planner prices a layout's efficiency (issue 36, item 1): tensor parallelism over PCIe
makes a plan dearer than the same plan on NVLink cards, and no warning is left to say the MFU
does not count it.

The job: QLoRA of a 65B model at sequence 4096 (TP4×PP1 on 48 GB cards, the `gpuplan estimate`
example of the issue), 5e20 FLOPs on one 8-GPU node: 5e20 ÷ (8 × 126.7 TFLOPS) = 5.7 days on
NVLink cards (6 node-days, 4,608 CNY), ÷ 0.78 on PCIe: 7.3 days (8 node-days, 6,144 CNY); two
catalogs alike but for the card's form (pcie or sxm).
"""

from __future__ import annotations

import pytest

from tests.builders import catalog, gpu, hourly, job, problem, solve
from solver.estimate.efficiency import tensor_link_factor
from solver.milp.instance import build_instance
from solver.model.problem import ModelSpec

L65 = ModelSpec(params=65e9, layers=80, hidden=8192, heads=64, seq_len=4096)


def _case(form: str):
    card = gpu("L48", 48, bf16_tflops=362.05, default_mfu=0.35, form=form)
    cat = catalog(hourly("n", 4, gpu="L48", max_nodes=1), gpus=(card,))   # 8 GPUs, 768 CNY a day
    prob = problem(job("q", kind="qlora", model=L65, flops=5e20, deadline_days=20), horizon_days=20)
    return prob, cat


def test_the_rate_carries_the_pcie_factor():
    rates = {}
    for form in ("pcie", "sxm"):
        prob, cat = _case(form)
        (opt,) = build_instance(prob, cat).options
        assert (opt.layout.tp, opt.layout.pp) == (4, 1)
        rates[form] = opt.rate_flops
    factor = tensor_link_factor(4, 8192, 362.05 * 0.35, nvlink=False)
    assert rates["pcie"] / rates["sxm"] == pytest.approx(factor) and factor < 0.85


def test_a_pcie_tp_plan_costs_more_than_the_same_on_nvlink_and_is_not_warned_about():
    plans = {form: solve(*_case(form)) for form in ("pcie", "sxm")}
    assert (plans["sxm"].total_cost, plans["pcie"].total_cost) == (4_608, 6_144)
    assert not any("NVLink" in w or "does not count" in w for p in plans.values() for w in p.warnings)
