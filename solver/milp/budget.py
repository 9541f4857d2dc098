"""Budget cap on the total cost of the plan."""

from __future__ import annotations

from solver.milp.core import Milp, RowKey


def add_budget(milp: Milp) -> None:
    """total cost ≤ budget   row `Budget` (only when the problem sets one)."""
    budget = milp.inst.problem.budget
    if budget is not None:
        milp.add_row("Budget", milp.total_cost() <= budget, RowKey("budget"))
