"""Software stacks through the CLI (issue 36, item 2): `stacks: [cuda]` keeps a plan off Ascend;
a silent problem whose plan leaves CUDA says so in its headline, with the saving over the best
CUDA plan, in solve (terminal, --json) and whatif alike; whatif repeats solve's mixed-stack warning.

Numbers: one job of 8 GPU-days in 30 days; a CUDA node costs 20 000 a month, a CANN node 15 000.
"""

from __future__ import annotations

import json

from tests.builders import catalog, datacenter, gpu, job, monthly, problem, run_cli, write_problem
from solver.model.problem import Restrict


def _files(tmp_path, *jobs, **kw):
    cards = (gpu("G80", 80), gpu("N80", 80, stack="cann"))
    cat = catalog(monthly("cuda-node", 20_000), monthly("cann-node", 15_000, gpu="N80"), gpus=cards,
                  datacenters=(datacenter("D1"),))
    return write_problem(tmp_path, problem(*(jobs or (job("a", days=8, deadline_days=30),)), horizon_days=30, **kw),
                         cat)


def test_solve_and_whatif_name_the_switch_and_its_saving(tmp_path):
    path = _files(tmp_path)
    out = json.loads(run_cli("solve", str(path), "--json").stdout)
    assert out["total_cost"] == 15_000 and out["stack_switch"]["saving"] == 5_000
    text = run_cli("solve", str(path)).stdout
    head = text.split("Rentals")[0]
    assert "software stack:" in head and "CANN (N80)" in head and "saves 5,000 CNY" in head
    whatif = run_cli("whatif", str(path), "--set", "redundancy=0.1")
    assert whatif.returncode == 0, whatif.stderr[-2000:]
    assert "scenario's software stack:" in whatif.stdout and "CANN (N80)" in whatif.stdout
    data = json.loads(run_cli("whatif", str(path), "--set", "redundancy=0.1", "--json").stdout)
    assert data["scenario"]["stack_switch"]["saving"] > 0 and data["baseline"]["stack_switch"]["saving"] == 5_000


def test_stacks_cuda_keeps_the_plan_on_cuda(tmp_path):
    path = _files(tmp_path, stacks=["cuda"])
    out = json.loads(run_cli("solve", str(path), "--json").stdout)
    assert {a["gpu"] for a in out["allocations"]} == {"G80"} and out["stack_switch"] is None


def test_whatif_repeats_the_mixed_stack_warning(tmp_path):
    path = _files(tmp_path, job("a", days=8, deadline_days=30, restrict=Restrict(gpus=["G80"])),
                  job("b", days=8, deadline_days=30, restrict=Restrict(gpus=["N80"])))
    solve = run_cli("solve", str(path)).stdout
    whatif = run_cli("whatif", str(path), "--set", "redundancy=0.1").stdout
    assert "software stacks" in solve and "software stacks" in whatif
