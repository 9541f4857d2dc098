"""Work completion: each job's FLOPs, with redundancy, done inside its window."""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp, RowKey


def add_work(milp: Milp) -> None:
    """Work done at the job's tier speed ≥ (1 + redundancy)·FLOPs_j      row `Work-<j>`.

    Independent replicas (one tier each):   Σ_{o,t} k_jo·m[j,o,t]·H_t·3600·F_jo·f_o ≥ R_j
    Synchronous job with one choice c:      the same with f = f_c.
    Synchronous job choosing among c:       Σ k·m·H·3600·F ≥ Σ_c (R_j / f_c)·z[j,c], written
        Σ k·m·H·3600·F − Σ_c R_j·(1/f_c − 1)·z[j,c] ≥ R_j  (Σ_c z = 1), so the row's
        right-hand side stays the job's requirement: a slower tier needs more raw work.
    Work is in EFLOP. A job with no usable configuration still gets its row (0 ≥ R_j),
    so the infeasibility is reported against that job by name.
    """
    inst = milp.inst
    terms: dict[str, list[tuple[mb.Variable, float]]] = defaultdict(list)
    for (i, t), var in milp.replicas.items():
        terms[inst.options[i].job].append((var, replica_work(milp, i, t)))
    for job in inst.problem.jobs:
        required = asked_work(milp, job.name)
        pairs = terms.get(job.name, [])
        choices = milp.choices.get(job.name, [])
        if len(choices) > 1:
            pairs = pairs + [(milp.sites[job.name, c.name], -required * (1 / c.factor - 1)) for c in choices]
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in pairs], [c for _, c in pairs])
        milp.add_row(f"Work-{job.name}", lhs >= required, RowKey("deadline", job.name))


def asked_work(milp: Milp, job: str) -> float:
    """The job's required work (EFLOP) as the MILP's work and need rows ask it.

    Why not the requirement itself: a job far below one replica's work in one period
    (`tokens: 1` on a 7B model: 5.5e-8 EFLOP) asks less than the solvers' feasibility
    tolerance (1e-6), so HiGHS read "no work at all" as done and the verifier withheld the
    plan. Raising such a requirement to what the job's least productive replica does in one
    period (at its slowest tier) asks exactly the same of an integer plan: any replica run
    for any period does at least that much, and none does nothing. Jobs above it are
    asked their requirement unchanged. Reports and the verifier use the real requirement."""
    required = milp.inst.required[job]
    if not milp.least_work:
        for (i, _t), w in work_coefficients(milp).items():
            name = milp.inst.options[i].job
            milp.least_work[name] = min(w, milp.least_work.get(name, w))
    least = milp.least_work.get(job, 0.0)
    choices = milp.choices.get(job, [])
    slowest = min(c.factor for c in choices) if len(choices) > 1 else 1.0  # raw work when the flags carry the factor
    return max(required, least * slowest)


def work_rows(milp: Milp, job: str) -> list[str]:
    """Every row that asks job's work: `Work-<job>` and, for a job choosing among fabric
    domains, each domain's `need` row (solver.milp.site)."""
    domains = sorted({c.domain for c in milp.choices.get(job, [])})
    return [f"Work-{job}", *(need_row(job, d) for d in domains if need_row(job, d) in milp.rows)]


def need_row(job: str, domain: str) -> str:
    """Name of the row asking a synchronous job's work of one fabric domain when it is chosen.

    The row is the site family's (solver.milp.site adds it); its name is here because
    `work_rows` lists it, and site.py already imports this module (not the other way)."""
    return f"Site-{job}-{domain}-need"


def add_work_slack(milp: Milp, job: str, slack: mb.Variable) -> None:
    """Let `slack` EFLOP of job's work go undone: into every row that asks the work, on the
    side that loosens it. The model keeps a row with variables on both sides as
    `need − work ≤ 0` (a need row), so the sign follows each row's finite bound.
    The job's covering cuts (solver.milp.cover) round the full need, so they are dropped."""
    for name in work_rows(milp, job):
        row = milp.rows[name]
        row.add_term(slack, 1.0 if math.isfinite(row.lower_bound) else -1.0)
    for name in milp.cover.get(job, []):  # either side: a row with variables on both is kept as ≤
        row = milp.rows[name]
        row.lower_bound, row.upper_bound = -math.inf, math.inf


def replica_factor(milp: Milp, option_index: int) -> float:
    """Size factor in a replica's work coefficient: its tier's, or 1 where the choice flags carry it."""
    opt = milp.inst.options[option_index]
    choices = milp.choices.get(opt.job, [])
    if opt.domain is None:
        return opt.tiers[0].factor
    return choices[0].factor if len(choices) == 1 else 1.0


def replica_work(milp: Milp, option_index: int, t: int) -> float:
    """Coefficient of m[option, t] in its job's work row (EFLOP)."""
    return work_coefficients(milp)[option_index, t]


def grain_work(milp: Milp, option_index: int, p: int) -> float:
    """Work (EFLOP) of one replica of the option in the schedule's period p: its share of the
    model period holding it (event buckets are written day by day, solver.milp.periods)."""
    timeline = milp.inst.timeline
    t = timeline.period_of(p)
    return replica_work(milp, option_index, t) * (timeline.grain_hours(p) / milp.inst.hours[t])


def work_coefficients(milp: Milp) -> dict[tuple[int, int], float]:
    """Every replica's work coefficient, computed once per model (the work, site and data rows
    all use them; the choice flags must exist first, since they decide where the tier factor goes)."""
    if not milp.work_coef:
        inst = milp.inst
        factors = [replica_factor(milp, i) for i in range(len(inst.options))]
        milp.work_coef.update({(i, t): inst.options[i].work_per_replica(inst.hours[t], factors[i])
                               for (i, t) in milp.replicas})
    return milp.work_coef


def surplus(milp: Milp) -> dict[str, float]:
    """Per job, the most work one replica does in one period: how far past its need some optimal plan goes.

    Why: a replica costs nothing by itself (rented nodes do), and every row but the work
    row only limits replicas from above, so dropping surplus replicas one at a time
    keeps a plan feasible at the same cost until less than one replica-period of work
    is left over. So some optimal plan does at most need + surplus work for each job
    (need ÷ f_c in raw work when the choice c carries the tier's factor f_c). Rows that
    tie a domain's work to a 0/1 flag use that as their big-M (the storage and egress rows
    use the same argument per fabric domain, solver.milp.data.most_work): far tighter
    than the replicas' own bounds, so the LP relaxation picks domains and charges storage
    in proportion to the work done there.
    """
    out: dict[str, float] = defaultdict(float)
    for (job, _domain), work in surplus_by_domain(milp).items():
        out[job] = max(out[job], work)
    return out


def surplus_by_domain(milp: Milp) -> dict[tuple[str, str | None], float]:
    """Per (job, fabric domain), the most work one replica does in one period there (`surplus`
    within one domain; domain None for independent replicas)."""
    out: dict[tuple[str, str | None], float] = defaultdict(float)
    for (i, _t), work in work_coefficients(milp).items():
        key = milp.inst.options[i].job, milp.inst.options[i].domain
        out[key] = max(out[key], work)
    return out
