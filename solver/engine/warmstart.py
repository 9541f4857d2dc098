"""A first plan for a model too big to solve whole in its time limit.

The same model, with each job held to its few cheapest fabric domains (or configurations,
for independent replicas), is solved first; its plan then seeds the solve of the whole
model as a MIP start.

Why: once HiGHS holds a plan it fixes variables by reduced cost and restarts on a
smaller model; on big models its own heuristics find a first plan late or not at all.
Measured (tests/bench/bench_milp.py --backends highs,highs-cold, 60 s limit, 2 cores):
on the target synthetic instance (300 configurations × 60 periods × 20 jobs, seeds 1
and 2) the whole model alone ends with no plan, its root LP unfinished; with the first
plan the solve returns a verified plan (but no useful bound: the root LP is still
unfinished at 60 s). On the large one (150 × 45 × 10), seed 2: 0.69 % gap in 50 s
against 6.00 % at 60 s; seed 3: 6.89 % against 12.79 %, each with a cheaper plan; seed 1:
0.96–2.56 % against 1.11–2.56 % over repeated runs, the same plan (noise).
The restriction only sets upper bounds to zero, so every row an analysis added to the
model holds for the first plan too, and the first plan is a plan of the whole model.

Models beyond GUIDED_VARIABLES get a second restriction instead of the whole-model solve:
the domains where the LP relaxation (solver.engine.relaxation, solved beside the MILP) does
the jobs' work (`lp_shortlist`). The flow is solver.engine.big.run_big.
"""

from __future__ import annotations

from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import BIG_MODEL_VARIABLES, Milp
from solver.milp.instance import Instance, JobOption
from solver.milp.work import work_coefficients

WARM_START_VARIABLES = BIG_MODEL_VARIABLES
"""Models with at least this many variables get a first plan (the medium synthetic instance,
7.8k variables, reaches 0.4 % in 4 s alone; the large one, 45k, is where the full model
alone ran out of time)."""
FIRST_PLAN_VARIABLES = 3_000
"""Models with at least this many variables (and fewer than WARM_START_VARIABLES) are solved
whole from a first plan too (solver.engine.big.run_started): HiGHS' own heuristics found the
first plan of issue 33's storage problem (11k variables) after 10 s, the restriction to each
job's cheapest domains in 1.8 s at 0.1 % above the optimum, and the whole model from it proved
the optimum in 7.8 s more (21.7 s alone). Below it HiGHS solves in about a second alone."""
FIRST_PLAN_SECONDS = 10.0
"""The first plan's time when the solve has no time limit (FIRST_SHARE of it otherwise)."""
FIRST_SHARE = 0.25
"""Share of the time limit the first plan may take (it needs 5 s of 60 on the large instance)."""
FIRST_DOMAINS = 2
"""Domains (or configurations) per job in the first restriction; doubled while it has no plan."""
FIRST_GAP = 0.01
"""Relative gap the first plan is solved to: it only has to be good enough to prune with."""
GUIDED_VARIABLES = 30_000
"""Models with at least this many variables wait, after the first plan, for the LP
relaxation and get a plan from the domains it uses before (time permitting) HiGHS gets
the whole model. Measured at 60 s (tests/bench/bench_milp.py, 2 cores): on the target
instances (186k-201k variables) HiGHS' MIP finishes no root LP in time (seed 1: 470 s),
so the whole-model step adds nothing there. The large ones (37k-48k) once closed their
gap to 1 % in the whole-model step, but since storage is billed to each job's finish
their root LP takes over a minute by dual simplex; with the whole-model step's LPs by
interior point (solver.engine.big.run_big), seeds 1-3 at 60 s, one run each: threshold
100k 800,170 / 549,754 / 892,692 CNY at 23.9 / 6.3 / 17.6 %, threshold 30k 739,448 /
558,382 / 805,369 CNY at 17.7 / 8.3 / 8.7 %."""
REPAIR_SECONDS = 10.0
"""Most time for the repair of a plan whose single-node jobs do not fit (solver.engine.repair;
its solve stops at repair.REPAIR_GAP, usually well under a second). Here, with the steps'
other shares of the time, because the big-model strategy (solver.engine.big) keeps this much
of its time back for a repair too, and the repair sits above it (repair → run → big)."""
GUIDED_MIN_SHARE = 0.1
"""The least share of the time limit worth starting the LP-guided plan with; an LP solved
later only gives the bound."""
GUIDED_MAX_SHARE = 0.25
"""The most the LP-guided plan may take, so that a long time limit leaves the whole model
its turn."""
FINAL_SHARE = 0.1
"""Beyond GUIDED_VARIABLES, the whole model is solved after the guided plan only if this
share of the time limit is left: HiGHS needs seconds just to load such a model."""
WIDER_DOMAINS = 4
"""Domains per job in the step that improves the first plan while the LP relaxation runs
(solver.engine.big._while_lp_runs): twice the first plan's."""
WIDER_SHARE = 0.2
"""The most that step may take (12 s of 60). On the target synthetic instance, seeds 1-6 at
60 s, it improved the first plan of seeds 1, 5 and 6 (by 4%, 66% and 33%) within that time."""
WIDER_MIN_SECONDS = 5.0
"""Below this the step is not started: loading a model of 200k variables alone takes seconds."""
LP_SHARE = 0.01
"""A domain is in the LP-guided restriction when the LP relaxation does at least this share
of the job's work there."""


