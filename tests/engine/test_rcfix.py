"""Reduced-cost fixing (solver.engine.experimental.rcfix): every solution no dearer than the incumbent survives.

Three levels: hand-built integer programs whose duals are worked out by hand (a variable that
is fixed; a stated incumbent below the optimum that cuts it, and the guard that refuses one);
random tiny integer programs checked by enumerating every integer point; and random tiny
planning problems solved with and without the fixing (the unfixed model is the oracle, as in
tests/milp/test_prune.py), each plan passing the verifier.
"""

from __future__ import annotations

import itertools
import random
from contextlib import suppress
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from ortools.math_opt.python import mathopt

from solver.engine.backends import mathopt_once, result_values
from solver.engine.experimental import rcfix
from solver.engine.export import to_mathopt
from solver.engine.solve import solve_milp
from solver.milp.build import build_milp
from solver.milp.extract import extract_plan
from solver.milp.instance import build_instance
from solver.milp.solution import NoSolution
from solver.verify import check_plan

from tests.builders import SMALL, catalog, hourly, job, monthly, problem

FAST = settings(max_examples=25, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _model(costs, rows, bounds=None) -> mathopt.Model:
    """min costs·x over integers x within `bounds` (default 0..5), rows (coefficients, lo, up)."""
    model = mathopt.Model()
    xs = [model.add_integer_variable(lb=lo, ub=up) for lo, up in (bounds or [(0, 5)] * len(costs))]
    for coefs, lo, up in rows:
        model.add_linear_constraint(lb=lo, ub=up, expr=sum(c * x for c, x in zip(coefs, xs)))
    model.minimize(sum(c * x for c, x in zip(costs, xs)))
    return model


def _bounds(model) -> list[tuple[float, float]]:
    return [(v.lower_bound, v.upper_bound) for v in model.variables()]


def _optimum(model) -> tuple[float, dict[int, float]]:
    result = mathopt_once(model, None, None, False, None)
    assert result.termination.reason == mathopt.TerminationReason.OPTIMAL
    return result.objective_value(), result_values(result)


def test_a_variable_dearer_than_the_gap_is_fixed_at_its_bound():
    # min 3x + 10z, x + z ≥ 2.5, x ≤ 5: the LP takes x = 2.5 (cost 7.5, row dual 3), so z's
    # reduced cost is 10 − 3 = 7. With the plan x = 3 (cost 9) in hand, z ≥ 1 would cost at
    # least 7.5 + 7 > 9: z is fixed at 0.
    model = _model([3, 10], [([1, 1], 2.5, np.inf)])
    duals = rcfix.lp_duals(model)
    assert duals == pytest.approx([3.0])
    fixing = rcfix.fix_by_reduced_cost(model, duals, {0: 3.0, 1: 0.0})
    assert fixing == rcfix.Fixing(1, 0, pytest.approx(7.5), pytest.approx(9.0))
    assert _bounds(model) == [(0, 5), (0, 0)]
    assert _optimum(model)[0] == pytest.approx(9.0)


def test_a_stated_incumbent_below_the_optimum_cuts_it_and_a_plan_is_required_instead():
    # min 5a + 7b, 2a + 3b ≥ 4: the LP takes b = 4/3 (cost 28/3, dual 7/3), a's reduced cost is
    # 5 − 14/3 = 1/3. The optimum a = 2 (cost 10) sits exactly at the edge: z_inc − L = 2/3
    # allows a ≤ 2, and any lower z_inc forbids it.
    model = _model([5, 7], [([2, 3], 4, np.inf)])
    duals = rcfix.lp_duals(model)
    arrays = rcfix.Arrays.of(model)
    _, upper, bound = rcfix.reduced_cost_bounds(arrays, duals, 10.0)
    assert bound == pytest.approx(28 / 3) and upper[0] == 2  # the true optimum's cost keeps a = 2
    _, upper, _ = rcfix.reduced_cost_bounds(arrays, duals, 9.9)
    assert upper[0] == 1  # a too-low z_inc cuts the optimum (the best left: a = b = 1, 12)
    with pytest.raises(ValueError, match="no solution costs"):
        rcfix.reduced_cost_bounds(arrays, duals, 9.0)  # below the LP bound: refused outright
    # The guard: fix_by_reduced_cost takes a plan and prices it itself; a = 1, b = 0 (cost 5,
    # below the optimum) breaks the row, so nothing is fixed.
    assert rcfix.fix_by_reduced_cost(model, duals, {0: 1.0, 1: 0.0}) is None
    assert rcfix.fix_by_reduced_cost(model, duals, {0: 2.5, 1: 0.0}) is None  # not integral
    assert _bounds(model) == [(0, 5), (0, 5)]
    assert rcfix.fix_by_reduced_cost(model, duals, {0: 2.0, 1: 0.0}) is not None
    assert _optimum(model)[0] == pytest.approx(10.0)


def test_a_negative_reduced_cost_raises_a_lower_bound():
    # min −4x + 1z, x ≤ z + 0.5 (x − z ≤ 0.5), x, z ≤ 3: the LP holds x = 3, z = 2.5 (cost −9.5,
    # dual −1 on the row), x's reduced cost −4 + 1 = −3 at its upper bound. With the plan x = 3,
    # z = 3 (cost −9), x ≤ 2 would cost at least −9.5 + 3: x is fixed at 3.
    model = _model([-4, 1], [([1, -1], -np.inf, 0.5)], bounds=[(0, 3), (0, 3)])
    duals = rcfix.lp_duals(model)
    fixing = rcfix.fix_by_reduced_cost(model, duals, {0: 3.0, 1: 3.0})
    assert fixing is not None and fixing.fixed == 1
    assert _bounds(model)[0] == (3, 3)
    assert _optimum(model)[0] == pytest.approx(-9.0)


def _random_program(rng: random.Random) -> mathopt.Model:
    """3-4 integers in 0..3, costs of either sign, 1-3 rows of small coefficients."""
    n = rng.randint(3, 4)
    rows = []
    for _ in range(rng.randint(1, 3)):
        coefs = [rng.randint(-3, 3) for _ in range(n)]
        rhs = rng.randint(-2, 6) + rng.choice((0, 0.5))
        rows.append((coefs, rhs, np.inf) if rng.random() < 0.7 else (coefs, -np.inf, rhs))
    return _model([rng.randint(-5, 9) for _ in range(n)], rows, bounds=[(0, 3)] * n)


def test_enumeration_every_point_no_dearer_than_the_incumbent_survives():
    """Random tiny integer programs, all 4^n points enumerated: with any feasible point as the
    incumbent, including the optimum itself (the tightest case), every feasible point of cost ≤
    its cost stays within the new bounds; and the bounds do tighten on many of them."""
    rng, tightened, tried = random.Random(23), 0, 0
    while tried < 60:
        model = _random_program(rng)
        arrays = rcfix.Arrays.of(model)
        points = [np.array(p, dtype=float) for p in itertools.product(range(4), repeat=len(arrays.cost))]
        feasible = [p for p in points if rcfix.plan_cost(arrays, p) is not None]
        duals = rcfix.lp_duals(model) if feasible else None
        if duals is None:
            continue
        tried += 1
        cost = {i: float(arrays.cost @ p) for i, p in enumerate(feasible)}
        best = min(cost, key=cost.get)
        for chosen in {best, rng.randrange(len(feasible))}:
            lower, upper, _ = rcfix.reduced_cost_bounds(arrays, duals, cost[chosen])
            kept = [i for i in cost if cost[i] <= cost[chosen]]
            assert all(np.all(feasible[i] >= lower) and np.all(feasible[i] <= upper) for i in kept)
            tightened += bool(np.any(lower > arrays.lower) or np.any(upper < arrays.upper))
    assert tightened >= 20


@st.composite
def instances(draw):
    """2–5 offers of either mode, each of its own vendor (so jobs have several fabric domains and
    the first plan a restriction to make), at random prices and stock; 1–3 jobs of a few GPU-days."""
    offers = []
    for i in range(draw(st.integers(2, 5))):
        extra = dict(max_nodes=draw(st.integers(1, 3)), vendor=f"v{i}")
        if draw(st.booleans()):
            extra.update(discount_from_gpus=16, discount_pct=10)
        if draw(st.booleans()):
            offers.append(hourly(f"h{i}", float(draw(st.sampled_from((3, 4, 5)))), **extra))
        else:
            offers.append(monthly(f"m{i}", float(draw(st.sampled_from((9_000, 12_000, 15_000)))),
                                  lead_time_days=draw(st.integers(0, 2)), **extra))
    horizon = draw(st.integers(2, 5))
    jobs = [job(f"j{n}", days=draw(st.integers(4, 40)), deadline_days=draw(st.integers(1, horizon)),
                single_site=draw(st.booleans()), model=SMALL) for n in range(draw(st.integers(1, 3)))]
    return problem(*jobs, horizon_days=horizon), catalog(*offers)


def _cost(prob, cat, fixing: bool) -> float | None:
    """The optimum's cost with or without reduced-cost fixing, its plan verified; None when infeasible."""
    inst = build_instance(prob, cat)
    try:
        solution = solve_milp(build_milp(inst), time_limit=60, reduced_cost_fixing=fixing)
    except NoSolution as exc:
        assert exc.proven
        return None
    assert solution.status == "optimal"
    check_plan(prob, cat, extract_plan(solution))
    return solution.objective


@FAST
@given(instances())
def test_the_optimum_with_fixing_equals_the_optimum_without(case):
    prob, cat = case
    with_fixing, without = _cost(prob, cat, fixing=True), _cost(prob, cat, fixing=False)
    assert (with_fixing is None) == (without is None)
    if without is not None:
        assert with_fixing == pytest.approx(without, rel=1e-9, abs=1e-6)


@FAST
@given(instances())
def test_with_the_optimum_as_incumbent_the_fixed_model_keeps_it(case):
    """The tightest case on real models: the incumbent is the optimum itself, so a margin too
    thin anywhere would cut it; the fixed model must still reach the same cost."""
    prob, cat = case
    model = to_mathopt(build_milp(build_instance(prob, cat)).model)
    solved = mathopt_once(model, 60, None, False, None)
    if solved.termination.reason == mathopt.TerminationReason.INFEASIBLE:
        return
    best, plan = solved.objective_value(), result_values(solved)
    fixing = rcfix.fix_by_reduced_cost(model, rcfix.lp_duals(model), plan)
    assert fixing is not None
    event("fixed some" if fixing.fixed else "fixed none")
    assert _optimum(model)[0] == pytest.approx(best, rel=1e-9, abs=1e-6)


def test_the_random_planning_problems_do_get_variables_fixed():
    """The two properties above are only worth something if fixing fires on their instances:
    in solve_milp's own path (first plan, LP duals), on some of the same 25 instances."""
    fixed = []
    real = rcfix.fix_by_reduced_cost

    def recorded(*args):
        fixing = real(*args)
        fixed.append(bool(fixing and fixing.fixed))
        return fixing

    @settings(max_examples=25, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(instances())
    def count(case):
        with suppress(NoSolution):
            solve_milp(build_milp(build_instance(*case)), time_limit=60, reduced_cost_fixing=True)

    with patch.object(rcfix, "fix_by_reduced_cost", recorded):
        count()
    assert sum(fixed) >= 5


def test_solve_milp_fixes_on_a_copy_and_the_caller_model_keeps_its_bounds(monkeypatch):
    """solve_milp(reduced_cost_fixing=True) does fix (the dear offers' nodes, from the LP and
    the first plan on the two cheapest vendors' domains), on the MathOpt copy of its solve: the
    built model, which analyses re-bound and solve again, is unchanged, and the optimum is the same."""
    prob = problem(job("j", days=20, deadline_days=3), horizon_days=3)
    cat = catalog(hourly("h", 4.0), hourly("dear", 9.0, vendor="v2"), hourly("dearer", 12.0, vendor="v3"))
    milp = build_milp(build_instance(prob, cat))
    before = [(v.lower_bound, v.upper_bound) for v in milp.model.get_variables()]
    plain = solve_milp(milp, time_limit=60).objective
    fixings, real = [], rcfix.fix_by_reduced_cost
    monkeypatch.setattr(rcfix, "fix_by_reduced_cost", lambda *a: fixings.append(real(*a)) or fixings[-1])
    assert solve_milp(milp, time_limit=60, reduced_cost_fixing=True).objective == pytest.approx(plain)
    assert len(fixings) == 1 and fixings[0].fixed > 0
    assert [(v.lower_bound, v.upper_bound) for v in milp.model.get_variables()] == before
