"""Storage and egress at each (vendor, datacenter) a job uses."""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp


def add_data_costs(milp: Milp) -> None:
    """u[j,v,d] ∈ {0,1} is 1 when job j runs anywhere at vendor v's site d.

    Σ_{o at (v,d),τ} m[j,o,t,τ] ≤ M·u[j,v,d] for every t    rows `Data-<j>-<v>-<d>-<t>`
    cost += u·(storage_tb_j·price_storage·window_days/30 + egress_tb_j·price_egress)
    Storage is kept for the job's whole window (data staged before, checkpoints after);
    egress is the one-off export of weights and logs (seed 002: ask if export is free).
    """
    inst, model = milp.inst, milp.model
    jobs = {j.name: j for j in inst.problem.jobs}
    groups: dict[tuple[str, str, str], dict[int, list[mb.Variable]]] = defaultdict(lambda: defaultdict(list))
    for (i, t, k), var in milp.replicas.items():
        opt = inst.options[i]
        offer = inst.configs[opt.config].offer
        groups[opt.job, offer.vendor, offer.datacenter][t].append(var)
    for (job_name, vendor, dc), by_t in groups.items():
        job = jobs[job_name]
        offer = next(o for o in inst.catalog.offers.values() if o.vendor == vendor and o.datacenter == dc)
        window = job.deadline_days - job.start_day
        storage = job.storage_tb * offer.storage_cny_per_tb_month * window / 30
        egress = job.egress_tb * offer.egress_cny_per_tb
        if storage <= 0 and egress <= 0:
            continue
        u = model.new_bool_var(f"u[{job_name},{vendor},{dc}]")
        milp.data_sites[job_name, vendor, dc] = u
        milp.data_members[job_name, vendor, dc] = [v for variables in by_t.values() for v in variables]
        for t, variables in by_t.items():
            bound = sum(v.upper_bound for v in variables)
            milp.add_row(f"Data-{job_name}-{vendor}-{dc}-{t}", mb.LinearExpr.sum(variables) <= bound * u)
        if storage > 0:
            milp.cost["storage"].append((u, storage))
        if egress > 0:
            milp.cost["egress"].append((u, egress))
