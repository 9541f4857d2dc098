"""The vendor-count family: at most ε vendors rented from, the frontier's third limit (issue 22:
it lived in solver/analysis/min_time.py; a family's rows belong with the others).

Why rows, not a filter on plans: "at most 2 vendors" is a promise to procurement, and only
the MILP can find the cheapest plan that keeps it. A 0/1 flag per vendor is raised by any
node or contract variable at that vendor (`var ≤ ub(var)·flag`), and one row bounds the
flags' sum. The row is built with no bound (ε = ∞) so one model serves every ε: the
caller sets the count row's upper bound.
"""

from __future__ import annotations

import math

from ortools.linear_solver.python import model_builder as mb

from solver.i18n import N_
from solver.milp.core import Milp, RowKey
from solver.milp.family import ON_DEMAND, Bound, Family, Labels, NotApplicable, Rows, row_limit

COUNT = RowKey("vendors", part="count")
"""The key of the row `Frontier-Vendors` (Σ flags ≤ ε)."""


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
    milp.add_row("Frontier-Vendors", mb.LinearExpr.sum(flags) <= math.inf, COUNT)
    return milp.keyed[COUNT]


def vendor_bound(milp: Milp, target: str = "") -> float | None:
    """The most vendors the built model lets a plan rent from; None: no such limit."""
    return row_limit(milp, COUNT, "the vendor count", target)


def set_vendor_bound(milp: Milp, target: str, count: float | None) -> None:
    """At most `count` vendors on the built model (None: any number). The flags and rows are
    added on the first finite count (continuous flags on an LP relaxation, Milp.relaxed) and
    kept: later counts move the count row's bound only.

    The flags' rows take each node variable's upper bound as it is then: set this after any
    stock bound is lowered, never before stock is raised (solver.milp.families.stock.stock_slacks)."""
    _check(target)
    row = milp.keyed.get(COUNT)
    if row is None:
        if count is None:
            return
        row = add_vendor_count(milp, vendor_nodes(milp), integral=not milp.relaxed)
    row.upper_bound = math.inf if count is None else count


def vendors_used(held: dict[str, list[mb.Variable]], sol) -> set[str]:
    """Vendors whose node or contract variables (vendor_nodes) are positive in the solution."""
    return {v for v, variables in held.items() if any(sol.count(var) > 0 for var in variables)}


def _check(target: str) -> None:
    if target:
        raise KeyError(f"the vendor count has one target, \"\", not {target!r}")


FAMILY = Family(
    name="vendors", order=50, unit="vendors", targets="vendor",
    rows=Rows(add_vendor_count, ("Frontier-Vendor", "Frontier-Vendors"), ON_DEMAND),
    bounds=Bound(vendor_bound, set_vendor_bound,
                 NotApplicable("no problem writes a vendor count for the verifier to check")),
    labels=Labels(N_("vendors"), NotApplicable("no plan runs into a vendor count it was not asked for"),
                  NotApplicable("no infeasibility explanation relaxes a vendor count"),
                  NotApplicable("the frontier sweeps ε itself")),
    slack=NotApplicable("a frontier's ε, set on the count row; no analysis stretches it"),
    binding=NotApplicable("no problem writes a vendor count: a plan cannot run into one"),
    relax=NotApplicable("not a written limit, so never the cause of an infeasible problem"),
    lever=NotApplicable("the frontier sweeps ε itself"),
    lost=NotApplicable("a runner-up is forced onto one vendor's offers; the count is not asked"),
    deal=NotApplicable("the frontier sweeps ε itself"),
    verify=NotApplicable("no problem writes a vendor count: the frontier checks its ε on the plan's "
                         "vendors, read by solver.verify.vendors_rented"),
)
