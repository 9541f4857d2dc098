"""The tie-break (solver.engine.tiebreak): among plans of the optimal cost, the earliest finish,
then the fewest rentals; never a higher cost; the same input gives the same plan."""

from __future__ import annotations

import pytest

from solver.api import build, solve_problem
from solver.engine.solve import solve_milp
from solver.engine.tiebreak import NOT_APPLIED, PROVEN, break_ties
from solver.load import load_problem
from tests.builders import ROOT, catalog, job, offer, problem

# Two 1-GPU hourly offers at the same price: "late" can start only on day 5 (lead time), "early"
# at once. The job needs 3 GPU-days by day 10: run on either, it costs the same 3 GPU-days.
CAT = catalog(offer("early", price=10.0, max_nodes=1, counts_power=False),
              offer("late", price=10.0, max_nodes=1, counts_power=False, lead_time_days=5))
PROB = problem(job("j", days=3 * 0.9, deadline_days=10), horizon_days=10)


def _late_first_stage(prob=PROB, cat=CAT):
    """A proven-optimal first stage that runs the job on the late offer: the early offer's
    variables (and choice flags) held at zero for that solve only, then given back their bounds."""
    _, milp = build(prob, cat)
    early = [v for (key, _), v in milp.nodes.items() if key.startswith("early:")]
    early += [v for (i, _), v in milp.replicas.items() if milp.inst.options[i].config.startswith("early:")]
    early += [v for (_, name), v in milp.sites.items() if "early@" in name]
    bounds = [(v, v.upper_bound) for v in early]
    for v in early:
        v.upper_bound = 0
    first = solve_milp(milp)
    for v, ub in bounds:
        v.upper_bound = ub
    return milp, first


def _last_period(milp, sol) -> int:
    return max(t for (_, t), v in milp.replicas.items() if sol.count(v) > 0)


def test_of_two_equal_cost_plans_the_earlier_finishing_one_is_chosen():
    milp, first = _late_first_stage()
    assert first.status == "optimal" and _last_period(milp, first) >= 7  # days 5, 6, 7 at the earliest
    second = break_ties(milp, first, "highs", None)
    assert second.tie_break == PROVEN
    assert abs(second.objective - first.objective) < 1e-6      # the same cost
    assert _last_period(milp, second) == 2                      # days 0, 1, 2 on the early offer


def test_the_tie_break_leaves_the_model_as_it_was():
    milp, first = _late_first_stage()
    rows, variables = milp.model.num_constraints, milp.model.num_variables
    break_ties(milp, first, "highs", None)
    assert (milp.model.num_constraints, milp.model.num_variables) == (rows, variables)


def test_a_plan_not_proven_optimal_is_not_tie_broken():
    milp, first = _late_first_stage()
    first.status = "feasible"
    assert break_ties(milp, first, "highs", None).tie_break == NOT_APPLIED


@pytest.mark.parametrize("name", ["data-locality", "seed-7b-200b-30d"])
def test_solving_twice_gives_the_same_schedule(name):
    prob, cat = load_problem(ROOT / "problems" / f"{name}.yaml")
    one, two = (solve_problem(prob, cat, time_limit=60) for _ in range(2))
    assert one.tie_break == two.tie_break == PROVEN
    assert one.schedule == two.schedule and one.total_cost == two.total_cost


def test_solve_problem_reports_the_tie_break_on_the_constructed_case():
    plan = solve_problem(PROB, CAT, time_limit=30)
    assert plan.tie_break in (PROVEN, "proven without re-solve")
    assert plan.jobs[0].finish_day == 3


def test_a_synchronous_job_stays_in_the_fabric_domain_the_first_plan_chose():
    """The same two offers at two vendors (two fabric domains): the first plan's domain is kept,
    although the other would finish sooner at the same cost (solver.engine.tiebreak._hold_domains)."""
    cat = catalog(offer("early", vendor="early", price=10.0, max_nodes=1, counts_power=False),
                  offer("late", vendor="late", price=10.0, max_nodes=1, counts_power=False, lead_time_days=5))
    milp, first = _late_first_stage(PROB, cat)
    assert len(milp.choices["j"]) > 1 and _last_period(milp, first) >= 7
    second = break_ties(milp, first, "highs", None)
    assert second.tie_break == PROVEN and abs(second.objective - first.objective) < 1e-6
    used = {milp.inst.options[i].config for (i, _), v in milp.replicas.items() if second.count(v) > 0}
    assert used == {"late:ib_hdr"} and _last_period(milp, second) == 7
