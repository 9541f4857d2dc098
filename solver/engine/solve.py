"""Solve a built MILP on one of OR-Tools' bundled solvers: `solve_milp`, the one entry point.

The parts: solver.engine.backends (one call of a solver: time limit, gap, settings),
solver.engine.run (one solve, its values polished and priced), solver.engine.big (a model too
big to solve whole, in steps), solver.engine.repair (a plan whose single-node jobs do not fit
their nodes), solver.engine.progress (what a watcher hears), solver.milp.solution (the
result types, on the formulation's side). Outside solver/milp and solver/engine, use them through
solver.api.
"""

from __future__ import annotations

import math
import time

from solver.engine.backends import BACKENDS, DEFAULT_BACKEND
from solver.engine.big import too_big_for
from solver.engine.repair import repair_plan
from solver.engine.run import solve_once
from solver.engine.tiebreak import break_ties
from solver.milp.core import Milp
from solver.milp.packing import add_node_packing, unpacked
from solver.milp.solution import OPTIMALITY_GAP, NoSolution, Solution


def solve_milp(milp: Milp, *, backend: str = DEFAULT_BACKEND, time_limit: float | None = None,
               gap: float | None = None, log: bool = False, warm_start: bool = True,
               tiebreak: bool = False, reduced_cost_fixing: bool = False, start: Solution | None = None) -> Solution:
    """Solve; raise NoSolution when there is no plan (proven or not).

    warm_start=False: solve a big model whole, with no first plan (solver.engine.warmstart) and
    no LP relaxation beside it (solver.engine.relaxation); for benchmarks that measure what
    those are worth. An LP (a relaxation) never gets either.
    Single-node jobs that share nodes are placed lazily (solver.milp.packing): where a plan's
    do not fit, their cells get exact rows, the plan is repaired to fit them (solver.engine.repair),
    and the model is solved again from it, in what is left of the time limit (not for a model
    of warmstart.GUIDED_VARIABLES or more with under warmstart.FINAL_SHARE of it left,
    solver.engine.big.too_big_for). The model grows by those rows and keeps them.
    tiebreak=True: a proven optimum is followed by solver.engine.tiebreak's second stage (the
    earliest finish, then the fewest rentals, at no higher cost), on a copy of the model; the
    plans a user sees ask for it (solver.api.solve_built), raw analysis solves do not.
    reduced_cost_fixing=True (HiGHS, below warmstart.WARM_START_VARIABLES or without a time
    limit): the first round's model is shrunk by solver.engine.experimental.rcfix, from its LP relaxation's
    duals and a first plan, before HiGHS sees it; exact, but off by default: measured no
    faster (tests/bench/HISTORY.md, "Reduced-cost fixing").
    start: a plan the caller knows meets the model as it stands, priced under its objective
    (solver.probes: the best plan an earlier probe found that this one's delta keeps). HiGHS
    starts from it, and it stands when the solve finds nothing better in its time (a probe
    stopped early still has a plan and an interval)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    began, bound, repaired = time.perf_counter(), -math.inf, None
    start_from = start  # the first round's MIP start and fallback (later rounds start from their repair)
    while True:
        left = None if time_limit is None else time_limit - (time.perf_counter() - began)
        if left is not None and (left <= 0 or repaired is not None and too_big_for(milp, left, time_limit)):
            if repaired is None:
                raise NoSolution(f"no plan whose single-node jobs fit their nodes found within {time_limit:.3g} s "
                                 "(not proven infeasible)", proven=False)
            solution = repaired
        else:
            try:
                solution = solve_once(milp, backend, left, gap, log, warm_start, repaired or start_from,
                                      reduced_cost_fixing=reduced_cost_fixing)
            except NoSolution:
                fallback = repaired or start_from
                if fallback is None:
                    raise
                solution = fallback  # a backend that takes no start, stopped with no plan of its own
            fallback = repaired or start_from
            if fallback is not None and fallback.objective < solution.objective:
                solution = fallback  # a backend that takes no start, stopped early
            start_from = None
        bound = max(bound, solution.bound)  # every round's model is a relaxation of the next
        cells = unpacked(milp, solution.value) if solution.integral else []
        if not cells:
            solution.seconds = time.perf_counter() - began
            solution.bound = min(bound, solution.objective)
            if solution.status != "optimal" and solution.gap <= OPTIMALITY_GAP and solution.integral:
                solution.status = "optimal"
            if tiebreak:
                left = None if time_limit is None else time_limit - solution.seconds
                solution = break_ties(milp, solution, backend, left, log)
                solution.seconds = time.perf_counter() - began
            return solution
        add_node_packing(milp, cells)  # exact where this plan failed, and wherever it could fail:
        add_node_packing(milp)         # so one more solve is usually the last
        left = None if time_limit is None else time_limit - (time.perf_counter() - began)  # after this round
        repaired = repair_plan(milp, solution, backend, bound, log, left, cells) or repaired
