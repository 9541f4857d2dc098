"""Slack on the written limits of a built model, and reading back how far an elastic plan goes
past each limit: what every family's `slack` and `Relax.over` parts share.

Why: both the infeasibility explanation (solver.analysis.explain) and the runners-up
(solver.analysis.why) ask "which limit, by how much" by letting a limit stretch at a price
and reading the slack back. The rows they stretch are the MILP's own rows, found by their
keys (solver.milp.core.RowKey), never by reading names back, so both name exactly what the
model enforces. Each family's slack and reader live in its module (solver/milp/families/);
here is only what they share:

- a slack part has one signature, `(milp, targets=None, caps=None, factor=1) → {target:
  slack variable}`: targets None is every target the model limits; caps and factor matter
  to the stock only (solver.milp.families.stock.stock_slacks);
- an over part reads, from an elastic solve, what the integer plan uses beyond the written
  limit of each target, rounded up to a whole unit: `(solution, written catalog, targets)
  → [(target, amount)]`, amounts past TOL (`over_amount`).
"""

from __future__ import annotations

import math

import ortools.linear_solver.python.model_builder as mb

from solver.milp.core import Milp

TOL = 1e-6


def stretch(milp: Milp, rows, name: str) -> mb.Variable:
    """s ≥ 0 added to the right-hand side of every row in `rows` (named `slack[<name>]`)."""
    s = milp.model.new_num_var(0, math.inf, f"slack[{name}]")
    for row in rows:
        row.add_term(s, -1.0)
    return s


def over_amount(used: float, limit: float) -> int | None:
    """How far `used` goes past `limit`, rounded up to a whole unit; None when it does not."""
    over = used - limit
    return math.ceil(over - TOL) if over > TOL else None
