"""Covering cuts: a job's work needs whole nodes and whole contracts where it runs.

Why: the LP relaxation rents a fractional contract (2.5 monthly nodes where the plan
needs 3), and HiGHS' own cuts do not find the rounding, because the work row speaks of
replicas per period, and the nodes and contracts behind them sit two rows away (Use,
Capacity-contract). These cuts write that chain out once and round it.

For job j and one of its choices c (or the job's only way to run), every node of
configuration o in period t does at most a_ot = (groups per node) × (one group's work)
of j's work, and a contract started at s does the sum of that over the periods it
covers. So Σ a_i·x_i ≥ need_c when c is chosen, over integer x ≥ 0 (contracts, hourly
nodes). Divided by a divisor W (each of the largest few distinct a_i: a whole contract,
the best node), its mixed-integer rounding (Marchand & Wolsey 2001) is

    Σ_i (⌊α_i⌋ + min(1, frac(α_i)/f))·x_i ≥ ⌈β⌉·z_c,   α_i = a_i/W, β = need_c/W, f = frac(β),

valid for z_c = 1 by MIR, and for z_c = 0 since its left side is never negative.
Coefficients are rounded up to thousandths (still valid, and exact for CP-SAT, which
scales every row to integers). Seed 000's problem: the LP bound rises from 295,824 to the
optimum, 307,180 CNY.
"""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.assignment import node_share
from solver.milp.core import Milp
from solver.milp.warmstart import WARM_START_VARIABLES
from solver.milp.work import work_coefficients

DIVISORS = 10
"""How many distinct coefficients (largest first) serve as a divisor W, one cut each.
Measured with HiGHS, median seconds to the proven optimum over six random seeds
(debug-then-train, seed-13b-100b; hybrid-burst over three), with presolve's doubleton
rule and aggregator off (solver.milp.highs_options): one divisor 9.3, 2.3, 1.3 s; ten
5.5, 1.9, 1.2 s. (With only the doubleton rule off one divisor had been better on
seed-13b-100b, 1.5 against 2.5 s.)"""
GRID = 1000
"""Coefficients are rounded up to multiples of 1/GRID."""


def add_cover_cuts(milp: Milp) -> None:
    """Rows `Cover-<job>-<k>` (names kept per job in milp.cover, for solver.milp.work.add_work_slack).

    Only below WARM_START_VARIABLES: big models are not solved to a proof in a time limit,
    and there the rows slowed the first plans: the 300 × 60 × 20 synthetic instance (seed 1,
    60 s, twice each, identical) ended at 3,077,985 CNY with them, 2,755,072 without, with
    the same bound; the medium one reached 1% in 9.0 s with them, 11.2 s without (one divisor,
    doubleton rule off only)."""
    if milp.model.num_variables >= WARM_START_VARIABLES:
        return
    inst = milp.inst
    by_job: dict[str, dict[str | None, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, opt in enumerate(inst.options):
        by_job[opt.job][opt.domain].append(i)
    contracts: dict[str, list[tuple[int, mb.Variable]]] = defaultdict(list)
    for (key, start), var in milp.contracts.items():
        contracts[key].append((start, var))
    for job in inst.problem.jobs:
        choices = milp.choices.get(job.name, [])
        for domain, options in by_job.get(job.name, {}).items():
            capacity = _node_work(milp, options, contracts)
            if not capacity:
                continue
            mine = [c for c in choices if c.domain == domain]
            if len(choices) > 1:  # flags choose the domain and tier; raw work, need R/f_c
                needs = [(inst.required[job.name] / c.factor, milp.sites[job.name, c.name]) for c in mine]
            elif len(by_job[job.name]) == 1:  # the job's only way to run: the factor is in the work
                needs = [(inst.required[job.name], None)]
            else:
                continue
            for need, flag in needs:
                _add_cuts(milp, job.name, capacity, need, flag)


def _node_work(milp: Milp, options: list[int],
               contracts: dict[str, list[tuple[int, mb.Variable]]]) -> dict[mb.Variable, float]:
    """The most work of the job one unit of each integer capacity variable does: an hourly
    node in its period, a contract (contracts: by configuration) over the periods it covers."""
    inst, coef = milp.inst, work_coefficients(milp)
    per_period: dict[tuple[str, int], float] = {}
    for i in options:
        opt = inst.options[i]
        gpn = inst.configs[opt.config].offer.gpus_per_node
        groups = gpn / node_share(opt.group_gpus, gpn)
        for t in opt.periods:
            key = opt.config, t
            per_period[key] = max(per_period.get(key, 0.0), groups * coef[i, t])
    out: dict[mb.Variable, float] = defaultdict(float)
    for key in {k for k, _ in per_period}:
        cfg = inst.configs[key]
        if not cfg.committed:
            continue
        for start, contract in contracts.get(key, []):
            out[contract] += sum(per_period.get((key, t), 0.0) for t in inst.covered(cfg, start))
    for (key, t), work in per_period.items():
        if not inst.configs[key].committed:
            out[milp.nodes[key, t]] += work
    return {var: a for var, a in out.items() if a > 0}


def _add_cuts(milp: Milp, job: str, capacity: dict[mb.Variable, float], need: float, flag) -> None:
    divisors = sorted({a for a in capacity.values()}, reverse=True)[:DIVISORS]
    names = milp.cover.setdefault(job, [])
    for w in divisors:
        beta = need / w
        f = beta - math.floor(beta)
        if f < 1e-6:  # an exact multiple (up to rounding): nothing to round, and no tolerance corner
            continue
        coefs = {var: _mir(a / w, f) for var, a in capacity.items()}
        lhs = mb.LinearExpr.weighted_sum(list(coefs), list(coefs.values()))
        rhs = math.ceil(beta) * (flag if flag is not None else 1)
        name = f"Cover-{job}-{len(milp.rows)}"
        milp.add_row(name, lhs >= rhs)
        names.append(name)


def _mir(alpha: float, f: float) -> float:
    """MIR coefficient ⌊α⌋ + min(1, frac(α)/f), rounded up to the grid."""
    whole = math.floor(alpha + 1e-12)
    value = whole + min(1.0, max(0.0, alpha - whole) / f)
    return math.ceil(value * GRID - 1e-9) / GRID