def unit_cost(inst: Instance, opt: JobOption) -> float:
    """CNY per EFLOP on the option's configuration at its fastest tier with whole nodes busy.

    A committed node is charged its term price over the periods of its term the job can use.
    """
    cfg = inst.configs[opt.config]
    factor = max(tier.factor for tier in opt.tiers)
    work_per_node_hour = opt.work_per_replica(1.0, factor) * cfg.offer.gpus_per_node / opt.group_gpus
    if cfg.committed:
        covered = opt.periods[:max(1, cfg.term_periods)]
        per_hour = cfg.node_cost_term / sum(inst.hours[t] for t in covered)
    else:
        per_hour = cfg.node_cost_hour
    return per_hour / work_per_node_hour


def job_alone(milp: Milp, i: int, data_cost: dict[int, float]) -> float:
    """What option i's job would cost done wholly on its configuration: its work at the unit
    cost, plus its storage and egress at that vendor's site (`data_cost`: the model's own
    data terms by flag variable, from `data_costs`).

    Only a ranking of where to look first: capacity, lead times and other jobs are ignored.
    """
    inst = milp.inst
    opt = inst.options[i]
    offer = inst.configs[opt.config].offer
    u = milp.data_sites.get((opt.job, offer.vendor, offer.datacenter))
    data = 0.0 if u is None else data_cost.get(u.index, 0.0)
    return inst.required[opt.job] * unit_cost(inst, opt) + data


def data_costs(milp: Milp) -> dict[int, float]:
    """Storage and egress charged on each data-site flag (variable index → CNY); storage
    paid per period on s[j,v,d,t] counts as if the job ran to its last period."""
    site_of = {s.index: milp.data_sites[job, vendor, dc].index for (job, vendor, dc, _t), s in milp.stored.items()}
    out: dict[int, float] = defaultdict(float)
    for part in ("storage", "egress"):
        for var, coef in milp.cost[part]:
            out[site_of.get(var.index, var.index)] += coef
    return out


def groups_by_cost(milp: Milp) -> dict[str, list[list[int]]]:
    """Per job, its options grouped by fabric domain (configuration for independent replicas),
    cheapest group first (by its cheapest option's `job_alone`)."""
    inst = milp.inst
    groups: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, (job, group) in option_groups(milp).items():
        groups[job][group].append(i)
    data = data_costs(milp)
    cost = [job_alone(milp, i, data) for i in range(len(inst.options))]
    return {job: sorted(by.values(), key=lambda members: (min(cost[i] for i in members), members))
            for job, by in groups.items()}


