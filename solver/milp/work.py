"""Work completion: each job's FLOPs, with redundancy, done inside its window."""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp


def add_work(milp: Milp) -> None:
    """Σ_{o,t,τ} k_jo·m[j,o,t,τ]·H_t·3600·F_jo·f_τ ≥ (1 + redundancy)·FLOPs_j   row `Work-<j>`.

    Work is in EFLOP. A job with no usable configuration still gets its row (0 ≥ FLOPs),
    so the infeasibility is reported against that job by name.
    """
    inst = milp.inst
    terms: dict[str, list[tuple[mb.Variable, float]]] = defaultdict(list)
    for (i, t, k), var in milp.replicas.items():
        opt = inst.options[i]
        terms[opt.job].append((var, opt.work_per_replica(inst.hours[t], opt.tiers[k])))
    for job in inst.problem.jobs:
        pairs = terms.get(job.name, [])
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in pairs], [c for _, c in pairs])
        milp.add_row(f"Work-{job.name}", lhs >= inst.required[job.name])
