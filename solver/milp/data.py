"""Storage and egress at each (vendor, datacenter) a job uses."""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp
from solver.milp.work import replica_work, surplus


def add_data_costs(milp: Milp) -> None:
    """u[j,v,d] ∈ {0,1} is 1 when job j runs anywhere at vendor v's site d.

    Σ_{o at (v,d), t} w_jot·m[j,o,t] ≤ W_j·u[j,v,d]            row `Data-<j>-<v>-<d>`
    with w the replica's coefficient in the work row and W_j the most work some optimal
    plan does for j (solver.milp.work.surplus explains why that bound is valid).
    cost += u·(storage_tb_j·price_storage·window_days/30 + egress_tb_j·price_egress)
    Storage is kept for the job's whole window (data staged before, checkpoints after);
    egress is the one-off export of weights and logs (seed 002: ask if export is free),
    plus, at a datacenter other than the job's data.site, moving its dataset there once
    (each vendor's storage at that site gets its own copy, like storage).
    """
    inst, model = milp.inst, milp.model
    jobs = {j.name: j for j in inst.problem.jobs}
    groups: dict[tuple[str, str, str], list[tuple[mb.Variable, float]]] = defaultdict(list)
    for (i, t), var in milp.replicas.items():
        opt = inst.options[i]
        offer = inst.configs[opt.config].offer
        groups[opt.job, offer.vendor, offer.datacenter].append((var, replica_work(milp, i, t)))
    extra = surplus(milp) if groups else {}
    for (job_name, vendor, dc), terms in groups.items():
        job = jobs[job_name]
        offer = next(o for o in inst.catalog.offers.values() if o.vendor == vendor and o.datacenter == dc)
        window = job.deadline_days - job.start_day
        storage = job.storage_tb * offer.storage_cny_per_tb_month * window / 30
        egress = job.egress_tb * offer.egress_cny_per_tb + dataset_egress(inst, job, dc)
        if storage <= 0 and egress <= 0:
            continue
        u = model.new_bool_var(f"u[{job_name},{vendor},{dc}]")
        milp.data_sites[job_name, vendor, dc] = u
        milp.data_members[job_name, vendor, dc] = [v for v, _ in terms]
        most = inst.required[job_name] / _slowest(milp, job_name) + extra[job_name]
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [w for _, w in terms])
        milp.add_row(f"Data-{job_name}-{vendor}-{dc}", lhs <= most * u)
        if storage > 0:
            milp.cost["storage"].append((u, storage))
        if egress > 0:
            milp.cost["egress"].append((u, egress))


def dataset_egress(inst, job, dc: str) -> float:
    """CNY to move the job's dataset to datacenter dc: dataset_tb × the job's egress price,
    else the data site's egress price (the highest if its vendors differ; load rejects that)."""
    if job.data is None or job.data.site == dc:
        return 0.0
    price = job.data.egress_cny_per_tb
    if price is None:
        price = max((o.egress_cny_per_tb for o in inst.catalog.offers.values() if o.datacenter == job.data.site),
                    default=0.0)
    return job.data.dataset_tb * price


def _slowest(milp: Milp, job: str) -> float:
    """Factor of the slowest choice when the choice flags carry it (raw work), else 1."""
    choices = milp.choices.get(job, [])
    return min(c.factor for c in choices) if len(choices) > 1 else 1.0
