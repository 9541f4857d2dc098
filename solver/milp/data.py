"""Storage and egress at each (vendor, datacenter) a job uses."""

from __future__ import annotations

import math

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp
from solver.milp.instance import transfer_days
from solver.milp.work import replica_work, surplus_by_domain


def add_data_costs(milp: Milp) -> None:
    """u[j,v,d] ∈ {0,1} is 1 when job j runs anywhere at vendor v's site d.

    Σ_{o at (v,d), t} (w_jot / W_jo)·m[j,o,t] ≤ u[j,v,d]          row `Data-<j>-<v>-<d>`
    with w the replica's coefficient in the work row and W_jo the most work some optimal
    plan does for j in o's fabric domain (`most_work`): each replica counts as the share
    of the job it does.
    cost += u·egress_tb_j·price_egress + storage_tb_j·price_storage·(days from the job's
    first GPU day at that site, less its dataset's transfer there, to its finish)/30 at
    every site it used (the data must be in place when the GPUs start, checkpoints kept
    until the job ends; `_add_storage`). Billing the whole window instead made a later
    deadline dearer though the plan finished on the same day (a user's what-if: deadline
    15 → 22 days raised the optimum by 2,332 CNY, all storage); billing from the job's
    start charged 14 days of 20 TB at Fangshan before its H100s arrived (issue 36).
    Egress is the one-off export of weights and logs (seed 002: ask if export is free),
    plus, at a datacenter other than the job's data.site, moving its dataset there once
    (each vendor's storage at that site gets its own copy, like storage).
    """
    inst, model = milp.inst, milp.model
    jobs = {j.name: j for j in inst.problem.jobs}
    groups: dict[tuple[str, str, str], list[tuple[mb.Variable, float]]] = defaultdict(list)
    by_period: dict[str, dict[int, list[tuple[mb.Variable, float, int]]]] = defaultdict(lambda: defaultdict(list))
    by_site: dict[tuple[str, str, str], dict[int, list[tuple[mb.Variable, float, int]]]] = defaultdict(
        lambda: defaultdict(list))
    most = most_work(milp) if milp.replicas else {}
    for (i, t), var in milp.replicas.items():
        opt = inst.options[i]
        offer = inst.configs[opt.config].offer
        share = replica_work(milp, i, t) / most[i]
        groups[opt.job, offer.vendor, offer.datacenter].append((var, share))
        by_period[opt.job][t].append((var, share, i))
        by_site[opt.job, offer.vendor, offer.datacenter][t].append((var, share, i))
    for (job_name, vendor, dc), terms in groups.items():
        job = jobs[job_name]
        offer = next(o for o in inst.catalog.offers.values() if o.vendor == vendor and o.datacenter == dc)
        storage = job.storage_tb * offer.storage_per_tb_month / 30   # per day kept, problem currency
        egress = job.egress_tb * offer.egress_per_tb + dataset_egress(inst, job, dc)
        if storage <= 0 and egress <= 0:
            continue
        u = model.new_bool_var(f"u[{job_name},{vendor},{dc}]")
        milp.data_sites[job_name, vendor, dc] = u
        milp.data_members[job_name, vendor, dc] = [v for v, _ in terms]
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [w for _, w in terms])
        milp.add_row(f"Data-{job_name}-{vendor}-{dc}", lhs <= u)
        if storage > 0:
            _add_storage(milp, job, (vendor, dc), u, storage, _running(milp, job_name, by_period[job_name]),
                         dict(by_site[job_name, vendor, dc]))
        if egress > 0:
            milp.cost["egress"].append((u, egress))


