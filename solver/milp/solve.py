"""Run a built MILP on one of OR-Tools' bundled solvers and read the result."""

from __future__ import annotations

import math
import os
import re
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from ortools.linear_solver.python import model_builder as mb

from solver.milp import warmstart
from solver.milp.core import COST_PARTS, Milp
from solver.milp.export import to_mathopt
from solver.milp.highs_options import HIGHS_PRESOLVE_RULES_OFF, HIGHS_PSCOST_MIN_RELIABLE
from solver.milp.packing import add_node_packing, occupied, unpacked
from solver.milp.capacity import discount_table, discounted_variable
from solver.milp.relaxation import BackgroundRelaxation, cores

BACKENDS = {"scip": "scip", "highs": "highs", "cp_sat": "sat"}
DEFAULT_BACKEND = "highs"
"""Chosen by measurement (tests/bench/bench_milp.py; README "Performance", tests/bench/HISTORY.md):
HiGHS proved the bundled problems optimal fastest overall; CP-SAT wins some instances, SCIP is slowest."""
OPTIMALITY_GAP = 1e-4
"""A plan is called optimal only when proven within this relative gap (the solvers' default)."""


class NoSolution(Exception):
    """The solver stopped without any plan: proven infeasible, or out of time with none found."""

    def __init__(self, message: str, *, proven: bool) -> None:
        self.proven = proven
        super().__init__(message)


@dataclass
class Solution:
    """Values of a solved MILP, with the solver's own bound."""

    milp: Milp
    status: str                 # optimal | feasible
    objective: float
    bound: float
    seconds: float
    backend: str
    values: dict[int, float]    # variable index → value
    integral: bool = True       # False: the values are an LP relaxation's

    def value(self, var: mb.Variable) -> float:
        return self.values.get(var.index, 0.0)

    def count(self, var: mb.Variable) -> int:
        return int(round(self.value(var)))

    def cost_parts(self) -> dict[str, float]:
        """Each cost part of the plan; an integer plan's integer variables at their whole values.

        Why whole values: a solver's 2.9999999 nodes carry its tolerance into the cost, and one
        plan then read 1,329.35 CNY from HiGHS and 1,329.34 from SCIP and CP-SAT (exact:
        1,329.345; a differential test found it)."""
        def value(var: mb.Variable) -> float:
            return self.count(var) if self.integral and var.is_integral else self.value(var)
        parts = {name: 0.0 for name in COST_PARTS}
        for name, terms in self.milp.cost.items():
            parts[name] = sum(coef * value(var) for var, coef in terms)
        return parts

    @property
    def gap(self) -> float:
        """Relative distance between the plan's cost and the proven lower bound."""
        return max(0.0, (self.objective - self.bound) / max(abs(self.objective), 1e-9))


