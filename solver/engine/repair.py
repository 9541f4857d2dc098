"""The repair of a plan whose single-node jobs do not fit their nodes (solver.milp.packing).

solve_milp (solver.engine.solve) adds slot rows where a plan did not pack and solves again
from the repaired plan, falling back on it when time runs out; `repair_plan` keeps the plan's
jobs where they are and solves only its rentals again, then, if that is dear, lets the jobs
of the failing cells move.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

from ortools.linear_solver.python import model_builder as mb

from solver.engine.run import solve_once
from solver.engine.warmstart import REPAIR_SECONDS
from solver.milp.core import Milp
from solver.milp.packing import add_node_packing, occupied
from solver.milp.solution import NoSolution, Solution

REPAIR_FLOOR = 2.0
"""Time `repair_plan` gets even when the time limit is spent (a solve overruns it by at most
this): without it a solve whose first plan did not pack ended with no plan at all (large
synthetic instance, 300 s)."""
REPAIR_GAP = 0.01
"""The repair stops within 1% of its own optimum: any plan that packs will do, a cheap one is better."""


def repair_plan(milp: Milp, solution: Solution, backend: str, bound: float, log: bool,
                left: float | None, cells: list[tuple[str, int]] = ()) -> Solution | None:
    """The plan with every job's replicas and fabric choice kept, and only its rentals (and
    its single-node jobs' places) solved again: a plan whose jobs fit their nodes, or None.
    Every cell where the plan runs a single-node job gets slot rows first, so the repaired
    plan packs everywhere. With HiGHS, only the rentals of the failing `cells`' configurations
    are solved first (`_topped_up`), and all of them only when that finds no plan; with time
    left and a repaired plan dearer than the plan by more than REPAIR_GAP, `_replaced` then
    lets the jobs of the failing cells move (a cheap enough repair goes back at once: each
    HiGHS call on a big model also spends seconds loading it, beyond its time limit).

    Why: the next round of solve_milp starts from it (a MIP start for HiGHS) and falls back
    on it when time runs out; before, an unpackable first plan that used the time limit
    left no plan at all, and a second round from scratch found worse ones (a 60-s solve of
    40 single-node jobs: 107,194 CNY against an optimum of 103,738). Its own bound speaks of
    the jobs' placement held fixed, so it carries the whole model's bound instead."""
    add_node_packing(milp, occupied(milp, solution.value))
    seconds = REPAIR_SECONDS if left is None else min(REPAIR_SECONDS, max(left, REPAIR_FLOOR))
    until = time.perf_counter() + seconds
    fixed = (_topped_up(milp, solution, backend, log, cells, time.perf_counter() + seconds / 2)
             if backend == "highs" else None)
    if fixed is None:
        try:
            with _held(solution, [*milp.replicas.values(), *milp.sites.values()]):
                fixed = solve_once(milp, backend, max(until - time.perf_counter(), REPAIR_FLOOR / 2), REPAIR_GAP, log,
                                   warm_start=False)
        except NoSolution:
            return None
    dearer = fixed.objective > solution.objective * (1 + REPAIR_GAP)  # e.g. a month's contract for a day
    if backend == "highs" and cells and dearer and until - time.perf_counter() >= REPAIR_FLOOR:
        fixed = _replaced(milp, solution, fixed, cells, until, log)
    fixed.status, fixed.bound = "feasible", min(bound, fixed.objective)
    return fixed


TOP_UP_SECONDS = 3.0
"""Most time for `_topped_up`'s solve: only a few configurations' rentals are free there."""


def _topped_up(milp: Milp, solution: Solution, backend: str, log: bool, cells: list[tuple[str, int]],
               until: float) -> Solution | None:
    """The plan with its replicas, fabric choices and every other configuration's rentals held,
    and the rentals of the configurations where it did not pack (`cells`) free: those get
    what their single-node jobs need, or None when they cannot in time. (Slots, data-site and
    running flags follow freely.) Given at most half the repair's time: a fallback with all
    rentals free must still have some.

    Why: `repair_plan`'s own solve frees every rental of the whole model and starts from no
    plan. On the target synthetic instance (seed 3, 60 s) it needed about 10 s to find a
    plan near the first one (2,506,957 → 2,517,634 CNY); with a few seconds less it ended at
    5,266,521 CNY, twice the first plan, or with none. This solve is small (a few
    configurations' nodes and contracts, and the slots): 2,472,304 CNY in 2 s there (cheaper
    than the first plan, whose extra nodes earn a volume discount). When its plan is dearer
    than the plan by more than REPAIR_GAP, `_replaced`, whose freedom includes every
    rental's, starts from it."""
    seconds = min(TOP_UP_SECONDS, until - time.perf_counter())
    if not cells or seconds < 0.1:
        return None
    configs = {key for key, _t in cells}
    rentals = [v for family in (milp.nodes, milp.contracts, milp.full_price, milp.discount_flag)
               for (key, _t), v in family.items() if key not in configs]
    try:
        with _held(solution, [*milp.replicas.values(), *milp.sites.values(), *rentals]):
            return solve_once(milp, backend, seconds, REPAIR_GAP, log, warm_start=False)
    except NoSolution:
        return None


def _replaced(milp: Milp, solution: Solution, fixed: Solution, cells: list[tuple[str, int]], until: float,
              log: bool) -> Solution:
    """The repaired plan improved with the fabric choices held and the replicas of every job
    running in a cell that did not pack (`cells`) free to move, from `fixed` as a MIP start,
    for the rest of the repair's time; the cheaper of the two.

    Why: holding the replicas too can only add nodes where the plan did not pack, and with
    monthly contracts that is dear: on the large synthetic instance (seed 1, 60 s) a plan
    of 642,307 CNY that did not pack in one cell became 743,364; with that cell's jobs free
    to move, 641,437 CNY in 3 s (every job free: 638,248 in 8.7 s once, nothing better than
    743,364 in 6.3 s another time)."""
    inst, where = milp.inst, set(cells)
    movers = {inst.options[i].job for (i, t), v in milp.replicas.items()
              if (inst.options[i].config, t) in where and solution.count(v) > 0}
    held = [v for (i, _t), v in milp.replicas.items() if inst.options[i].job not in movers]
    try:
        with _held(solution, [*milp.sites.values(), *held]):
            moved = solve_once(milp, "highs", until - time.perf_counter(), REPAIR_GAP, log, False, fixed)
    except NoSolution:
        return fixed
    return moved if moved.objective < fixed.objective else fixed


@contextmanager
def _held(solution: Solution, variables: list[mb.Variable]):
    """Hold these variables at the solution's values meanwhile (bounds restored after)."""
    saved = [(v, v.lower_bound, v.upper_bound) for v in variables]
    for v in variables:
        v.lower_bound = v.upper_bound = float(solution.count(v))
    try:
        yield
    finally:
        for v, lower, upper in saved:
            v.lower_bound, v.upper_bound = lower, upper
