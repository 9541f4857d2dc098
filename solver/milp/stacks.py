"""Software stacks in a plan: a warning when a plan or a job needs more than one, and the
headline's note when a plan leaves the catalog's usual stack though the problem never said
its code runs elsewhere (`stack_switch`).

Why: an Ascend 910B runs training code built on Huawei's CANN stack (torch_npu, MindSpore),
an A100 code built on NVIDIA's CUDA. Mixing them is a porting and operations cost the
price columns do not show: a job split across stacks needs its code to run on both (and
its replicas cannot share one NCCL/HCCL collective), and a plan with jobs on different
stacks needs two toolchains. The planner still prices both as equals; the warning says so
(gpus.csv `stack`, default cuda).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from solver.model.catalog import Catalog
from solver.model.plan import Plan, StackSwitch
from solver.model.problem import Problem

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


def usual_stack(catalog: Catalog) -> str:
    """The catalog's usual stack: the one most of its GPU rows need (cuda on a tie or an empty catalog)."""
    counts = Counter(g.stack for g in catalog.gpus.values())
    return max(sorted(counts), key=lambda s: (counts[s], s == "cuda"), default="cuda")


def off_stack(plan: Plan, problem: Problem, catalog: Catalog) -> list[str]:
    """The stacks other than the usual one a plan runs on, when no job says which it may use.

    Why only then: a problem stating `stacks` (or a job its own) made the switch a decision;
    one that is silent would otherwise get a port to CANN or ROCm as a surprise."""
    if any(problem.job_stacks(job) is not None for job in problem.jobs):
        return []
    usual = usual_stack(catalog)
    used = {catalog.gpus[g].stack for job in plan.jobs for g in job.gpu_types if g in catalog.gpus}
    return sorted(used - {usual})


def stack_switch(plan: Plan, catalog: Catalog, others: list[str], same_stack: Plan | None,
                 why_none: str) -> StackSwitch:
    """The headline's note: the switch, and the saving over `same_stack` (the best plan on the
    usual stack alone; None with `why_none` saying why there is none)."""
    usual = usual_stack(catalog)
    gpus = sorted({g for job in plan.jobs for g in job.gpu_types
                   if g in catalog.gpus and catalog.gpus[g].stack in others})
    names = " and ".join(STACK_NAMES.get(s, s) for s in others)
    head = (f"runs on {names} ({', '.join(gpus)}), not the catalog's usual {STACK_NAMES.get(usual, usual)}: "
            f"the training code must be ported")
    if same_stack is None:
        return StackSwitch(stacks=others, usual=usual, same_stack_cost=None, saving=None,
                           text=f"{head}; {why_none} (stacks: [{usual}] keeps it there)")
    saving = round(same_stack.total_cost - plan.total_cost, 2)
    return StackSwitch(stacks=others, usual=usual, same_stack_cost=same_stack.total_cost, saving=saving,
                       text=f"{head}; it saves {saving:,.0f} {plan.currency} ({saving / same_stack.total_cost:.1%}) "
                            f"over the best {STACK_NAMES.get(usual, usual)} plan ({same_stack.total_cost:,.0f}; "
                            f"stacks: [{usual}] keeps it there)")
