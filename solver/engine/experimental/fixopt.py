"""LP-guided fix-and-optimize: a plan near the optimum before HiGHS starts its own search
(issue 33, item 4), off by default (GPUPLAN_EXPERIMENTAL=fixopt, solver.engine.switches, says why).

1. The LP relaxation of the model (a copy, integrality dropped): its values, and its
   objective, a proven lower bound of the model.
2. Each job held to the one fabric domain (configuration, for independent replicas) where
   the LP does most of its work (`lp_choices`) and its two cheapest by price; the restricted
   MIP solved to warmstart.FIRST_GAP within PLAN_SHARE of the time limit; if that restriction
   has no plan, the domains where the LP does at least warmstart.LP_SHARE of a job's work
   (warmstart.lp_shortlist).
3. The whole model from that plan (a MIP start), for the time left.

Why: on the realistic suite the optimal plan arrives late and the proof right after it
(tests/bench/HISTORY.md, "A first plan for every model"); the LP's favourite domain and
the cheapest by price often hold the optimum's, and the restricted MIP is small.

Honesty: the restriction only sets upper bounds to zero (solver.engine.big._restricted_plan),
so its plan is a plan of the whole model; the solve's status is "optimal" only when HiGHS
ends OPTIMAL or the plan's cost is within the gap of a proven bound (HiGHS' or the LP's,
solver.engine.run.solve_once), never because a plan was handed over.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from solver.engine import warmstart
from solver.engine.backends import Incumbent, Run, mathopt_once, read, result_values
from solver.engine.big import _restricted_plan
from solver.engine.experimental import rcfix
from solver.engine.progress import PROGRESS, tell_bound
from solver.milp.core import Milp

PLAN_SHARE = 0.25
"""Share of the time limit the LP and the restricted plan may take together."""


@dataclass
class LpPoint:
    """The LP relaxation's optimum: values by variable id, and its objective (a lower bound)."""

    values: dict[int, float]
    bound: float


def lp_relaxation(model, time_limit: float | None) -> LpPoint | None:
    """The LP relaxation of a MathOpt model (rcfix.solve_relaxed); None unless solved to optimality."""
    from ortools.math_opt.python import mathopt

    _, result = rcfix.solve_relaxed(model, time_limit, PROGRESS.interrupter)
    if result.termination.reason != mathopt.TerminationReason.OPTIMAL:
        return None
    return LpPoint(result_values(result), result.objective_value())


def lp_choices(milp: Milp, lp_values: dict[int, float]) -> set[int]:
    """Option indices of each job's one domain (configuration, for independent replicas) where
    the LP does the most work, and of domains a caller fixed (warmstart.forced, via held_out);
    ties go to the first group in sorted order, so the choice is the same on every run."""
    work = warmstart.lp_work(milp, lp_values)
    best: dict[str, tuple[float, tuple[str, str]]] = {}
    for group, done in sorted(work.items()):
        if done > 0 and (group[0] not in best or done > best[group[0]][0]):
            best[group[0]] = (done, group)
    chosen = {group for _, group in best.values()}
    return {i for i, g in warmstart.option_groups(milp).items() if g in chosen}


def lp_plan(model, milp: Milp, lp: LpPoint, deadline: float, gap: float | None, log: bool) -> Incumbent | None:
    """A plan of the model restricted to the LP's choices (`lp_choices`) and each job's
    warmstart.FIRST_DOMAINS cheapest domains by price (warmstart.shortlist), widened to
    warmstart.lp_shortlist if that has none; None if neither gives one by `deadline`.

    Why both: the LP rents fractions of multi-node groups, so its favourite can be far off.
    On realistic seeds 2, 4, 12, 22 (optimum or best known 29,760 / 13,712 / 636,358 / 5,808
    CNY) the LP's domain alone gave 81,800 / 14,880 / 673,158 / 7,459 in 0.5-3.4 s; with the two
    cheapest beside it 81,800 / 13,712 / 636,358 / 5,916 in 2.7-7.7 s (load 6-8)."""
    narrow = lp_choices(milp, lp.values) | warmstart.shortlist(milp, warmstart.FIRST_DOMAINS)
    plan = _restricted_plan(model, milp, narrow, deadline, gap, log)
    wide = warmstart.lp_shortlist(milp, lp.values)
    if plan is None and wide != narrow and time.perf_counter() < deadline:
        plan = _restricted_plan(model, milp, wide, deadline, gap, log)
    return plan


def run_fix_and_optimize(model, milp: Milp, time_limit: float | None, gap: float | None, log: bool) -> Run:
    """HiGHS on `model` (the MathOpt copy of this solve) from the LP-guided plan; the bound is the
    better of HiGHS' and the LP relaxation's (both proven). Without a plan (no LP in time, or no
    plan in the restriction) the whole model is solved as it is."""
    start = time.perf_counter()
    share = None if time_limit is None else time_limit * PLAN_SHARE
    lp = lp_relaxation(model, share)
    hint = None
    if lp is not None:
        tell_bound(lp.bound)
        hint = lp_plan(model, milp, lp, math.inf if share is None else start + share, gap, log)
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - start), 0.1)
    run = read(mathopt_once(model, left, gap, log, PROGRESS.listener, hint and hint.values), hint)
    if lp is not None and run.values is not None:
        run.bound = max(run.bound, lp.bound)
    return run
