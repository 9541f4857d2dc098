"""The big-model strategy: a model too big to solve whole in its time limit is planned in steps.

A first plan from each job's cheapest domains, improved while the LP relaxation runs on the
other core (solver.engine.relaxation), a plan from the domains the LP uses, then the whole
model from the best plan so far (`run_big`). The restrictions and their shares of the time
limit are solver.engine.warmstart's; the calls are solver.engine.backends'. solver.engine.run
hands a HiGHS solve here when the model has warmstart.WARM_START_VARIABLES or more.
"""

from __future__ import annotations

import math
import time

from solver.clock import stopped
from solver.engine import warmstart
from solver.engine.backends import Incumbent, Run, mathopt_once, read, result_values
from solver.engine.progress import PROGRESS, tell_bound
from solver.engine.relaxation import BackgroundRelaxation, cores
from solver.engine.switches import switched_on
from solver.milp.capacity import discount_table
from solver.milp.core import Milp
from solver.milp.packing import unpacked
from solver.milp.solution import NoSolution


def too_big_for(milp: Milp, left: float, time_limit: float) -> bool:
    """A model of warmstart.GUIDED_VARIABLES or more, with less than warmstart.FINAL_SHARE of
    the limit left: a whole-model solve would only load and presolve it. Why: on the target synthetic
    instance (seed 3, 60 s) the round after the repair, given 4.5 s, took 19 s to end with
    the repaired plan. run_big asks the same after its guided plan."""
    return milp.model.num_variables >= warmstart.GUIDED_VARIABLES and left < time_limit * warmstart.FINAL_SHARE


def run_big(model, milp: Milp, deadline: float, time_limit: float, gap: float | None, log: bool) -> Run:
    """A big model, in steps (solver.engine.warmstart), while its LP relaxation runs on another core.

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
    The plan's bound is the better of HiGHS' and the LP's (solver.engine.relaxation): without
    the LP, a model whose root LP HiGHS cannot finish in time has no bound at all.
    On a single core the LP would only slow the rest down, so it is not started.
    """
    lagrangian = switched_on("lagrange")  # read once: the child started and the plan told agree
    lp = _background_bound(milp, deadline, time_limit, log, lagrangian) if cores() >= 2 else None
    try:
        first_share, started = time_limit * warmstart.FIRST_SHARE, time.perf_counter()
        hint = first_plan(model, milp, first_share, gap, log)
        if hint is not None and lp is not None and lagrangian:
            lp.tell_upper(hint.cost)  # the Lagrangian's Polyak target
        # HiGHS' time limit leaves out loading the model (about 2 s at 200k variables);
        # what the first plan ran over its share is kept back from the later steps.
        overrun = max(0.0, time.perf_counter() - started - first_share)
        guided = lp is not None and milp.model.num_variables >= warmstart.GUIDED_VARIABLES
        relax = None
        if guided and not stopped():  # stopped (Ctrl-C, the budget): no later step starts, the plan so far stands
            keep_back = max(time_limit * warmstart.GUIDED_MIN_SHARE, warmstart.REPAIR_SECONDS)
            step_until, step_start = deadline - keep_back - overrun, time.perf_counter()
            hint = _while_lp_runs(model, milp, lp, hint, step_until, time_limit, gap, log)
            step_end = min(step_until, step_start + time_limit * warmstart.WIDER_SHARE)
            overrun += max(0.0, time.perf_counter() - step_end)  # loading the model, beyond HiGHS' limit
            relax = lp.wait(deadline - _reserve(milp, hint, time_limit) - time.perf_counter())
            if relax is not None:
                tell_bound(relax.bound)
                until = min(deadline - overrun, time.perf_counter() + time_limit * warmstart.GUIDED_MAX_SHARE)
                if _unpacked_plan(milp, hint):
                    until = min(until, deadline - warmstart.REPAIR_SECONDS)
                if until - time.perf_counter() >= 1.0 and not stopped():
                    hint = _guided_plan(model, milp, relax.values, hint, until, gap, log)
        left = deadline - overrun - time.perf_counter()
        if guided and _unpacked_plan(milp, hint):
            # its single-node jobs do not fit their nodes: solve_milp repairs it (solver.engine.repair)
            # while time is left, and solves the whole model from the repair, slot rows and all.
            # The LP's bound, if it came, is the plan's (no later round runs the LP beside it).
            # Without the LP too: waiting for it left the repair its 2-s floor (target synthetic
            # instance, seed 3, 60 s: no plan at all), and a whole-model step in its place made
            # the 2.51M CNY first plan 5.27M.
            run = Run(hint.values, hint.cost, -math.inf)
            relax = relax or lp.wait(0)
        elif stopped() and hint is not None:  # HiGHS may not hear an interrupt that came before its solve began
            run = Run(hint.values, hint.cost, -math.inf)
            relax = relax or (lp.wait(0) if lp is not None else None)
        elif not guided or not too_big_for(milp, left, time_limit):
            hint_values = hint.values if hint is not None else None
            run = read(mathopt_once(model, left, gap, log, PROGRESS.listener, hint_values, ipm_lp=True), hint)
            relax = relax or (lp.wait(0) if lp is not None else None)
        else:
            run = (Run(hint.values, hint.cost, -math.inf) if hint is not None
                   else Run(None, proven_infeasible=lp.infeasible, status_name="no plan"))
            relax = relax or lp.wait(deadline - time.perf_counter())
    finally:
        if lp is not None:
            lp.stop()
    if relax is not None and run.values is not None:
        run.bound = max(run.bound, relax.bound)
    return run


