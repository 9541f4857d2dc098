"""Deterministic tie-breaking: among plans of the optimal cost, the earliest finish, then the
fewest rentals (`break_ties`, called by solver.engine.solve.solve_milp after a proven optimum).

Why: a cost model has many optima (an hourly node costs the same on day 3 as on day 30), and
which one a solver returns depends on its path through the search, so an edit that binds
nothing (a what-if on a slack budget) could show another plan of the same cost as a change.

The second stage is a lexicographic re-solve with the cost fixed, not an epsilon on the
objective that could trade money for time:
- the cost row: total cost ≤ C* + COST_TOLERANCE, C* the first stage's proven optimum and the
  tolerance the solvers' own absolute feasibility tolerance scale (1e-6 CNY): no money is
  traded. The first-stage plan satisfies the row (its cost is C*), so the second stage is
  feasible and starts from it (a MIP start for HiGHS).
- its objective: W · Σ_j (days up to j's last period with replicas) + Σ_o g[o],
  g[o] = 1 when configuration o (offer × interconnect) is rented at all. Both sums are whole
  numbers, and the rentals sum is at most the number of configurations, below W (that number
  plus one): one day earlier anywhere outweighs every rental, so the optimum of the sum is
  the lexicographic optimum (finish first, then rentals) in one solve.
- the guarantee that the cost cannot rise: the second stage's plan is re-priced from the
  model's cost terms, integers at their whole values (Solution.cost_parts), and kept only if
  that cost is at most C* (to COST_TOLERANCE) and its single-node jobs pack; otherwise the
  first-stage plan stands. A plan of lower cost than C* is possible only within the first
  stage's optimality gap, and is then simply better.

Speed: the contracts (committed modes' starts and nodes) stay as the first plan signed them, each
synchronous job stays in the fabric domain the first plan chose (its size tier may change), and
only hourly and spot nodes and the replicas move. Why: with every decision free the re-solve is
as hard as the first (measured, bundled problems with HiGHS: 9.4 → 19.3 s in all, debug-then-train
2.2 → 4.9 s, its tie-break unproven); with the contracts fixed every bundled problem's is proven,
for a few tenths of a second each, and it still moved debug-then-train's debug job from day 9 to
day 1 and global-burst's jobs from days 15, 15 to 5, 10 on one offer fewer. Holding the domains
too (`_hold_domains`) took the slowest tie-breaks from 1.94 to 0.51 s (problems/bench
finetune-sprint-30d) and 0.78 to 0.38 s (global-burst), with the same finishing periods and
rented configurations on all 15 bundled and bench problems (tests/bench/HISTORY.md, 2026-12-06).
So "proven" means: no plan of this cost with these contracts and these domains finishes sooner
or rents fewer offers. The re-solve is
skipped when the first-stage plan is already tie-optimal by a bound
read without solving (`_finish_floor`: every job ends in the earliest period its options could
do its work by, and one configuration is rented), and otherwise runs within NODES branch-and-bound
nodes (the same place on every run) and a time guard (`time_cap`). A re-solve that stops early keeps the
best plan it found (never dearer: the cost row) and says the tie-break is not proven.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.engine.backends import mathopt_once, read, run_model_builder
from solver.engine.export import to_mathopt
from solver.engine.run import polish
from solver.milp.core import Milp
from solver.milp.packing import unpacked
from solver.milp.solution import NOT_APPLIED, PROVEN, SKIPPED, UNPROVEN, Solution
from solver.milp.work import work_coefficients

COST_TOLERANCE = 1e-6
"""Absolute slack (in the problem's currency) of the cost row: the scale of the solvers' primal
feasibility tolerance, so the first-stage plan is feasible for it; far below a cent."""
NODES = 500
"""Branch-and-bound nodes the second stage (HiGHS) may search: a limit that stops the same
search at the same place on every run, so an unproven tie-break still gives the same plan."""
SHARE = 1.0
"""The second stage's time limit as a share of the first stage's seconds (at least FLOOR): a
guard for a slow machine, NODES is meant to stop it first."""
FLOOR = 1.0
"""Seconds the second stage gets at least."""


def break_ties(milp: Milp, first: Solution, backend: str, time_limit: float | None, log: bool = False) -> Solution:
    """The first-stage plan, or a plan of no higher cost that finishes earlier or rents fewer
    configurations; `tie_break` says which and whether it is proven (module docstring)."""
    if first.status != "optimal" or not first.integral or time_limit is not None and time_limit <= 0:
        return dataclasses.replace(first, tie_break=NOT_APPLIED)
    finish, rented = _finish_flags(milp), _rental_flags(milp)
    if _proven_without_solve(milp, first, finish, rented):
        return dataclasses.replace(first, tie_break=SKIPPED)
    copy = dataclasses.replace(milp, model=milp.model.clone())
    hint = _second_stage(copy, first, finish, rented)
    cap = time_cap(first.seconds, time_limit)
    if backend == "highs":
        run = read(mathopt_once(to_mathopt(copy.model), cap, 0.0, log, None, hint, node_limit=NODES))
    else:
        run = run_model_builder(copy, backend, cap, 0.0, log)
    kept = dataclasses.replace(first, tie_break=UNPROVEN)
    if run.values is None:
        return kept
    values = {k: v for k, v in run.values.items() if k < milp.model.num_variables}
    polish(milp, values)
    second = dataclasses.replace(first, values=values, tie_break=PROVEN if run.optimal else UNPROVEN)
    second.objective = sum(second.cost_parts().values())
    if second.objective > first.objective + COST_TOLERANCE or unpacked(milp, second.value):
        return kept
    second.bound = min(first.bound, second.objective)
    return second


def time_cap(first_seconds: float, time_limit: float | None) -> float:
    """The second stage's own limit: SHARE of the first stage's time, at least FLOOR, within the
    first stage's limit when one was given."""
    cap = max(FLOOR, SHARE * first_seconds)
    return cap if time_limit is None else min(cap, time_limit)


Replicas = dict[str, dict[int, list[tuple[mb.Variable, int]]]]
"""Each job's replica variables by period, each with its job option's index."""


def _finish_flags(milp: Milp) -> Replicas:
    """Each job's replica variables by period (what its finish flags bound)."""
    out: Replicas = defaultdict(lambda: defaultdict(list))
    for (i, t), var in milp.replicas.items():
        out[milp.inst.options[i].job][t].append((var, i))
    return out


def _rental_flags(milp: Milp) -> dict[str, list[mb.Variable]]:
    """Each configuration's node and contract variables (what its rented flag bounds)."""
    out: dict[str, list[mb.Variable]] = defaultdict(list)
    for (key, _), var in [*milp.nodes.items(), *milp.contracts.items()]:
        out[key].append(var)
    return out


def _days(milp: Milp, t: int) -> int:
    return round(milp.inst.hours[t] / 24)


def _last_periods(first: Solution, finish: Replicas) -> dict[str, int]:
    """Each job's last period with replicas in the first-stage plan."""
    return {job: max((t for t, vs in by_t.items() if any(first.count(v) > 0 for v, _ in vs)), default=-1)
            for job, by_t in finish.items()}


def _proven_without_solve(milp: Milp, first: Solution, finish: Replicas, rented: dict[str, list[mb.Variable]]) -> bool:
    """True when no plan can finish any job sooner or rent fewer configurations: every job ends
    in the earliest period its replicas' bounds could do its work by, and at most one
    configuration is rented (a plan rents at least one)."""
    used = sum(any(first.count(v) > 0 for v in vs) for vs in rented.values())
    if used > 1:
        return False
    last = _last_periods(first, finish)
    return all(last[job] <= _finish_floor(milp, job, by_t) for job, by_t in finish.items())


def _finish_floor(milp: Milp, job: str, by_t: dict[int, list[tuple[mb.Variable, int]]]) -> int:
    """The earliest period a job could finish by: its replicas at their upper bounds, each at the
    work of its option, shared capacity, fabric and tiers ignored (a relaxation, so a bound)."""
    need, done, coef = milp.inst.required[job], 0.0, work_coefficients(milp)
    for t in sorted(by_t):
        done += sum(v.upper_bound * coef[i, t] for v, i in by_t[t])
        if done >= need * (1 - 1e-9):
            return t
    return max(by_t, default=-1)


def _second_stage(copy: Milp, first: Solution, finish: Replicas,
                  rented: dict[str, list[mb.Variable]]) -> dict[int, float]:
    """Add the cost row, the finish and rented flags and the lexicographic objective to `copy`
    (a clone: the caller's model is left as it was); return the MIP start, the first plan with
    its flags set."""
    model, hint = copy.model, dict(first.values)
    var = model.var_from_index
    terms = [(var(v.index), c) for part in copy.cost.values() for v, c in part]
    cost = mb.LinearExpr.weighted_sum([v for v, _ in terms], [c for _, c in terms])
    model.add(cost <= first.objective + COST_TOLERANCE, name="Tiebreak-cost")
    weight = len(rented) + 1
    objective, last = [], _last_periods(first, finish)
    for job, by_t in finish.items():
        later, floor = None, _finish_floor(copy, job, by_t)
        for t in sorted(by_t, reverse=True):
            f = model.new_var(float(t <= floor), 1, True, f"Tiebreak-finish[{job},{t}]")  # runs to floor at least
            hint[f.index] = float(t <= last[job])
            members = [var(v.index) for v, _ in by_t[t]]
            bound = sum(v.upper_bound for v in members)
            model.add(mb.LinearExpr.sum(members) <= bound * f, name=f"Tiebreak-finish-{job}-{t}")
            if later is not None:
                model.add(f >= later, name=f"Tiebreak-order-{job}-{t}")
            objective.append((f, weight * _days(copy, t)))
            later = f
    for v in copy.contracts.values():  # contracts as the first plan signed them: only hourly nodes re-timed
        w = var(v.index)
        w.lower_bound = w.upper_bound = first.count(v)
    _hold_domains(copy, first)
    for key, members in rented.items():
        g = model.new_bool_var(f"Tiebreak-rented[{key}]")
        hint[g.index] = float(any(first.count(v) > 0 for v in members))
        mine = [var(v.index) for v in members]
        model.add(mb.LinearExpr.sum(mine) <= sum(v.upper_bound for v in mine) * g, name=f"Tiebreak-rented-{key}")
        objective.append((g, 1))
    model.minimize(mb.LinearExpr.weighted_sum([v for v, _ in objective], [w for _, w in objective]))
    return hint


def _hold_domains(copy: Milp, first: Solution) -> None:
    """Hold each synchronous job to the fabric domain the first plan chose: the choice flags of
    its other domains get upper bound 0, those of the chosen domain's size tiers stay free.

    Why the tiers stay free: holding every choice flag at the first plan's was as fast, but on
    problems/bench/residency-ulanqab-90d it left lora-13b finishing in period 5 where another
    tier of the same domain, at the same cost, finishes it in period 2."""
    var = copy.model.var_from_index
    for job, choices in copy.choices.items():
        flags = [(c.domain, copy.sites[job, c.name]) for c in choices if (job, c.name) in copy.sites]
        chosen = {domain for domain, flag in flags if first.count(flag) > 0}
        for domain, flag in flags:
            if domain not in chosen:
                var(flag.index).upper_bound = 0