def solve_milp(milp: Milp, *, backend: str = DEFAULT_BACKEND, time_limit: float | None = None,
               gap: float | None = None, log: bool = False, warm_start: bool = True) -> Solution:
    """Solve; raise NoSolution when there is no plan (proven or not).

    warm_start=False: solve a big model whole, with no first plan (solver.milp.warmstart) and
    no LP relaxation beside it (solver.milp.relaxation); for benchmarks that measure what
    those are worth. An LP (a relaxation) never gets either.
    Single-node jobs that share nodes are placed lazily (solver.milp.packing): where a plan's
    do not fit, their cells get exact rows, the plan is repaired to fit them (`_repaired`),
    and the model is solved again from it, in what is left of the time limit (not for a model
    of warmstart.GUIDED_VARIABLES or more with under warmstart.FINAL_SHARE of it left,
    `_too_big_for`). The model grows by those rows and keeps them."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    start, bound, repaired = time.perf_counter(), -math.inf, None
    while True:
        left = None if time_limit is None else time_limit - (time.perf_counter() - start)
        if left is not None and (left <= 0 or repaired is not None and _too_big_for(milp, left, time_limit)):
            if repaired is None:
                raise NoSolution(f"no plan whose single-node jobs fit their nodes found within {time_limit:.3g} s "
                                 "(not proven infeasible)", proven=False)
            solution = repaired
        else:
            try:
                solution = _solve_once(milp, backend, left, gap, log, warm_start, repaired)
            except NoSolution:
                if repaired is None:
                    raise
                solution = repaired  # a backend that takes no start, stopped with no plan of its own
            if repaired is not None and repaired.objective < solution.objective:
                solution = repaired  # a backend that takes no start, stopped early
        bound = max(bound, solution.bound)  # every round's model is a relaxation of the next
        cells = unpacked(milp, solution.value) if solution.integral else []
        if not cells:
            solution.seconds = time.perf_counter() - start
            solution.bound = min(bound, solution.objective)
            if solution.status != "optimal" and solution.gap <= OPTIMALITY_GAP and solution.integral:
                solution.status = "optimal"
            return solution
        add_node_packing(milp, cells)  # exact where this plan failed, and wherever it could fail:
        add_node_packing(milp)         # so one more solve is usually the last
        left = None if time_limit is None else time_limit - (time.perf_counter() - start)  # after this round
        repaired = _repaired(milp, solution, backend, bound, log, left, cells) or repaired


def _too_big_for(milp: Milp, left: float, time_limit: float) -> bool:
    """A model of warmstart.GUIDED_VARIABLES or more, with less than warmstart.FINAL_SHARE of
    the limit left: a whole-model solve would only load and presolve it. Why: on the target synthetic
    instance (seed 3, 60 s) the round after the repair, given 4.5 s, took 19 s to end with
    the repaired plan. _run_big asks the same after its guided plan."""
    return milp.model.num_variables >= warmstart.GUIDED_VARIABLES and left < time_limit * warmstart.FINAL_SHARE


REPAIR_SECONDS = 10.0
"""Most time for `_repaired`'s solve (stopped at REPAIR_GAP, usually well under a second)."""
REPAIR_FLOOR = 2.0
"""Time `_repaired` gets even when the time limit is spent (a solve overruns it by at most
this): without it a solve whose first plan did not pack ended with no plan at all (large
synthetic instance, 300 s)."""
REPAIR_GAP = 0.01
"""The repair stops within 1% of its own optimum: any plan that packs will do, a cheap one is better."""


