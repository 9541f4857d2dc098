"""Turn a Solution into a Plan: the raw schedule plus its readable summary (job × rental
GPU-days, idle capacity and cash flow from solver.model.ledger)."""

from __future__ import annotations

from collections import defaultdict

from solver.milp.capacity import discounted_variable
from solver.milp.registry import binding_limits
from solver.milp.site import chosen
from solver.milp.solution import UNPROVEN, Solution
from solver.model.ledger import cash_flow, job_rentals, rental_use
from solver.model.plan import (Allocation, Assignment, Contract, ExchangeRatesUsed, JobResult, Plan, Rental,
                               Schedule)


def cents(amount: float) -> float:
    """An amount to the cent, first to the micro-unit: one plan's cost read from two backends'
    floating-point values (1,329.3449999… and 1,329.3450001…) must print as one number, not
    1,329.34 and 1,329.35 (a differential test found that)."""
    return round(round(amount, 6), 2)


def extract_plan(sol: Solution) -> Plan:
    """Read the decision variables into a Plan; costs come from the objective's own terms."""
    schedule = _schedule(sol)
    inst = sol.milp.inst
    parts = {k: cents(v) for k, v in sol.cost_parts().items()}
    jobs = _jobs(sol, schedule)
    bound = max(sol.bound, 0.0)  # no plan costs less than nothing (a discount never exceeds its rent)
    gap = (sol.objective - bound) / sol.objective if sol.objective > 0 else 0.0
    allocations = _allocations(sol)
    horizon, width, done = inst.problem.horizon_days, schedule.period_days, schedule.assignments
    return Plan(problem=inst.problem.name, status=sol.status, total_cost=cents(sol.objective),
                currency=inst.problem.currency, exchange_rates=_rates(inst), allocations=allocations,
                jobs=jobs, cost_breakdown=parts,
                lower_bound=cents(bound), gap=round(max(gap, 0.0), 6),
                solve_seconds=round(sol.seconds, 3), backend=sol.backend, tie_break=sol.tie_break,
                binding=binding_limits(sol, jobs), warnings=_tie_warning(sol),
                start_date=inst.problem.start_date,
                job_rentals=job_rentals(allocations, done, width, horizon),
                rental_use=rental_use(allocations, done, width, horizon),
                cash_flow=cash_flow(allocations, done, inst.problem, inst.catalog, width), schedule=schedule)


def _rates(inst) -> ExchangeRatesUsed | None:
    """The exchange rates the plan's costs were converted with (None: every offer was in the
    problem's currency)."""
    if not inst.rates_used:
        return None
    given = inst.problem.exchange_rates
    return ExchangeRatesUsed(as_of=given.as_of.isoformat(), source=given.source, rates=inst.rates_used)


def _tie_warning(sol: Solution) -> list[str]:
    """A tie-break that ran out of time: the plan is still of the optimal cost, but another plan of
    that cost may finish sooner or rent less (solver.engine.tiebreak), so a re-run may differ."""
    if sol.tie_break != UNPROVEN:
        return []
    return ["tie-break not proven in its time: another plan of the same cost may finish sooner or rent "
            "fewer offers, and the same input may give another plan of this cost (raise --time-limit)"]


def _schedule(sol: Solution) -> Schedule:
    """The decision in the schedule's periods (inst.timeline.grain days): a period of the model
    is written as each of its grains (event buckets day by day), a contract from its first."""
    milp, inst = sol.milp, sol.milp.inst
    timeline = inst.timeline
    out = Schedule(period_days=timeline.grain)
    one_node = {job for job in milp.choices if (c := chosen(milp, job, sol.value)) is not None and c.node_config}
    for (key, s), var in milp.contracts.items():
        if sol.count(var) > 0:
            cfg = inst.configs[key]
            out.contracts.append(Contract(offer=cfg.offer.offer, interconnect=cfg.interconnect,
                                          start_period=timeline.grains(s)[0], nodes=sol.count(var),
                                          discounted=_discounted(sol, key, s)))
    for (key, t), var in milp.nodes.items():
        cfg = inst.configs[key]
        if not cfg.committed and sol.count(var) > 0:
            out.rentals += [Rental(offer=cfg.offer.offer, interconnect=cfg.interconnect, period=p,
                                   nodes=sol.count(var), discounted=_discounted(sol, key, t))
                            for p in timeline.grains(t)]
    for (i, t), var in sorted(milp.replicas.items(), key=lambda item: (item[0][1], item[0][0])):
        replicas = sol.count(var)
        if replicas > 0:
            opt = inst.options[i]
            cfg = inst.configs[opt.config]
            out.assignments += [Assignment(job=opt.job, offer=cfg.offer.offer, interconnect=cfg.interconnect,
                                           period=p, replicas=replicas, group_gpus=opt.group_gpus,
                                           within_one_node=opt.job in one_node) for p in timeline.grains(t)]
    out.assignments.sort(key=lambda a: a.period)
    return out


def _discounted(sol: Solution, key: str, t: int) -> bool:
    """Whether some of the rental's nodes are billed at the discounted price (fewer at full price than held)."""
    full = sol.milp.full_price.get((key, t))
    if full is None:
        return False
    return sol.count(discounted_variable(sol.milp, key, t)) - sol.count(full) > 0


