"""One solve of the model as it stands: the backend's answer as a `Solution`, its bookkeeping
variables settled and its cost priced from the model's cost terms.

solver.engine.solve repeats it while a plan's single-node jobs do not fit their nodes, and
solver.engine.repair uses it to repair such a plan; a big HiGHS model goes to
solver.engine.big.run_big from here.
"""

from __future__ import annotations

import math
import time

from solver.clock import stopped
from solver.engine import warmstart
from solver.engine.backends import Incumbent, Run, mathopt_once, read, run_model_builder
from solver.engine.big import run_big, run_started
from solver.engine.export import to_mathopt
from solver.engine.progress import PROGRESS, BestHeard
from solver.engine.switches import switched_on
from solver.milp.capacity import discounted_variable
from solver.milp.core import Milp
from solver.milp.solution import OPTIMALITY_GAP, NoSolution, Solution


def solve_once(milp: Milp, backend: str, time_limit: float | None, gap: float | None, log: bool,
               warm_start: bool, start_from: Solution | None = None, *, reduced_cost_fixing: bool = False) -> Solution:
    """One solve; HiGHS starts from `start_from`'s plan when given (the other backends ignore it);
    `reduced_cost_fixing` (or GPUPLAN_EXPERIMENTAL=rcfix, solver.engine.switches): HiGHS gets the
    model shrunk by solver.engine.experimental.rcfix first (rcfix.run_fixed)."""
    start = time.perf_counter()
    integral = any(v.is_integral for v in milp.model.get_variables())
    reduced_cost_fixing = reduced_cost_fixing or switched_on("rcfix")
    if backend == "highs":
        plan = None if start_from is None else Incumbent(start_from.values, start_from.objective)
        run = _run_highs_mathopt(milp, time_limit, gap, log, warm_start and integral, plan,
                                 reduced_cost_fixing=reduced_cost_fixing and integral)
    else:
        run = run_model_builder(milp, backend, time_limit, gap, log)
    seconds = time.perf_counter() - start
    if run.values is None:
        why = "proven infeasible" if run.proven_infeasible else (
            f"no plan found within {time_limit:.3g} s (not proven infeasible)" if time_limit
            else f"solver stopped with status {run.status_name}")
        raise NoSolution(f"{why}; {backend} ran {seconds:.1f} s", proven=run.proven_infeasible)
    values = run.values
    solution = Solution(milp, "feasible", run.objective, run.bound, seconds, backend, values, integral)
    if integral:
        polish(milp, values)  # only integer plans: rounding an LP point would not bound anything
        solution.objective = sum(solution.cost_parts().values())
    solution.bound = min(solution.bound, solution.objective)
    if run.optimal and solution.gap <= OPTIMALITY_GAP:
        solution.status = "optimal"
    return solution


def _run_highs_mathopt(milp: Milp, time_limit: float | None, gap: float | None, log: bool,
                       warm_start: bool = True, plan: Incumbent | None = None, *,
                       reduced_cost_fixing: bool = False) -> Run:
    """HiGHS through MathOpt, for every HiGHS solve.

    Why: through the model builder, HiGHS stopped by its time limit returns no values
    even when it holds a plan; through MathOpt it returns the incumbent and its bound,
    so a time-limited solve gives its best plan with the gap (docs/ARCHITECTURE.md). A
    solve stopped by a relative gap is the same: the model builder then reports the
    plan's own cost as its bound (measured: 310,800 CNY for both on seed-7b-200b-30d at
    gap 0.05, whose optimum is 307,180), MathOpt HiGHS' real bound. And the same search
    runs faster through MathOpt: on debug-then-train, random seeds 1-8, identical node
    and LP iteration counts, median 4.1 s against 5.3 s (conversion included).
    The model goes over as an exact MathOpt proto (solver.engine.export; variable k keeps
    id k).
    A model too big to solve whole in the time limit is planned in steps first
    (solver.engine.big.run_big); one of warmstart.FIRST_PLAN_VARIABLES or more is solved whole
    from a first plan of its cheapest domains (solver.engine.big.run_started); given a plan, the
    model is solved whole from it; asked for
    reduced-cost fixing, a smaller model is fixed first (solver.engine.experimental.rcfix).
    The experimental methods are imported here, inside the function, only when asked for: the
    default path must not load them (solver.engine.switches says why).
    """
    if PROGRESS.node_limit is not None:  # solve --deterministic: no step may depend on the clock
        time_limit = None
    start, was_stopped = time.perf_counter(), stopped()
    model = to_mathopt(milp.model)
    if stopped() and not was_stopped:  # the conversion took the rest of the budget (154k variables: ~5 s)
        if plan is not None:
            return Run(plan.values, plan.cost, -math.inf)
        raise NoSolution("the command's time ended while the model was handed to the solver; no solve was started "
                         "(not proven infeasible)", proven=False)
    listener = PROGRESS.listener
    if listener is not None:
        PROGRESS.listener = BestHeard(listener)
    big = bool(warm_start and time_limit and milp.model.num_variables >= warmstart.WARM_START_VARIABLES)
    if time_limit and not big:   # the conversion is inside the limit (1.7 s of a 5-s limit, tests/bench/HISTORY.md)
        time_limit = max(time_limit - (time.perf_counter() - start), 0.1)
    try:
        if plan is not None:  # a repaired plan (solve_milp): the steps below are for models with none
            return read(mathopt_once(model, time_limit, gap, log, PROGRESS.listener, plan.values, ipm_lp=big), plan)
        if big:
            return run_big(model, milp, start + time_limit, time_limit, gap, log)
        if reduced_cost_fixing:  # off by default: solver.engine.switches
            from solver.engine.experimental import rcfix
            return rcfix.run_fixed(model, milp, time_limit, gap, log)
        if warm_start and switched_on("fixopt"):  # off by default: solver.engine.switches
            from solver.engine.experimental import fixopt
            return fixopt.run_fix_and_optimize(model, milp, time_limit, gap, log)
        if warm_start and milp.model.num_variables >= warmstart.FIRST_PLAN_VARIABLES:
            return run_started(model, milp, time_limit, gap, log)
        return read(mathopt_once(model, time_limit, gap, log, PROGRESS.listener))
    finally:
        PROGRESS.listener = listener


def polish(milp: Milp, values: dict[int, float]) -> None:
    """Settle the bookkeeping variables a time- or gap-limited solve may leave slack.

    Discounts (v, y), data-site flags (u) and the running, started and storage flags (r, b, s) only
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
    first: dict[tuple[str, str, str], int] = {}  # each job's first period with replicas at a site: stored from then
    for (i, t), var in milp.replicas.items():
        if round(values.get(var.index, 0.0)) > 0:
            offer = milp.inst.configs[milp.inst.options[i].config].offer
            key = milp.inst.options[i].job, offer.vendor, offer.datacenter
            first[key] = min(first.get(key, t), t)
    for (job, vendor, dc, t), b in milp.started.items():
        values[b.index] = float((job, vendor, dc) in first and t >= first[job, vendor, dc])
    for (job, vendor, dc, t), s in milp.stored.items():
        values[s.index] = max(0.0, values[milp.started[job, vendor, dc, t].index] + values[milp.running[job, t].index] - 1)
