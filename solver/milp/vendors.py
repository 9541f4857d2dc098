"""Vendor count: at most ε vendors rented from, the frontier's third limit (issue 22: it
lived in solver/analysis/min_time.py; a family's rows belong with the others).

Why rows, not a filter on plans: "at most 2 vendors" is a promise to procurement, and only
the MILP can find the cheapest plan that keeps it. A 0/1 flag per vendor is raised by any
node or contract variable at that vendor (`var ≤ ub(var)·flag`), and one row bounds the
flags' sum. The row is built with no bound (ε = ∞) so one model serves every ε: the
caller sets the count row's upper bound.
"""

from __future__ import annotations

import math

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp, RowKey


def vendor_nodes(milp: Milp) -> dict[str, list[mb.Variable]]:
    """Every node and contract variable of the model, by the offer's vendor."""
    out: dict[str, list[mb.Variable]] = {}
    for key, var in [*milp.nodes.items(), *milp.contracts.items()]:
        out.setdefault(milp.inst.configs[key[0]].offer.vendor, []).append(var)
    return out


def add_vendor_count(milp: Milp, held: dict[str, list[mb.Variable]], *, integral: bool = True) -> mb.LinearConstraint:
    """Rows `Frontier-Vendor-<vendor>-<k>`: held variable k ≤ its upper bound × flag[vendor],
    and `Frontier-Vendors`: Σ flags ≤ ∞ (returned: set its upper bound to ε).
    `integral` False gives the LP relaxation's flags."""
    flags = []
    for vendor, variables in sorted(held.items()):
        flag = milp.model.new_var(0, 1, integral, f"vendor[{vendor}]")
        flags.append(flag)
        for k, var in enumerate(variables):
            milp.add_row(f"Frontier-Vendor-{vendor}-{k}", var <= var.upper_bound * flag,
                         RowKey("vendors", vendor, part=str(k)))
    milp.add_row("Frontier-Vendors", mb.LinearExpr.sum(flags) <= math.inf, RowKey("vendors", part="count"))
    return milp.keyed[RowKey("vendors", part="count")]
