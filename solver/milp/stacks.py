"""Software stacks in a plan: a warning when a plan or a job needs more than one.

Why: an Ascend 910B runs training code built on Huawei's CANN stack (torch_npu, MindSpore),
an A100 code built on NVIDIA's CUDA. Mixing them is a porting and operations cost the
price columns do not show: a job split across stacks needs its code to run on both (and
its replicas cannot share one NCCL/HCCL collective), and a plan with jobs on different
stacks needs two toolchains. The planner still prices both as equals; the warning says so
(gpus.csv `stack`, default cuda).
"""

from __future__ import annotations

from collections import defaultdict

from solver.model.catalog import Catalog
from solver.model.plan import Plan

STACK_NAMES = {"cuda": "CUDA", "cann": "CANN", "rocm": "ROCm"}


def stack_warnings(plan: Plan, catalog: Catalog) -> list[str]:
    """One warning per job running on cards of more than one stack, and one for a plan whose
    jobs, each on one stack, still need more than one between them."""
    def stack(gpu: str) -> str:
        row = catalog.gpus.get(gpu)
        return row.stack if row is not None else "cuda"

    def listed(gpus: set[str]) -> str:
        by: dict[str, list[str]] = defaultdict(list)
        for g in sorted(gpus):
            by[stack(g)].append(g)
        return " and ".join(f"{', '.join(names)} ({STACK_NAMES.get(s, s)})" for s, names in sorted(by.items()))

    out = []
    for job in plan.jobs:
        if len({stack(g) for g in job.gpu_types}) > 1:
            out.append(f"job {job.name} runs on {listed(set(job.gpu_types))}: different software stacks, so its "
                       "training code must run on both and its replicas cannot share one collective; the cost "
                       "does not include that porting (restrict.gpus keeps it on one)")
    used = {g for job in plan.jobs for g in job.gpu_types}
    if not out and len({stack(g) for g in used}) > 1:
        out.append(f"the plan rents {listed(used)}: its jobs need different software stacks (two toolchains to "
                   "build and operate); the cost does not include that")
    return out
