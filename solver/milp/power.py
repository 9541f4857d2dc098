"""Power quota per site per period for capacity whose draw counts against it (hosted racks)."""

from __future__ import annotations

import math
from collections import defaultdict

from ortools.linear_solver.python import model_builder as mb

from solver.milp.core import Milp, RowKey
from solver.milp.capacity import held_nodes


def add_power(milp: Milp) -> None:
    """Σ_{o at d, counts_power} node_kw_o·held[o,t] ≤ power_quota_kw_d   row `Power-<d>-<t>`.

    Seed 000: Beijing sites have limited power quota; hundreds of cards need it confirmed
    weeks ahead. Cloud instances (counts_power false) are the vendor's quota, not ours.
    A rack draws power to its contract's last day (capacity.held_nodes).
    """
    inst = milp.inst
    draw: dict[tuple[str, int], list[tuple[mb.Variable, float]]] = defaultdict(list)
    for (key, t), variables in held_nodes(milp).items():
        offer = inst.configs[key].offer
        if offer.counts_power:
            draw[offer.datacenter, t].extend((var, offer.node_kw) for var in variables)
    for (dc, t), terms in draw.items():
        quota = inst.catalog.datacenters[dc].power_quota_kw
        lhs = mb.LinearExpr.weighted_sum([v for v, _ in terms], [kw for _, kw in terms])
        milp.add_row(f"Power-{dc}-{t}", lhs <= quota, RowKey("power", dc, t))


def power_bound(milp: Milp, dc: str) -> float | None:
    """The kW the built model allows at site `dc` in each period; None: no quota (or no
    capacity there counts power, so the model has no row for it)."""
    rows = milp.family_rows("power", dc)
    ups = {row.upper_bound for row in rows.values()}
    if not ups or all(math.isinf(u) for u in ups):
        return None
    return min(ups)


def set_power_bound(milp: Milp, dc: str, kw: float | None) -> None:
    """Site `dc`'s quota in every period of the built model (None: no quota). The rows exist
    where the site's capacity counts power whatever the quota, so any value reads as a rebuild
    with that `power_quota_kw` would; a site without such capacity has no row and nothing to set.
    Elastic slack on the rows (solver.milp.elastic.power_slack) stays on top of the new quota."""
    for row in milp.family_rows("power", dc).values():
        row.upper_bound = math.inf if kw is None else kw
