"""Reduced-cost fixing: tighten integer bounds from the LP relaxation's duals and a plan in hand.

The rule (minimisation). Let y be any row duals of the LP relaxation (here HiGHS' optimal
ones), d = c − Aᵀy the reduced costs they give, and L(y) the Lagrangian bound

    L(y) = offset + Σ_{y_i>0} y_i·lo_i + Σ_{y_i<0} y_i·up_i + Σ_{d_j>0} d_j·l_j + Σ_{d_j<0} d_j·u_j

(lo, up: row bounds; l, u: variable bounds). For every x within the rows and bounds,
c·x + offset = yᵀ(Ax) + d·x + offset, and each term is no lower than its part of L, so

    cost(x) ≥ L(y) + Σ_{d_j>0} d_j·(x_j − l_j) + Σ_{d_j<0} |d_j|·(u_j − x_j),

a sum of terms that are all ≥ 0. A plan with cost(x) ≤ z_inc therefore has, for every j,
d_j·(x_j − l_j) ≤ z_inc − L(y) when d_j > 0, i.e. x_j ≤ l_j + (z_inc − L)/d_j, and
x_j ≥ u_j − (z_inc − L)/|d_j| when d_j < 0. For an integer x_j the bound rounds down (up),
and when it reaches l_j (u_j) the variable is fixed there. That is the textbook rule "d_j >
z_inc − z_LP fixes x_j at its bound", with L(y) in place of z_LP: L(y) ≤ z_LP, and equal at
an exact LP optimum.

Why it is exact: the inequality holds for any y, so the new bounds keep *every* solution of
cost ≤ z_inc, whatever the LP solver's tolerances made of y; L(y) and d are recomputed here
from the model's own numbers, never taken from the solver, and a margin (`MARGIN`, `SCALE`,
`INTEGER_SLACK`) covers the rounding of these sums. Continuous variables keep their bounds
(a continuous x_j may sit anywhere up to the bound, so it could only be narrowed, not
fixed, which buys the search nothing).

What it does not keep: solutions dearer than z_inc. So z_inc must be the cost of a real
plan of this very model, and that plan must stay in hand (it is the MIP start: it satisfies
the new bounds, and if nothing cheaper exists it is the optimum). `fix_by_reduced_cost`
therefore takes the plan, not a number: it checks the plan against every row, bound and
integrality of the model and prices it itself; a cost stated too low (a plan of another
model, a bound mistaken for a plan) would cut the optimum, and is refused.

The bounds are valid only for the model they were computed on, rows and bounds as they
stand (more rows keep them valid: they only remove solutions); `run_fixed` applies them
to the MathOpt copy of one solve, never to the caller's model, which analyses re-bound.
Measured, and off by default: tests/bench/HISTORY.md ("Reduced-cost fixing").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import timedelta

import numpy as np

from solver.engine import warmstart
from solver.engine.backends import Run, mathopt_once, read
from solver.engine.big import first_plan
from solver.engine.highs_options import HIGHS_PRESOLVE_RULES_OFF
from solver.engine.progress import PROGRESS
from solver.milp.core import Milp

MARGIN = 1e-7
"""Relative slack added to z_inc − L(y) (of the plan's cost): 0.03 CNY on a 300,000 CNY plan.
A plan the MIP solver accepts may break rows by its feasibility tolerance, so the cost of
the optimum it reports is itself only that exact."""

SCALE = 1e-9
"""Relative slack on the sum of |terms| of L(y) and of the plan's cost: float64 sums of n
terms err by about n·2⁻⁵³ of that sum, under 1e-11 at 100,000 terms."""

INTEGER_SLACK = 1e-6
"""Added before an integer bound is rounded down (taken off before rounding up): a bound of
2.9999999 computed for a true 3 must not become 2."""

FEASIBILITY = 1e-6
"""Row, bound and integrality tolerance (relative to each row's size) when a plan is checked
before its cost is trusted: HiGHS' own default primal feasibility tolerance."""


@dataclass(frozen=True)
class Arrays:
    """A MathOpt model as arrays by position (ids 0..n−1 as solver.engine.export makes them)."""

    cost: np.ndarray
    offset: float
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    coefs: np.ndarray

    @classmethod
    def of(cls, model) -> Arrays:
        """The arrays of a MathOpt model (minimisation, ids consecutive from 0)."""
        proto = model.export_model()
        n, m = len(proto.variables.ids), len(proto.linear_constraints.ids)
        if proto.objective.maximize or list(proto.variables.ids) != list(range(n)) or \
                list(proto.linear_constraints.ids) != list(range(m)):
            raise ValueError("reduced-cost fixing needs a minimisation with ids 0..n-1 (solver.engine.export)")
        cost = np.zeros(n)
        cost[np.array(proto.objective.linear_coefficients.ids, dtype=np.int64)] = \
            np.array(proto.objective.linear_coefficients.values)
        matrix = proto.linear_constraint_matrix
        return cls(cost, proto.objective.offset, np.array(proto.variables.lower_bounds),
                   np.array(proto.variables.upper_bounds), np.array(proto.variables.integers, dtype=bool),
                   np.array(proto.linear_constraints.lower_bounds), np.array(proto.linear_constraints.upper_bounds),
                   np.array(matrix.row_ids, dtype=np.int64), np.array(matrix.column_ids, dtype=np.int64),
                   np.array(matrix.coefficients))

    def activity(self, x: np.ndarray) -> np.ndarray:
        """A·x, row by row."""
        return np.bincount(self.rows, weights=self.coefs * x[self.cols], minlength=len(self.row_lower))


@dataclass(frozen=True)
class Fixing:
    """What one application did: integer variables fixed at a bound, others whose range only
    narrowed, the Lagrangian bound L(y) and the plan's cost z_inc it was measured against."""

    fixed: int
    narrowed: int
    bound: float
    incumbent: float


def lp_duals(model, time_limit: float | None = None) -> np.ndarray | None:
    """Row duals of `model`'s LP relaxation (integrality dropped, on a copy), by row id; None
    when HiGHS returns no dual-feasible solution (out of time, infeasible).

    Solved by simplex through MathOpt with the presolve rules every HiGHS solve turns off
    (solver.engine.highs_options); any duals would give valid bounds, optimal ones the tightest."""
    from ortools.math_opt.python import mathopt

    lp, result = solve_relaxed(model, time_limit)
    if result.termination.reason != mathopt.TerminationReason.OPTIMAL or not result.has_dual_feasible_solution():
        return None
    return np.array(result.dual_values(list(lp.linear_constraints())))


def solve_relaxed(model, time_limit: float | None = None, interrupter=None):
    """`model`'s LP relaxation (integrality dropped, on a copy) and HiGHS' result for it, by dual
    simplex through MathOpt with the presolve rules every HiGHS solve turns off
    (solver.engine.highs_options); also solver.engine.experimental.fixopt's LP."""
    from ortools.math_opt.python import mathopt

    proto = model.export_model()
    del proto.variables.integers[:]
    proto.variables.integers.extend([False] * len(proto.variables.ids))
    lp = mathopt.Model.from_model_proto(proto)
    params = mathopt.SolveParameters(time_limit=timedelta(seconds=max(time_limit, 0.1)) if time_limit else None,
                                     lp_algorithm=mathopt.LPAlgorithm.DUAL_SIMPLEX)
    params.highs.int_options["presolve_rule_off"] = HIGHS_PRESOLVE_RULES_OFF
    return lp, mathopt.solve(lp, mathopt.SolverType.HIGHS, params=params, interrupter=interrupter)


def lagrangian_bound(arrays: Arrays, duals: np.ndarray) -> tuple[float, np.ndarray, float]:
    """L(y), the reduced costs d = c − Aᵀy, and the sum of |terms| of L (for the rounding margin).

    A dual whose sign points at an infinite row bound is dropped (y_i = 0): the bound holds
    for any y, and that row's term would be −∞. A reduced cost pointing at an infinite
    variable bound makes L −∞ (no bound, nothing fixed)."""
    y = np.where((duals > 0) & np.isfinite(arrays.row_lower) | (duals < 0) & np.isfinite(arrays.row_upper),
                 duals, 0.0)
    d = arrays.cost - np.bincount(arrays.cols, weights=arrays.coefs * y[arrays.rows], minlength=len(arrays.cost))
    row_terms = np.where(y > 0, y * np.where(y > 0, arrays.row_lower, 0.0),
                         y * np.where(y < 0, arrays.row_upper, 0.0))
    if np.any((d > 0) & ~np.isfinite(arrays.lower)) or np.any((d < 0) & ~np.isfinite(arrays.upper)):
        return -math.inf, d, math.inf
    var_terms = np.where(d > 0, d * np.where(d > 0, arrays.lower, 0.0), d * np.where(d < 0, arrays.upper, 0.0))
    scale = float(np.abs(row_terms).sum() + np.abs(var_terms).sum() + abs(arrays.offset))
    return float(arrays.offset + row_terms.sum() + var_terms.sum()), d, scale


def reduced_cost_bounds(arrays: Arrays, duals: np.ndarray, incumbent: float) -> tuple[np.ndarray, np.ndarray, float]:
    """New (lower, upper) bounds of every variable that keep each solution of cost ≤ `incumbent`,
    and L(y). Trusts `incumbent` as given: a value below the optimum cuts it (see
    `fix_by_reduced_cost`, which prices a plan instead)."""
    bound, d, scale = lagrangian_bound(arrays, duals)
    lower, upper = arrays.lower.copy(), arrays.upper.copy()
    if not math.isfinite(bound):
        return lower, upper, bound
    room = incumbent - bound + MARGIN * max(1.0, abs(incumbent)) + SCALE * (scale + abs(incumbent))
    if room < 0:
        raise ValueError(f"no solution costs {incumbent:,.6g} or less: the LP bound is {bound:,.6g}")
    up = arrays.integer & (d > 0)
    down = arrays.integer & (d < 0)
    with np.errstate(divide="ignore", over="ignore"):
        cap = np.floor(arrays.lower + room / np.where(up, d, 1.0) + INTEGER_SLACK)
        floor = np.ceil(arrays.upper - room / np.where(down, -d, 1.0) - INTEGER_SLACK)
    upper = np.where(up, np.minimum(upper, cap), upper)
    lower = np.where(down, np.maximum(lower, floor), lower)
    return lower, upper, bound


def plan_cost(arrays: Arrays, values: np.ndarray) -> float | None:
    """The cost of `values` if they are a plan of the model (every row, bound and integrality
    within FEASIBILITY); None otherwise."""
    x = values
    slack = FEASIBILITY * (1.0 + np.abs(x))
    if np.any(x < arrays.lower - slack) or np.any(x > arrays.upper + slack) or \
            np.any(arrays.integer & (np.abs(x - np.round(x)) > FEASIBILITY)):
        return None
    ax = arrays.activity(x)
    size = np.bincount(arrays.rows, weights=np.abs(arrays.coefs * x[arrays.cols]), minlength=len(ax))
    tol = FEASIBILITY * (1.0 + size)
    if np.any(ax < arrays.row_lower - tol) or np.any(ax > arrays.row_upper + tol):
        return None
    return float(arrays.offset + arrays.cost @ x)


def fix_by_reduced_cost(model, duals: np.ndarray, plan: dict[int, float]) -> Fixing | None:
    """Tighten `model`'s integer bounds in place from `duals` and `plan` (values by variable id);
    None, and the model untouched, when `plan` is not a plan of this model (the guard: its
    cost, priced here from the model, is what the bounds keep) or L(y) gives nothing."""
    arrays = Arrays.of(model)
    values = np.array([plan.get(k, 0.0) for k in range(len(arrays.cost))])
    incumbent = plan_cost(arrays, values)
    if incumbent is None:
        return None
    incumbent += SCALE * float(np.abs(arrays.cost * values).sum())
    try:
        lower, upper, bound = reduced_cost_bounds(arrays, duals, incumbent)
    except ValueError:  # L(y) above a checked plan's cost: only rounding can do that; fix nothing
        return None
    if not math.isfinite(bound):
        return None
    fixed = narrowed = 0
    for k in np.flatnonzero((lower != arrays.lower) | (upper != arrays.upper)):
        var = model.get_variable(int(k))
        var.lower_bound, var.upper_bound = float(lower[k]), float(upper[k])
        fixed += int(lower[k] == upper[k])
        narrowed += int(lower[k] != upper[k])
    return Fixing(fixed, narrowed, bound, incumbent)


def run_fixed(model, milp: Milp, time_limit: float | None, gap: float | None, log: bool) -> Run:
    """HiGHS on `model` (the MathOpt copy of one solve, solver.engine.run) after reduced-cost fixing.

    A first plan (solver.engine.big.first_plan: each job's cheapest domains; none when no job
    has more than warmstart.FIRST_DOMAINS of them, the restriction being the whole model) and
    the LP relaxation's duals (`lp_duals`) tighten the integer bounds (`fix_by_reduced_cost`),
    each step given warmstart.FIRST_SHARE of the limit; the solve then starts from that plan,
    which the bounds keep, so the optimum is never lost: the bounds keep every plan no dearer
    than it. Without the plan or the duals, the model is solved as it is. Off by default:
    measured no faster (tests/bench/HISTORY.md)."""
    start = time.perf_counter()
    share = None if time_limit is None else time_limit * warmstart.FIRST_SHARE
    hint = first_plan(model, milp, math.inf if share is None else share, gap, log)
    duals = None if hint is None else lp_duals(model, share)
    if duals is not None:
        fix_by_reduced_cost(model, duals, hint.values)
    left = None if time_limit is None else time_limit - (time.perf_counter() - start)
    return read(mathopt_once(model, left, gap, log, PROGRESS.listener, hint and hint.values), hint)