def _add_storage(milp: Milp, job, site: tuple[str, str], u: mb.Variable, per_day: float,
                 periods: list[int], here: dict[int, list[tuple[mb.Variable, float, int]]]) -> None:
    """Storage at site (vendor, dc) from the job's first GPU day there, less the days its
    dataset takes to arrive (`transfer_days`), to the job's finish; never before.

    r[j,t] = 1 while job j is not finished at period t: non-increasing in t, and 1 where
    any of j's replicas run (row `Finish-<j>-<t>-run`, its share from t on, shared by all
    the job's sites). b[j,v,d,t] = 1 once the job has run at the site: non-decreasing (row
    `Storage-<j>-<v>-<d>-<t>-on`) and K·b ≥ the job's share done there in t (row `-start`,
    shares in whole units as in `_running`: CP-SAT reads every variable as an integer).
    `-now`: the share done there in t ≤ the most it can be · s[t] (a period with work at
    the site stores), so the LP relaxation stores for as long as the work takes: without
    it, 0.04 of the 5 days in tests/milp/test_data.py. A running sum of the share done
    (b ≥ it) made the LP no stronger and seed-13b-100b 2–3× slower (issue 36).
    s[j,v,d,t] ≥ b[j,v,d,t] + r[j,t] − 1 (row `Storage-<j>-<v>-<d>-<t>`) is the site's
    storage in period t, paid by the day; the transfer's days before the first GPU day are
    paid with u. Periods before the site's first usable one get no flag (nothing stored).
    Cost measured (`gpuplan solve`): seed-13b-100b 1.2–1.4 → 2.5–2.8 s, hybrid-burst 1.3–1.4 → 1.5–1.7 s
    (with r only); the b flags, same run, load 7 on 2 cores: seed-13b-100b 4.0–4.4 → 5.0–5.2 s,
    hybrid-burst 1.8–3.4 → 4.0–4.4 s.
    """
    inst, model = milp.inst, milp.model
    vendor, dc = site
    wait = transfer_days(job, dc, inst.catalog)
    if wait:
        milp.cost["storage"].append((u, per_day * wait))
    name, before, largest = f"{job.name}-{vendor}-{dc}", None, _largest_tiers(milp, job.name)
    units = math.ceil(max((1 / share for terms in here.values() for _, share, _ in terms), default=1) - 1e-9)
    for t in (t for t in periods if here and t >= min(here)):
        b = model.new_bool_var(f"b[{job.name},{vendor},{dc},{t}]")
        milp.started[job.name, vendor, dc, t] = b
        members = here.get(t, [])
        weights = [math.floor(share * units + 1e-9) for _, share, _ in members]
        work = mb.LinearExpr.weighted_sum([v for v, _, _ in members], weights)
        most = math.floor(_most_units(milp, members, weights, largest) + 1e-9) or units  # units are whole
        if members:  # K·b, not most·b: measured 2× slower on seed-13b-100b
            milp.add_row(f"Storage-{name}-{t}-start", units * b >= work)
        if before is not None:
            milp.add_row(f"Storage-{name}-{t}-on", b >= before)
        s = model.new_num_var(0, 1, f"s[{job.name},{vendor},{dc},{t}]")
        milp.stored[job.name, vendor, dc, t] = s
        milp.add_row(f"Storage-{name}-{t}", s >= b + milp.running[job.name, t] - 1)
        if members:
            milp.add_row(f"Storage-{name}-{t}-now", work <= most * s)
        milp.cost["storage"].append((s, per_day * inst.hours[t] / 24))
        before = b


def _running(milp: Milp, job: str, members: dict[int, list[tuple[mb.Variable, float, int]]]) -> list[int]:
    """The job's periods, each with its flag r[j,t] (created once per job, at its first
    storing site; see _add_storage). `members`: the job's replicas by period, each with the
    share of the job it does (its work ÷ the most work some optimal plan does for the job in
    its fabric domain, `most_work`).

    Row `Finish-<j>-<t>-run`: the job's share done from t on ≤ r[t], so the LP relaxation
    keeps a job "running" in proportion to the work still to do. The share from t on is a
    variable, W_t ≥ share in t + W_{t+1} (row `Finish-<j>-<t>-tail`; an inequality, which is
    all the run row needs): summing it out into each row took the target instance's build
    from 4 to 14 s (nonzeros grow with periods²).
    Shares are counted in whole units, K per job (K the least whole number that gives every
    replica at least one unit; each replica's units rounded down, so still a bound) and
    W_t ≤ K·r[t]: CP-SAT makes every variable an integer, and with W in EFLOP it called four
    random tiny problems with storage infeasible or priced a plan 6× the optimum as optimal
    (tests/milp/test_backend_agreement.py).
    Why shares of each domain's own most work, not of the job's one most work (that of its
    slowest tier anywhere): a job that could run on Ethernet at half speed was then "done"
    in the LP relaxation at half its work on IB, which charged it a third of its storage
    (medium synthetic instance: storage 840 CNY in the LP, 14,747 in the optimum).
    Every period gets a flag, though the job cannot have finished in its first few: leaving
    those out (paid on u) made seed-13b-100b slower, 1.9 → 2.8–3.6 s."""
    if not members:
        return []
    first, last = min(members), max(members)
    if (job, last) not in milp.running:
        model, later = milp.model, None
        largest = _largest_tiers(milp, job)
        units = math.ceil(max(1 / share for here in members.values() for _, share, _ in here) - 1e-9)
        for t in range(last, first - 1, -1):
            r = milp.running[job, t] = model.new_bool_var(f"r[{job},{t}]")
            tail = model.new_num_var(0, units, f"W[{job},{t}]")
            here = members.get(t, [])
            weights = [math.floor(share * units + 1e-9) for _, share, _ in here]
            work = mb.LinearExpr.weighted_sum([v for v, _, _ in here], weights)
            milp.tails[job, t] = tail, [(v, w) for (v, _, _), w in zip(here, weights)]
            milp.add_row(f"Finish-{job}-{t}-tail", tail >= work + (later if later is not None else 0))
            milp.add_row(f"Finish-{job}-{t}-run", tail <= units * r)
            most = math.floor(_most_units(milp, here, weights, largest) + 1e-9)  # units are whole
            if most < units:
                milp.add_row(f"Finish-{job}-{t}-now", work <= most * r)
            if t < last:
                milp.add_row(f"Finish-{job}-{t}", r >= milp.running[job, t + 1])
            later = tail
    return list(range(first, last + 1))


