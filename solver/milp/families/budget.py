"""The budget family: total cost ≤ budget (row `Budget`), its bound on a built model, and its
every part (solver.milp.family)."""

from __future__ import annotations

import math

import ortools.linear_solver.python.model_builder as mb

from solver.i18n import N_, _, money_unit
from solver.milp.core import Milp, RowKey
from solver.milp.elastic import over_amount, stretch
from solver.milp.family import COSTS, MONEY, Bound, Family, Labels, Lost, NotApplicable, Relax, Rows, Step, whole
from solver.milp.solution import Solution
from solver.model.catalog import Catalog
from solver.model.plan import Binding, JobResult
from solver.model.problem import Problem

TARGETS = ("", "budget")
"""The one budget's target: "" (its RowKey's) or "budget" (as explain and why name it)."""
BUDGET_SLACK = 0.005
"""The budget binds when less than 0.5 % of it is left."""


def add_budget(milp: Milp) -> None:
    """total cost ≤ budget   row `Budget` (only when the problem sets one)."""
    budget = milp.inst.problem.budget
    if budget is not None:
        milp.add_row("Budget", milp.total_cost() <= budget, RowKey("budget"))


def budget_bound(milp: Milp, target: str = "") -> float | None:
    """The budget the built model holds its total cost to; None: no budget."""
    _check(target)
    row = milp.keyed.get(RowKey("budget"))
    return None if row is None or math.isinf(row.upper_bound) else row.upper_bound


def set_budget_bound(milp: Milp, target: str, value: float | None) -> None:
    """Hold the built model's total cost to `value` (None: no budget at all).

    Why one row for every caller: the problem's budget, a frontier's ε on cost and an
    analysis dropping the budget (why's "what would it cost without the budget") all
    move the right-hand side of the keyed `Budget` row; a model built without a budget
    gets that row on its first finite bound, so there is never a second cost row."""
    _check(target)
    row = milp.keyed.get(RowKey("budget"))
    if row is None:
        if value is None:
            return
        milp.add_row("Budget", milp.total_cost() <= value, RowKey("budget"))
        return
    row.upper_bound = math.inf if value is None else value


def written_budget(milp: Milp, problem: Problem, catalog: Catalog) -> tuple[Problem, Catalog]:
    """The problem with the budget the model holds (the verifier's check of a re-bounded model)."""
    budget = budget_bound(milp)
    return (problem if budget == problem.budget else problem.model_copy(update={"budget": budget})), catalog


def _check(target: str) -> None:
    if target not in TARGETS:
        raise KeyError(f"the budget has one target, not {target!r}")


# --- slack, binding, check: the parts an analysis and the verifier ask -------------------------

def budget_slack(milp: Milp) -> mb.Variable | None:
    """s ≥ 0 with cost ≤ budget + s; None when the problem has no budget."""
    row = milp.keyed.get(RowKey("budget"))
    return None if row is None else stretch(milp, [row], "budget")


def budget_slacks(milp: Milp, targets=None, caps=None, factor: int = 1) -> dict[str, mb.Variable]:
    s = budget_slack(milp)
    return {} if s is None else {"budget": s}


def budget_over(sol, written: Catalog, targets=None) -> list[tuple[str, float]]:
    over = over_amount(sum(sol.cost_parts().values()), sol.milp.inst.problem.budget)
    return [] if over is None else [("budget", over)]


def budget_binding(sol: Solution, jobs: list[JobResult]) -> list[Binding]:
    budget = sol.milp.inst.problem.budget
    if budget is None or sol.objective < budget * (1 - BUDGET_SLACK):
        return []
    horizon = sol.milp.inst.problem.horizon_days
    currency = sol.milp.inst.problem.currency
    return [Binding(kind="budget", name="budget", start_day=0, end_day=horizon, used=round(sol.objective, 2),
                    limit=budget, unit=currency, text=f"budget: {sol.objective:,.0f} of {budget:,.0f} {currency} used")]


def check_budget(v) -> None:
    """The verifier's rule: the schedule's cost, as the verifier adds it up (v.total), within
    the budget (v: solver.verify.rules.Verifier)."""
    if v.p.budget is not None and v.total > v.p.budget + v.TOL_MONEY:
        v.fail(f"budget: plan costs {v.total:,.2f} {v.p.currency}, budget is {v.p.budget:,.2f}")


def _budget_lever(problem: Problem, catalog: Catalog, target: str, amount: float | None = None) -> Step:
    step = max(1, round(problem.budget * 0.01)) if amount is None else amount
    words = f"+{step:,} {problem.currency} budget" + (" (1 %)" if amount is None else "")
    return Step([f"budget+={step}"], words, step)



def more_budget(amount: float, target: str, unit: str) -> str:
    return _("{amount} {unit} more budget").format(amount=f"{whole(amount):,}", unit=money_unit(unit))


FAMILY = Family(
    name="budget", order=10, unit=MONEY, targets="budget",
    rows=Rows(add_budget, ("Budget",), COSTS),
    bounds=Bound(budget_bound, set_budget_bound, written_budget),
    labels=Labels(N_("budget"), N_("budget: {used} of {limit} {unit} used"), more_budget,
                  NotApplicable("negotiate values more kW, nodes and shorter lead times, not more budget")),
    slack=budget_slacks,
    binding=budget_binding,
    relax=Relax("without", limit=lambda problem, catalog, target: problem.budget,
                edits=lambda a, target, horizon: [f"budget+={whole(a)}"],
                words=lambda a, target, horizon, unit: f"{whole(a):,} {unit} more budget",
                over=budget_over,
                says={"noun": "budget", "target": "budget", "smallest": "the cheapest plan without a budget",
                      "alone": "more budget alone does not make it feasible ({why})",
                      "none": "there is no plan even without a budget",
                      "any": "any budget", "more": "more budget",
                      "within": " within the budget of {limit:,.0f} {unit}"},
                where=NotApplicable("relaxed by dropping it, not target by target"),
                lift=lambda problem: problem.model_copy(update={"budget": None}),
                raised=NotApplicable("dropped, not raised")),
    lever=_budget_lever,
    lost=Lost("price", scale=lambda milp, target: (1 / milp.inst.problem.budget, milp.inst.problem.budget),
              words=lambda milp, target, amount, limit: f"over the budget by {amount:,.0f} "
                                                        f"{milp.inst.problem.currency}",
              without=lambda problem, cost: f"over the budget by {cost - problem.budget:,.0f} {problem.currency}",
              window=False),
    deal=NotApplicable("negotiate values more kW, nodes and shorter lead times, not this limit"),
    verify=check_budget,
)
