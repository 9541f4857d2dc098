"""Storage and egress at each (vendor, datacenter) a job uses."""

from __future__ import annotations

import math

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.build import Milp
from solver.milp.work import replica_work, surplus


def add_data_costs(milp: Milp) -> None:
    """u[j,v,d] ∈ {0,1} is 1 when job j runs anywhere at vendor v's site d.

    Σ_{o at (v,d), t} w_jot·m[j,o,t] ≤ W_j·u[j,v,d]            row `Data-<j>-<v>-<d>`
    with w the replica's coefficient in the work row and W_j the most work some optimal
    plan does for j (solver.milp.work.surplus explains why that bound is valid).
    cost += u·egress_tb_j·price_egress + storage_tb_j·price_storage·(days from the job's
    start to its finish)/30 at every site it used (data staged before, checkpoints kept
    until the job ends; `_add_storage`). Billing the whole window instead made a later
    deadline dearer though the plan finished on the same day (a user's what-if: deadline
    15 → 22 days raised the optimum by 2,332 CNY, all storage).
    Egress is the one-off export of weights and logs (seed 002: ask if export is free),
    plus, at a datacenter other than the job's data.site, moving its dataset there once
    (each vendor's storage at that site gets its own copy, like storage).
    """
    inst, model = milp.inst, milp.model
    jobs = {j.name: j for j in inst.problem.jobs}
    groups: dict[tuple[str, str, str], list[tuple[mb.Variable, float]]] = defaultdict(list)
    by_period: dict[str, dict[int, list[tuple[mb.Variable, float]]]] = defaultdict(lambda: defaultdict(list))
    for (i, t), var in milp.replicas.items():
        opt = inst.options[i]
        offer = inst.configs[opt.config].offer
        term = (var, replica_work(milp, i, t))
        groups[opt.job, offer.vendor, offer.datacenter].append(term)
        by_period[opt.job][t].append(term)
    extra = surplus(milp) if groups else {}
    for (job_name, vendor, dc), terms in groups.items():
        job = jobs[job_name]
        offer = next(o for o in inst.catalog.offers.values() if o.vendor == vendor and o.datacenter == dc)
        storage = job.storage_tb * offer.storage_cny_per_tb_month / 30   # CNY per day kept
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
            _add_storage(milp, job, vendor, dc, u, storage, _running(milp, job_name, by_period[job_name], most))
        if egress > 0:
            milp.cost["egress"].append((u, egress))


def _add_storage(milp: Milp, job, vendor: str, dc: str, u: mb.Variable, per_day: float,
                 periods: list[int]) -> None:
    """Storage at (vendor, dc) from the job's start to its finish, when the job uses the site.

    r[j,t] = 1 while job j is not finished at period t: non-increasing in t, and 1 where
    any of j's replicas run (row `Finish-<j>-<t>-run`, its work from t on, shared by all
    the job's sites). s[j,v,d,t] ≥ u[j,v,d] + r[j,t] − 1 is the site's storage in period
    t, paid by the day; the days from the job's start to its first period are paid with u.
    Cost measured (`gpuplan solve`): seed-13b-100b 1.2–1.4 → 2.5–2.8 s, hybrid-burst 1.3–1.4 → 1.5–1.7 s.
    """
    first_day = periods[0] * milp.inst.period_days if periods else job.deadline_days
    if first_day > job.start_day:
        milp.cost["storage"].append((u, per_day * (first_day - job.start_day)))
    for t in periods:
        s = milp.model.new_num_var(0, 1, f"s[{job.name},{vendor},{dc},{t}]")
        milp.stored[job.name, vendor, dc, t] = s
        milp.add_row(f"Storage-{job.name}-{vendor}-{dc}-{t}", s >= u + milp.running[job.name, t] - 1)
        milp.cost["storage"].append((s, per_day * milp.inst.hours[t] / 24))


def _running(milp: Milp, job: str, members: dict[int, list[tuple[mb.Variable, float]]], most: float) -> list[int]:
    """The job's periods, each with its flag r[j,t] (created once per job, at its first
    storing site; see _add_storage). `members`: the job's replicas with their work, by period;
    `most`: the most work some optimal plan does for the job (as in the Data rows).

    Row `Finish-<j>-<t>-run`: the job's work from t on ≤ most·r[t], so the LP relaxation
    keeps a job "running" in proportion to the work still to do. The work from t on is a
    variable, W_t ≥ work in t + W_{t+1} (row `Finish-<j>-<t>-tail`; an inequality, which is
    all the run row needs): summing it out into each row took the target instance's build
    from 4 to 14 s (nonzeros grow with periods²).
    Work is counted in whole units of the job's least work of one replica in one period
    (a replica's work, rounded down, ≥ 1; `most` rounded down too: still a bound), so W
    takes whole values: CP-SAT makes every variable an integer, and with W in EFLOP it
    called four random tiny problems with storage infeasible or priced a plan 6× the
    optimum as optimal (tests/test_backend_agreement.py). Replica counts alone would do
    for CP-SAT but are weaker where replicas differ in speed: hybrid-burst took 2.5-2.8 s
    with HiGHS against 2.0-2.1 s with units, 1.6-1.8 s in EFLOP.
    Every period gets a flag, though the job cannot have finished in its first few: leaving
    those out (paid on u) made seed-13b-100b slower, 1.9 → 2.8–3.6 s."""
    if not members:
        return []
    first, last = min(members), max(members)
    if (job, last) not in milp.running:
        model, later = milp.model, None
        least = min(w for here in members.values() for _, w in here)
        units = math.floor(most / least + 1e-9)
        for t in range(last, first - 1, -1):
            r = milp.running[job, t] = model.new_bool_var(f"r[{job},{t}]")
            tail = model.new_num_var(0, units, f"W[{job},{t}]")
            here = members.get(t, [])
            work = mb.LinearExpr.weighted_sum([v for v, _ in here], [math.floor(w / least + 1e-9) for _, w in here])
            milp.add_row(f"Finish-{job}-{t}-tail", tail >= work + (later if later is not None else 0))
            milp.add_row(f"Finish-{job}-{t}-run", tail <= units * r)
            if t < last:
                milp.add_row(f"Finish-{job}-{t}", r >= milp.running[job, t + 1])
            later = tail
    return list(range(first, last + 1))


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
