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

Volume discounts lift the right side. A discount d on node variable x_d (a contract start,
or one period's hourly nodes) has a flag y_d with x_d ≥ N0_d·y_d (solver.milp.capacity), so

    Σ_i α_i·x_i ≥ ⌈β⌉·z_c + Σ_d max(0, α_d·N0_d − ⌈β⌉)·y_d

is valid too: with no flag at 1 it is the cut above; with the flags of a set D at 1 its left
side is at least Σ_{d∈D} α_d·N0_d, and its right side at most ⌈β⌉ + Σ_{d∈D} (α_d·N0_d − ⌈β⌉),
which is no more for |D| ≥ 1. A second row replaces those x_d by their full-price nodes v_d
(v_d = x_d when y_d = 0) and takes ⌈β⌉ off the right side per flag:

    Σ_{i∉S} α_i·x_i + Σ_{d∈S} α_d·v_d ≥ ⌈β⌉·(z_c − Σ_{d∈S} y_d)      (S: the lifted discounts)

valid since with every y_d = 0 it is the cut above, and otherwise its right side is ≤ 0.
Why: without it the LP takes a discount with a fractional flag
(3 of a 4-node threshold at y = 0.75), the gap the realistic suite's attribution found the
largest (tests/bench/HISTORY.md, issue 33): on issue 33's problem the discount flags alone
closed 90 % of the LP's gap. With one configuration the two rows are the convex hull's
x ≥ ⌈β⌉ + (N0 − ⌈β⌉)·y and v ≥ ⌈β⌉·(1 − y).
"""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.assignment import node_share
from solver.milp.capacity import discounted_variable
from solver.milp.core import BIG_MODEL_VARIABLES, Milp
from solver.milp.work import work_coefficients

DIVISORS = 10
"""How many distinct coefficients (largest first) serve as a divisor W, one cut each.
Measured with HiGHS, median seconds to the proven optimum over six random seeds
(debug-then-train, seed-13b-100b; hybrid-burst over three), with presolve's doubleton
rule and aggregator off (solver.engine.highs_options): one divisor 9.3, 2.3, 1.3 s; ten
5.5, 1.9, 1.2 s. (With only the doubleton rule off one divisor had been better on
seed-13b-100b, 1.5 against 2.5 s.)"""
GRID = 1000
"""Coefficients are rounded up to multiples of 1/GRID."""
LIFT_DISCOUNTS = False
"""Lift each cut by the volume discounts' flags (module docstring). Off by default: it raises
the LP bound (issue 33's problem 354,600 → 389,052 CNY of 393,000) but measured no faster
on the realistic suite (tests/bench/HISTORY.md, 2026-12-07), and it changes which of the
equally cheap plans the bundled problems get (their golden answers)."""


def add_cover_cuts(milp: Milp) -> None:
    """Rows `Cover-<job>-<k>` (names kept per job in milp.cover, for solver.milp.work.add_work_slack).

    Only below BIG_MODEL_VARIABLES: big models are not solved to a proof in a time limit,
    and there the rows slowed the first plans: the 300 × 60 × 20 synthetic instance (seed 1,
    60 s, twice each, identical) ended at 3,077,985 CNY with them, 2,755,072 without, with
    the same bound; the medium one reached 1% in 9.0 s with them, 11.2 s without (one divisor,
    doubleton rule off only)."""
    if milp.model.num_variables >= BIG_MODEL_VARIABLES:
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
    discounts = _discounts(milp) if LIFT_DISCOUNTS else {}
    for w in divisors:
        beta = need / w
        f = beta - math.floor(beta)
        if f < 1e-6:  # an exact multiple (up to rounding): nothing to round, and no tolerance corner
            continue
        coefs = {var: _mir(a / w, f) for var, a in capacity.items()}
        lhs = mb.LinearExpr.weighted_sum(list(coefs), list(coefs.values()))
        rhs = math.ceil(beta) * (flag if flag is not None else 1)
        lifts = _lifts(coefs, discounts, math.ceil(beta))
        if lifts:
            _add_full_price_cut(milp, job, coefs, discounts, lifts, rhs, math.ceil(beta))
            rhs = rhs + mb.LinearExpr.weighted_sum(list(lifts), list(lifts.values()))
        name = f"Cover-{job}-{len(milp.rows)}"
        milp.add_row(name, lhs >= rhs)
        names.append(name)


def _add_full_price_cut(milp: Milp, job: str, coefs: dict[mb.Variable, float],
                        discounts: dict[int, tuple[mb.Variable, int, mb.Variable]], lifts: dict[mb.Variable, float],
                        rhs, whole: int) -> None:
    """The cut with each lifted discount's nodes x_d replaced by its full-price nodes v_d, and
    ⌈β⌉ taken off the right side per flag: valid (module docstring), the other half of the hull."""
    flags = {y.index for y in lifts}
    terms = {}
    for var, alpha in coefs.items():
        d = discounts.get(var.index)
        if d is not None and d[0].index in flags:
            var = d[2]
        terms[var] = terms.get(var, 0.0) + alpha
    lhs = mb.LinearExpr.weighted_sum(list(terms), list(terms.values()))
    name = f"Cover-{job}-{len(milp.rows)}"
    milp.add_row(name, lhs >= rhs - whole * mb.LinearExpr.sum(list(lifts)))
    milp.cover[job].append(name)


def _discounts(milp: Milp) -> dict[int, tuple[mb.Variable, int, mb.Variable]]:
    """Each volume discount's node variable x (by index) → (its flag y, the nodes N0 it needs,
    its full-price nodes v)."""
    out = {}
    for (key, t), y in milp.discount_flag.items():
        x = discounted_variable(milp, key, t)
        out[x.index] = y, milp.inst.configs[key].discount_nodes, milp.full_price[key, t]
    return out


def _lifts(coefs: dict[mb.Variable, float], discounts: dict[int, tuple[mb.Variable, int, mb.Variable]],
           whole: int) -> dict[mb.Variable, float]:
    """The discount flags' terms lifting a cover cut's right side (module docstring): y_d with
    coefficient α_d·N0_d − ⌈β⌉, rounded down to the grid, where that is positive."""
    out = {}
    for var, alpha in coefs.items():
        if var.index in discounts:
            y, n0, _v = discounts[var.index]
            lift = math.floor((alpha * n0 - whole) * GRID + 1e-9) / GRID
            if lift > 0:
                out[y] = lift
    return out


def _mir(alpha: float, f: float) -> float:
    """MIR coefficient ⌊α⌋ + min(1, frac(α)/f), rounded up to the grid."""
    whole = math.floor(alpha + 1e-12)
    value = whole + min(1.0, max(0.0, alpha - whole) / f)
    return math.ceil(value * GRID - 1e-9) / GRID