def run_started(model, milp: Milp, time_limit: float | None, gap: float | None, log: bool) -> Run:
    """A model below the big ones' size, solved whole from a first plan (`first_plan`, within
    warmstart.FIRST_SHARE of the limit): HiGHS holds a plan from its first node, so its objective
    propagation and reduced-cost fixing prune from the start, and the progress line shows a plan
    at once. The first plan stands when the solve is stopped before it begins (Ctrl-C, the
    budget) or finds nothing of its own; its restriction's bound is never reported."""
    began = time.perf_counter()
    share = time_limit * warmstart.FIRST_SHARE if time_limit else (
        math.inf if PROGRESS.node_limit is not None else warmstart.FIRST_PLAN_SECONDS)  # --deterministic: no clock
    hint = first_plan(model, milp, share, gap, log)
    if hint is not None and stopped():
        return Run(hint.values, hint.cost, -math.inf)
    left = None if time_limit is None else max(time_limit - (time.perf_counter() - began), 0.1)
    return read(mathopt_once(model, left, gap, log, PROGRESS.listener, hint and hint.values), hint)


def _background_bound(milp: Milp, deadline: float, time_limit: float, log: bool,
                      lagrangian: bool) -> BackgroundRelaxation:
    """The LP relaxation on the second core; `lagrangian` (GPUPLAN_EXPERIMENTAL=lagrange, off by default:
    solver.engine.switches says why), the Lagrangian bound instead
    (solver.engine.experimental.lagrange, imported only then), ending warmstart.GUIDED_MAX_SHARE
    of the limit before the deadline so that the plan guided by its blocks has that time. Why
    try it: the target synthetic instance's LP takes 74-87 s, so at 60 s the LP child gave
    neither bound nor guide."""
    if lagrangian:
        from solver.engine.experimental.lagrange import BackgroundLagrangian
        seconds = deadline - time.perf_counter() - time_limit * warmstart.GUIDED_MAX_SHARE
        return BackgroundLagrangian(milp, seconds, log=log)
    return BackgroundRelaxation(milp.model, deadline - time.perf_counter(), discounts=discount_table(milp), log=log)


def _while_lp_runs(model, milp: Milp, lp: BackgroundRelaxation, hint: Incumbent | None, until: float,
                   time_limit: float, gap: float | None, log: bool) -> Incumbent | None:
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


def _reserve(milp: Milp, hint: Incumbent | None, time_limit: float) -> float:
    """Seconds kept back from waiting for the LP relaxation: the guided plan's least share,
    and, when the first plan does not pack its single-node jobs, what the repair may take.
    Why: when the LP came late, the repair of such a plan had the 2-s floor left and could
    end with no plan at all (target synthetic instance, seed 3, 60 s: the LP took 75 s)."""
    reserve = time_limit * warmstart.GUIDED_MIN_SHARE
    return max(reserve, warmstart.REPAIR_SECONDS) if _unpacked_plan(milp, hint) else reserve


def _unpacked_plan(milp: Milp, plan: Incumbent | None) -> bool:
    """A plan is in hand and its single-node jobs do not fit their nodes (solver.milp.packing)."""
    return plan is not None and bool(unpacked(milp, lambda v: plan.values.get(v.index, 0.0)))


def first_plan(model, milp: Milp, seconds: float, gap: float | None, log: bool) -> Incumbent | None:
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


def _guided_plan(model, milp: Milp, lp_values, hint: Incumbent | None, deadline: float, gap: float | None,
                 log: bool) -> Incumbent | None:
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


def _cheaper(milp: Milp, plan: Incumbent | None, other: Incumbent | None) -> Incumbent | None:
    """The cheaper of two plans, either of which may be missing; one that does not pack must be
    cheaper by UNPACKED_MARGIN to replace one that does."""
    if plan is None or other is None:
        return plan or other
    def price(p: Incumbent) -> float:
        return p.cost * (1 + UNPACKED_MARGIN) if _unpacked_plan(milp, p) else p.cost
    return plan if price(plan) < price(other) else other


def _restricted_plan(model, milp: Milp, keep: set[int], deadline: float, gap: float | None, log: bool,
                     hint: Incumbent | None = None) -> Incumbent | None:
    """Solve `model` by `deadline` with every option outside `keep` held at zero
    (warmstart.held_out); bounds are restored afterwards. The restriction's bound says
    nothing about the whole model, so a listener hears only the plan's cost from this solve."""
    listener = PROGRESS.listener
    incumbent_only = (lambda best, _bound: listener(best, None)) if listener is not None else None
    if incumbent_only is not None:
        incumbent_only.plan_only = True  # its log lines are a restriction's (tests/bench/realistic.py reads that)
    held = [model.get_variable(v.index) for v in warmstart.held_out(milp, keep) if v.lower_bound == 0]
    saved = [(v, v.upper_bound) for v in held]
    for v in held:
        v.upper_bound = 0.0
    try:
        left = deadline - time.perf_counter()  # infinite for a solve without a time limit (solver.engine.run)
        result = mathopt_once(model, left if math.isfinite(left) else None, max(gap or 0.0, warmstart.FIRST_GAP),
                              log, incumbent_only, hint and hint.values)
    except NoSolution:  # HiGHS failed on the restricted model (solver.engine.backends.solver_failed): no hint from it
        return None
    finally:
        for v, upper in saved:
            v.upper_bound = upper
    if not result.has_primal_feasible_solution():
        return None
    return Incumbent(result_values(result), result.objective_value())