def _repaired(milp: Milp, solution: Solution, backend: str, bound: float, log: bool,
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
                fixed = _solve_once(milp, backend, max(until - time.perf_counter(), REPAIR_FLOOR / 2), REPAIR_GAP, log,
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

    Why: `_repaired`'s own solve frees every rental of the whole model and starts from no
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
            return _solve_once(milp, backend, seconds, REPAIR_GAP, log, warm_start=False)
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
            moved = _solve_once(milp, "highs", until - time.perf_counter(), REPAIR_GAP, log, False, fixed)
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


def _solve_once(milp: Milp, backend: str, time_limit: float | None, gap: float | None, log: bool,
                warm_start: bool, start_from: Solution | None = None) -> Solution:
    """One solve; HiGHS starts from `start_from`'s plan when given (the other backends ignore it)."""
    start = time.perf_counter()
    integral = any(v.is_integral for v in milp.model.get_variables())
    if backend == "highs":
        plan = None if start_from is None else _Plan(start_from.values, start_from.objective)
        run = _run_highs_mathopt(milp, time_limit, gap, log, warm_start and integral, plan)
    else:
        run = _run_model_builder(milp, backend, time_limit, gap, log)
    seconds = time.perf_counter() - start
    if run.values is None:
        why = "proven infeasible" if run.proven_infeasible else (
            f"no plan found within {time_limit:.3g} s (not proven infeasible)" if time_limit
            else f"solver stopped with status {run.status_name}")
        raise NoSolution(f"{why}; {backend} ran {seconds:.1f} s", proven=run.proven_infeasible)
    values = run.values
    solution = Solution(milp, "feasible", run.objective, run.bound, seconds, backend, values, integral)
    if integral:
        _polish(milp, values)  # only integer plans: rounding an LP point would not bound anything
        solution.objective = sum(solution.cost_parts().values())
    solution.bound = min(solution.bound, solution.objective)
    if run.optimal and solution.gap <= OPTIMALITY_GAP:
        solution.status = "optimal"
    return solution


@dataclass
class _Run:
    """What one backend call returned, in one shape for both OR-Tools interfaces."""

    values: dict[int, float] | None
    objective: float = 0.0
    bound: float = 0.0
    optimal: bool = False
    proven_infeasible: bool = False
    status_name: str = ""


def _run_model_builder(milp: Milp, backend: str, time_limit: float | None, gap: float | None, log: bool) -> _Run:
    solver = mb.Solver(BACKENDS[backend])
    if not solver.solver_is_supported():
        raise ValueError(f"backend {backend!r} is not available in this OR-Tools build")
    if time_limit:
        solver.set_time_limit_in_seconds(time_limit)
    params = _parameters(backend, gap)
    if params:
        solver.set_solver_specific_parameters(params)
    solver.enable_output(log)
    with native_stdout_to_stderr():
        status = solver.solve(milp.model)
    if status not in (mb.SolveStatus.OPTIMAL, mb.SolveStatus.FEASIBLE):
        return _Run(None, proven_infeasible=status == mb.SolveStatus.INFEASIBLE, status_name=status.name)
    variables = milp.model.get_variables()
    values = dict(zip((v.index for v in variables), solver.values(variables).to_numpy()))
    return _Run(values, solver.objective_value, solver.best_objective_bound, status == mb.SolveStatus.OPTIMAL)


@dataclass
class _Progress:
    """Who wants to hear a running HiGHS solve's incumbent and bound (the CLI's spinner), if anyone."""

    listener: Callable[[float | None, float | None], None] | None = None


PROGRESS = _Progress()
_BNB_LINE = re.compile(r"^\s*[A-Za-z]?\s+\d+\s+\d+\s+\d+\s+[\d.]+%\s+(\S+)\s+(\S+)\s+")


def _report_progress(lines: list[str], listener: Callable[[float | None, float | None], None]) -> None:
    """HiGHS' branch-and-bound log lines → listener(best plan cost, proven bound); None while unknown."""
    for line in lines:
        match = _BNB_LINE.match(line)
        if match:
            listener(*(_number(x) for x in (match.group(2), match.group(1))))


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _run_highs_mathopt(milp: Milp, time_limit: float | None, gap: float | None, log: bool,
                       warm_start: bool = True, plan: _Plan | None = None) -> _Run:
    """HiGHS through MathOpt, for every HiGHS solve.

    Why: through the model builder, HiGHS stopped by its time limit returns no values
    even when it holds a plan; through MathOpt it returns the incumbent and its bound,
    so a time-limited solve gives its best plan with the gap (DESIGN.md, Backends). A
    solve stopped by a relative gap is the same: the model builder then reports the
    plan's own cost as its bound (measured: 310,800 CNY for both on seed-7b-200b-30d at
    gap 0.05, whose optimum is 307,180), MathOpt HiGHS' real bound. And the same search
    runs faster through MathOpt: on debug-then-train, random seeds 1-8, identical node
    and LP iteration counts, median 4.1 s against 5.3 s (conversion included).
    The model goes over as an exact MathOpt proto (solver.milp.export; variable k keeps
    id k).
    A model too big to solve whole in the time limit is planned in steps first
    (`_run_big`); given a plan, the model is solved whole from it.
    """
    start = time.perf_counter()
    model = to_mathopt(milp.model)
    listener = PROGRESS.listener
    if listener is not None:
        PROGRESS.listener = _BestHeard(listener)
    big = bool(warm_start and time_limit and milp.model.num_variables >= warmstart.WARM_START_VARIABLES)
    try:
        if plan is not None:  # a repaired plan (solve_milp): the steps below are for models with none
            return _read(_mathopt_once(model, time_limit, gap, log, PROGRESS.listener, plan.values, ipm_lp=big), plan)
        if big:
            return _run_big(model, milp, start + time_limit, time_limit, gap, log)
        return _read(_mathopt_once(model, time_limit, gap, log, PROGRESS.listener))
    finally:
        PROGRESS.listener = listener


@dataclass
class _BestHeard:
    """Passes on the best plan and the best bound heard so far in one solve.

    Why: the steps of a big solve report separately (a restricted solve only its plans,
    the LP relaxation only its bound), and one step's silence about the other number
    must not make it unknown again. Every plan heard is a plan of the whole model and
    every bound a bound of it, so the lowest plan and the highest bound stand.
    """

    listener: Callable[[float | None, float | None], None]
    plan: float | None = None
    bound: float | None = None

    def __call__(self, incumbent: float | None, bound: float | None) -> None:
        if incumbent is not None:
            self.plan = incumbent if self.plan is None else min(self.plan, incumbent)
        if bound is not None:
            self.bound = bound if self.bound is None else max(self.bound, bound)
        self.listener(self.plan, self.bound)


def _run_big(model, milp: Milp, deadline: float, time_limit: float, gap: float | None, log: bool) -> _Run:
    """A big model, in steps (solver.milp.warmstart), while its LP relaxation runs on another core.

    1. a first plan from each job's cheapest domains;
    2. from warmstart.GUIDED_VARIABLES on, HiGHS' MIP would not finish its root LP in a
       minute, so the solve waits for the LP relaxation and then takes a plan from the
       domains it uses, seeded with the first plan; if the LP is still running after the
       first plan, the first plan is improved on wider domains first (`_while_lp_runs`);
    3. unless that plan does not pack its single-node jobs (solve_milp then repairs it
       while time is left, and solves the whole model from the repair; such a first plan
       keeps the repair's time back from the wait for the LP, `_reserve`, and goes to the
       repair even if the LP never came: measured on the
       large synthetic instance, seed 1, whose guided plan did not pack: the whole-model
       step ended with the same plan, which the repair at the limit, 2 s, could only make
       dearer, 642,307 → 743,364 CNY),
       the whole model from the best plan so far, for the time left (beyond
       GUIDED_VARIABLES only if warmstart.FINAL_SHARE of the limit is left), its LPs
       solved by interior point: by dual simplex HiGHS did not finish the root LP of the
       large synthetic instance (48k variables) in the 53 s left, so its bound stayed
       below the LP child's; by interior point it finished it, and at 60 s the bound rose
       on seeds 1-3 from 588,921 / 497,006 / 700,417 to 608,744 / 514,945 / 735,721 CNY,
       seed 2's plan fell from 561,131 to 549,754 (tests/bench, one run each). Not for
       small models: the medium instance (8k) took 13.6 s to its proof that way, 11.7 s
       by simplex.
    The plan's bound is the better of HiGHS' and the LP's (solver.milp.relaxation): without
    the LP, a model whose root LP HiGHS cannot finish in time has no bound at all.
    On a single core the LP would only slow the rest down, so it is not started.
    """
    lp = (BackgroundRelaxation(milp.model, deadline - time.perf_counter(), discounts=discount_table(milp), log=log)
          if cores() >= 2 else None)
    try:
        first_share, started = time_limit * warmstart.FIRST_SHARE, time.perf_counter()
        hint = _first_plan(model, milp, first_share, gap, log)
        # HiGHS' time limit leaves out loading the model (about 2 s at 200k variables);
        # what the first plan ran over its share is kept back from the later steps.
        overrun = max(0.0, time.perf_counter() - started - first_share)
        guided = lp is not None and milp.model.num_variables >= warmstart.GUIDED_VARIABLES
        relax = None
        if guided:
            keep_back = max(time_limit * warmstart.GUIDED_MIN_SHARE, REPAIR_SECONDS)
            step_until, step_start = deadline - keep_back - overrun, time.perf_counter()
            hint = _while_lp_runs(model, milp, lp, hint, step_until, time_limit, gap, log)
            step_end = min(step_until, step_start + time_limit * warmstart.WIDER_SHARE)
            overrun += max(0.0, time.perf_counter() - step_end)  # loading the model, beyond HiGHS' limit
            relax = lp.wait(deadline - _reserve(milp, hint, time_limit) - time.perf_counter())
            if relax is not None:
                _tell_bound(relax.bound)
                until = min(deadline - overrun, time.perf_counter() + time_limit * warmstart.GUIDED_MAX_SHARE)
                if _unpacked_plan(milp, hint):
                    until = min(until, deadline - REPAIR_SECONDS)
                if until - time.perf_counter() >= 1.0:
                    hint = _guided_plan(model, milp, relax.values, hint, until, gap, log)
        left = deadline - overrun - time.perf_counter()
        if guided and _unpacked_plan(milp, hint):
            # its single-node jobs do not fit their nodes: solve_milp repairs it (solver.milp.packing)
            # while time is left, and solves the whole model from the repair, slot rows and all.
            # The LP's bound, if it came, is the plan's (no later round runs the LP beside it).
            # Without the LP too: waiting for it left the repair its 2-s floor (target synthetic
            # instance, seed 3, 60 s: no plan at all), and a whole-model step in its place made
            # the 2.51M CNY first plan 5.27M.
            run = _Run(hint.values, hint.cost, -math.inf)
            relax = relax or lp.wait(0)
        elif not guided or not _too_big_for(milp, left, time_limit):
            hint_values = hint.values if hint is not None else None
            run = _read(_mathopt_once(model, left, gap, log, PROGRESS.listener, hint_values, ipm_lp=True), hint)
            relax = relax or (lp.wait(0) if lp is not None else None)
        else:
            run = (_Run(hint.values, hint.cost, -math.inf) if hint is not None
                   else _Run(None, proven_infeasible=lp.infeasible, status_name="no plan"))
            relax = relax or lp.wait(deadline - time.perf_counter())
    finally:
        if lp is not None:
            lp.stop()
    if relax is not None and run.values is not None:
        run.bound = max(run.bound, relax.bound)
    return run


def _while_lp_runs(model, milp: Milp, lp: BackgroundRelaxation, hint: _Plan | None, until: float,
                   time_limit: float, gap: float | None, log: bool) -> _Plan | None:
    """The first plan, improved if the LP relaxation is still running (checked once, at the
    start; the step is not cut short when the LP comes in): the model restricted to
    each job's warmstart.WIDER_DOMAINS cheapest domains (and the plan's), from the plan, for at
    most warmstart.WIDER_SHARE of the limit; the cheaper plan.

    Why: on the target synthetic instance the LP takes 40-75 s, and the solve used to wait
    for it idle. Seed 5's first plan was 8,074,358 CNY (its restriction's bound 2,398,176),
    the LP came too late for the guided step, and the solve ended at 7,338,092 (68.7% gap);
    with this step, 2,779,398. A second, wider step found nothing on seeds 1-6."""
    if hint is None or not lp.running or until - time.perf_counter() < warmstart.WIDER_MIN_SECONDS:
        return hint
    keep = warmstart.shortlist(milp, warmstart.WIDER_DOMAINS) | warmstart.plan_groups(milp, hint.values)
    stop = min(until, time.perf_counter() + time_limit * warmstart.WIDER_SHARE)
    return _cheaper(milp, _restricted_plan(model, milp, keep, stop, gap, log, hint), hint)


def _reserve(milp: Milp, hint: _Plan | None, time_limit: float) -> float:
    """Seconds kept back from waiting for the LP relaxation: the guided plan's least share,
    and, when the first plan does not pack its single-node jobs, what the repair may take.
    Why: when the LP came late, the repair of such a plan had the 2-s floor left and could
    end with no plan at all (target synthetic instance, seed 3, 60 s: the LP took 75 s)."""
    reserve = time_limit * warmstart.GUIDED_MIN_SHARE
    return max(reserve, REPAIR_SECONDS) if _unpacked_plan(milp, hint) else reserve


def _unpacked_plan(milp: Milp, plan: _Plan | None) -> bool:
    """A plan is in hand and its single-node jobs do not fit their nodes (solver.milp.packing)."""
    return plan is not None and bool(unpacked(milp, lambda v: plan.values.get(v.index, 0.0)))


def _tell_bound(bound: float) -> None:
    """Let whoever watches the solve hear a bound found outside HiGHS (the LP relaxation's)."""
    if PROGRESS.listener is not None and math.isfinite(bound):
        PROGRESS.listener(None, bound)


def _read(result, hint: _Plan | None = None) -> _Run:
    """A MathOpt result as a _Run; if HiGHS kept no plan of its own, `hint` stands (with
    HiGHS' bound: solve_milp prices every integer plan from the model's cost terms)."""
    from ortools.math_opt.python import mathopt

    reason = result.termination.reason
    bound = result.termination.objective_bounds.dual_bound
    if reason in (mathopt.TerminationReason.UNBOUNDED, mathopt.TerminationReason.INFEASIBLE_OR_UNBOUNDED):
        return _Run(None, status_name=reason.name)  # no plan to read; a cost model is never unbounded
    if not result.has_primal_feasible_solution():
        if hint is not None:
            return _Run(hint.values, hint.cost, bound if math.isfinite(bound) else -math.inf)
        return _Run(None, proven_infeasible=reason == mathopt.TerminationReason.INFEASIBLE, status_name=reason.name)
    return _Run(_values(result), result.objective_value(), bound, reason == mathopt.TerminationReason.OPTIMAL)


def _values(result) -> dict[int, float]:
    """A MathOpt result's plan by variable id (= the model builder's index, solver.milp.export)."""
    return {var.id: value for var, value in result.variable_values().items()}


def _mathopt_once(model, time_limit: float | None, gap: float | None, log: bool,
                  listener: Callable[[float | None, float | None], None] | None,
                  hint: dict[int, float] | None = None, *, ipm_lp: bool = False):
    """One HiGHS solve of a MathOpt model, optionally from a MIP start (values by variable id).
    ipm_lp: HiGHS' MIP solves its LPs by interior point (`mip_lp_solver=ipm`), see `_run_big`."""
    from ortools.math_opt.python import mathopt

    params = mathopt.SolveParameters(time_limit=timedelta(seconds=max(time_limit, 0.1)) if time_limit else None,
                                     enable_output=log,
                                     relative_gap_tolerance=gap if gap is not None else OPTIMALITY_GAP)
    params.highs.int_options["presolve_rule_off"] = HIGHS_PRESOLVE_RULES_OFF
    params.highs.int_options["mip_pscost_minreliable"] = HIGHS_PSCOST_MIN_RELIABLE
    if ipm_lp:
        params.highs.string_options["mip_lp_solver"] = "ipm"
    model_params = None if hint is None else mathopt.ModelSolveParameters(solution_hints=[mip_start(model, hint)])
    callback = (lambda lines: _report_progress(lines, listener)) if listener is not None else None
    with native_stdout_to_stderr():
        return mathopt.solve(model, mathopt.SolverType.HIGHS, params=params, model_params=model_params,
                             msg_cb=callback)


@contextmanager
def native_stdout_to_stderr():
    """Send what the solvers' C++ code prints on standard output to standard error meanwhile.

    Why: HiGHS prints debugging lines of its own to stdout even with output off (seen:
    "HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();" in the
    middle of `frontier --json`), and stdout is where --json and tables go. Python's own
    writes keep going to sys.stdout's buffer, flushed first so nothing is reordered."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 (an embedding host): nothing to protect
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def mip_start(model, values: dict[int, float]):
    """A MathOpt solution hint with every variable set: integers rounded (a solver's values
    carry tolerance noise), continuous ones as they are (an analysis' slack may be 2.5)."""
    from ortools.math_opt.python import mathopt

    start = {v: values.get(v.id, 0.0) for v in model.variables()}
    return mathopt.SolutionHint(variable_values={v: round(x) if v.integer else x for v, x in start.items()})


@dataclass
class _Plan:
    """A plan of the model from a restricted solve: variable values by id, and its cost."""

    values: dict[int, float]
    cost: float


def _first_plan(model, milp: Milp, seconds: float, gap: float | None, log: bool) -> _Plan | None:
    """A plan of the model restricted to each job's cheapest domains, widened while it has none."""
    ranking = warmstart.groups_by_cost(milp)
    widest = max((len(ranked) for ranked in ranking.values()), default=0)
    deadline = time.perf_counter() + seconds
    per_job = warmstart.FIRST_DOMAINS
    while per_job < widest and time.perf_counter() < deadline:
        plan = _restricted_plan(model, milp, warmstart.shortlist(milp, per_job, ranking), deadline, gap, log)
        if plan is not None:
            return plan
        per_job *= 2
    return None


def _guided_plan(model, milp: Milp, lp_values, hint: _Plan | None, deadline: float, gap: float | None,
                 log: bool) -> _Plan | None:
    """A plan from the domains the LP relaxation uses (and the first plan's), seeded with the
    first plan; the cheaper of the two."""
    keep = warmstart.lp_shortlist(milp, lp_values, hint and hint.values)
    plan = _restricted_plan(model, milp, keep, deadline, gap, log, hint)
    return _cheaper(milp, plan, hint)


UNPACKED_MARGIN = 0.02
"""A plan whose single-node jobs do not fit their nodes replaces one whose do only when it is
cheaper by more than this share: its repair may cost more than a small saving. Measured on the
synthetic instances at 60 s: target seed 4's wider step found 2,046,668 CNY against a first
plan of 2,051,952 that packed, and the repair made it 2,153,502; large seed 1's guided plan
was 638,128 against 803,170, and the repair kept it."""


def _cheaper(milp: Milp, plan: _Plan | None, other: _Plan | None) -> _Plan | None:
    """The cheaper of two plans, either of which may be missing; one that does not pack must be
    cheaper by UNPACKED_MARGIN to replace one that does."""
    if plan is None or other is None:
        return plan or other
    def price(p: _Plan) -> float:
        return p.cost * (1 + UNPACKED_MARGIN) if _unpacked_plan(milp, p) else p.cost
    return plan if price(plan) < price(other) else other


def _restricted_plan(model, milp: Milp, keep: set[int], deadline: float, gap: float | None, log: bool,
                     hint: _Plan | None = None) -> _Plan | None:
    """Solve `model` by `deadline` with every option outside `keep` held at zero
    (warmstart.held_out); bounds are restored afterwards. The restriction's bound says
    nothing about the whole model, so a listener hears only the plan's cost from this solve."""
    listener = PROGRESS.listener
    incumbent_only = (lambda best, _bound: listener(best, None)) if listener is not None else None
    held = [model.get_variable(v.index) for v in warmstart.held_out(milp, keep) if v.lower_bound == 0]
    saved = [(v, v.upper_bound) for v in held]
    for v in held:
        v.upper_bound = 0.0
    try:
        result = _mathopt_once(model, deadline - time.perf_counter(), max(gap or 0.0, warmstart.FIRST_GAP), log,
                               incumbent_only, hint and hint.values)
    finally:
        for v, upper in saved:
            v.upper_bound = upper
    if not result.has_primal_feasible_solution():
        return None
    return _Plan(_values(result), result.objective_value())


def _polish(milp: Milp, values: dict[int, float]) -> None:
    """Settle the bookkeeping variables a time- or gap-limited solve may leave slack.

    Discounts (v, y), data-site flags (u) and the running and storage flags (r, s) only
    lower or account for cost; a stopped solver can leave a discount unclaimed, a flag set
    at an unused site or a job running past its last work. Setting them
    to what the rented capacity implies keeps the plan's stated cost equal to what its
    schedule costs (the verifier re-prices it) and never raises the objective.
    The tails W (work still to do, solver.milp.data._running) are set from the replicas too:
    a solver's slack W in a period whose flag r this sets to 0 would break W ≤ units·r, and
    the polished values are the MIP start of the next round (solve_milp's repair).
    """
    for key, v in milp.full_price.items():
        cfg_key, t = key
        held = round(values.get(discounted_variable(milp, cfg_key, t).index, 0.0))
        earns = held >= milp.inst.configs[cfg_key].discount_nodes
        values[v.index] = float(0 if earns else held)
        values[milp.discount_flag[key].index] = float(earns)
    for key, u in milp.data_sites.items():
        used = any(round(values.get(v.index, 0.0)) > 0 for v in milp.data_members[key])
        values[u.index] = float(used)
    last: dict[str, int] = {}  # each job's last period with replicas: it runs (and stores) until then
    for (i, t), var in milp.replicas.items():
        if round(values.get(var.index, 0.0)) > 0:
            job = milp.inst.options[i].job
            last[job] = max(last.get(job, t), t)
    for (job, t), r in milp.running.items():
        values[r.index] = float(job in last and t <= last[job])
    later: dict[str, float] = {}  # each tail W[j,t] is the units done from t on (W ≤ units·r holds where r is 0)
    for (job, t), (tail, terms) in sorted(milp.tails.items(), key=lambda item: -item[0][1]):
        later[job] = later.get(job, 0.0) + sum(units * round(values.get(v.index, 0.0)) for v, units in terms)
        values[tail.index] = later[job]
    for (job, vendor, dc, t), s in milp.stored.items():
        values[s.index] = max(0.0, values[milp.data_sites[job, vendor, dc].index] + values[milp.running[job, t].index] - 1)


def _parameters(backend: str, gap: float | None) -> str:
    """Solver-specific settings: the relative gap, and HiGHS kept quiet (it ignores enable_output)
    with its faulty presolve rule off (HIGHS_PRESOLVE_RULES_OFF)."""
    lines = ["output_flag=false", f"presolve_rule_off={HIGHS_PRESOLVE_RULES_OFF}"] if backend == "highs" else []
    if gap is not None:
        lines.append({"scip": f"limits/gap = {gap}", "highs": f"mip_rel_gap={gap}",
                      "cp_sat": f"relative_gap_limit:{gap}"}[backend])
    return "\n".join(lines)