def _allocations(sol: Solution) -> list[Allocation]:
    milp, inst = sol.milp, sol.milp.inst
    timeline = inst.timeline
    costs = _cost_by_variable(sol)
    rows = []
    for (key, s), var in sorted(milp.contracts.items()):
        nodes = sol.count(var)
        if nodes:
            cost = costs[var.index] + costs.get(_disc_index(milp, key, s), 0.0)
            start = timeline.starts[s]
            rows.append(_row(inst, key, nodes, start, start + inst.configs[key].offer.term_days, cost))
    for key, cfg in inst.configs.items():
        if cfg.committed:
            continue
        run: list[int] = []
        for t in list(inst.periods) + [None]:
            nodes = sol.count(milp.nodes[key, t]) if t is not None and (key, t) in milp.nodes else 0
            if run and (nodes != sol.count(milp.nodes[key, run[0]])):
                cost = sum(costs[milp.nodes[key, p].index] + costs.get(_disc_index(milp, key, p), 0.0) for p in run)
                rows.append(_row(inst, key, sol.count(milp.nodes[key, run[0]]), timeline.starts[run[0]],
                                 timeline.end(run[-1]), cost))
                run = []
            if nodes:
                run.append(t)
    return sorted(rows, key=lambda r: (r.start_day, r.datacenter, r.offer))


def _cost_by_variable(sol: Solution) -> dict[int, float]:
    out: dict[int, float] = defaultdict(float)
    for terms in sol.milp.cost.values():
        for var, coef in terms:
            out[var.index] += coef * sol.value(var)
    return out


def _disc_index(milp, key: str, t: int) -> int:
    var = milp.full_price.get((key, t))
    return var.index if var is not None else -1


def _row(inst, key: str, nodes: int, start: int, end: int, cost: float) -> Allocation:
    cfg = inst.configs[key]
    o = cfg.offer
    return Allocation(offer=o.offer, vendor=o.vendor, datacenter=o.datacenter, gpu=o.gpu, mode=o.mode,
                      interconnect=cfg.interconnect, nodes=nodes, gpus=nodes * o.gpus_per_node,
                      start_day=start, end_day=end, cost=cents(cost))


def _jobs(sol: Solution, schedule: Schedule) -> list[JobResult]:
    inst = sol.milp.inst
    pd, horizon = schedule.period_days, inst.problem.horizon_days
    options = {(o.job, o.config): i for i, o in enumerate(inst.options)}
    results = []
    for job in inst.problem.jobs:
        mine = [a for a in schedule.assignments if a.job == job.name]
        per_period: dict[int, int] = defaultdict(int)
        gpu_periods: dict[str, int] = defaultdict(int)
        done = 0.0
        for a in mine:
            key = f"{a.offer}:{a.interconnect}"
            per_period[a.period] += a.replicas * a.group_gpus
            gpu_periods[key] += a.replicas * a.group_gpus
            done += _work_done(sol, options[job.name, key], a, inst.timeline.grain_hours(a.period))
        main_key = max(gpu_periods, key=gpu_periods.get) if gpu_periods else None
        main = inst.options[options[job.name, main_key]] if main_key else None
        layout = main.layout if main else None
        copies: dict[int, int] = defaultdict(int)  # replicas of the main configuration's group at once
        for a in mine:                              # (on every offer running the same group)
            if _same_group(inst.options[options[job.name, f"{a.offer}:{a.interconnect}"]].layout, layout):
                copies[a.period] += a.replicas
        replicas = max(copies.values(), default=0)
        results.append(JobResult(
            name=job.name, finish_day=min((max(per_period) + 1) * pd, horizon) if per_period else 0,
            gpus=max(per_period.values(), default=0),
            gpu_types=sorted({inst.configs[k].offer.gpu for k in gpu_periods}),
            layout=_layout_dict(layout, replicas), layout_text=layout.label(replicas) if layout else "",
            memory_per_gpu_gb=round(layout.memory_per_gpu_gb, 2) if layout else 0.0,
            required_eflop=round(inst.required[job.name], 3), done_eflop=round(done, 3),
            sites=sorted({inst.configs[k].offer.datacenter for k in gpu_periods})))
    return results


def _work_done(sol: Solution, index: int, a: Assignment, hours: float) -> float:
    """EFLOP the option's replicas do in the assignment's `hours`, at the size tier the plan chose."""
    milp = sol.milp
    opt = milp.inst.options[index]
    choice = chosen(milp, opt.job, sol.value)
    factor = choice.factor if choice is not None else opt.tiers[0].factor
    return a.replicas * opt.work_per_replica(hours, factor)


def _same_group(a, b) -> bool:
    return a is not None and b is not None and (a.tp, a.pp, a.dp, a.zero, a.recompute) == \
        (b.tp, b.pp, b.dp, b.zero, b.recompute)


def _layout_dict(layout, replicas: int) -> dict:
    """The group (gpus = tp·pp·zero_shards) of the job's main configuration, `replicas` (the most
    copies of that group running at once on any of the job's offers) and `dp`, the job's
    data-parallel degree: replicas × zero_shards, the DP of its label "20 replicas of TP2×PP1
    (DP20)". Why not the group's sharding degree under that name: the workbook's DP column read
    1 beside "(DP4)" (issue 36)."""
    if layout is None:
        return {}
    return {"gpus": layout.gpus, "tp": layout.tp, "pp": layout.pp, "dp": replicas * layout.dp,
            "zero_shards": layout.dp, "zero": layout.zero, "recompute": layout.recompute,
            "multi_node": layout.multi_node, "replicas": replicas}