def _largest_tiers(milp: Milp, job: str) -> dict[str, int]:
    """Per fabric domain, the most GPUs any of the job's tiers there allows."""
    out: dict[str, int] = defaultdict(int)
    for c in milp.choices.get(job, []):
        out[c.domain] = max(out[c.domain], c.bound_gpus)
    return out


def _most_units(milp: Milp, here: list[tuple[mb.Variable, float, int]], weights: list[int],
                largest: dict[str, int]) -> float:
    """The most units of a job's share its replicas can do in one period: in one fabric
    domain, at most its largest tier's GPUs at the best units per GPU there, and at most
    every replica at its bound. Why: with `Finish-<j>-<t>-now` (units in t ≤ this·r[t]) the
    LP relaxation can no longer finish a job sooner than its capacity allows."""
    inst = milp.inst
    bound: dict[str | None, float] = defaultdict(float)
    per_gpu: dict[str | None, float] = defaultdict(float)
    for (var, _, i), weight in zip(here, weights):
        opt = inst.options[i]
        bound[opt.domain] += weight * var.upper_bound
        per_gpu[opt.domain] = max(per_gpu[opt.domain], weight / opt.group_gpus)
    return max((min(bound[d], largest[d] * per_gpu[d]) if d in largest else bound[d] for d in bound), default=0.0)


def most_work(milp: Milp) -> dict[int, float]:
    """Per option, the most raw work (EFLOP) some optimal plan does for its job in the option's
    fabric domain: the need at the domain's slowest tier plus the most one replica-period there
    does (solver.milp.work.surplus explains why). A job runs in one domain, so the shares of
    its replicas (work ÷ this) sum to at most 1 in such a plan. Independent replicas (no
    domain) and a job with one choice use the job's own need and surplus."""
    inst = milp.inst
    slowest: dict[tuple[str, str | None], float] = {}
    for job, choices in milp.choices.items():
        if len(choices) > 1:  # else the replicas' work already carries the factor
            for c in choices:
                slowest[job, c.domain] = min(c.factor, slowest.get((job, c.domain), c.factor))
    extra = surplus_by_domain(milp)
    return {i: inst.required[opt.job] / slowest.get((opt.job, opt.domain), 1.0) + extra[opt.job, opt.domain]
            for i, opt in enumerate(inst.options)}


def dataset_egress(inst, job, dc: str) -> float:
    """Money (the problem's currency) to move the job's dataset to datacenter dc: dataset_tb × the job's egress price,
    else the data site's egress price (the highest if its vendors differ; load rejects that)."""
    if job.data is None or job.data.site == dc:
        return 0.0
    price = job.data.egress_per_tb
    if price is None:
        price = max((o.egress_per_tb for o in inst.catalog.offers.values() if o.datacenter == job.data.site),
                    default=0.0)
    return job.data.dataset_tb * price
