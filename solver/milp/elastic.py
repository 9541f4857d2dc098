"""Slack on the written limits of a built model: budget, a site's power quota, offers' stock.

Why one module: both the infeasibility explanation (solver.analysis.explain) and the
runners-up (solver.analysis.why) ask "which limit, by how much" by letting a limit
stretch at a price and reading the slack back. The rows they stretch are the MILP's own
named rows, so both name exactly what the model enforces.
"""

from __future__ import annotations

import math

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp
from solver.milp.capacity import held_nodes


def budget_slack(milp: Milp) -> mb.Variable | None:
    """s ≥ 0 with cost ≤ budget + s; None when the problem has no budget."""
    row = milp.rows.get("Budget")
    if row is None:
        return None
    s = milp.model.new_num_var(0, math.inf, "slack[budget]")
    row.add_term(s, -1.0)
    return s


def power_sites(milp: Milp) -> list[str]:
    """Datacenters with a power row in the model (capacity there counts against the quota)."""
    return sorted({name[len("Power-"):].rsplit("-", 1)[0] for name in milp.rows if name.startswith("Power-")})


def power_slack(milp: Milp, dc: str) -> mb.Variable:
    """s ≥ 0 in kW added to the site's quota in every period (rows `Power-<dc>-<t>`)."""
    s = milp.model.new_num_var(0, math.inf, f"slack[power,{dc}]")
    prefix = f"Power-{dc}-"
    for name, row in milp.rows.items():
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            row.add_term(s, -1.0)
    return s


def stock_slack(milp: Milp, caps: dict[str, int], factor: int) -> dict[str, mb.Variable]:
    """Rows Σ_{options of o} held[o,t] − s_o ≤ cap_o (`Stock-<o>-<t>`), integer s_o ≤ (factor − 1)·cap_o.

    The caller has already raised the variables' own bounds (or built the model from a
    catalog with raised caps), so these rows alone put the written stock back.
    held: capacity.held_nodes, the nodes a contract holds to its term's last day.
    """
    by_offer: dict[str, dict[int, list]] = {}
    for (key, t), variables in held_nodes(milp).items():
        by_offer.setdefault(milp.inst.configs[key].offer.offer, {}).setdefault(t, []).extend(variables)
    out = {}
    for offer, periods in sorted(by_offer.items()):
        cap = caps[offer]
        s = milp.model.new_int_var(0, cap * (factor - 1), f"slack[stock,{offer}]")
        for t, variables in sorted(periods.items()):
            milp.add_row(f"Stock-{offer}-{t}", mb.LinearExpr.sum(variables) - s <= cap)
        out[offer] = s
    return out
