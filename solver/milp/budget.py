"""Budget cap on the total cost of the plan, and its bound on a built model."""

from __future__ import annotations

import math

from solver.milp.core import Milp, RowKey

TARGETS = ("", "budget")
"""The one budget's target: "" (its RowKey's) or "budget" (as explain and why name it)."""


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


def _check(target: str) -> None:
    if target not in TARGETS:
        raise KeyError(f"the budget has one target, not {target!r}")
