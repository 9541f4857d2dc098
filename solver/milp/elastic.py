"""Slack on the written limits of a built model: budget, a site's power quota, offers' stock,
a job's work — and reading back how far an elastic plan goes past each limit.

Why one module: both the infeasibility explanation (solver.analysis.explain) and the
runners-up (solver.analysis.why) ask "which limit, by how much" by letting a limit
stretch at a price and reading the slack back. The rows they stretch are the MILP's own
rows, found by their keys (solver.milp.core.RowKey), never by reading names back, so both
name exactly what the model enforces.

Each family's slack form (solver.milp.registry) has one signature,
`(milp, targets=None, caps=None, factor=1) → {target: slack variable}`: targets None is
every target the model limits; caps and factor matter to the stock only (see stock_slacks).
Each `*_over` reads, from an elastic solve, what the integer plan uses beyond the written
limit of each target, rounded up to a whole unit: `(solution, written catalog, targets)
→ [(target, amount)]`.
"""

from __future__ import annotations

import math

from ortools.linear_solver.python import model_builder as mb

from solver.milp.capacity import held_nodes, widen_discount
from solver.milp.core import Milp, RowKey
from solver.milp.work import add_work_slack
from solver.model.catalog import Catalog

TOL = 1e-6


def budget_slack(milp: Milp) -> mb.Variable | None:
    """s ≥ 0 with cost ≤ budget + s; None when the problem has no budget."""
    row = milp.keyed.get(RowKey("budget"))
    if row is None:
        return None
    s = milp.model.new_num_var(0, math.inf, "slack[budget]")
    row.add_term(s, -1.0)
    return s


def budget_slacks(milp: Milp, targets=None, caps=None, factor: int = 1) -> dict[str, mb.Variable]:
    s = budget_slack(milp)
    return {} if s is None else {"budget": s}


def power_sites(milp: Milp) -> list[str]:
    """Datacenters with a power row in the model (capacity there counts against the quota)."""
    return milp.targets("power")


def power_slack(milp: Milp, dc: str) -> mb.Variable:
    """s ≥ 0 in kW added to the site's quota in every period (its rows `Power-<dc>-<t>`)."""
    s = milp.model.new_num_var(0, math.inf, f"slack[power,{dc}]")
    for row in milp.family_rows("power", dc).values():
        row.add_term(s, -1.0)
    return s


def power_slacks(milp: Milp, targets=None, caps=None, factor: int = 1) -> dict[str, mb.Variable]:
    return {dc: power_slack(milp, dc) for dc in (power_sites(milp) if targets is None else targets)}


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
            milp.add_row(f"Stock-{offer}-{t}", mb.LinearExpr.sum(variables) - s <= cap,
                         RowKey("availability", offer, t, part="stock"))
        out[offer] = s
    return out


def stock_slacks(milp: Milp, targets=None, caps: dict[str, int] | None = None,
                 factor: int = 1) -> dict[str, mb.Variable]:
    """Slack on every offer's stock. `caps` given: the model was built from a catalog whose
    caps are `caps` × factor (solver.analysis.explain). `caps` None: the model was built at
    its written caps, which are raised ×factor here first (node and contract bounds, the
    volume discount's rows, the `Availability` rows lifted), then put back by the stock rows."""
    if caps is None:
        caps = _raise_stock(milp, factor)
    return stock_slack(milp, caps, factor)


def _raise_stock(milp: Milp, factor: int) -> dict[str, int]:
    inst = milp.inst
    caps = {o: inst.catalog.offers[o].max_nodes for o in {inst.configs[key].offer.offer for key, _ in milp.nodes}}
    raised = {o: cap * factor for o, cap in caps.items()}
    for (key, _), var in [*milp.nodes.items(), *milp.contracts.items()]:
        var.upper_bound = raised[inst.configs[key].offer.offer]
    for key, t in milp.full_price:
        widen_discount(milp, key, t, raised[inst.configs[key].offer.offer])
    for key, row in milp.family_rows("availability").items():
        if not key.part:
            row.upper_bound = math.inf
    return caps


def work_slacks(milp: Milp, targets=None, caps=None, factor: int = 1) -> dict[str, mb.Variable]:
    """s_j ≥ 0 EFLOP of each job's work allowed undone (solver.milp.work.add_work_slack)."""
    out = {}
    for job in [j.name for j in milp.inst.problem.jobs] if targets is None else targets:
        out[job] = milp.model.new_num_var(0, math.inf, f"slack[work,{job}]")
        add_work_slack(milp, job, out[job])
    return out


def budget_over(sol, written: Catalog, targets=None) -> list[tuple[str, float]]:
    over = sum(sol.cost_parts().values()) - sol.milp.inst.problem.budget
    return [("budget", math.ceil(over - TOL))] if over > TOL else []


def power_over(sol, written: Catalog, targets=None) -> list[tuple[str, float]]:
    """kW over each site's quota in the plan's busiest period."""
    milp = sol.milp
    sites = set(power_sites(milp) if targets is None else targets)
    draw: dict[tuple[str, int], float] = {}
    for (key, t), variables in held_nodes(milp).items():
        offer = milp.inst.configs[key].offer
        if offer.counts_power and offer.datacenter in sites:
            n = sum(sol.count(var) for var in variables)
            draw[offer.datacenter, t] = draw.get((offer.datacenter, t), 0.0) + n * offer.node_kw
    out = []
    for dc in sorted(sites):
        over = max((kw for (d, _), kw in draw.items() if d == dc), default=0.0) - written.datacenters[dc].power_quota_kw
        if over > TOL:
            out.append((dc, math.ceil(over - TOL)))
    return out


def stock_over(sol, written: Catalog, targets=None) -> list[tuple[str, float]]:
    """Nodes over each offer's written max_nodes at the plan's peak."""
    milp = sol.milp
    held: dict[tuple[str, int], int] = {}
    for (key, t), variables in held_nodes(milp).items():
        offer = milp.inst.configs[key].offer.offer
        held[offer, t] = held.get((offer, t), 0) + sum(sol.count(var) for var in variables)
    out = []
    for offer in sorted({o for o, _ in held}):
        if targets is None or offer in targets:
            over = max(n for (o, _), n in held.items() if o == offer) - written.offers[offer].max_nodes
            if over > 0:
                out.append((offer, over))
    return out