def shortlist(milp: Milp, per_job: int, ranking: dict[str, list[list[int]]] | None = None) -> set[int]:
    """Option indices of each job's `per_job` cheapest groups (`ranking`: groups_by_cost, if already made)."""
    ranking = groups_by_cost(milp) if ranking is None else ranking
    return {i for ranked in ranking.values() for members in ranked[:per_job] for i in members}


def lp_shortlist(milp: Milp, lp_values, plan: dict[int, float] | None = None) -> set[int]:
    """Option indices of the domains where the LP relaxation (`lp_values`, by variable index)
    does at least LP_SHARE of each job's work, and of the domains `plan` runs on.

    Why: ranking by price alone ignores stock, power and the other jobs; the LP weighs
    them all. On the large synthetic instance, seed 1, the restriction to the LP's domains
    gives the best plan known (663,928 CNY) in 3 s of MILP, where the two cheapest domains
    per job give 831,835. Keeping `plan`'s domains keeps that plan a plan of the restriction,
    so a solve seeded with it can only improve on it.
    """
    group = option_groups(milp)
    work = lp_work(milp, lp_values)
    total: dict[str, float] = defaultdict(float)
    for (job, _), done in work.items():
        total[job] += done
    chosen = {g for g, done in work.items() if done > 0 and done >= LP_SHARE * total[g[0]]}
    return {i for i, g in group.items() if g in chosen} | (plan_groups(milp, plan) if plan else set())


def lp_work(milp: Milp, lp_values) -> dict[tuple[str, str], float]:
    """The work (EFLOP) the LP relaxation (`lp_values`, by variable index) does in each
    option group (option_groups); solver.engine.experimental.fixopt picks each job's largest."""
    group = option_groups(milp)
    work: dict[tuple[str, str], float] = defaultdict(float)
    for (i, t), coef in work_coefficients(milp).items():
        work[group[i]] += max(float(lp_values[milp.replicas[i, t].index]), 0.0) * coef
    return work


def plan_groups(milp: Milp, plan: dict[int, float]) -> set[int]:
    """Option indices of every domain (configuration, for independent replicas) `plan` runs a job on."""
    group = option_groups(milp)
    used = {group[i] for (i, _t), var in milp.replicas.items() if plan.get(var.index, 0.0) > 0.5}
    return {i for i, g in group.items() if g in used}


def held_out(milp: Milp, keep: set[int]) -> list[mb.Variable]:
    """Variables to hold at zero so that only the kept options run.

    Replicas of the other options, the choice flags of domains no kept option is in, and
    the capacity (nodes, contracts, discounts) of configurations no kept option uses.
    """
    inst = milp.inst
    keep = keep | forced(milp)
    out = [var for (i, _t), var in milp.replicas.items() if i not in keep]
    kept = {(inst.options[i].job, inst.options[i].domain, inst.options[i].config) for i in keep}
    domains = {(job, domain) for job, domain, _ in kept}
    for job, choices in milp.choices.items():
        for c in choices:
            usable = (job, c.domain, c.node_config) in kept if c.node_config else (job, c.domain) in domains
            if not usable and (job, c.name) in milp.sites:
                out.append(milp.sites[job, c.name])
    used = {config for _, _, config in kept}
    for table in (milp.nodes, milp.contracts, milp.full_price, milp.discount_flag):
        out.extend(var for (config, _t), var in table.items() if config not in used)
    return out


def forced(milp: Milp) -> set[int]:
    """Options of choices a caller fixed to 1 (solver.milp.decompose.fix_choice): never held out,
    or the restriction would be infeasible by construction."""
    inst = milp.inst
    pinned = {(job, c.domain) for job, choices in milp.choices.items() for c in choices
              if (job, c.name) in milp.sites and milp.sites[job, c.name].lower_bound >= 0.5}
    return {i for i, opt in enumerate(inst.options) if (opt.job, opt.domain) in pinned}


def option_groups(milp: Milp) -> dict[int, tuple[str, str]]:
    """Each option's (job, fabric domain), or (job, configuration) for independent replicas:
    the unit the restrictions keep or drop."""
    return {i: (opt.job, opt.domain or opt.config) for i, opt in enumerate(milp.inst.options)}
